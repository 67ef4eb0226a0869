//! What operators do, as domain functions the operators' routes call: list
//! orders by how long they have waited, read an order's whole story, ask the
//! PG now about an unsettled payment, and run reconciliation. Each action is
//! written to the audit log under the operator's name.

use std::collections::HashMap;
use std::time::Duration;

use payonce_api::{Order, OrderStatus};

use super::reconcile::{PassMode, Report, StartedBy, run_pass};
use crate::app::App;
use crate::db::{
    AttemptDetail, AuditLine, EventRow, HistoryLine, JobKind, OperatorOrderRow, PgCallRow, Refund, SendRow, now_ms,
};
use crate::error::AppError;

/// The most orders one list answers with.
const LIST_LIMIT: u32 = 500;
/// How long "ask the PG now" waits for the answer to settle the order.
const RECOVER_WAIT: Duration = Duration::from_secs(10);

/// Orders (only those in `status`, if given) that have not changed for
/// `older_than`, UNKNOWN first, then CANCEL_REQUESTED, each longest waiting
/// first; and the time they were listed at.
pub async fn orders(
    app: &App,
    status: Option<OrderStatus>,
    older_than: Duration,
) -> Result<(Vec<OperatorOrderRow>, i64), AppError> {
    let now = now_ms();
    let before = now - i64::try_from(older_than.as_millis()).unwrap_or(i64::MAX).min(now);
    Ok((app.db.operator_orders(status.map(OrderStatus::as_str), before, LIST_LIMIT).await?, now))
}

/// Everything the shop knows of an order.
pub struct Story {
    pub order: Order,
    pub attempt: Option<AttemptDetail>,
    pub history: Vec<HistoryLine>,
    pub refunds: Vec<Refund>,
    /// What the PG last said about each refund it answered, by refund.
    pub refund_answers: HashMap<String, String>,
    pub audit: Vec<AuditLine>,
    pub pg_calls: Vec<PgCallRow>,
    /// What its shop was told, and every send of each event (a checkout's only).
    pub events: Vec<EventRow>,
    pub event_sends: Vec<SendRow>,
}

pub async fn story(app: &App, order_id: &str) -> Result<Story, AppError> {
    let order = app.db.order(order_id).await?.ok_or(AppError::OrderNotFound)?;
    let (events, event_sends) = app.db.events_of_order(order_id).await?;
    Ok(Story {
        order,
        attempt: app.db.attempt_detail(order_id).await?,
        history: app.db.history(order_id).await?,
        refunds: app.db.refunds(order_id).await?,
        refund_answers: app.db.refund_answers(order_id).await?,
        audit: app.db.audit_log(order_id).await?,
        pg_calls: app.db.pg_calls(order_id).await?,
        events,
        event_sends,
    })
}

/// What asking the PG now came to.
pub enum Asked {
    /// The payment settled: the order as it is now.
    Settled(Order),
    /// The PG had not settled it within the wait; recovery goes on.
    StillOpen(Order),
}

/// Hands an unsettled payment (PENDING, UNKNOWN) to the job engine at once,
/// which asks the PG what became of it, and waits up to `RECOVER_WAIT` for
/// that to settle the order, on this server or another.
pub async fn ask_pg_now(app: &App, operator: &str, order_id: &str) -> Result<Asked, AppError> {
    let order = app.db.order(order_id).await?.ok_or(AppError::OrderNotFound)?;
    // Subscribed before recovery is woken, so a settlement committed at once still wakes this.
    let mut changes = app.db.changes().subscribe(order_id);
    if !app.db.recover_now(JobKind::Payment, order_id).await? {
        tracing::warn!(operator, order_id, status = order.status.as_str(), "operator recover refused: not unsettled");
        return Err(AppError::NotUnsettled { order: Box::new(order) });
    }
    let detail = format!("asked the PG now about a {} payment", order.status.as_str());
    app.db.audit(operator, "recover", Some(order_id), &detail).await?;
    tracing::info!(operator, order_id, "operator asked the PG now");
    app.recovery_wake.notify_one();
    let deadline = tokio::time::sleep(RECOVER_WAIT);
    tokio::pin!(deadline);
    let mut waited_out = false;
    loop {
        let order = app.db.order(order_id).await?.ok_or(AppError::OrderNotFound)?;
        if !matches!(order.status, OrderStatus::Pending | OrderStatus::Unknown) {
            return Ok(Asked::Settled(order));
        }
        if waited_out {
            return Ok(Asked::StillOpen(order));
        }
        // Recovery moving the order, on this server or another, wakes this at once.
        tokio::select! {
            () = changes.changed() => {}
            () = &mut deadline => waited_out = true,
        }
    }
}

/// Runs a reconciliation pass now, for `operator`, and writes it to the audit
/// log; a dry run only says what a pass would do.
pub async fn reconcile_now(app: &App, operator: &str, mode: PassMode) -> Result<Report, AppError> {
    let report = match run_pass(app, StartedBy::Operator, mode).await {
        Ok(Some(report)) => report,
        Ok(None) => return Err(AppError::ReconcileRunning),
        Err(error) => {
            tracing::warn!(operator, %error, "operator reconciliation did not run");
            return Err(error);
        }
    };
    let detail = match mode {
        PassMode::Act => format!(
            "reconciliation run {}: {} approvals, {} mismatches",
            report.run_id.unwrap_or_default(),
            report.approvals,
            report.mismatches.len()
        ),
        PassMode::DryRun => format!(
            "reconciliation dry run: {} approvals, {} mismatches, nothing changed",
            report.approvals,
            report.mismatches.len()
        ),
    };
    app.db.audit(operator, "reconcile", None, &detail).await?;
    Ok(report)
}

/// The last reconciliation pass's report.
pub async fn last_reconcile(app: &App) -> Result<Report, AppError> {
    let run = app.db.last_reconcile_run().await?.ok_or(AppError::NotFound)?;
    serde_json::from_str(&run.report).map_err(|error| AppError::Internal(format!("run {}: {error}", run.id)))
}

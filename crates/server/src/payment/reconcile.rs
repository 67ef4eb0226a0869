//! Reconciliation: each PG's ledger over the last day (and a margin) compared
//! with the orders, every `--reconcile-interval` and when an operator asks,
//! at every PG that keeps a ledger the shop can read (Toss's transactions; a
//! PG without one is not reconciled). One server of a cluster runs a pass at a
//! time (a lease row).
//!
//! Every approval must belong to an order the shop has as charged (PAID,
//! CANCEL_REQUESTED, PARTIALLY_REFUNDED or CANCELED) with the same paymentKey
//! and amount, and what the PG cancelled of it must be what the shop refunded.
//! What does not match:
//!
//! - `charge_without_order`: a charge no order of the shop made (no such
//!   order, or an order paid by another payment). Refunded in full at once,
//!   with a reason, under a key derived from the paymentKey, so that every pass
//!   sends the same request and the PG refunds it once.
//! - `paid_without_charge`: an order the shop has as charged whose approval the
//!   PG does not list. Reported for an operator; nothing changes.
//! - `amount_mismatch`: the PG charged another amount than the order's. Reported.
//! - `charge_for_unpaid_order`: the order's own payment charged while the shop
//!   has the order FAILED (or never sent it). Reported.
//! - `refund_mismatch`: the PG cancelled another total of a payment than the
//!   shop refunded. Reported.
//!
//! A payment whose attempt is PENDING or UNKNOWN is recovery's, and a refund
//! being sent (CANCEL_REQUESTED) is refund recovery's: a pass only counts them.

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, SystemTime};

use payonce_api::{OrderStatus, Pg};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::orphan_recovery;
use crate::app::App;
use crate::db::{JobKind, NewOrphanRefund, RECONCILE_JOB, ShopPayment, now_ms, rfc3339};
use crate::error::AppError;
use crate::metrics;
use crate::pg::adapters::PgAdapter;
use crate::pg::adapters::ledger::{EntryKind, LedgerEntry, PgLedger};
use crate::resilience::lease;
use payonce_rules::pg_reply::PgReply;
use payonce_rules::settlement::{
    Charge, ChargeStep, Disagreement, MismatchAction, OrphanCancel, ShopSide, charge_step, classify, orphan_action,
};

/// How far back a pass lists: a day, and an hour's margin so a pass that ran
/// late still overlaps the one before.
pub const LOOKBACK: Duration = Duration::from_secs(25 * 60 * 60);
/// Entries asked for per page.
const PAGE_LIMIT: usize = 1_000;
/// The reason the PG is given for refunding a charge no order made.
pub const ORPHAN_REASON: &str = "charged without an order of the shop; refunded by reconciliation";

/// Who started a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartedBy {
    Schedule,
    Operator,
}

impl StartedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            StartedBy::Schedule => "schedule",
            StartedBy::Operator => "operator",
        }
    }
}

/// A kind of disagreement between the PG and the shop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MismatchKind {
    ChargeWithoutOrder,
    PaidWithoutCharge,
    AmountMismatch,
    ChargeForUnpaidOrder,
    RefundMismatch,
}

impl MismatchKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MismatchKind::ChargeWithoutOrder => "charge_without_order",
            MismatchKind::PaidWithoutCharge => "paid_without_charge",
            MismatchKind::AmountMismatch => "amount_mismatch",
            MismatchKind::ChargeForUnpaidOrder => "charge_for_unpaid_order",
            MismatchKind::RefundMismatch => "refund_mismatch",
        }
    }
}

/// One disagreement, with both sides and what the pass did about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Mismatch {
    pub kind: MismatchKind,
    /// The PG whose ledger disagrees (absent in reports stored before passes named it).
    #[serde(default)]
    pub pg: Option<Pg>,
    pub order_id: String,
    pub payment_key: Option<String>,
    /// What the PG charged, and cancelled of it, in the window.
    pub pg_amount: Option<u64>,
    pub pg_refunded: Option<u64>,
    /// What the shop has, if it has the order.
    pub shop_status: Option<OrderStatus>,
    pub shop_amount: Option<u64>,
    pub shop_refunded: Option<u64>,
    /// `flagged` (for an operator; nothing changed), or what was done.
    pub action: String,
}

/// A charge of the PG account that no order of this shop made and whose
/// orderId is not the shop's: another user's of the account. Never touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct OtherCharge {
    pub order_id: String,
    pub payment_key: String,
    pub amount: u64,
    pub refunded: u64,
}

/// Whether a pass acts on what it finds, or only says what it would do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassMode {
    Act,
    /// Nothing is refunded or stored; each action reads "would ...".
    DryRun,
}

/// What a pass found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Report {
    /// A dry run: it changed nothing and was not stored.
    #[serde(default)]
    pub dry_run: bool,
    /// The stored run's id.
    pub run_id: Option<i64>,
    pub started_by: String,
    pub runner: String,
    pub started_at: String,
    pub finished_at: String,
    /// The PG's listing's range, as instants.
    pub window_start: String,
    pub window_end: String,
    pub approvals: usize,
    pub cancels: usize,
    /// Approvals that matched their order.
    pub matched: usize,
    /// Orders left to recovery (PENDING, UNKNOWN) or to refund recovery (CANCEL_REQUESTED).
    pub skipped_unsettled: Vec<String>,
    /// Charges no order made that the PG shows refunded in full.
    pub refunded_orphans: Vec<String>,
    /// Charges whose orderId is not the shop's (another user of the PG account).
    #[serde(default)]
    pub not_the_shops: Vec<OtherCharge>,
    pub mismatches: Vec<Mismatch>,
}

/// The charges approved in the listing, in the order of their approvals, with
/// their cancels; and how many cancels are of payments approved before it.
pub fn charges(entries: &[LedgerEntry]) -> (Vec<Charge>, usize) {
    let mut charges: Vec<Charge> = Vec::new();
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut earlier = 0;
    for transaction in entries {
        match transaction.kind {
            EntryKind::Approval => {
                if index.contains_key(transaction.payment_key.as_str()) {
                    continue;
                }
                index.insert(&transaction.payment_key, charges.len());
                charges.push(Charge {
                    payment_key: transaction.payment_key.clone(),
                    order_id: transaction.order_id.clone(),
                    amount: transaction.amount,
                    refunded: 0,
                });
            }
            EntryKind::Cancel => match index.get(transaction.payment_key.as_str()) {
                Some(&at) => charges[at].refunded += transaction.amount,
                None => earlier += 1,
            },
            EntryKind::Other => {}
        }
    }
    (charges, earlier)
}

/// The kind of a disagreement, as the report names it.
impl From<Disagreement> for MismatchKind {
    fn from(disagreement: Disagreement) -> Self {
        match disagreement {
            Disagreement::ChargeWithoutOrder => MismatchKind::ChargeWithoutOrder,
            Disagreement::AmountMismatch => MismatchKind::AmountMismatch,
            Disagreement::ChargeForUnpaidOrder => MismatchKind::ChargeForUnpaidOrder,
            Disagreement::RefundMismatch => MismatchKind::RefundMismatch,
        }
    }
}

/// The shop's side of a payment, as the settlement rule reads it.
fn shop_side(shop: &ShopPayment) -> ShopSide<'_> {
    ShopSide {
        status: shop.status,
        payment_key: shop.payment_key.as_deref(),
        amount: shop.amount,
        refunded: shop.refunded_amount,
    }
}

/// The orders the shop has as charged whose approval the listing lacks, of those
/// paid before the listing began (so their approval had happened by then).
pub fn paid_without_charge<'a>(
    charged: &'a [ShopPayment],
    approved: &HashSet<&str>,
    listed_from_ms: i64,
) -> Vec<&'a ShopPayment> {
    charged
        .iter()
        .filter(|shop| shop.paid_at_ms.is_some_and(|paid| paid < listed_from_ms))
        .filter(|shop| !shop.payment_key.as_deref().is_some_and(|key| approved.contains(key)))
        .collect()
}

/// When the attempts of the charged orders whose approvals a listing of the
/// window must show were stored, both ends included: from a second into the
/// window (the listing's start is to the second, and an attempt is stored
/// before its approval) until the pass began.
pub fn attempts_within(window_start_ms: i64, started_ms: i64) -> (i64, i64) {
    (window_start_ms + 1_000, started_ms)
}

/// The idempotency key of the refund of an orphan charge: the same for every
/// send, whichever server or pass sends it.
pub fn orphan_refund_key(payment_key: &str) -> String {
    let digest = Sha256::digest(payment_key.as_bytes());
    let hex: String = digest.iter().take(20).map(|byte| format!("{byte:02x}")).collect();
    format!("reconcile-{hex}")
}

/// Runs a pass every `--reconcile-interval` (none with `0s`), the first one an
/// interval after start, until shutdown. In a cluster, the server whose timer
/// fires first runs it; the others find it ran within the interval and wait.
pub async fn run_periodically(app: App, shutdown: CancellationToken) {
    let interval = app.config.reconcile_interval;
    if interval.is_zero() {
        return;
    }
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(interval) => {}
        }
        match run_pass(&app, StartedBy::Schedule, PassMode::Act).await {
            Ok(Some(report)) => tracing::info!(
                run_id = report.run_id,
                approvals = report.approvals,
                mismatches = report.mismatches.len(),
                "reconciliation pass"
            ),
            Ok(None) | Err(AppError::ReconcileRunning) => {}
            Err(error) => tracing::error!(%error, "reconciliation pass failed"),
        }
    }
}

/// Runs one pass, if this server gets the job's lease: `None` when a scheduled
/// pass finds another ran within the interval; `ReconcileRunning` when one is running.
pub async fn run_pass(app: &App, started_by: StartedBy, mode: PassMode) -> Result<Option<Report>, AppError> {
    let started = now_ms();
    let hold = lease::millis(lease::for_confirm(&app.config));
    let started_before = match started_by {
        StartedBy::Schedule => Some(started - lease::millis(app.config.reconcile_interval.mul_f64(0.9))),
        StartedBy::Operator => None,
    };
    let claimed =
        app.db.claim_pass_lease(RECONCILE_JOB, &app.worker_id, started, started + hold, started_before).await?;
    if !claimed {
        return match started_by {
            StartedBy::Schedule => Ok(None),
            StartedBy::Operator => Err(AppError::ReconcileRunning),
        };
    }
    let outcome = reconcile(app, started_by, started, mode).await;
    app.db.release_pass_lease(RECONCILE_JOB, &app.worker_id).await?;
    outcome.map(Some)
}

async fn reconcile(app: &App, started_by: StartedBy, started: i64, mode: PassMode) -> Result<Report, AppError> {
    let window_start_ms = started - lease::millis(LOOKBACK);
    // To the second, both ends inclusive: the end rounds up past now.
    let window_end_ms = started + 1_000;
    let dry_run = mode == PassMode::DryRun;
    let mut report = Report {
        dry_run,
        run_id: None,
        started_by: started_by.as_str().to_owned(),
        runner: app.worker_id.to_string(),
        started_at: rfc3339(started),
        finished_at: String::new(),
        window_start: rfc3339(window_start_ms),
        window_end: rfc3339(window_end_ms),
        approvals: 0,
        cancels: 0,
        matched: 0,
        skipped_unsettled: Vec::new(),
        refunded_orphans: Vec::new(),
        not_the_shops: Vec::new(),
        mismatches: Vec::new(),
    };
    for adapter in app.pgs.all() {
        if let Some(ledger) = adapter.ledger() {
            let pass = LedgerPass { app, adapter, ledger, window_start_ms, window_end_ms, started, dry_run };
            pass.compare(&mut report).await?;
        }
    }
    // The report lists each of them for the operators; the log only counts them.
    tracing::debug!(
        charges = report.not_the_shops.len(),
        prefix = app.config.order_id_prefix,
        "charges of the PG account whose orderId is not the shop's, left alone"
    );
    let finished = now_ms();
    report.finished_at = rfc3339(finished);
    if dry_run {
        // A dry run changes nothing: not the figures, not the last report.
        return Ok(report);
    }
    for found in &report.mismatches {
        metrics::reconcile_mismatch(found.kind.as_str());
        tracing::warn!(
            kind = found.kind.as_str(),
            order_id = found.order_id,
            payment_key = found.payment_key,
            action = found.action,
            "reconciliation mismatch"
        );
    }
    let json = serde_json::to_string(&report).map_err(|error| AppError::Internal(error.to_string()))?;
    let id = app
        .db
        .store_reconcile_run(started, &app.worker_id, started_by.as_str(), report.mismatches.len(), &json)
        .await?;
    report.run_id = Some(id);
    // Stored again with its id, so the last report reads the same as the answer.
    let json = serde_json::to_string(&report).map_err(|error| AppError::Internal(error.to_string()))?;
    app.db.update_reconcile_run(id, &json).await?;
    metrics::reconcile_ran(SystemTime::now());
    Ok(report)
}

fn mismatch(pg: Pg, kind: MismatchKind, charge: &Charge, shop: Option<&ShopPayment>, action: String) -> Mismatch {
    Mismatch {
        kind,
        pg: Some(pg),
        order_id: charge.order_id.clone(),
        payment_key: Some(charge.payment_key.clone()),
        pg_amount: Some(charge.amount),
        pg_refunded: Some(charge.refunded),
        shop_status: shop.map(|shop| shop.status),
        shop_amount: shop.map(|shop| shop.amount),
        shop_refunded: shop.map(|shop| shop.refunded_amount),
        action,
    }
}

/// One PG's ledger compared with the shop's orders through that PG.
struct LedgerPass<'a> {
    app: &'a App,
    adapter: &'a dyn PgAdapter,
    ledger: &'a dyn PgLedger,
    window_start_ms: i64,
    window_end_ms: i64,
    started: i64,
    dry_run: bool,
}

impl LedgerPass<'_> {
    /// Adds what the ledger shows, and how it differs from the orders, to `report`.
    async fn compare(&self, report: &mut Report) -> Result<(), AppError> {
        let (app, pg) = (self.app, self.adapter.pg());
        let entries = self.list().await?;
        let (charges, earlier_cancels) = charges(&entries);
        report.approvals += charges.len();
        report.cancels += entries.iter().filter(|entry| entry.kind == EntryKind::Cancel).count();
        // Every pass's count, zero included: the listing's window cuts some payments' stories.
        tracing::debug!(
            pg = pg.as_str(),
            earlier_cancels,
            "cancels of payments approved before the window, not compared"
        );
        let prefix = &app.config.order_id_prefix;
        for charge in &charges {
            let shop = app.db.shop_payment(&charge.order_id).await?;
            let finding = classify(charge, shop.as_ref().map(shop_side));
            let orphan = orphan_action(&charge.order_id, prefix, shop.is_some(), app.config.reconcile_orphans);
            match charge_step(finding, orphan, self.dry_run) {
                ChargeStep::Matched => report.matched += 1,
                ChargeStep::SkipUnsettled => report.skipped_unsettled.push(charge.order_id.clone()),
                ChargeStep::NotTheShops => report.not_the_shops.push(OtherCharge {
                    order_id: charge.order_id.clone(),
                    payment_key: charge.payment_key.clone(),
                    amount: charge.amount,
                    refunded: charge.refunded,
                }),
                ChargeStep::OrphanRefunded { record } => {
                    if record {
                        let answer = format!("the PG lists {} KRW cancelled", charge.refunded);
                        app.db.update_orphan_refund(&charge.payment_key, "DONE", None, &answer).await?;
                    }
                    report.refunded_orphans.push(charge.payment_key.clone());
                }
                ChargeStep::Mismatch(disagreement, action) => {
                    let action = match action {
                        MismatchAction::RefundInFull => self.refund_orphan(charge).await?,
                        MismatchAction::WouldRefundInFull => "would refund in full".to_owned(),
                        MismatchAction::ReportOnly => {
                            "reported: orphan charges are only reported (--reconcile-orphans report)".to_owned()
                        }
                        MismatchAction::Flag => "flagged".to_owned(),
                    };
                    let kind = MismatchKind::from(disagreement);
                    report.mismatches.push(mismatch(pg, kind, charge, shop.as_ref(), action));
                }
            }
        }
        let approved: HashSet<&str> = charges.iter().map(|charge| charge.payment_key.as_str()).collect();
        let (stored_from, stored_until) = attempts_within(self.window_start_ms, self.started);
        let charged = app.db.charged_payments_between(pg, stored_from, stored_until).await?;
        for shop in paid_without_charge(&charged, &approved, self.started) {
            report.mismatches.push(Mismatch {
                kind: MismatchKind::PaidWithoutCharge,
                pg: Some(pg),
                order_id: shop.order_id.clone(),
                payment_key: shop.payment_key.clone(),
                pg_amount: None,
                pg_refunded: None,
                shop_status: Some(shop.status),
                shop_amount: Some(shop.amount),
                shop_refunded: Some(shop.refunded_amount),
                action: "flagged".to_owned(),
            });
        }
        Ok(())
    }

    /// Every entry in the window, a page at a time, holding the job's lease
    /// and a PG place for each call.
    async fn list(&self) -> Result<Vec<LedgerEntry>, AppError> {
        let mut all: Vec<LedgerEntry> = Vec::new();
        loop {
            renew(self.app).await?;
            let place = self.adapter.place().await?;
            let after = all.last().map(|entry| entry.key.clone());
            let page =
                self.ledger.entries(place, self.window_start_ms, self.window_end_ms, after.as_deref(), PAGE_LIMIT);
            let page = page.await.map_err(AppError::ReconcileFailed)?;
            let full = page.len() == PAGE_LIMIT;
            all.extend(page);
            if !full {
                return Ok(all);
            }
        }
    }

    /// Refunds a charge no order made, in full, under its derived key: stored
    /// first, then sent once by this pass; a refund whose outcome that leaves
    /// unknown, or stored by an earlier pass, is the job engine's, which sends
    /// it again with the same key until the PG answers. Returns what was
    /// done, for the report.
    async fn refund_orphan(&self, charge: &Charge) -> Result<String, AppError> {
        let app = self.app;
        let key = orphan_refund_key(&charge.payment_key);
        let orphan = NewOrphanRefund {
            pg: self.adapter.pg(),
            payment_key: &charge.payment_key,
            order_id: &charge.order_id,
            amount: charge.amount,
            pg_idempotency_key: &key,
            reason: ORPHAN_REASON,
        };
        // Held by this pass for as long as its send may take; the engine waits for that.
        let until = now_ms() + lease::millis(lease::for_confirm(&app.config));
        let holder = lease::holder(&app.worker_id);
        let (refund, stored) = app.db.store_orphan_refund(&orphan, &holder, until).await?;
        if !stored {
            return Ok(match refund.status.as_str() {
                "REQUESTED" => "refund being sent (recovery sends it again with the same key)".to_owned(),
                status => {
                    let code = refund.failure_code.as_deref().unwrap_or("-");
                    format!("refund {status} earlier ({code}); needs an operator")
                }
            });
        }
        renew(app).await?;
        let place = self.adapter.place().await?;
        let canceled = orphan_recovery::send(app, self.ledger, place, &refund).await?;
        let described = canceled.reply.describe();
        orphan_recovery::settle(app, &refund, &canceled.verdict, &described).await?;
        Ok(match canceled.verdict {
            OrphanCancel::Refunded => "refunded".to_owned(),
            OrphanCancel::Refused(code) => format!("refund refused ({code}); needs an operator"),
            OrphanCancel::Retry => {
                let next_at = now_ms() + app.timings().first_check_delay_ms();
                let kind = JobKind::OrphanRefund;
                app.db.release_job(kind, &charge.payment_key, &holder, Some(next_at), false, Some(&described)).await?;
                app.recovery_wake.notify_one();
                "refund sent, outcome unknown; recovery sends it again with the same key".to_owned()
            }
        })
    }
}

/// Renews the pass's lease; a pass that lost it stops before its next PG call.
async fn renew(app: &App) -> Result<(), AppError> {
    let until = now_ms() + lease::millis(lease::for_confirm(&app.config));
    if app.db.renew_pass_lease(RECONCILE_JOB, &app.worker_id, until).await? {
        Ok(())
    } else {
        Err(AppError::ReconcileRunning)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str, payment_key: &str, order_id: &str, kind: EntryKind, amount: u64) -> LedgerEntry {
        LedgerEntry {
            key: key.to_owned(),
            payment_key: payment_key.to_owned(),
            order_id: order_id.to_owned(),
            kind,
            amount,
        }
    }

    fn shop(status: OrderStatus, payment_key: Option<&str>, amount: u64, refunded: u64) -> ShopPayment {
        ShopPayment {
            order_id: "ord".to_owned(),
            amount,
            status,
            payment_key: payment_key.map(str::to_owned),
            refunded_amount: refunded,
            attempt_created_at_ms: Some(1),
            paid_at_ms: Some(2),
        }
    }

    #[test]
    fn cancels_add_up_on_their_approval_and_earlier_ones_are_counted_apart() {
        let listed = [
            entry("t0", "old", "o0", EntryKind::Cancel, 500),
            entry("t1", "a", "o1", EntryKind::Approval, 1_000),
            entry("t2", "b", "o2", EntryKind::Approval, 2_000),
            entry("t3", "a", "o1", EntryKind::Cancel, 300),
            entry("t4", "a", "o1", EntryKind::Other, 900),
            entry("t5", "a", "o1", EntryKind::Cancel, 700),
        ];
        let (charges, earlier) = charges(&listed);
        assert_eq!(earlier, 1);
        assert_eq!(
            charges.iter().map(|c| (c.payment_key.as_str(), c.amount, c.refunded)).collect::<Vec<_>>(),
            [("a", 1_000, 1_000), ("b", 2_000, 0)]
        );
    }

    #[test]
    fn only_orders_paid_before_the_listing_began_need_their_approval_listed() {
        let mut listed = shop(OrderStatus::Paid, Some("listed"), 1_000, 0);
        listed.order_id = "listed".into();
        let mut missing = shop(OrderStatus::Paid, Some("missing"), 1_000, 0);
        missing.order_id = "missing".into();
        let mut late = shop(OrderStatus::Paid, Some("late"), 1_000, 0);
        late.order_id = "late".into();
        late.paid_at_ms = Some(100);
        let all = [listed, missing, late];
        let approved: HashSet<&str> = ["listed"].into_iter().collect();
        let found: Vec<&str> =
            paid_without_charge(&all, &approved, 100).iter().map(|shop| shop.order_id.as_str()).collect();
        assert_eq!(found, ["missing"]);
    }

    #[test]
    fn a_listing_must_show_the_approvals_of_attempts_from_a_second_into_its_window_until_the_pass_began() {
        assert_eq!(attempts_within(10_000, 99_000), (11_000, 99_000));
    }

    #[test]
    fn an_orphan_refund_has_one_key_per_payment() {
        assert_eq!(orphan_refund_key("pk_1"), orphan_refund_key("pk_1"));
        assert_ne!(orphan_refund_key("pk_1"), orphan_refund_key("pk_2"));
        assert!(orphan_refund_key("pk_1").len() <= 64);
    }
}

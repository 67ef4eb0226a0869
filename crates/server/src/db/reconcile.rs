//! What reconciliation reads and writes: the shop's side of each payment, the
//! job's lease (one server of a cluster runs a pass), each pass's report, and
//! the refunds of charges no order of the shop made.

use payonce_api::{OrderStatus, Pg};
use sqlx::FromRow;

use super::{Db, now_ms};

/// The job whose lease a reconciliation pass holds.
pub const RECONCILE_JOB: &str = "reconcile";

/// An order as reconciliation compares it with the PG's transactions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShopPayment {
    pub order_id: String,
    /// What the order costs.
    pub amount: u64,
    /// CREATED while the order has no attempt.
    pub status: OrderStatus,
    /// The payment the order's attempt confirmed (or is confirming); `None` without one.
    pub payment_key: Option<String>,
    pub refunded_amount: u64,
    /// When the attempt was stored (before its confirm went out); `None` without one.
    pub attempt_created_at_ms: Option<i64>,
    /// When the order was first PAID.
    pub paid_at_ms: Option<i64>,
}

#[derive(Debug, FromRow)]
struct ShopPaymentRow {
    order_id: String,
    amount: i64,
    status: Option<String>,
    payment_key: Option<String>,
    refunded_amount: Option<i64>,
    attempt_created_at_ms: Option<i64>,
    paid_at_ms: Option<i64>,
}

const SELECT_SHOP_PAYMENT: &str = "SELECT o.order_id, o.amount, a.status, a.payment_key, a.refunded_amount, \
     a.created_at_ms AS attempt_created_at_ms, \
     (SELECT MIN(e.at_ms) FROM payment_events e WHERE e.order_id = o.order_id AND e.to_status = 'PAID') AS paid_at_ms \
     FROM orders o LEFT JOIN payment_attempts a ON a.order_id = o.order_id";

impl TryFrom<ShopPaymentRow> for ShopPayment {
    type Error = sqlx::Error;

    fn try_from(row: ShopPaymentRow) -> Result<Self, Self::Error> {
        let number = |value: i64| u64::try_from(value).map_err(|error| sqlx::Error::Decode(Box::new(error)));
        let status = match row.status.as_deref() {
            None => OrderStatus::Created,
            Some(text) => OrderStatus::parse(text)
                .ok_or_else(|| sqlx::Error::Decode(format!("unknown payment status {text:?}").into()))?,
        };
        Ok(ShopPayment {
            order_id: row.order_id,
            amount: number(row.amount)?,
            status,
            payment_key: row.payment_key,
            refunded_amount: number(row.refunded_amount.unwrap_or(0))?,
            attempt_created_at_ms: row.attempt_created_at_ms,
            paid_at_ms: row.paid_at_ms,
        })
    }
}

/// A refund of a charge no order of the shop made, kept by its payment.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct OrphanRefund {
    /// The PG whose ledger listed the charge.
    #[sqlx(try_from = "String")]
    pub pg: Pg,
    pub payment_key: String,
    pub order_id: String,
    pub amount: i64,
    pub pg_idempotency_key: String,
    pub reason: String,
    pub status: String,
    pub failure_code: Option<String>,
    pub last_pg_answer: Option<String>,
    pub calls: i64,
    /// Passes of the job engine in which the PG answered without settling it.
    pub recovery_passes: i64,
}

/// A refund of a charge no order made, about to be stored.
#[derive(Debug, Clone, Copy)]
pub struct NewOrphanRefund<'a> {
    pub pg: Pg,
    pub payment_key: &'a str,
    /// The PG's orderId, which the shop may not know.
    pub order_id: &'a str,
    pub amount: u64,
    pub pg_idempotency_key: &'a str,
    pub reason: &'a str,
}

/// One stored reconciliation pass.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct StoredRun {
    pub id: i64,
    pub report: String,
}

impl Db {
    /// The order as reconciliation sees it, if the shop has it.
    pub async fn shop_payment(&self, order_id: &str) -> Result<Option<ShopPayment>, sqlx::Error> {
        let query = format!("{SELECT_SHOP_PAYMENT} WHERE o.order_id = $1");
        let row: Option<ShopPaymentRow> = sqlx::query_as(&query).bind(order_id).fetch_optional(&self.pool).await?;
        row.map(ShopPayment::try_from).transpose()
    }

    /// Orders the shop has as charged through `pg` (PAID, CANCEL_REQUESTED,
    /// PARTIALLY_REFUNDED, CANCELED) whose attempt was stored in `[from_ms, to_ms]`:
    /// what the PG's ledger should show.
    pub async fn charged_payments_between(
        &self,
        pg: Pg,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Vec<ShopPayment>, sqlx::Error> {
        let query = format!(
            "{SELECT_SHOP_PAYMENT} WHERE a.status IN ('PAID', 'CANCEL_REQUESTED', 'PARTIALLY_REFUNDED', 'CANCELED') \
             AND a.pg = $1 AND a.created_at_ms >= $2 AND a.created_at_ms <= $3 ORDER BY a.created_at_ms"
        );
        let rows: Vec<ShopPaymentRow> =
            sqlx::query_as(&query).bind(pg.as_str()).bind(from_ms).bind(to_ms).fetch_all(&self.pool).await?;
        rows.into_iter().map(ShopPayment::try_from).collect()
    }

    /// Who last took the job's lease (none yet: `None`), and until when it holds (0: let go).
    pub async fn pass_lease(&self, job: &str) -> Result<(Option<String>, i64), sqlx::Error> {
        sqlx::query_as("SELECT lease_owner, lease_until_ms FROM job_leases WHERE job = $1")
            .bind(job)
            .fetch_one(&self.pool)
            .await
    }

    /// Takes the job's lease if no pass holds it and, with `started_before_ms`,
    /// if the last pass began before then. Says whether it did.
    pub async fn claim_pass_lease(
        &self,
        job: &str,
        owner: &str,
        now_ms: i64,
        until_ms: i64,
        started_before_ms: Option<i64>,
    ) -> Result<bool, sqlx::Error> {
        let claimed = sqlx::query(
            "UPDATE job_leases SET lease_owner = $1, lease_until_ms = $2, last_started_ms = $3 \
             WHERE job = $4 AND lease_until_ms <= $5 AND last_started_ms <= $6",
        )
        .bind(owner)
        .bind(until_ms)
        .bind(now_ms)
        .bind(job)
        .bind(now_ms)
        .bind(started_before_ms.unwrap_or(i64::MAX))
        .execute(&self.writer)
        .await?;
        Ok(claimed.rows_affected() == 1)
    }

    /// Renews `owner`'s lease of the job; says whether it still held it.
    pub async fn renew_pass_lease(&self, job: &str, owner: &str, until_ms: i64) -> Result<bool, sqlx::Error> {
        let renewed = sqlx::query(
            "UPDATE job_leases SET lease_until_ms = $1 WHERE job = $2 AND lease_owner = $3 AND lease_until_ms > 0",
        )
        .bind(until_ms)
        .bind(job)
        .bind(owner)
        .execute(&self.writer)
        .await?;
        Ok(renewed.rows_affected() == 1)
    }

    /// Lets go of the job's lease, if `owner` still holds it.
    pub async fn release_pass_lease(&self, job: &str, owner: &str) -> Result<(), sqlx::Error> {
        sqlx::query("UPDATE job_leases SET lease_until_ms = 0 WHERE job = $1 AND lease_owner = $2")
            .bind(job)
            .bind(owner)
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    /// Stores a pass's report; returns its id.
    pub async fn store_reconcile_run(
        &self,
        started_at_ms: i64,
        runner: &str,
        started_by: &str,
        mismatches: usize,
        report: &str,
    ) -> Result<i64, sqlx::Error> {
        sqlx::query_scalar(
            "INSERT INTO reconcile_runs (started_at_ms, finished_at_ms, runner, started_by, mismatches, report) \
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        )
        .bind(started_at_ms)
        .bind(now_ms())
        .bind(runner)
        .bind(started_by)
        .bind(i64::try_from(mismatches).unwrap_or(i64::MAX))
        .bind(report)
        .fetch_one(&self.writer)
        .await
    }

    /// Replaces a stored pass's report (to carry its own id).
    pub async fn update_reconcile_run(&self, id: i64, report: &str) -> Result<(), sqlx::Error> {
        sqlx::query("UPDATE reconcile_runs SET report = $1 WHERE id = $2")
            .bind(report)
            .bind(id)
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    /// The last pass's report.
    pub async fn last_reconcile_run(&self) -> Result<Option<StoredRun>, sqlx::Error> {
        sqlx::query_as("SELECT id, report FROM reconcile_runs ORDER BY id DESC LIMIT 1")
            .fetch_optional(&self.pool)
            .await
    }

    pub async fn orphan_refund(&self, payment_key: &str) -> Result<Option<OrphanRefund>, sqlx::Error> {
        sqlx::query_as(
            "SELECT pg, payment_key, order_id, amount, pg_idempotency_key, reason, status, failure_code, \
             last_pg_answer, calls, recovery_passes FROM orphan_refunds WHERE payment_key = $1",
        )
        .bind(payment_key)
        .fetch_optional(&self.pool)
        .await
    }

    /// Stores the refund of a charge no order made, held by `lease_owner` until
    /// `lease_until_ms` (the pass that sends it first), unless the charge has
    /// one already. Returns the charge's refund, and whether this call stored it.
    pub async fn store_orphan_refund(
        &self,
        orphan: &NewOrphanRefund<'_>,
        lease_owner: &str,
        lease_until_ms: i64,
    ) -> Result<(OrphanRefund, bool), sqlx::Error> {
        let now = now_ms();
        let stored = sqlx::query(
            "INSERT INTO orphan_refunds (pg, payment_key, order_id, amount, pg_idempotency_key, reason, status, \
             lease_owner, lease_until_ms, created_at_ms, updated_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, 'REQUESTED', $7, $8, $9, $10) ON CONFLICT DO NOTHING",
        )
        .bind(orphan.pg.as_str())
        .bind(orphan.payment_key)
        .bind(orphan.order_id)
        .bind(i64::try_from(orphan.amount).map_err(|error| sqlx::Error::Encode(Box::new(error)))?)
        .bind(orphan.pg_idempotency_key)
        .bind(orphan.reason)
        .bind(lease_owner)
        .bind(lease_until_ms)
        .bind(now)
        .bind(now)
        .execute(&self.writer)
        .await?;
        let refund = self
            .orphan_refund(orphan.payment_key)
            .await?
            .ok_or_else(|| sqlx::Error::Protocol(format!("the refund of {} was not stored", orphan.payment_key)))?;
        Ok((refund, stored.rows_affected() == 1))
    }

    /// Counts a cancel of an orphan charge about to go to the PG.
    pub async fn count_orphan_refund_call(&self, payment_key: &str) -> Result<(), sqlx::Error> {
        sqlx::query("UPDATE orphan_refunds SET calls = calls + 1, updated_at_ms = $1 WHERE payment_key = $2")
            .bind(now_ms())
            .bind(payment_key)
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    /// Records what the PG answered: `status` DONE or FAILED settles the refund
    /// (once), REQUESTED only keeps the answer.
    pub async fn update_orphan_refund(
        &self,
        payment_key: &str,
        status: &str,
        failure_code: Option<&str>,
        last_pg_answer: &str,
    ) -> Result<(), sqlx::Error> {
        sqlx::query(
            "UPDATE orphan_refunds SET status = $1, failure_code = $2, last_pg_answer = $3, updated_at_ms = $4 \
             WHERE payment_key = $5 AND status = 'REQUESTED'",
        )
        .bind(status)
        .bind(failure_code)
        .bind(last_pg_answer)
        .bind(now_ms())
        .bind(payment_key)
        .execute(&self.writer)
        .await?;
        Ok(())
    }

    /// Writes one line of the operators' audit log.
    pub async fn audit(
        &self,
        operator: &str,
        action: &str,
        order_id: Option<&str>,
        detail: &str,
    ) -> Result<(), sqlx::Error> {
        sqlx::query("INSERT INTO audit_log (at_ms, operator, action, order_id, detail) VALUES ($1, $2, $3, $4, $5)")
            .bind(now_ms())
            .bind(operator)
            .bind(action)
            .bind(order_id)
            .bind(detail)
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    /// The audit log's lines about no order (reconciliation runs), oldest first.
    pub async fn audit_log_without_order(&self) -> Result<Vec<super::AuditLine>, sqlx::Error> {
        sqlx::query_as(
            "SELECT at_ms, operator, action, order_id, detail FROM audit_log WHERE order_id IS NULL ORDER BY id",
        )
        .fetch_all(&self.pool)
        .await
    }
}

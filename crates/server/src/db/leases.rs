//! The leases background work is held by, and its schedule: one set of
//! queries for every kind of job (a payment whose outcome is unknown, a refund
//! being sent, a refund of a charge no order made), parameterised by its
//! table. Shops' events use the same columns in their own table, taken in
//! batches (`shop_events`).
//! A worker takes a job whose lease has lapsed with one conditional UPDATE,
//! renews it before each PG call (naming itself; a renewal that finds the job
//! settled or taken over stops the worker), and releases it with when to look
//! again. No connection is held in between.

use super::Db;

/// What the job engine settles in the background.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobKind {
    /// A payment whose outcome is unknown, or that a stopped server left pending.
    Payment,
    /// A refund of an order, being sent until the PG refunds or refuses it.
    Refund,
    /// A refund of a charge no order made, found by reconciliation.
    OrphanRefund,
}

impl JobKind {
    /// Every kind, settled by `payment/jobs.rs`.
    pub const ALL: [JobKind; 3] = [JobKind::Payment, JobKind::Refund, JobKind::OrphanRefund];

    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::Payment => "payment",
            JobKind::Refund => "refund",
            JobKind::OrphanRefund => "orphan_refund",
        }
    }

    fn table(self) -> &'static str {
        match self {
            JobKind::Payment => "payment_attempts",
            JobKind::Refund => "refunds",
            JobKind::OrphanRefund => "orphan_refunds",
        }
    }

    /// The column a job is named by.
    fn key(self) -> &'static str {
        match self {
            JobKind::Payment => "order_id",
            JobKind::Refund => "refund_id",
            JobKind::OrphanRefund => "payment_key",
        }
    }

    /// The rows still to settle: only those are taken, renewed and released.
    fn open(self) -> &'static str {
        match self {
            // An order closed without a confirm has no key and nothing to ask about.
            JobKind::Payment => "status IN ('PENDING', 'UNKNOWN') AND idempotency_key IS NOT NULL",
            JobKind::Refund | JobKind::OrphanRefund => "status = 'REQUESTED'",
        }
    }
}

/// `pg_hinted`: a webhook's hint waits for the next pass over the job.
const HINTED: i64 = 1;
/// `pg_hinted`: the pass holding the job took the hint; its lookup answers it.
const HINT_TAKEN: i64 = 2;
/// `pg_hinted`: a hinted pass let the job go; until a pass of its own backoff
/// takes it, another hint for it costs nothing (it is not made due, nor drawn
/// on the hinted allowance): repeated events, a stranger's included, cannot
/// spend the allowance other customers' payments need. That pass clears it.
const HINT_SPENT: i64 = 3;

impl Db {
    /// Jobs of `kind` a worker may take now: open, their lease lapsed, their
    /// next attempt come; those waiting longest for their turn first.
    pub async fn due_jobs(&self, kind: JobKind, now_ms: i64, limit: u32) -> Result<Vec<String>, sqlx::Error> {
        let query = format!(
            "SELECT {key} FROM {table} WHERE {open} AND next_attempt_at_ms <= $1 AND lease_until_ms <= $2 \
             ORDER BY next_attempt_at_ms, created_at_ms LIMIT $3",
            key = kind.key(),
            table = kind.table(),
            open = kind.open(),
        );
        sqlx::query_scalar(&query).bind(now_ms).bind(now_ms).bind(i64::from(limit)).fetch_all(&self.pool).await
    }

    /// When the next job of `kind` falls due: its next attempt, or its lease's
    /// end if that is later.
    pub async fn next_job_due_ms(&self, kind: JobKind) -> Result<Option<i64>, sqlx::Error> {
        let query = format!(
            "SELECT MIN(CASE WHEN next_attempt_at_ms > lease_until_ms THEN next_attempt_at_ms \
             ELSE lease_until_ms END) FROM {table} WHERE {open}",
            table = kind.table(),
            open = kind.open(),
        );
        sqlx::query_scalar(&query).fetch_one(&self.pool).await
    }

    /// Takes an open job whose lease has lapsed, for `worker` until
    /// `lease_until_ms`. Says whether it did (`None`: it is settled, or
    /// someone else holds it; only the holder calls the PG about it), and
    /// whether a webhook's hint was waiting for it, which the taking answers
    /// (`HINT_TAKEN`) in the same statement: a hint that comes while the job
    /// is held is another, kept for when it is let go.
    pub async fn claim_job(
        &self,
        kind: JobKind,
        key: &str,
        worker: &str,
        now_ms: i64,
        lease_until_ms: i64,
    ) -> Result<Option<bool>, sqlx::Error> {
        let query = format!(
            "UPDATE {table} SET lease_until_ms = $1, lease_owner = $2, \
             pg_hinted = CASE WHEN pg_hinted = {HINTED} THEN {HINT_TAKEN} ELSE 0 END \
             WHERE {key} = $3 AND {open} AND lease_until_ms <= $4 RETURNING CAST(pg_hinted AS BIGINT)",
            table = kind.table(),
            key = kind.key(),
            open = kind.open(),
        );
        let hint: Option<i64> = sqlx::query_scalar(&query)
            .bind(lease_until_ms)
            .bind(worker)
            .bind(key)
            .bind(now_ms)
            .fetch_optional(&self.writer)
            .await?;
        Ok(hint.map(|hint| hint == HINT_TAKEN))
    }

    /// Renews `worker`'s lease of an open job until `until_ms`. Says whether
    /// it did: not if the job was settled, or another worker took it over (the
    /// lease had lapsed), and then this worker must not call the PG.
    pub async fn renew_job(&self, kind: JobKind, key: &str, worker: &str, until_ms: i64) -> Result<bool, sqlx::Error> {
        let query = format!(
            "UPDATE {table} SET lease_until_ms = $1 WHERE {key} = $2 AND lease_owner = $3 AND {open}",
            table = kind.table(),
            key = kind.key(),
            open = kind.open(),
        );
        let renewed = sqlx::query(&query).bind(until_ms).bind(key).bind(worker).execute(&self.writer).await?;
        Ok(renewed.rows_affected() == 1)
    }

    /// Ends `worker`'s hold on a job it did not settle. `next_at_ms` is when to
    /// look again (`None`: when it was due already), unless a webhook hinted
    /// the job meanwhile: then it is due at once, still hinted. `answered` says
    /// the PG answered this pass (only those count toward backoff and the alert).
    /// Returns the answered passes so far; 0 when the job is no longer this
    /// worker's, or no longer open.
    pub async fn release_job(
        &self,
        kind: JobKind,
        key: &str,
        worker: &str,
        next_at_ms: Option<i64>,
        answered: bool,
        last_pg_answer: Option<&str>,
    ) -> Result<u32, sqlx::Error> {
        let query = format!(
            "UPDATE {table} SET lease_until_ms = 0, \
             next_attempt_at_ms = CASE WHEN pg_hinted = {HINTED} THEN 0 ELSE COALESCE($1, next_attempt_at_ms) END, \
             pg_hinted = CASE WHEN pg_hinted = {HINTED} THEN {HINTED} WHEN pg_hinted = {HINT_TAKEN} THEN {HINT_SPENT} \
             ELSE 0 END, \
             recovery_passes = recovery_passes + $2, last_pg_answer = COALESCE($3, last_pg_answer) \
             WHERE {key} = $4 AND lease_owner = $5 AND {open} RETURNING recovery_passes",
            table = kind.table(),
            key = kind.key(),
            open = kind.open(),
        );
        let passes: Option<i64> = sqlx::query_scalar(&query)
            .bind(next_at_ms)
            .bind(i64::from(answered))
            .bind(last_pg_answer)
            .bind(key)
            .bind(worker)
            .fetch_optional(&self.writer)
            .await?;
        Ok(passes.map_or(0, |passes| u32::try_from(passes).unwrap_or(u32::MAX)))
    }

    /// A hint that the order's payment or refund may have settled at the PG (a
    /// webhook): each open job of the order is due at once, its lease left as
    /// it is, so a call still waiting for the PG keeps it and its own answer
    /// settles first; the hint is kept (`pg_hinted`) so that the call's release
    /// leaves the job due, and the pass that takes it next knows a webhook
    /// asked for it (taking the job clears the hint). Says whether any job was
    /// hinted; one hinted and due already (a repeated event), one whose hinted
    /// pass is under way, and one a hinted pass let go since its own last pass
    /// are left alone: a hint for a job already hinted costs nothing.
    pub async fn due_now_for_order(&self, order_id: &str) -> Result<bool, sqlx::Error> {
        let mut made_due = 0;
        for kind in [JobKind::Payment, JobKind::Refund] {
            let query = format!(
                "UPDATE {table} SET next_attempt_at_ms = 0, pg_hinted = {HINTED} WHERE order_id = $1 AND {open} \
                 AND pg_hinted NOT IN ({HINT_TAKEN}, {HINT_SPENT}) \
                 AND NOT (pg_hinted = {HINTED} AND next_attempt_at_ms = 0)",
                table = kind.table(),
                open = kind.open(),
            );
            made_due += sqlx::query(&query).bind(order_id).execute(&self.writer).await?.rows_affected();
        }
        Ok(made_due > 0)
    }

    /// Hands an open job to the engine at once: ends whoever's lease it is
    /// under and makes it due now. For an operator's "ask the PG now", and for
    /// a worker frozen past its lease. Says whether the job is open.
    pub async fn recover_now(&self, kind: JobKind, key: &str) -> Result<bool, sqlx::Error> {
        let query = format!(
            "UPDATE {table} SET lease_until_ms = 0, next_attempt_at_ms = 0 WHERE {key} = $1 AND {open}",
            table = kind.table(),
            key = kind.key(),
            open = kind.open(),
        );
        Ok(sqlx::query(&query).bind(key).execute(&self.writer).await?.rows_affected() == 1)
    }
}

//! A PG's ledger, at a PG that keeps one the shop can read (Toss's
//! transactions): reconciliation compares it with the orders, and refunds in
//! full the charges no order made. A PG without one (KakaoPay lists nothing)
//! is not reconciled: its payments are only ever settled by their lookups.

use std::fmt::Debug;

use async_trait::async_trait;
use payonce_rules::settlement::{OrphanCancel, RefundLookupVerdict};

use super::reply_facts::ReplyFacts;
use crate::db::OrphanRefund;
use crate::pg::PgPlace;

/// What an entry of the ledger records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A payment approved (charged).
    Approval,
    /// A cancel of part or all of a payment.
    Cancel,
    /// Anything else (a payment waiting, aborted, expired): nothing was charged by it.
    Other,
}

/// One entry of the ledger, read by the PG's tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntry {
    /// The entry's own key, which the next page starts after.
    pub key: String,
    pub payment_key: String,
    /// The orderId the payment was made for (another shop's, on a shared account).
    pub order_id: String,
    pub kind: EntryKind,
    pub amount: u64,
}

/// The refund of a charge no order made, as the PG answered its cancel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrphanCanceled {
    pub verdict: OrphanCancel,
    pub reply: ReplyFacts,
}

/// The refund of a charge no order made, as a lookup of its payment shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrphanLooked {
    pub verdict: RefundLookupVerdict,
    pub reply: ReplyFacts,
}

/// What a PG with a ledger provides. Each call goes under a place of the PG's
/// own limit, given back once answered.
#[async_trait]
pub trait PgLedger: Debug + Send + Sync {
    /// A page of at most `limit` entries from `from_ms` to `to_ms` (Unix
    /// milliseconds, both ends included), after the entry keyed `after`; or
    /// what the PG answered instead, described.
    async fn entries(
        &self,
        place: PgPlace,
        from_ms: i64,
        to_ms: i64,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<LedgerEntry>, String>;

    /// Sends the refund of a charge no order made, in full, under its own key.
    async fn refund_orphan(&self, place: PgPlace, refund: &OrphanRefund) -> OrphanCanceled;

    /// Looks the charge up, to see whether its refund is done.
    async fn look_up_orphan_refund(&self, place: PgPlace, refund: &OrphanRefund) -> OrphanLooked;
}

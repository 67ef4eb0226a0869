//! Toss's ledger: its transactions (`GET /v1/transactions`), a page at a
//! time, and the refund in full of a charge no order made, under the key
//! reconciliation derived from its paymentKey.

use std::time::{Duration, UNIX_EPOCH};

use async_trait::async_trait;
use payonce_rules::toss::TossReply;
use payonce_rules::toss::classify::{
    Expected, ExpectedRefund, TransactionKind, describe, orphan_cancel, refund_lookup, refund_lookup_verdict,
    transaction_kind,
};
use payonce_rules::toss::wire::Transaction;

use super::TossAdapter;
use crate::db::{OrphanRefund, PgCaller};
use crate::pg::adapters::ledger::{EntryKind, LedgerEntry, OrphanCanceled, OrphanLooked, PgLedger};
use crate::pg::adapters::{PaymentAt, ReplyFacts};
use crate::pg::{LookupBy, PgPlace, TossCancel};

/// Korean time, in which Toss's listing takes its dates.
const KST_OFFSET: Duration = Duration::from_secs(9 * 60 * 60);

/// A Korean local date-time, `2022-01-01T00:00:00`, of an instant in Unix milliseconds.
fn kst(ms: i64) -> String {
    let time = UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or_default()) + KST_OFFSET;
    let text = humantime::format_rfc3339_seconds(time).to_string();
    text.trim_end_matches('Z').to_owned()
}

/// A transaction as a ledger entry, by Toss's table of its statuses.
fn entry(transaction: Transaction) -> LedgerEntry {
    let kind = match transaction_kind(transaction.status) {
        TransactionKind::Approval => EntryKind::Approval,
        TransactionKind::Cancel => EntryKind::Cancel,
        TransactionKind::Other => EntryKind::Other,
    };
    LedgerEntry {
        key: transaction.transaction_key,
        payment_key: transaction.payment_key,
        order_id: transaction.order_id,
        kind,
        amount: transaction.amount,
    }
}

/// The charge an orphan refund gives back, all of it.
fn charge(refund: &OrphanRefund) -> PaymentAt<'_> {
    PaymentAt {
        order_id: &refund.order_id,
        payment_key: &refund.payment_key,
        amount: u64::try_from(refund.amount).unwrap_or_default(),
    }
}

fn facts(answer: &TossReply) -> ReplyFacts {
    ReplyFacts::of(answer, describe(answer))
}

#[async_trait]
impl PgLedger for TossAdapter {
    async fn entries(
        &self,
        place: PgPlace,
        from_ms: i64,
        to_ms: i64,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<LedgerEntry>, String> {
        let page = self.gateway.client().transactions(&kst(from_ms), &kst(to_ms), after, limit).await;
        drop(place);
        match page {
            Ok(transactions) => Ok(transactions.into_iter().map(entry).collect()),
            Err(answer) => Err(describe(&answer)),
        }
    }

    async fn refund_orphan(&self, place: PgPlace, refund: &OrphanRefund) -> OrphanCanceled {
        let call = TossCancel {
            payment_key: &refund.payment_key,
            order_id: &refund.order_id,
            reason: &refund.reason,
            amount: None,
            idempotency_key: &refund.pg_idempotency_key,
        };
        let answer = self.gateway.cancel(place, call, PgCaller::Reconcile).await;
        let charged = charge(refund);
        tracing::info!(
            order_id = refund.order_id,
            payment_key = refund.payment_key,
            idempotency_key = refund.pg_idempotency_key,
            answer = describe(&answer),
            "refund of a charge without an order sent"
        );
        let verdict = orphan_cancel(&answer, charged.payment_key, charged.order_id, charged.amount);
        OrphanCanceled { verdict, reply: facts(&answer) }
    }

    async fn look_up_orphan_refund(&self, place: PgPlace, refund: &OrphanRefund) -> OrphanLooked {
        let charged = charge(refund);
        let by = LookupBy::PaymentKey(charged.payment_key);
        let answer = self.lookup(place, charged.order_id, by, PgCaller::Reconcile).await;
        // Refunded in full: nothing left of the charge.
        let expected = ExpectedRefund {
            payment: Expected { payment_key: charged.payment_key, order_id: charged.order_id, amount: charged.amount },
            balance_before: charged.amount,
            balance_after: 0,
        };
        OrphanLooked { verdict: refund_lookup_verdict(refund_lookup(&answer, expected)), reply: facts(&answer) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use payonce_rules::toss::wire::PaymentStatus;

    #[test]
    fn listing_dates_are_korean_local_time_to_the_second() {
        // 2023-11-14T22:13:20Z
        assert_eq!(kst(1_700_000_000_999), "2023-11-15T07:13:20");
    }

    #[test]
    fn transactions_are_entries_by_tosss_table_of_statuses() {
        let transaction = |status| Transaction {
            transaction_key: "t".into(),
            payment_key: "pk".into(),
            order_id: "o".into(),
            status,
            amount: 1_000,
            transaction_at: None,
        };
        let kinds: Vec<EntryKind> =
            [PaymentStatus::Done, PaymentStatus::Canceled, PaymentStatus::PartialCanceled, PaymentStatus::Aborted]
                .into_iter()
                .map(|status| entry(transaction(status)).kind)
                .collect();
        assert_eq!(kinds, [EntryKind::Approval, EntryKind::Cancel, EntryKind::Cancel, EntryKind::Other]);
    }
}

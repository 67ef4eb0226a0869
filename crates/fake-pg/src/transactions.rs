//! The transaction ledger behind `GET /v1/transactions`: one Transaction per
//! approval and one per cancel, in the order they happened, as Toss lists them
//! for reconciliation.

use serde::{Deserialize, Serialize};

use crate::payment::{MERCHANT_ID, Payment, PaymentStatus};

/// Toss's default page size, and the most one page may hold.
pub(crate) const DEFAULT_LIMIT: usize = 100;
pub(crate) const MAX_LIMIT: usize = 10_000;

/// Toss's Transaction object.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Transaction {
    #[serde(rename = "mId")]
    pub m_id: String,
    pub transaction_key: String,
    pub payment_key: String,
    pub order_id: String,
    pub method: Option<String>,
    /// The SDK's customer; this fake does not keep it.
    pub customer_key: Option<String>,
    pub use_escrow: bool,
    pub receipt_url: Option<String>,
    /// `DONE` for an approval; for a cancel, what the payment became with it
    /// (`PARTIAL_CANCELED` or `CANCELED`).
    pub status: PaymentStatus,
    pub transaction_at: String,
    pub currency: String,
    /// Charged by an approval, refunded by a cancel.
    pub amount: u64,
}

impl Transaction {
    /// The transaction `payment` just went through: its last transactionKey
    /// and status, for `amount`, at `at`.
    pub(crate) fn of(payment: &Payment, amount: u64, at: String) -> Self {
        Self {
            m_id: MERCHANT_ID.to_owned(),
            transaction_key: payment.last_transaction_key.clone().unwrap_or_default(),
            payment_key: payment.payment_key.clone(),
            order_id: payment.order_id.clone(),
            method: payment.method.clone(),
            customer_key: None,
            use_escrow: payment.use_escrow,
            receipt_url: payment.receipt.as_ref().map(|receipt| receipt.url.clone()),
            status: payment.status,
            transaction_at: at,
            currency: payment.currency.clone(),
            amount,
        }
    }
}

/// Which transactions a listing asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Query {
    /// Unix seconds; both ends inclusive, to the second `transactionAt` shows.
    pub(crate) start: u64,
    pub(crate) end: u64,
    /// Only those after this transactionKey.
    pub(crate) starting_after: Option<String>,
    pub(crate) limit: usize,
}

/// `startingAfter` names no transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UnknownKey;

#[derive(Default)]
pub(crate) struct Ledger {
    /// (Unix seconds, transaction), oldest first.
    entries: Vec<(u64, Transaction)>,
}

impl Ledger {
    pub(crate) fn record(&mut self, at_seconds: u64, transaction: Transaction) {
        self.entries.push((at_seconds, transaction));
    }

    /// One page: the transactions in the range after `starting_after`, at
    /// most `limit`, oldest first. The key may lie outside the range: it only
    /// says where the previous page ended.
    pub(crate) fn page(&self, query: &Query) -> Result<Vec<Transaction>, UnknownKey> {
        let from = match &query.starting_after {
            None => 0,
            Some(key) => {
                self.entries
                    .iter()
                    .position(|(_, transaction)| transaction.transaction_key == *key)
                    .ok_or(UnknownKey)?
                    + 1
            }
        };
        Ok(self.entries[from..]
            .iter()
            .filter(|(at, _)| (query.start..=query.end).contains(at))
            .take(query.limit)
            .map(|(_, transaction)| transaction.clone())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger(times: &[u64]) -> Ledger {
        let mut ledger = Ledger::default();
        for (n, at) in times.iter().enumerate() {
            let mut payment = Payment::ready(format!("pk{n}"), format!("o{n}"), "x".into(), 1_000, "t".into(), None);
            payment.last_transaction_key = Some(format!("tx{n}"));
            ledger.record(*at, Transaction::of(&payment, 1_000, "t".into()));
        }
        ledger
    }

    fn keys(page: Result<Vec<Transaction>, UnknownKey>) -> Vec<String> {
        page.unwrap().into_iter().map(|transaction| transaction.transaction_key).collect()
    }

    fn query(start: u64, end: u64, starting_after: Option<&str>, limit: usize) -> Query {
        Query { start, end, starting_after: starting_after.map(str::to_owned), limit }
    }

    #[test]
    fn pages_follow_the_key_within_the_range() {
        let ledger = ledger(&[10, 20, 20, 30, 40]);
        assert_eq!(keys(ledger.page(&query(20, 30, None, 100))), ["tx1", "tx2", "tx3"], "both ends inclusive");
        assert_eq!(keys(ledger.page(&query(0, 99, None, 2))), ["tx0", "tx1"]);
        assert_eq!(keys(ledger.page(&query(0, 99, Some("tx1"), 2))), ["tx2", "tx3"]);
        assert_eq!(keys(ledger.page(&query(30, 99, Some("tx0"), 9))), ["tx3", "tx4"], "a key before the range");
        assert!(keys(ledger.page(&query(0, 99, Some("tx4"), 9))).is_empty());
        assert_eq!(ledger.page(&query(0, 99, Some("nope"), 9)), Err(UnknownKey));
    }
}

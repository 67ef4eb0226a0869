//! Counters, and the `GET /__admin/stats` body built from them and the payments.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::faults::FrontDoorFault;
use crate::payment::Payment;
use crate::work::Work;

/// The body of `GET /__admin/stats`. Public so other crates' tests can decode it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Every `POST /v1/payments/confirm`, whatever became of it.
    pub confirm_requests: u64,
    /// Every `GET /v1/payments/...` lookup.
    pub lookups: u64,
    /// API requests refused because of a simulated outage.
    pub outage_refusals: u64,
    /// Confirms that started a new processing.
    pub processings: u64,
    /// Confirms and cancels answered from an idempotency record.
    pub replays: u64,
    /// 409 `IDEMPOTENT_REQUEST_PROCESSING` answers (confirms and cancels).
    pub in_progress_conflicts: u64,
    /// 429 answers because the contract limit was reached.
    pub contract_limit_rejections: u64,
    /// Answers to a `TossPayments-Test-Code` header.
    pub test_code_responses: u64,
    /// Confirms and cancels whose caller hung up before the outcome.
    pub abandoned: u64,
    /// Faults injected, from the global rates and window scenarios alike.
    pub faults_injected: FaultCounts,
    /// Processings (confirms and cancels) running now, abandoned ones included.
    pub in_flight: u64,
    /// The most processings that ever ran at once since the last reset.
    pub peak_in_flight: u64,
    /// Payments by Toss status (`READY`, `IN_PROGRESS`, `DONE`, `ABORTED`, ...).
    pub payments_by_status: BTreeMap<String, u64>,
    /// Number of charged payments per orderId (orders with none are left
    /// out): DONE, and approvals canceled later, which were charges too.
    pub charges_by_order: BTreeMap<String, u64>,
    /// OrderIds charged more than once, sorted. Empty unless something is wrong.
    pub double_charges: Vec<String>,
    /// Confirms and lookups about a payment that arrived while another call
    /// about the same payment was still open: two of the shop's workers asking
    /// at once. A shop whose leases hold never makes one (a caller frozen past
    /// its lease can).
    #[serde(default)]
    pub overlapping_calls: u64,
    /// The paymentKeys of those calls, sorted, for finding them in the logs.
    #[serde(default)]
    pub overlapping_payment_keys: Vec<String>,
    /// Every `POST /v1/payments/{paymentKey}/cancel`, whatever became of it.
    #[serde(default)]
    pub cancel_requests: u64,
    /// The same, per orderId of the payment it named (a payment the PG does
    /// not have is left out), so that one order's cancels can be counted while
    /// another order's refund is still being sent.
    #[serde(default)]
    pub cancel_requests_by_order: BTreeMap<String, u64>,
    /// Cancels that started a new processing, refunded or not.
    #[serde(default)]
    pub cancels_processed: u64,
    /// Won refunded per orderId (orders with no refund are left out).
    #[serde(default)]
    pub refunds_by_order: BTreeMap<String, u64>,
    /// OrderIds refunded more than they were charged, sorted. Empty unless
    /// something is wrong.
    #[serde(default)]
    pub over_refunds: Vec<String>,
    /// Webhook events the shop answered 200.
    #[serde(default)]
    pub webhooks_delivered: u64,
    /// Webhook sends that got anything but 200 (each resend counts).
    #[serde(default)]
    pub webhook_failed_sends: u64,
    /// Webhook events given up on after Toss's seven resends.
    #[serde(default)]
    pub webhooks_given_up: u64,
    /// API calls by the `TossPayments-API-Version` they asked for (`none`: without the header).
    #[serde(default)]
    pub api_versions: BTreeMap<String, u64>,
    /// API calls by the HTTP version they came in (`HTTP/1.1`, `HTTP/2.0`).
    #[serde(default)]
    pub http_versions: BTreeMap<String, u64>,
}

/// Faults injected, by kind, and their total.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultCounts {
    pub total: u64,
    pub decline: u64,
    pub error_500: u64,
    /// 500 answered although the payment was charged (`error_500_then_charge`).
    pub error_500_after_charge: u64,
    pub rate_limit_429: u64,
    pub forbidden_consecutive: u64,
    pub reset_after_charge: u64,
    pub reset_before_processing: u64,
    #[serde(default)]
    pub error_500_stored: u64,
    #[serde(default)]
    pub rate_limit_429_held: u64,
}

/// A kind of fault, for counting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FaultKind {
    Decline,
    Error500,
    Error500AfterCharge,
    RateLimit429,
    ForbiddenConsecutive,
    ResetAfterCharge,
    ResetBeforeProcessing,
    Error500Stored,
    RateLimit429Held,
}

impl From<FrontDoorFault> for FaultKind {
    fn from(fault: FrontDoorFault) -> Self {
        match fault {
            FrontDoorFault::ResetBeforeProcessing => FaultKind::ResetBeforeProcessing,
            FrontDoorFault::Error500 => FaultKind::Error500,
            FrontDoorFault::RateLimit429 => FaultKind::RateLimit429,
            FrontDoorFault::RateLimit429Held => FaultKind::RateLimit429Held,
            FrontDoorFault::ForbiddenConsecutive => FaultKind::ForbiddenConsecutive,
        }
    }
}

impl FaultCounts {
    pub(crate) fn count(&mut self, kind: FaultKind) {
        self.total += 1;
        let counter = match kind {
            FaultKind::Decline => &mut self.decline,
            FaultKind::Error500 => &mut self.error_500,
            FaultKind::Error500AfterCharge => &mut self.error_500_after_charge,
            FaultKind::RateLimit429 => &mut self.rate_limit_429,
            FaultKind::ForbiddenConsecutive => &mut self.forbidden_consecutive,
            FaultKind::ResetAfterCharge => &mut self.reset_after_charge,
            FaultKind::ResetBeforeProcessing => &mut self.reset_before_processing,
            FaultKind::Error500Stored => &mut self.error_500_stored,
            FaultKind::RateLimit429Held => &mut self.rate_limit_429_held,
        };
        *counter += 1;
    }
}

/// What the payments show, for [`Stats`]: built payment by payment.
#[derive(Clone, Debug, Default)]
pub(crate) struct Book {
    payments_by_status: BTreeMap<String, u64>,
    charges_by_order: BTreeMap<String, u64>,
    charged_by_order: BTreeMap<String, u64>,
    refunds_by_order: BTreeMap<String, u64>,
}

impl Book {
    pub(crate) fn add(&mut self, payment: &Payment) {
        *self.payments_by_status.entry(payment.status.as_str().to_owned()).or_insert(0) += 1;
        if payment.status.is_charged() {
            *self.charges_by_order.entry(payment.order_id.clone()).or_insert(0) += 1;
            *self.charged_by_order.entry(payment.order_id.clone()).or_insert(0) += payment.total_amount;
        }
        let refunded = payment.refunded();
        if refunded > 0 {
            *self.refunds_by_order.entry(payment.order_id.clone()).or_insert(0) += refunded;
        }
    }
}

/// The counted part of [`Stats`]; the rest is computed from the payments.
#[derive(Clone, Debug, Default)]
pub(crate) struct Counters {
    pub(crate) confirm_requests: u64,
    pub(crate) cancel_requests: u64,
    pub(crate) cancel_requests_by_order: BTreeMap<String, u64>,
    pub(crate) cancels_processed: u64,
    pub(crate) lookups: u64,
    pub(crate) outage_refusals: u64,
    pub(crate) processings: u64,
    pub(crate) replays: u64,
    pub(crate) in_progress_conflicts: u64,
    pub(crate) contract_limit_rejections: u64,
    pub(crate) test_code_responses: u64,
    pub(crate) abandoned: u64,
    pub(crate) faults: FaultCounts,
    pub(crate) in_flight: u64,
    pub(crate) peak_in_flight: u64,
    pub(crate) overlapping_calls: u64,
    pub(crate) overlapping_payment_keys: std::collections::BTreeSet<String>,
    pub(crate) webhooks_delivered: u64,
    pub(crate) webhook_failed_sends: u64,
    pub(crate) webhooks_given_up: u64,
    pub(crate) api_versions: BTreeMap<String, u64>,
    pub(crate) http_versions: BTreeMap<String, u64>,
}

impl Counters {
    pub(crate) fn processing_started(&mut self, work: &Work) {
        match work {
            Work::Approve => self.processings += 1,
            Work::Cancel { .. } => self.cancels_processed += 1,
        }
        self.in_flight += 1;
        self.peak_in_flight = self.peak_in_flight.max(self.in_flight);
    }

    pub(crate) fn processing_ended(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    /// The stats body, given what the payments show.
    pub(crate) fn snapshot(&self, book: Book) -> Stats {
        let Book { payments_by_status, charges_by_order, charged_by_order, refunds_by_order } = book;
        let double_charges = charges_by_order
            .iter()
            .filter(|(_, charges)| **charges > 1)
            .map(|(order_id, _)| order_id.clone())
            .collect();
        let over_refunds = refunds_by_order
            .iter()
            .filter(|(order_id, refunded)| **refunded > charged_by_order.get(*order_id).copied().unwrap_or(0))
            .map(|(order_id, _)| order_id.clone())
            .collect();
        Stats {
            confirm_requests: self.confirm_requests,
            lookups: self.lookups,
            outage_refusals: self.outage_refusals,
            processings: self.processings,
            replays: self.replays,
            in_progress_conflicts: self.in_progress_conflicts,
            contract_limit_rejections: self.contract_limit_rejections,
            test_code_responses: self.test_code_responses,
            abandoned: self.abandoned,
            faults_injected: self.faults.clone(),
            in_flight: self.in_flight,
            peak_in_flight: self.peak_in_flight,
            payments_by_status,
            charges_by_order,
            double_charges,
            overlapping_calls: self.overlapping_calls,
            overlapping_payment_keys: self.overlapping_payment_keys.iter().cloned().collect(),
            cancel_requests: self.cancel_requests,
            cancel_requests_by_order: self.cancel_requests_by_order.clone(),
            cancels_processed: self.cancels_processed,
            refunds_by_order,
            over_refunds,
            webhooks_delivered: self.webhooks_delivered,
            webhook_failed_sends: self.webhook_failed_sends,
            webhooks_given_up: self.webhooks_given_up,
            api_versions: self.api_versions.clone(),
            http_versions: self.http_versions.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn charged(order_id: &str, amount: u64) -> Payment {
        let mut payment =
            Payment::ready(format!("pk-{order_id}-{amount}"), order_id.into(), "x".into(), amount, "t".into(), None);
        payment.authenticate();
        payment.approve("t".into(), "r".into());
        payment
    }

    #[test]
    fn orders_charged_twice_are_double_charges_even_once_canceled() {
        let mut book = Book::default();
        book.add(&charged("a", 1_000));
        let mut canceled = charged("b", 1_000);
        canceled.cancel(1_000, "x".into(), "t".into());
        book.add(&canceled);
        book.add(&charged("b", 1_000));
        let stats = Counters::default().snapshot(book);
        assert_eq!(stats.double_charges, vec!["b".to_owned()]);
        assert_eq!(stats.charges_by_order.get("b"), Some(&2));
        assert_eq!(stats.refunds_by_order, BTreeMap::from([("b".to_owned(), 1_000)]));
        assert!(stats.over_refunds.is_empty());
    }

    #[test]
    fn refunds_beyond_the_charges_of_an_order_are_over_refunds() {
        let mut book = Book::default();
        let mut refunded = charged("a", 1_000);
        refunded.cancel(1_000, "x".into(), "t".into());
        // A refund with no charge behind it: what a broken ledger would show.
        refunded.total_amount = 500;
        book.add(&refunded);
        assert_eq!(Counters::default().snapshot(book).over_refunds, vec!["a".to_owned()]);
    }

    #[test]
    fn peak_follows_the_highest_in_flight() {
        let mut counters = Counters::default();
        counters.processing_started(&Work::Approve);
        counters.processing_started(&Work::Cancel { reason: String::new() });
        counters.processing_ended();
        counters.processing_started(&Work::Approve);
        counters.processing_ended();
        counters.processing_ended();
        assert_eq!((counters.in_flight, counters.peak_in_flight), (0, 2));
        assert_eq!((counters.processings, counters.cancels_processed), (2, 1));
        counters.processing_ended();
        assert_eq!(counters.in_flight, 0);
    }

    #[test]
    fn faults_count_by_kind_and_in_total() {
        let mut faults = FaultCounts::default();
        faults.count(FaultKind::Decline);
        faults.count(FrontDoorFault::RateLimit429.into());
        assert_eq!((faults.total, faults.decline, faults.rate_limit_429), (2, 1, 1));
    }
}

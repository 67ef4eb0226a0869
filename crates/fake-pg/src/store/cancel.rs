//! Cancels: what a cancel is checked against, and what it does to the
//! payment once processed. The rest (idempotency, faults, processing) is the
//! confirm's, in the parent module.

use std::time::{Duration, SystemTime};

use tokio::time::Instant;

use super::{Admitted, Inner, Outcome, Refusal, SessionView, Store, Ticket};
use crate::clock::{kst, unix_seconds};
use crate::error::PgError;
use crate::payment::{Payment, PaymentStatus};
use crate::scenario::Scenario;
use crate::transactions::Transaction;
use crate::work::Work;

/// Toss: of two cancels of one paymentKey within a second, only the first is
/// processed.
const CONSECUTIVE_CANCEL_WINDOW: Duration = Duration::from_secs(1);

/// A cancel that passed input validation.
#[derive(Clone, Debug)]
pub(crate) struct CancelRequest {
    pub(crate) payment_key: String,
    pub(crate) reason: String,
    /// Positive; `None` cancels the whole balance.
    pub(crate) amount: Option<u64>,
    pub(crate) idempotency_key: Option<String>,
}

impl Store {
    /// Decides what a valid cancel leads to, as `begin` does for a confirm.
    /// Toss scopes the key to the URL, which names the payment.
    pub(crate) fn begin_cancel(&self, request: &CancelRequest) -> super::Begin {
        let path = format!("/v1/payments/{}/cancel", request.payment_key);
        let scope = request.idempotency_key.as_deref().map(|key| self.scope(path, key));
        self.begin_with(scope, |inner, now| self.admit_cancel(inner, request, now))
    }

    /// A cancel without an idempotency key that `check` sees first, under the
    /// same lock as the rest of the decision, as `begin_checked` does for a
    /// confirm: a guard on the amount left to refund holds until the cancel
    /// is counted in progress.
    pub(crate) fn begin_cancel_checked<E>(
        &self,
        request: &CancelRequest,
        check: impl FnOnce(Option<&SessionView>) -> Result<(), E>,
    ) -> Result<super::Begin, E> {
        self.begin_checked_with(&request.payment_key, check, |inner, now| self.admit_cancel(inner, request, now))
    }

    /// Checks a cancel that has no stored answer, and starts it.
    fn admit_cancel(&self, inner: &mut Inner, request: &CancelRequest, now: Instant) -> Result<Admitted, Refusal> {
        inner.expire_if_due(&request.payment_key, now);
        let Some(record) = inner.payments.get(&request.payment_key) else {
            return Err(Refusal::AboutThePayment(PgError::NotFoundPayment(format!(
                "paymentKey {}",
                request.payment_key
            ))));
        };
        // Not about the payment but about the request's timing: a retry later
        // with the same key is processed, so it is not stored. The one-second
        // rule is Toss's; KakaoPay documents none.
        let window = self.clock.scaled(CONSECUTIVE_CANCEL_WINDOW);
        let too_soon = record.session.is_none() && record.last_cancel_at.is_some_and(|at| now < at + window);
        if record.cancel_in_progress || too_soon {
            return Err(Refusal::AtTheDoor(PgError::ForbiddenConsecutiveRequest));
        }
        let amount = cancelable(&record.payment, request.amount).map_err(Refusal::AboutThePayment)?;
        if record.scenario == Some(Scenario::ApproveRefundPeriodOver) {
            return Err(Refusal::AboutThePayment(PgError::ExceedMaxRefundDue));
        }
        let order_id = record.payment.order_id.clone();
        // Scenarios of the window describe the confirm; cancels meet the global rates.
        if let Some(fault) = inner.rng.front_door(&inner.config.faults) {
            return Err(Refusal::Fault(fault));
        }
        inner.check_contract_limit()?;
        let mut plan = inner.rng.plan(&inner.config);
        // A cancel has no card to decline; the card company failing it is Toss's PROVIDER_ERROR.
        plan.decline = plan.decline.map(|_| PgError::ProviderError);
        let record = inner.payments.get_mut(&request.payment_key).expect("checked above");
        record.cancel_in_progress = true;
        record.last_cancel_at = Some(now);
        Ok(Admitted {
            payment_key: request.payment_key.clone(),
            order_id,
            amount,
            work: Work::Cancel { reason: request.reason.clone() },
            plan,
        })
    }
}

/// What a cancel of `requested` (or of everything left) may refund.
fn cancelable(payment: &Payment, requested: Option<u64>) -> Result<u64, PgError> {
    match payment.status {
        PaymentStatus::Done | PaymentStatus::PartialCanceled => {}
        PaymentStatus::Canceled => return Err(PgError::AlreadyCanceledPayment),
        status => {
            return Err(PgError::NotCancelablePayment(format!(
                "The payment is {}: only an approved payment (DONE or PARTIAL_CANCELED) can be canceled.",
                status.as_str()
            )));
        }
    }
    let balance = payment.balance_amount;
    match requested {
        None => Ok(balance),
        Some(amount) if amount < balance && !payment.is_partial_cancelable => Err(PgError::NotAllowedPartialRefund),
        Some(amount) if amount <= balance => Ok(amount),
        Some(amount) => Err(PgError::NotCancelableAmount(format!(
            "cancelAmount {amount} is more than the {balance} won left to refund."
        ))),
    }
}

impl Inner {
    /// A cancel's processing ended: refunded (a cancel transaction) or not.
    pub(super) fn settle_cancel(
        &mut self,
        ticket: &Ticket,
        reason: &str,
        outcome: Outcome,
        at: SystemTime,
    ) -> Option<(Outcome, Payment)> {
        let record = self.payments.get_mut(&ticket.payment_key)?;
        record.cancel_in_progress = false;
        // Admission let one cancel of a payment run at a time, so the amount
        // still fits; checking again keeps a refund from ever passing the charge.
        let outcome = match outcome {
            Outcome::Done => match cancelable(&record.payment, Some(ticket.amount)) {
                Ok(amount) => {
                    record.payment.cancel(amount, reason.to_owned(), kst(at));
                    self.ledger.record(unix_seconds(at), Transaction::of(&record.payment, amount, kst(at)));
                    Outcome::Done
                }
                Err(error) => Outcome::Failed(error),
            },
            failed @ Outcome::Failed(_) => failed,
        };
        Some((outcome, record.payment.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{request, settle, start, store, window};
    use super::super::{Begin, Outcome};
    use super::*;

    fn charged(store: &Store) {
        let ticket = start(store, &request(Some("k1"), "pk1", "o1"));
        settle(store, &ticket, Outcome::Done);
    }

    fn cancel(key: Option<&str>, amount: Option<u64>) -> CancelRequest {
        CancelRequest {
            payment_key: "pk1".into(),
            reason: "changed mind".into(),
            amount,
            idempotency_key: key.map(str::to_owned),
        }
    }

    fn started(store: &Store, request: &CancelRequest) -> Ticket {
        match store.begin_cancel(request) {
            Begin::Start(ticket) => ticket,
            _ => panic!("expected a new cancel processing"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_second_cancel_within_a_second_or_while_one_runs_is_refused_unstored() {
        let store = store();
        charged(&store);
        let refused = |key: &str| {
            matches!(
                store.begin_cancel(&cancel(Some(key), Some(100))),
                Begin::Refused(PgError::ForbiddenConsecutiveRequest)
            )
        };
        let first = started(&store, &cancel(Some("c1"), Some(100)));
        tokio::time::advance(Duration::from_millis(500)).await;
        assert!(refused("c2"), "within a second");
        tokio::time::advance(Duration::from_millis(1_500)).await;
        assert!(refused("c2"), "the first is still being processed");
        settle(&store, &first, Outcome::Done);
        // c2 was not stored: now it goes through, and starts a second of its own.
        let second = started(&store, &cancel(Some("c2"), Some(100)));
        settle(&store, &second, Outcome::Done);
        assert!(refused("c3"), "within a second of the second");
        tokio::time::advance(Duration::from_secs(1)).await;
        let third = started(&store, &cancel(Some("c3"), Some(100)));
        settle(&store, &third, Outcome::Done);
        assert_eq!(store.lookup("pk1").unwrap().balance_amount, 700);
        assert_eq!(store.stats().cancels_processed, 3);
    }

    #[test]
    fn refusals_about_the_payment_are_stored_for_the_key() {
        let store = store();
        assert!(matches!(store.begin_cancel(&cancel(Some("c1"), None)), Begin::Refused(PgError::NotFoundPayment(_))));
        charged(&store);
        assert!(matches!(
            store.begin_cancel(&cancel(Some("c1"), None)),
            Begin::Replay(Err(PgError::NotFoundPayment(_)))
        ));
        assert!(matches!(
            store.begin_cancel(&cancel(Some("c2"), Some(1_001))),
            Begin::Refused(PgError::NotCancelableAmount(_))
        ));
        let full = started(&store, &cancel(Some("c3"), None));
        assert_eq!(full.amount, 1_000, "no amount cancels the balance");
    }

    #[test]
    fn a_failed_cancel_refunds_nothing_and_frees_the_payment() {
        let store = store();
        charged(&store);
        let ticket = started(&store, &cancel(None, Some(300)));
        settle(&store, &ticket, Outcome::Failed(PgError::ProviderError));
        let payment = store.lookup("pk1").unwrap();
        assert_eq!((payment.status, payment.balance_amount, payment.cancels), (PaymentStatus::Done, 1_000, None));
        let stats = store.stats();
        assert!(stats.refunds_by_order.is_empty() && stats.in_flight == 0);
    }

    /// A payment charged through the window under `scenario`, and its paymentKey.
    fn charged_under(store: &Store, scenario: Scenario) -> String {
        let payment_key = window(store, "o1");
        store.submit_window(&payment_key, scenario).unwrap();
        let ticket = start(store, &request(Some("k1"), &payment_key, "o1"));
        settle(store, &ticket, Outcome::Done);
        payment_key
    }

    fn cancel_of(payment_key: &str, key: &str, amount: Option<u64>) -> CancelRequest {
        CancelRequest { payment_key: payment_key.into(), ..cancel(Some(key), amount) }
    }

    #[test]
    fn a_card_that_cannot_be_refunded_in_part_refuses_a_partial_cancel_but_not_a_full_one() {
        let store = store();
        let payment_key = charged_under(&store, Scenario::ApproveNoPartialRefund);
        assert!(!store.lookup(&payment_key).unwrap().is_partial_cancelable);
        assert!(matches!(
            store.begin_cancel(&cancel_of(&payment_key, "c1", Some(300))),
            Begin::Refused(PgError::NotAllowedPartialRefund)
        ));
        let full = started(&store, &cancel_of(&payment_key, "c2", Some(1_000)));
        assert_eq!(full.amount, 1_000, "the whole balance is not a partial cancel");
    }

    #[test]
    fn a_payment_past_its_refund_period_refuses_every_cancel_and_the_key_replays_it() {
        let store = store();
        let payment_key = charged_under(&store, Scenario::ApproveRefundPeriodOver);
        assert!(store.lookup(&payment_key).unwrap().is_partial_cancelable);
        let full = cancel_of(&payment_key, "c1", None);
        assert!(matches!(store.begin_cancel(&full), Begin::Refused(PgError::ExceedMaxRefundDue)));
        assert!(matches!(store.begin_cancel(&full), Begin::Replay(Err(PgError::ExceedMaxRefundDue))));
        assert_eq!(store.lookup(&payment_key).unwrap().balance_amount, 1_000);
    }
}

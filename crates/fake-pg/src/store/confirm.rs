//! Confirms: what a valid confirm leads to (its key's stored answer, a refusal
//! in Toss's order, or a processing counted in flight), and how a processing
//! that ended is recorded on the payment.

use std::time::SystemTime;

use tokio::time::Instant;

use super::{
    Admitted, Begin, CONFIRM_DEADLINE, CONFIRM_PATH, Inner, Outcome, Phase, Refusal, SessionView, Store, Ticket,
};
use crate::clock::{kst, unix_seconds};
use crate::error::PgError;
use crate::faults;
use crate::payment::{Failure, Payment, PaymentStatus};
use crate::scenario::Scenario;
use crate::stats::FaultKind;
use crate::transactions::Transaction;
use crate::work::Work;

/// A confirm that passed input validation.
#[derive(Clone, Debug)]
pub(crate) struct ConfirmRequest {
    pub(crate) payment_key: String,
    pub(crate) order_id: String,
    pub(crate) amount: u64,
    pub(crate) idempotency_key: Option<String>,
}

impl Store {
    /// Decides what a valid confirm leads to, and if it is a new processing,
    /// records it as in flight before the lock is released.
    pub(crate) fn begin(&self, request: &ConfirmRequest) -> Begin {
        let scope = request.idempotency_key.as_deref().map(|key| self.scope(CONFIRM_PATH.to_owned(), key));
        self.begin_with(scope, |inner, now| {
            let scenario = self.admit(inner, request, now)?;
            Ok(self.start(inner, request, scenario))
        })
    }

    /// A confirm without an idempotency key that `check` sees first: the
    /// payment as it stands (`None` if there is no session of that key), under
    /// the same lock as the rest of the decision, so that a face other than
    /// Toss's refuses in its own terms what it checks and no second request
    /// slips in between. Its refusal stores and counts nothing.
    pub(crate) fn begin_checked<E>(
        &self,
        request: &ConfirmRequest,
        check: impl FnOnce(Option<&SessionView>) -> Result<(), E>,
    ) -> Result<Begin, E> {
        self.begin_checked_with(&request.payment_key, check, |inner, now| {
            let scenario = self.admit(inner, request, now)?;
            Ok(self.start(inner, request, scenario))
        })
    }

    /// Checks a confirm that has no stored answer against the payment, in
    /// Toss's order. The payment's scenario, if its window set one, on success.
    fn admit(&self, inner: &mut Inner, request: &ConfirmRequest, now: Instant) -> Result<Option<Scenario>, Refusal> {
        if !inner.payments.contains_key(&request.payment_key) {
            if self.strict_sessions {
                return Err(Refusal::AtTheDoor(PgError::NotFoundPaymentSession(format!(
                    "No payment window issued paymentKey {}; this PG runs with strict sessions.",
                    request.payment_key
                ))));
            }
            // A paymentKey no window issued: its first confirm opens it, and
            // fixes its orderId and amount; its ten minutes run from its first sight.
            let first_seen = inner.first_seen.remove(&request.payment_key).unwrap_or(now);
            let confirm_by = first_seen + self.clock.scaled(CONFIRM_DEADLINE);
            inner.insert_made_up(request, confirm_by);
        }
        inner.expire_if_due(&request.payment_key, now);
        let record = inner.payments.get(&request.payment_key).expect("the record exists by now");
        check_matches(&record.payment, request).map_err(Refusal::AtTheDoor)?;
        if record.payment.status == PaymentStatus::Expired {
            return Err(Refusal::AboutThePayment(PgError::NotFoundPaymentSession(
                "The payment session expired: a payment must be confirmed within 10 minutes of its window.".to_owned(),
            )));
        }
        if record.phase != Phase::Open {
            return Err(Refusal::AboutThePayment(PgError::AlreadyProcessedPayment));
        }
        if record.scenario == Some(Scenario::Cancel) {
            return Err(Refusal::AboutThePayment(PgError::NotFoundPaymentSession(
                "The customer canceled this payment in the payment window.".to_owned(),
            )));
        }
        let scenario = record.scenario;
        // KakaoPay does not check its partner_order_id for uniqueness; Toss does.
        if record.session.is_none() && inner.order_charged_elsewhere(&request.order_id, &request.payment_key) {
            return Err(Refusal::AboutThePayment(PgError::DuplicatedOrderId));
        }
        let fault = match scenario {
            Some(scenario) => faults::scenario_front_door(scenario),
            None => inner.rng.front_door(&inner.config.faults),
        };
        if let Some(fault) = fault {
            return Err(Refusal::Fault(fault));
        }
        if scenario.is_none() && inner.rng.stored_error(&inner.config.faults) {
            inner.counters.faults.count(FaultKind::Error500Stored);
            return Err(Refusal::AboutThePayment(PgError::FailedInternalSystemProcessing));
        }
        inner.check_contract_limit()?;
        Ok(scenario)
    }

    /// The processing of a confirm that `admit` let through.
    fn start(&self, inner: &mut Inner, request: &ConfirmRequest, scenario: Option<Scenario>) -> Admitted {
        let plan = match scenario {
            Some(scenario) => faults::scenario_plan(scenario, &inner.config),
            None => inner.rng.plan(&inner.config),
        };
        let record = inner.payments.get_mut(&request.payment_key).expect("admitted payments exist");
        record.phase = Phase::Processing;
        record.payment.authenticate();
        Admitted {
            payment_key: request.payment_key.clone(),
            order_id: request.order_id.clone(),
            amount: request.amount,
            work: Work::Approve,
            plan,
        }
    }
}

impl Inner {
    /// A confirm's processing ended: charged (an approval transaction) or not.
    pub(super) fn settle_approval(
        &mut self,
        ticket: &Ticket,
        outcome: Outcome,
        at: SystemTime,
        receipt_url: String,
    ) -> Option<(Outcome, Payment)> {
        let record = self.payments.get_mut(&ticket.payment_key)?;
        match &outcome {
            Outcome::Done => {
                record.payment.approve(kst(at), receipt_url);
                self.ledger.record(unix_seconds(at), Transaction::of(&record.payment, ticket.amount, kst(at)));
            }
            Outcome::Failed(error) => {
                record.payment.abort(Failure { code: error.code().to_owned(), message: error.to_string() })
            }
        }
        record.phase = Phase::Settled;
        Some((outcome, record.payment.clone()))
    }

    /// A READY payment for a paymentKey no window issued, shaped by its first confirm.
    fn insert_made_up(&mut self, request: &ConfirmRequest, confirm_by: Instant) {
        let payment = Payment::ready(
            request.payment_key.clone(),
            request.order_id.clone(),
            format!("Order {}", request.order_id),
            request.amount,
            crate::clock::now_kst(),
            None,
        );
        self.insert(payment, None, confirm_by);
    }
}

/// Toss checks the confirm against what the window recorded: a mismatch means
/// the merchant's server confirmed a different order or a tampered amount.
fn check_matches(payment: &Payment, request: &ConfirmRequest) -> Result<(), PgError> {
    if payment.order_id != request.order_id {
        return Err(PgError::InvalidRequest(format!(
            "orderId {:?} does not match the payment's orderId {:?}.",
            request.order_id, payment.order_id
        )));
    }
    if payment.total_amount != request.amount {
        return Err(PgError::InvalidRequest(format!(
            "amount {} does not match the payment's amount {}.",
            request.amount, payment.total_amount
        )));
    }
    Ok(())
}

//! Toss Payments: confirms under the attempt's own idempotency key (so one
//! may go again after a lookup showed it unconfirmed), lookups by paymentKey
//! or by the order's id, cancels under the refund's own key, and a lookup
//! before a partial refund that says whether the payment can be refunded in part.
//! Its transactions are a ledger reconciliation reads (`ledger`).

mod ledger;

use std::time::Duration;

use async_trait::async_trait;
use payonce_api::{ConfirmRequest, Failure, Pg};
use payonce_rules::settlement::{FailedBecause, Shown};
use payonce_rules::toss::TossReply;
use payonce_rules::toss::classify::{
    Expected, ExpectedRefund, cancel_answer, cancel_verdict, confirm_answer, describe, failure_of, first_call_verdict,
    order_status_answer, refund_lookup, refund_lookup_verdict, refunded_only_in_full, refunded_total, refusal_code,
    resend_verdict, status_answer, status_verdict,
};
use payonce_rules::toss::messages::customer_message;

use super::ledger::PgLedger;
use super::{
    Canceled, ConfirmCall, Confirmed, Looked, PaymentAt, PgAdapter, Promises, RefundLooked, ReplyFacts, Sent,
    ToConfirm, validate_token,
};
use crate::db::{Db, PgCaller, Refund};
use crate::error::AppError;
use crate::pg::{LookupBy, PgGateway, PgPlace, RESENDING, TossCancel, TossClient, TossConfirm};

/// Longest payment key accepted (Toss keys are under 200 characters).
const PAYMENT_KEY_MAX_LEN: usize = 200;

#[derive(Debug)]
pub struct TossAdapter {
    gateway: PgGateway<TossClient>,
    session_lifetime: Duration,
}

impl TossAdapter {
    pub fn new(gateway: PgGateway<TossClient>, session_lifetime: Duration) -> Self {
        Self { gateway, session_lifetime }
    }

    /// Checks a confirm request's fields for Toss: its paymentKey, and nothing of KakaoPay's.
    pub(super) fn check(request: &ConfirmRequest) -> Result<(), AppError> {
        if request.ready.is_some() {
            return Err(AppError::InvalidRequest {
                message: "ready names a KakaoPay payment: send it with its pg_token".to_owned(),
            });
        }
        validate_token("payment_key", &request.payment_key, PAYMENT_KEY_MAX_LEN)
    }

    async fn lookup(&self, place: PgPlace, order_id: &str, by: LookupBy<'_>, caller: PgCaller) -> TossReply {
        self.gateway.lookup(place, order_id, by, caller).await
    }
}

fn facts(answer: &TossReply) -> ReplyFacts {
    ReplyFacts::of(answer, describe(answer))
}

fn expected<'a>(payment: PaymentAt<'a>) -> Expected<'a> {
    Expected { payment_key: payment.payment_key, order_id: payment.order_id, amount: payment.amount }
}

/// What a refund expects Toss to show.
fn expected_refund(refund: &Refund, order_amount: u64) -> ExpectedRefund<'_> {
    ExpectedRefund {
        payment: Expected { payment_key: &refund.payment_key, order_id: &refund.order_id, amount: order_amount },
        balance_before: refund.balance_before,
        balance_after: refund.balance_after(),
    }
}

fn looked(answer: &TossReply, verdict: payonce_rules::settlement::StatusVerdict) -> Looked {
    Looked {
        shown: Shown { verdict, refunded_total: refunded_total(answer) },
        pg_said: failure_of(answer),
        reply: facts(answer),
    }
}

#[async_trait]
impl PgAdapter for TossAdapter {
    fn pg(&self) -> Pg {
        Pg::Toss
    }

    fn promises(&self) -> Promises {
        Promises { resending: RESENDING, lookup_by_order: true, session_lifetime: self.session_lifetime }
    }

    fn ledger(&self) -> Option<&dyn PgLedger> {
        Some(self)
    }

    async fn try_place(&self) -> Result<Option<PgPlace>, sqlx::Error> {
        self.gateway.try_place().await
    }

    async fn place(&self) -> Result<PgPlace, sqlx::Error> {
        self.gateway.place().await
    }

    async fn to_confirm(&self, _db: &Db, _order_id: &str, request: &ConfirmRequest) -> Result<ToConfirm, AppError> {
        Ok(ToConfirm { payment_key: request.payment_key.clone(), token: None })
    }

    async fn confirm(&self, place: PgPlace, call: ConfirmCall<'_>, caller: PgCaller, send: Sent) -> Confirmed {
        let confirm = TossConfirm {
            payment_key: call.payment_key,
            order_id: call.order_id,
            amount: call.amount,
            idempotency_key: call.idempotency_key,
        };
        let answer = self.gateway.confirm(place, confirm, caller).await;
        let payment = PaymentAt { order_id: call.order_id, payment_key: call.payment_key, amount: call.amount };
        let kind = confirm_answer(&answer, expected(payment));
        let verdict = match send {
            Sent::First => first_call_verdict(kind),
            Sent::Again => resend_verdict(kind),
        };
        Confirmed { verdict, failure: failure_of(&answer), reply: facts(&answer) }
    }

    fn not_sent(&self, detail: String) -> Confirmed {
        let answer = TossReply::NotSent { detail };
        Confirmed {
            verdict: first_call_verdict(confirm_answer(&answer, Expected { payment_key: "", order_id: "", amount: 0 })),
            failure: failure_of(&answer),
            reply: facts(&answer),
        }
    }

    async fn look_up(&self, place: PgPlace, payment: PaymentAt<'_>, caller: PgCaller) -> Looked {
        let answer = self.lookup(place, payment.order_id, LookupBy::PaymentKey(payment.payment_key), caller).await;
        looked(&answer, status_verdict(status_answer(&answer, expected(payment))))
    }

    async fn look_up_by_order(&self, place: PgPlace, order_id: &str, amount: u64, caller: PgCaller) -> Looked {
        let answer = self.lookup(place, order_id, LookupBy::OrderId, caller).await;
        looked(&answer, status_verdict(order_status_answer(&answer, order_id, amount)))
    }

    fn failure_because(&self, why: FailedBecause, looked: &Looked) -> Failure {
        let code = match why {
            FailedBecause::PgSaid => return looked.pg_said.clone(),
            FailedBecause::SessionOver => "EXPIRED_PAYMENT",
            // Toss has no payment of this order under the key it was confirmed with.
            FailedBecause::KeyOfAnotherOrder => "NOT_FOUND_PAYMENT",
        };
        Failure { code: code.to_owned(), message: customer_message(code, None) }
    }

    async fn cancel(
        &self,
        place: PgPlace,
        refund: &Refund,
        order_amount: u64,
        caller: PgCaller,
        _send: Sent,
    ) -> Canceled {
        let call = TossCancel {
            payment_key: &refund.payment_key,
            order_id: &refund.order_id,
            reason: &refund.reason,
            amount: (!refund.full_cancel).then_some(refund.amount),
            idempotency_key: &refund.pg_idempotency_key,
        };
        let answer = self.gateway.cancel(place, call, caller).await;
        Canceled {
            // Toss replays a key's first answer: a refusal proves the same on every send.
            verdict: cancel_verdict(cancel_answer(&answer, expected_refund(refund, order_amount))),
            refunded_total: refunded_total(&answer),
            refusal_code: refusal_code(&answer),
            reply: facts(&answer),
        }
    }

    async fn look_up_refund(
        &self,
        place: PgPlace,
        refund: &Refund,
        order_amount: u64,
        caller: PgCaller,
    ) -> RefundLooked {
        let answer = self.lookup(place, &refund.order_id, LookupBy::PaymentKey(&refund.payment_key), caller).await;
        RefundLooked {
            verdict: refund_lookup_verdict(refund_lookup(&answer, expected_refund(refund, order_amount))),
            refunded_total: refunded_total(&answer),
            reply: facts(&answer),
        }
    }

    async fn refunded_only_in_full(&self, payment: PaymentAt<'_>) -> bool {
        // A lookup that cannot be made now (no free place, no answer) says
        // nothing: the refund goes out, and Toss's refusal ends it.
        let Ok(Some(place)) = self.gateway.try_place().await else { return false };
        let by = LookupBy::PaymentKey(payment.payment_key);
        let answer = self.lookup(place, payment.order_id, by, PgCaller::Operator).await;
        refunded_only_in_full(&answer, expected(payment))
    }
}

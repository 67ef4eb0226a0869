//! KakaoPay: a payment prepared for the order (`ready`) before the customer
//! opens its window is approved once with the window's `pg_token`, looked
//! up by its tid, and refunded with the balance the shop expects before the
//! cancel. It takes no idempotency key, so an approve is never sent again
//! (`Resending::Never`) and there is no lookup by the order's id; and it says
//! nothing of partial refunds before a cancel.

use std::time::Duration;

use async_trait::async_trait;
use payonce_api::{ConfirmRequest, ErrorCode, Failure, Pg, PgWindow};
use payonce_rules::kakaopay::classify::{
    self as tables, Expected, ExpectedRefund, approve_answer, approve_verdict, status_answer, status_verdict,
};
use payonce_rules::kakaopay::messages::{approve_failure, not_approved_failure, status_failure};
use payonce_rules::kakaopay::{self as rules, KakaoPayReply};
use payonce_rules::pg_reply::PgReply;
use payonce_rules::settlement::{FailedBecause, Shown};

use super::{
    Canceled, ConfirmCall, Confirmed, Looked, PaymentAt, PgAdapter, Promises, RefundLooked, ReplyFacts, Sent,
    ToConfirm, WindowFor, validate_token,
};
use crate::db::{Db, KakaoPayReady as StoredReady, PgCaller, Refund, now_ms};
use crate::error::AppError;
use crate::pg::{KakaoPayApprove, KakaoPayCancel, KakaoPayClient, KakaoPayReady, PgGateway, PgPlace};

/// Longest `pg_token` accepted (KakaoPay's are 20 characters).
const PG_TOKEN_MAX_LEN: usize = 100;
/// Longest `ready` accepted (the server's are 32 characters).
const READY_MAX_LEN: usize = 64;

#[derive(Debug)]
pub struct KakaoPayAdapter {
    gateway: PgGateway<KakaoPayClient>,
    session_lifetime: Duration,
}

impl KakaoPayAdapter {
    pub fn new(gateway: PgGateway<KakaoPayClient>, session_lifetime: Duration) -> Self {
        Self { gateway, session_lifetime }
    }

    /// Checks a confirm request's fields for KakaoPay: its pg_token, and the ready its return names.
    pub(super) fn check(request: &ConfirmRequest) -> Result<(), AppError> {
        validate_token("pg_token", request.pg_token.as_deref().unwrap_or_default(), PG_TOKEN_MAX_LEN)?;
        match &request.ready {
            Some(ready) => validate_token("ready", ready, READY_MAX_LEN),
            None => Ok(()),
        }
    }

    fn session_millis(&self) -> i64 {
        i64::try_from(self.session_lifetime.as_millis()).unwrap_or(i64::MAX)
    }
}

fn window(ready: StoredReady) -> PgWindow {
    PgWindow { pc_url: ready.pc_url, mobile_url: ready.mobile_url }
}

fn facts<T>(answer: &KakaoPayReply<T>) -> ReplyFacts {
    ReplyFacts::of(answer, answer.describe())
}

/// What a refund expects KakaoPay to show.
fn expected_refund(refund: &Refund) -> ExpectedRefund<'_> {
    ExpectedRefund { tid: &refund.payment_key, balance_before: refund.balance_before, amount: refund.amount }
}

#[async_trait]
impl PgAdapter for KakaoPayAdapter {
    fn pg(&self) -> Pg {
        Pg::KakaoPay
    }

    fn promises(&self) -> Promises {
        Promises { resending: rules::RESENDING, lookup_by_order: false, session_lifetime: self.session_lifetime }
    }

    async fn try_place(&self) -> Result<Option<PgPlace>, sqlx::Error> {
        self.gateway.try_place().await
    }

    async fn place(&self) -> Result<PgPlace, sqlx::Error> {
        self.gateway.place().await
    }

    /// The payment prepared for the order, or one prepared now. A prepared
    /// payment is shown again while less than half its time has passed (a
    /// customer who comes back to the window needs time to pay); after that a
    /// new one replaces it in the order's window, and the old one can still be
    /// finished and approved (its return names it). A ready whose answer is
    /// lost leaves a tid at KakaoPay that nothing here knows and nothing
    /// approves: it expires there.
    async fn prepare_window(&self, db: &Db, order: WindowFor<'_>) -> Result<PgWindow, AppError> {
        let fresh_after_ms = now_ms() - self.session_millis() / 2;
        if let Some(ready) = db.kakaopay_ready(order.order_id).await?.filter(|ready| ready.ready_at_ms > fresh_after_ms)
        {
            return Ok(window(ready));
        }
        let place = self.gateway.try_place().await?.ok_or_else(|| AppError::PgNotReady {
            code: ErrorCode::PgBusy,
            detail: "every call KakaoPay's contract allows is under way".to_owned(),
        })?;
        let (public, order_id) = (order.public_base_url, order.order_id);
        let back = format!("pg={}&orderId={order_id}&amount={}", self.pg().as_str(), order.amount);
        // The return names its ready: the window's pg_token approves only that tid.
        let ready_id = uuid::Uuid::new_v4().simple().to_string();
        let urls = [
            format!("{public}/pay/success?{back}&ready={ready_id}"),
            format!("{public}/pay/fail?{back}&code={}", rules::messages::QUIT),
            format!("{public}/pay/fail?{back}&code={}", rules::messages::WINDOW_FAILED),
        ];
        let call = KakaoPayReady {
            order_id,
            customer_id: order.customer_id,
            item_name: order.order_name,
            amount: order.amount,
            approval_url: &urls[0],
            cancel_url: &urls[1],
            fail_url: &urls[2],
        };
        // KakaoPay's fifteen minutes run from its ready, which is not before this.
        let asked_at_ms = now_ms();
        let ready = match self.gateway.ready(place, call).await {
            KakaoPayReply::Body { body, .. } => StoredReady {
                order_id: order_id.to_owned(),
                ready_id,
                tid: body.tid,
                pc_url: body.next_redirect_pc_url,
                mobile_url: body.next_redirect_mobile_url,
                ready_at_ms: asked_at_ms,
            },
            unprepared => {
                let code = match unprepared {
                    KakaoPayReply::NotSent { .. } | KakaoPayReply::NoReply { .. } => ErrorCode::PgUnreachable,
                    _ => ErrorCode::PgRefused,
                };
                tracing::warn!(order_id, answer = unprepared.describe(), "KakaoPay did not prepare the payment");
                return Err(AppError::PgNotReady { code, detail: unprepared.describe() });
            }
        };
        tracing::info!(order_id, tid = ready.tid, "KakaoPay payment prepared");
        // Another request may have prepared one meanwhile: the stored one is the order's.
        Ok(window(db.store_kakaopay_ready(&ready, fresh_after_ms).await?))
    }

    /// The tid of the payment prepared for the order as the window's return
    /// names it (`ready`), while it can still be approved: the window's
    /// pg_token was issued for that tid, though a newer ready may have
    /// replaced it in the order's window since. A return that names none
    /// (prepared before returns named theirs) approves the order's latest.
    async fn to_confirm(&self, db: &Db, order_id: &str, request: &ConfirmRequest) -> Result<ToConfirm, AppError> {
        let pg_token = request.pg_token.as_deref().unwrap_or_default();
        let ready = match &request.ready {
            Some(ready_id) => db.kakaopay_ready_named(order_id, ready_id).await?,
            None => db.kakaopay_ready(order_id).await?,
        };
        let usable = ready.filter(|ready| ready.ready_at_ms > now_ms() - self.session_millis());
        let tid = usable.map(|ready| ready.tid).ok_or(AppError::PaymentNotPrepared)?;
        Ok(ToConfirm { payment_key: tid, token: Some(pg_token.to_owned()) })
    }

    async fn confirm(&self, place: PgPlace, call: ConfirmCall<'_>, caller: PgCaller, send: Sent) -> Confirmed {
        let (Sent::First, Some(pg_token), Some(customer_id)) = (send, call.token, call.customer_id) else {
            // The rules never resend without a key, and an approve needs the window's token.
            tracing::error!(order_id = call.order_id, ?send, "an approve KakaoPay cannot take was asked for");
            return self.not_sent("KakaoPay takes one approve, with the window's pg_token".to_owned());
        };
        let approve = KakaoPayApprove {
            tid: call.payment_key,
            order_id: call.order_id,
            customer_id,
            pg_token,
            amount: call.amount,
        };
        let answer = self.gateway.approve(place, approve, caller).await;
        let expected = Expected { tid: call.payment_key, order_id: call.order_id, amount: call.amount };
        let kind = approve_answer(&answer, expected);
        tracing::info!(
            order_id = call.order_id,
            tid = call.payment_key,
            answer = answer.describe(),
            ?kind,
            "KakaoPay approve"
        );
        Confirmed { verdict: approve_verdict(kind), failure: approve_failure(kind, &answer), reply: facts(&answer) }
    }

    fn not_sent(&self, detail: String) -> Confirmed {
        let answer = KakaoPayReply::<payonce_rules::kakaopay::wire::Approval>::NotSent { detail };
        let kind = approve_answer(&answer, Expected { tid: "", order_id: "", amount: 0 });
        Confirmed { verdict: approve_verdict(kind), failure: approve_failure(kind, &answer), reply: facts(&answer) }
    }

    async fn look_up(&self, place: PgPlace, payment: PaymentAt<'_>, caller: PgCaller) -> Looked {
        let answer = self.gateway.order(place, payment.order_id, payment.payment_key, caller).await;
        let expected = Expected { tid: payment.payment_key, order_id: payment.order_id, amount: payment.amount };
        let kind = status_answer(&answer, expected);
        tracing::debug!(
            order_id = payment.order_id,
            tid = payment.payment_key,
            answer = answer.describe(),
            ?kind,
            "KakaoPay lookup"
        );
        let status = match &answer {
            KakaoPayReply::Body { body, .. } => Some(body.status),
            _ => None,
        };
        Looked {
            shown: Shown { verdict: status_verdict(kind), refunded_total: tables::refunded_total(&answer) },
            pg_said: status_failure(status),
            reply: facts(&answer),
        }
    }

    async fn look_up_by_order(&self, _place: PgPlace, order_id: &str, _amount: u64, _caller: PgCaller) -> Looked {
        // Never asked (`lookup_by_order` is false): it would show nothing.
        tracing::error!(order_id, "a lookup by order KakaoPay cannot make was asked for");
        let answer = KakaoPayReply::<payonce_rules::kakaopay::wire::Order>::NotSent {
            detail: "KakaoPay looks payments up only by their tid".to_owned(),
        };
        Looked {
            shown: Shown {
                verdict: status_verdict(status_answer(&answer, Expected { tid: "", order_id, amount: 0 })),
                refunded_total: None,
            },
            pg_said: status_failure(None),
            reply: facts(&answer),
        }
    }

    fn failure_because(&self, why: FailedBecause, looked: &Looked) -> Failure {
        match why {
            // The customer finished in time: the one approve was never processed.
            FailedBecause::SessionOver => not_approved_failure(),
            FailedBecause::PgSaid | FailedBecause::KeyOfAnotherOrder => looked.pg_said.clone(),
        }
    }

    async fn cancel(
        &self,
        place: PgPlace,
        refund: &Refund,
        _order_amount: u64,
        caller: PgCaller,
        send: Sent,
    ) -> Canceled {
        let call = KakaoPayCancel {
            tid: &refund.payment_key,
            order_id: &refund.order_id,
            amount: refund.amount,
            balance_before: refund.balance_before,
        };
        let answer = self.gateway.cancel(place, call, caller).await;
        Canceled {
            verdict: tables::cancel_verdict(tables::cancel_answer(&answer, expected_refund(refund)), send),
            refunded_total: tables::canceled_total(&answer),
            refusal_code: tables::refusal_code(&answer),
            reply: facts(&answer),
        }
    }

    async fn look_up_refund(
        &self,
        place: PgPlace,
        refund: &Refund,
        _order_amount: u64,
        caller: PgCaller,
    ) -> RefundLooked {
        let answer = self.gateway.order(place, &refund.order_id, &refund.payment_key, caller).await;
        RefundLooked {
            verdict: tables::refund_lookup_verdict(tables::refund_lookup(&answer, expected_refund(refund))),
            refunded_total: tables::refunded_total(&answer),
            reply: facts(&answer),
        }
    }
}

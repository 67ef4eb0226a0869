//! KakaoPay's payments, beside Toss's: preparing one for an order (`ready`)
//! before the customer's window, its one approve, and recovery's lookups of it.
//! KakaoPay takes no idempotency key, so an approve is never sent again: an
//! approve whose answer was lost is settled by looking the payment up by its
//! tid, and one never approved settles FAILED once its 15 minutes (and the
//! longest processing) are over. The approve goes out only while the confirm
//! task's lease holds, so a task that wakes later sends nothing. What each
//! answer means is the rules' (`payonce_rules::kakaopay::classify`); this
//! module does the I/O.

use payonce_api::{ErrorCode, KakaoPayWindow, Order, OrderStatus};
use payonce_rules::kakaopay::classify::{
    Expected, approve_answer, approve_verdict, refunded_total, status_answer, status_verdict,
};
use payonce_rules::kakaopay::messages::{approve_failure, not_approved_failure, status_failure};
use payonce_rules::kakaopay::wire::Order as KakaoPayOrder;
use payonce_rules::kakaopay::{self as rules, KakaoPayReply};
use payonce_rules::pg_reply::PgReply;
use payonce_rules::settlement::{
    AttemptAge, Deadlines, FailedBecause, PaymentStep, Shown, StatusVerdict, Transition, after_first_call, after_lookup,
};

use super::pass::{Job, Recovered, look_up_at};
use crate::app::App;
use crate::customer::Customer;
use crate::db::{Attempt, KakaoPayReady as StoredReady, PgCaller, now_ms};
use crate::error::AppError;
use crate::pg::{KakaoPayApprove, KakaoPayClient, KakaoPayReady, PgGateway, PgPlace};
use crate::resilience::lease;

/// KakaoPay's gateway, or the error a customer gets where the shop does not take it.
pub(super) fn gateway(app: &App) -> Result<&PgGateway<KakaoPayClient>, AppError> {
    app.kakaopay.as_ref().ok_or(AppError::PgNotOffered("KakaoPay"))
}

/// Where KakaoPay's window is for the order: the payment prepared for it, or
/// one prepared now. A prepared payment is shown again while less than half its
/// time has passed (a customer who comes back to the window needs time to pay);
/// after that a new one replaces it in the order's window, and the old one can
/// still be finished and approved (its return names it). A ready whose answer
/// is lost leaves a tid at KakaoPay that nothing here knows and nothing
/// approves: it expires there.
pub async fn prepare(app: &App, customer: &Customer, order_id: &str) -> Result<KakaoPayWindow, AppError> {
    let gateway = gateway(app)?;
    let order = app.db.customer_order(&customer.0, order_id).await?.ok_or(AppError::OrderNotFound)?;
    // CREATED is an order without an attempt: no confirm was ever stored for it.
    if order.status != OrderStatus::Created {
        return Err(already_under_way(order));
    }
    let fresh_after_ms = now_ms() - lease::millis(app.config.kakaopay_session_lifetime / 2);
    if let Some(ready) = app.db.kakaopay_ready(order_id).await?.filter(|ready| ready.ready_at_ms > fresh_after_ms) {
        return Ok(window(ready));
    }
    let place = gateway.try_place().await?.ok_or_else(|| AppError::PgNotReady {
        code: ErrorCode::PgBusy,
        detail: "every call KakaoPay's contract allows is under way".to_owned(),
    })?;
    let public = app.config.public_base_url();
    let back = format!("pg=kakaopay&orderId={order_id}&amount={}", order.amount);
    // The return names its ready: the window's pg_token approves only that tid.
    let ready_id = uuid::Uuid::new_v4().simple().to_string();
    let urls = [
        format!("{public}/pay/success?{back}&ready={ready_id}"),
        format!("{public}/pay/fail?{back}&code={}", rules::messages::QUIT),
        format!("{public}/pay/fail?{back}&code={}", rules::messages::WINDOW_FAILED),
    ];
    let call = KakaoPayReady {
        order_id,
        customer_id: &customer.0,
        item_name: &order.order_name,
        amount: order.amount,
        approval_url: &urls[0],
        cancel_url: &urls[1],
        fail_url: &urls[2],
    };
    // KakaoPay's fifteen minutes run from its ready, which is not before this.
    let asked_at_ms = now_ms();
    let answer = gateway.ready(place, call).await;
    let ready = match answer {
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
    Ok(window(app.db.store_kakaopay_ready(&ready, fresh_after_ms).await?))
}

fn window(ready: StoredReady) -> KakaoPayWindow {
    KakaoPayWindow { pc_url: ready.pc_url, mobile_url: ready.mobile_url }
}

/// An order whose payment is under way or over cannot be prepared again.
fn already_under_way(order: Order) -> AppError {
    let order = Box::new(order);
    match order.status {
        OrderStatus::Failed => AppError::OrderAlreadyFailed { order },
        OrderStatus::Created | OrderStatus::Pending | OrderStatus::Unknown => AppError::PaymentInProgress { order },
        OrderStatus::Paid | OrderStatus::PartiallyRefunded | OrderStatus::CancelRequested | OrderStatus::Canceled => {
            AppError::OrderAlreadyPaid { order }
        }
    }
}

/// The tid of the payment prepared for `order_id` as the window's return
/// names it (`ready`), while it can still be approved: the window's pg_token
/// was issued for that tid, though a newer ready may have replaced it in the
/// order's window since. A return that names none (prepared before returns
/// named theirs) approves the order's latest.
pub(super) async fn prepared_tid(app: &App, order_id: &str, ready_id: Option<&str>) -> Result<String, AppError> {
    let lifetime = lease::millis(app.config.kakaopay_session_lifetime);
    let ready = match ready_id {
        Some(ready_id) => app.db.kakaopay_ready_named(order_id, ready_id).await?,
        None => app.db.kakaopay_ready(order_id).await?,
    };
    let usable = ready.filter(|ready| ready.ready_at_ms > now_ms() - lifetime);
    usable.map(|ready| ready.tid).ok_or(AppError::PaymentNotPrepared)
}

/// The one approve of a stored PENDING attempt, and the transition its answer
/// leads to (with the metric's label).
/// The approve goes out only while the confirm task's lease holds
/// (`since_stored` after the attempt was stored): one that woke later sends
/// nothing, and the attempt fails as never sent.
pub(super) async fn approve(
    app: &App,
    gateway: &PgGateway<KakaoPayClient>,
    place: PgPlace,
    call: KakaoPayApprove<'_>,
    since_stored: std::time::Duration,
) -> (&'static str, Transition) {
    let answer = if approve_may_go(app, since_stored) {
        gateway.approve(place, call, PgCaller::Customer).await
    } else {
        tracing::error!(
            order_id = call.order_id,
            tid = call.tid,
            since_stored_ms = since_stored.as_millis(),
            "the confirm task woke after its lease: the approve is not sent, and recovery may have settled the attempt"
        );
        KakaoPayReply::NotSent { detail: "the approve was due while the lease held, and was not sent after".to_owned() }
    };
    let kind = approve_answer(&answer, Expected { tid: call.tid, order_id: call.order_id, amount: call.amount });
    let verdict = approve_verdict(kind);
    tracing::info!(order_id = call.order_id, tid = call.tid, answer = answer.describe(), ?kind, "KakaoPay approve");
    let label = super::settle::first_call_label(verdict);
    (label, after_first_call(verdict, || approve_failure(kind, &answer), || answer.describe()))
}

/// A recovery pass's lookup of a KakaoPay attempt, and the step it leads to.
/// Never a resend: the rules say so for a PG without keys (`RESENDING`), and
/// there is no lookup by the order's id to make.
pub(super) async fn look_up(
    app: &App,
    job: Job<'_>,
    attempt: &Attempt,
) -> Result<Result<(PaymentStep, StatusVerdict, String), (Recovered, Option<String>)>, AppError> {
    let gateway = gateway(app).map_err(|_| {
        AppError::Internal(format!("order {} was paid with KakaoPay, which is no longer configured", attempt.order_id))
    })?;
    let expected = Expected { tid: &attempt.payment_key, order_id: &attempt.order_id, amount: attempt.amount };
    let age = AttemptAge::at(attempt.created_at_ms, now_ms(), nothing_charges_after(app));
    let (order_id, tid) = (attempt.order_id.as_str(), attempt.payment_key.as_str());
    let lookup = |place| gateway.order(place, order_id, tid, PgCaller::Recovery);
    let usable =
        |answer: &KakaoPayReply<KakaoPayOrder>| status_verdict(status_answer(answer, expected)) != StatusVerdict::Retry;
    let looked_up = look_up_at(app, gateway, job, lookup, usable).await?;
    let answer = match looked_up.answer() {
        Ok(answer) => answer,
        Err(ended) => return Ok(Err(ended)),
    };
    let kind = status_answer(&answer, expected);
    let shown = Shown { verdict: status_verdict(kind), refunded_total: refunded_total(&answer) };
    tracing::debug!(order_id, tid, answer = answer.describe(), ?kind, "recovery looked the KakaoPay payment up");
    let status = match &answer {
        KakaoPayReply::Body { body, .. } => Some(body.status),
        _ => None,
    };
    let step = after_lookup(shown, age, rules::RESENDING, |why| match why {
        FailedBecause::SessionOver => not_approved_failure(),
        FailedBecause::PgSaid | FailedBecause::KeyOfAnotherOrder => status_failure(status),
    });
    Ok(Ok((step, shown.verdict, answer.describe())))
}

/// When a KakaoPay attempt is past its time (see `nothing_charges_after`), a
/// moment after it, so that the lookup then sees it over.
pub(super) fn session_over_at_ms(app: &App, attempt: &Attempt) -> Option<i64> {
    let past = lease::millis(nothing_charges_after(app)) + lease::millis(lease::margin(&app.config));
    attempt.created_at_ms.checked_add(past)
}

/// Whether the customer's one approve may still go out, `since_stored` after
/// its attempt was stored (the rules' `Deadlines`).
pub(super) fn approve_may_go(app: &App, since_stored: std::time::Duration) -> bool {
    deadlines(app).first_call_may_go(since_stored, rules::RESENDING)
}

/// How old a KakaoPay attempt must be before nothing unapproved can be
/// charged: its 15 minutes, plus the longest an approve can be processed
/// (the rules' `Deadlines`). Counted from the attempt, stored after the
/// payment was prepared, so it ends after KakaoPay's own clock does.
fn nothing_charges_after(app: &App) -> std::time::Duration {
    deadlines(app).nothing_charges_after(rules::RESENDING)
}

fn deadlines(app: &App) -> Deadlines {
    lease::deadlines(&app.config, app.config.kakaopay_session_lifetime)
}

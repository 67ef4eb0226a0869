//! KakaoPay's window: the payment prepared for an order (`ready`) before the
//! customer opens it. Approving, looking up and refunding it is KakaoPay's
//! adapter's (`pg::adapters::kakaopay`), through the same payment code as every PG.

use payonce_api::{ErrorCode, KakaoPayWindow, Order, OrderStatus};
use payonce_rules::kakaopay::{self as rules, KakaoPayReply};
use payonce_rules::pg_reply::PgReply;

use crate::app::App;
use crate::customer::Customer;
use crate::db::{KakaoPayReady as StoredReady, now_ms};
use crate::error::AppError;
use crate::pg::{KakaoPayClient, KakaoPayReady, PgGateway};
use crate::resilience::lease;

/// KakaoPay's gateway, or the error a customer gets where the shop does not take it.
fn gateway(app: &App) -> Result<&PgGateway<KakaoPayClient>, AppError> {
    app.pgs.kakaopay.as_deref().map(|adapter| adapter.gateway()).ok_or(AppError::PgNotOffered("KakaoPay"))
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

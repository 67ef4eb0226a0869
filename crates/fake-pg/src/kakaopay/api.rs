//! KakaoPay's four calls. Each reads its body (`wire`), finds the tid's
//! ready, checks what only KakaoPay checks, and hands the rest to the store:
//! approve and cancel are processed as Toss's confirm and cancel are (latency,
//! faults, going on after the caller hangs up), without idempotency keys.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};

use super::auth::authorize;
use super::errors::KakaoError;
use super::readies::{Readies, SESSION_DEADLINE};
use super::wire::{self, ApproveRequest, CancelRequest, Ready, ReadyResponse};
use crate::calls::OpenCall;
use crate::clock::now_kst;
use crate::config::ExpiredLookup;
use crate::faults::FrontDoorFault;
use crate::payment::{Payment, PaymentStatus};
use crate::processing::{self, Reply};
use crate::routes::api_call;
use crate::serve::Connection;
use crate::state::AppState;
use crate::store::{self, Begin, ConfirmRequest, SessionView};

/// The longest a held 429 waits for another request to process its payment,
/// as for Toss's confirms.
const HELD_AT_MOST: Duration = Duration::from_secs(60);

/// `POST /online/v1/payment/ready`: a new tid, a session of fifteen minutes,
/// and the window's addresses.
pub(super) async fn ready(
    State(state): State<AppState>,
    Extension(readies): Extension<Arc<Readies>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match readied(&state, &readies, &headers, &body) {
        Ok(response) => Json(response).into_response(),
        Err(error) => error.into_response(),
    }
}

fn readied(state: &AppState, readies: &Readies, headers: &HeaderMap, body: &[u8]) -> Result<ReadyResponse, KakaoError> {
    authorize(headers, &state.settings.secret_key)?;
    let request = wire::ready(body)?;
    let now = now_kst();
    let created_at = wire::local(&now);
    let tid = loop {
        let tid = wire::new_tid();
        let (order_id, item, amount) = (&request.partner_order_id, &request.item_name, request.total_amount);
        if state.store.open_session(&tid, order_id, item, amount, SESSION_DEADLINE, now.clone()) {
            break tid;
        }
    };
    tracing::info!(tid, partner_order_id = request.partner_order_id, amount = request.total_amount, "kakaopay ready");
    readies.insert(tid.clone(), Ready { request, created_at: created_at.clone(), approve_payload: None });
    Ok(ReadyResponse::new(&tid, &state.settings.base_url, created_at))
}

/// `POST /online/v1/payment/approve`: charges the session the customer
/// authenticated, once.
pub(super) async fn approve(
    State(state): State<AppState>,
    Extension(readies): Extension<Arc<Readies>>,
    connection: Option<Extension<Connection>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    state.store.note_confirm_request();
    let request = match authorize(&headers, &state.settings.secret_key).and_then(|()| wire::approve(&body)) {
        Ok(request) => request,
        Err(error) => return error.into_response(),
    };
    let result = approved(&state, &readies, &request).await;
    log("approve", &request.tid, &result);
    respond(result, &readies, &request.tid, connection, wire::approve_response).await
}

async fn approved(state: &AppState, readies: &Readies, request: &ApproveRequest) -> Result<Reply, KakaoError> {
    let ready = readies.get(&request.tid).ok_or_else(|| KakaoError::unknown_tid(&request.tid))?;
    matches_ready(&ready, request)?;
    let _open = OpenCall::open(&state.store, &request.tid);
    let confirm = ConfirmRequest {
        payment_key: request.tid.clone(),
        order_id: ready.request.partner_order_id.clone(),
        amount: ready.request.total_amount,
        idempotency_key: None,
    };
    let begin = state.store.begin_checked(&confirm, |view| approvable(view, request))?;
    match &begin {
        Begin::Start(_) => readies.set_approve_payload(&request.tid, request.payload.clone()),
        Begin::FrontDoor(FrontDoorFault::RateLimit429Held) => {
            state.store.until_processed(&request.tid, state.settings.clock.scaled(HELD_AT_MOST)).await;
        }
        _ => {}
    }
    processing::answer(state, begin).await.map_err(KakaoError::from_store)
}

/// What the approve must repeat from the ready.
fn matches_ready(ready: &Ready, request: &ApproveRequest) -> Result<(), KakaoError> {
    let readied = &ready.request;
    if request.cid != readied.cid {
        return Err(KakaoError::cid_mismatch(&request.cid, &readied.cid));
    }
    if request.partner_order_id != readied.partner_order_id {
        return Err(KakaoError::order_id_mismatch(&request.partner_order_id, &readied.partner_order_id));
    }
    if request.partner_user_id != readied.partner_user_id {
        return Err(KakaoError::user_id_mismatch(&request.partner_user_id, &readied.partner_user_id));
    }
    match request.total_amount {
        Some(total) if total != readied.total_amount => Err(KakaoError::amount_mismatch(total, readied.total_amount)),
        _ => Ok(()),
    }
}

/// Whether the session can be approved now, checked under the store's lock.
fn approvable(view: Option<&SessionView>, request: &ApproveRequest) -> Result<(), KakaoError> {
    let view = view.ok_or_else(|| KakaoError::unknown_tid(&request.tid))?;
    if view.session.ended.is_some() {
        return Err(KakaoError::not_approvable(wire::status(view)));
    }
    if view.approving {
        return Err(KakaoError::duplicate("approve"));
    }
    match view.payment.status {
        PaymentStatus::Done | PaymentStatus::PartialCanceled | PaymentStatus::Canceled => {
            return Err(KakaoError::already_approved());
        }
        PaymentStatus::Aborted => return Err(KakaoError::not_approvable(wire::status(view))),
        PaymentStatus::Expired => return Err(KakaoError::expired()),
        PaymentStatus::Ready | PaymentStatus::InProgress | PaymentStatus::WaitingForDeposit => {}
    }
    match &view.session.pg_token {
        None => Err(KakaoError::not_authenticated()),
        Some(token) if *token != request.pg_token => Err(KakaoError::invalid_pg_token()),
        Some(_) => Ok(()),
    }
}

/// `POST /online/v1/payment/order`: the tid as it stands, after the lookup latency.
pub(super) async fn order(
    State(state): State<AppState>,
    Extension(readies): Extension<Arc<Readies>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    state.store.note_lookup();
    let result = looked_up(&state, &readies, &headers, &body).await;
    match result {
        Ok(response) => Json(response).into_response(),
        Err(error) => error.into_response(),
    }
}

async fn looked_up(
    state: &AppState,
    readies: &Readies,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<wire::OrderResponse, KakaoError> {
    authorize(headers, &state.settings.secret_key)?;
    let request = wire::order(body)?;
    let ready = readies.get(&request.tid).ok_or_else(|| KakaoError::unknown_tid(&request.tid))?;
    if request.cid != ready.request.cid {
        return Err(KakaoError::cid_mismatch(&request.cid, &ready.request.cid));
    }
    let _open = OpenCall::open(&state.store, &request.tid);
    let latency = state.settings.clock.scaled_ms(state.store.config().lookup_latency_ms);
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let view = state.store.session(&request.tid).ok_or_else(|| KakaoError::unknown_tid(&request.tid))?;
    // As for Toss's lookups, `expired_lookup` may hide a session that expired unapproved.
    let hidden = view.payment.status == PaymentStatus::Expired
        && view.session.ended.is_none()
        && state.store.config().expired_lookup == ExpiredLookup::NotFound;
    let read = if hidden {
        Err(KakaoError::unknown_tid(&request.tid))
    } else {
        Ok(wire::order_response(&ready, &request.tid, &view))
    };
    crate::routes::payments::answer_delay(state).await;
    read
}

/// `POST /online/v1/payment/cancel`: refunds part or all of what is left.
pub(super) async fn cancel(
    State(state): State<AppState>,
    Extension(readies): Extension<Arc<Readies>>,
    connection: Option<Extension<Connection>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let request = match authorize(&headers, &state.settings.secret_key).and_then(|()| wire::cancel(&body)) {
        Ok(request) => request,
        Err(error) => {
            state.store.note_cancel_request(None);
            return error.into_response();
        }
    };
    state.store.note_cancel_request(readies.get(&request.tid).map(|ready| ready.request.partner_order_id.clone()));
    let result = canceled(&state, &readies, &request).await;
    log("cancel", &request.tid, &result);
    respond(result, &readies, &request.tid, connection, wire::cancel_response).await
}

/// The HTTP answer to a processing's reply: its body, drawn from the tid's
/// ready and the payment (`render`); an error; or no answer at all.
async fn respond<Body: serde::Serialize>(
    result: Result<Reply, KakaoError>,
    readies: &Readies,
    tid: &str,
    connection: Option<Extension<Connection>>,
    render: impl FnOnce(&Ready, &str, &Payment) -> Body,
) -> Response {
    match result {
        Ok(Reply::Payment(payment)) => match readies.get(tid) {
            Some(ready) => Json(render(&ready, tid, &payment)).into_response(),
            None => KakaoError::unknown_tid(tid).into_response(),
        },
        Ok(Reply::Reset) => api_call::reset(connection).await,
        Err(error) => error.into_response(),
    }
}

async fn canceled(state: &AppState, readies: &Readies, request: &CancelRequest) -> Result<Reply, KakaoError> {
    let ready = readies.get(&request.tid).ok_or_else(|| KakaoError::unknown_tid(&request.tid))?;
    if request.cid != ready.request.cid {
        return Err(KakaoError::cid_mismatch(&request.cid, &ready.request.cid));
    }
    let _open = OpenCall::open(&state.store, &request.tid);
    let cancel = store::CancelRequest {
        payment_key: request.tid.clone(),
        reason: request.note.encode(),
        amount: Some(request.cancel_amount),
        idempotency_key: None,
    };
    let begin = state.store.begin_cancel_checked(&cancel, |view| cancelable(view, request))?;
    processing::answer(state, begin).await.map_err(KakaoError::from_store)
}

/// Whether this cancel may start now, checked under the store's lock, so a
/// `cancel_available_amount` guard holds until the cancel is in progress.
fn cancelable(view: Option<&SessionView>, request: &CancelRequest) -> Result<(), KakaoError> {
    let view = view.ok_or_else(|| KakaoError::unknown_tid(&request.tid))?;
    if view.cancel_in_progress {
        return Err(KakaoError::duplicate("cancel"));
    }
    if !matches!(view.payment.status, PaymentStatus::Done | PaymentStatus::PartialCanceled) {
        return Err(KakaoError::not_cancelable(wire::status(view)));
    }
    let left = view.payment.balance_amount;
    if let Some(available) = request.cancel_available_amount
        && available != left
    {
        return Err(KakaoError::over_cancelable(format!(
            "cancel_available_amount {available} does not match the {left} won left to cancel; nothing was canceled."
        )));
    }
    if request.cancel_amount > left {
        return Err(KakaoError::over_cancelable(format!(
            "cancel_amount {} is more than the {left} won left to cancel.",
            request.cancel_amount
        )));
    }
    Ok(())
}

/// One log line per approve and cancel answer, as for Toss's.
fn log(call: &'static str, tid: &str, result: &Result<Reply, KakaoError>) {
    let (status, outcome) = match result {
        Ok(Reply::Payment(payment)) => (200, payment.status.as_str().to_owned()),
        Ok(Reply::Reset) => (0, "CONNECTION_RESET".to_owned()),
        Err(error) => (error.status.as_u16(), error.code.to_string()),
    };
    tracing::info!(tid, status, outcome, "kakaopay {call}");
}

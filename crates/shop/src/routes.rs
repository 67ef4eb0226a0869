//! The shop's routes: the customer's journey (`/`, `POST /orders`, payonce,
//! `/orders/{id}/back`, `/orders/{id}`), the back office (`/orders`, the
//! refund), payonce's events (`POST /payonce/events`, in `events.rs`) and
//! what tests read (`/healthz`, `/api/orders`, `/api/deliveries`).
//!
//! The order of things is what makes it safe: the shop stores its order
//! before it asks payonce for a checkout; the checkout's Idempotency-Key is
//! the order's id, so asking again (the customer's button) can never make a
//! second checkout for one order; and the outcome comes from payonce, never
//! from the URL the customer comes back to: stored from payonce's signed
//! events, and read from payonce's API only to show the customer.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::StatusCode;
use axum::http::header::ACCEPT_LANGUAGE;
use axum::http::request::Parts;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use payonce_api::{CheckoutStatus, ShopRefundRequest};
use serde::{Deserialize, Serialize};
use standardwebhooks::Webhook;

use crate::checkout_request::checkout_request;
use crate::events;
use crate::lang::Lang;
use crate::order_form;
use crate::pages::{self, Notice};
use crate::payonce::{Payonce, PayonceError};
use crate::status::PaymentState;
use crate::store::{ShopOrder, Store, StoreError};

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub payonce: Payonce,
    /// Where customers reach this shop, without a trailing `/`: the start of `return_url`.
    pub public_url: String,
    /// Checks that an event comes from payonce: its `whsec_` secret.
    pub events_verifier: Arc<Webhook>,
}

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(catalog))
        .route("/healthz", get(|| async { "ok" }))
        .route("/orders", get(orders_list).post(place_order))
        .route("/orders/{id}", get(order_page))
        .route("/orders/{id}/back", get(customer_back))
        .route("/orders/{id}/checkout", post(pay))
        .route("/orders/{id}/refund", post(refund))
        .route("/api/orders", get(orders_json))
        .route("/payonce/events", post(events::receive))
        .route("/api/deliveries", get(events::deliveries_json))
        .fallback(not_found)
        .with_state(state)
}

/// The page's language, from `?lang=` or the `Accept-Language` header.
struct PageLang(Lang);

impl<S: Send + Sync> FromRequestParts<S> for PageLang {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        #[derive(Deserialize)]
        struct LangQuery {
            lang: Option<String>,
        }
        // A query the shop cannot read is no choice of language, not an error.
        let chosen = Query::<LangQuery>::try_from_uri(&parts.uri).ok().and_then(|Query(query)| query.lang);
        let accept_language = parts.headers.get(ACCEPT_LANGUAGE).and_then(|value| value.to_str().ok());
        Ok(PageLang(Lang::choose(chosen.as_deref(), accept_language)))
    }
}

fn html(status: StatusCode, body: String) -> Response {
    (status, Html(body)).into_response()
}

fn order_path(id: &str, lang: Lang) -> String {
    format!("/orders/{id}?lang={}", lang.code())
}

async fn catalog(PageLang(lang): PageLang) -> Html<String> {
    Html(pages::catalog_page(lang, &Default::default(), None))
}

/// `POST /orders`: the form becomes a stored order, then a checkout.
async fn place_order(
    State(state): State<AppState>,
    PageLang(lang): PageLang,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    let lines = match order_form::order_lines(&fields) {
        Ok(lines) => lines,
        Err(error) => {
            let notice = Notice(error.message(lang));
            let page = pages::catalog_page(lang, &order_form::entered(&fields), Some(&notice));
            return html(StatusCode::UNPROCESSABLE_ENTITY, page);
        }
    };
    // Stored first: whatever happens to the create, the order exists and its
    // id is the key that makes every retry of the create the same checkout.
    match state.store.insert_new_order(&lines).await {
        Ok(order) => start_checkout(&state, order, lang).await,
        Err(error) => store_failed(lang, "/", &error),
    }
}

/// `POST /orders/{id}/checkout`: the customer's "Pay" / "Try again". Asks
/// for the order's checkout again, with the same key and body, so payonce
/// answers the checkout it already made for this order if it made one.
async fn pay(State(state): State<AppState>, PageLang(lang): PageLang, Path(id): Path<String>) -> Response {
    let order = match find_order(&state, &id, lang).await {
        Ok(order) => order,
        Err(response) => return response,
    };
    // Ask payonce first: a create is only sent while the order is not paid
    // nor closed, so an old key is never sent long after its checkout ended.
    // Its answer now counts, ahead of an event that may still be on its way.
    let live = match payonce_now(&state, order).await {
        Ok(live) => live,
        Err(error) => return store_failed(lang, &format!("/orders/{id}"), &error),
    };
    if !live.shown().status.can_pay() {
        return Redirect::to(&order_path(&live.order.id, lang)).into_response();
    }
    start_checkout(&state, live.order, lang).await
}

/// Creates (or finds again: same key) the order's checkout and sends the
/// customer to pay; or, when payonce does not answer, says so and offers to
/// try again.
async fn start_checkout(state: &AppState, order: ShopOrder, lang: Lang) -> Response {
    let request = checkout_request(&order, &state.public_url);
    match state.payonce.create_checkout(&order.id, &request).await {
        Ok(checkout) => {
            tracing::info!(order = %order.id, checkout = %checkout.id, status = ?checkout.status, "checkout created");
            if let Err(error) = state.store.record_checkout_id(&order.id, &checkout.id).await {
                // The customer can pay all the same: the order's page, and
                // the checkout's events, find it again by its reference (the order's id).
                tracing::error!(order = %order.id, checkout = %checkout.id, "could not store the checkout: {error}");
            }
            match checkout.next_url {
                Some(next_url) if checkout.status == CheckoutStatus::Created => Redirect::to(&next_url).into_response(),
                // Already paid, being paid or closed: the order's page says which.
                _ => Redirect::to(&order_path(&order.id, lang)).into_response(),
            }
        }
        Err(error) => {
            tracing::warn!(order = %order.id, "creating the checkout failed: {error}");
            let status = match &error {
                PayonceError::Refused { status, .. } if status.is_client_error() => StatusCode::CONFLICT,
                _ => StatusCode::BAD_GATEWAY,
            };
            html(status, pages::order_page(lang, &order, None, Some(&pages::create_failed(lang, &error)), false))
        }
    }
}

/// `GET /orders/{id}/back`: payonce's `return_url`. The customer is back;
/// the URL says nothing of the outcome (anyone can type it), and coming
/// back changes nothing the shop stores (its order's status comes from
/// payonce's events), so it only leads to the order's own page, which asks
/// payonce how the payment stands. A reload of that page never re-runs the return.
async fn customer_back(State(state): State<AppState>, PageLang(lang): PageLang, Path(id): Path<String>) -> Response {
    match find_order(&state, &id, lang).await {
        Ok(_) => Redirect::to(&format!("/orders/{id}")).into_response(),
        Err(response) => response,
    }
}

/// `GET /orders/{id}`: the order, with its payment as payonce says it now
/// (beside what the shop recorded from payonce's events).
async fn order_page(State(state): State<AppState>, PageLang(lang): PageLang, Path(id): Path<String>) -> Response {
    let order = match find_order(&state, &id, lang).await {
        Ok(order) => order,
        Err(response) => return response,
    };
    match payonce_now(&state, order).await {
        Ok(live) => {
            let notice = live.failed.as_ref().map(|error| pages::refresh_failed(lang, error));
            html(StatusCode::OK, pages::order_page(lang, &live.order, live.now, notice.as_ref(), true))
        }
        Err(error) => store_failed(lang, &format!("/orders/{id}"), &error),
    }
}

/// `POST /orders/{id}/refund`: the back office refunds what is left of the
/// order. No sign-in: this sample has no staff accounts, and says so on the
/// page; a real shop keeps this route behind its own.
async fn refund(State(state): State<AppState>, PageLang(lang): PageLang, Path(id): Path<String>) -> Response {
    let order = match find_order(&state, &id, lang).await {
        Ok(order) => order,
        Err(response) => return response,
    };
    let Some(checkout_id) = order.checkout_id.clone() else {
        return html(
            StatusCode::CONFLICT,
            pages::order_page(lang, &order, None, Some(&pages::never_paid(lang)), false),
        );
    };
    // Stored before it is sent: a click sent again (a reload, a retry after
    // no answer) sends the same key, so it is the same refund, never a second.
    let key = match state.store.refund_key(&order.id, &uuid::Uuid::new_v4().to_string()).await {
        Ok(Some(key)) => key,
        Ok(None) => return not_found_page(lang, &format!("/orders/{id}")),
        Err(error) => return store_failed(lang, &format!("/orders/{id}"), &error),
    };
    let request =
        ShopRefundRequest { amount: None, reason: Some("refunded from the sample shop's back office".into()) };
    let error = match state.payonce.refund(&checkout_id, &key, &request).await {
        Ok(refunded) => {
            tracing::info!(order = %id, checkout = %checkout_id, status = ?refunded.checkout.status, in_progress = refunded.in_progress, "refund answered");
            if matches!(refunded.checkout.status, CheckoutStatus::Paid | CheckoutStatus::PartiallyRefunded) {
                // Answered, yet something is left to refund: this refund is
                // over (refused by the PG), and the next click is a new one.
                let _ = state.store.forget_refund_key(&order.id, &key).await;
                let notice = pages::refund_not_made(lang);
                let now = Some(PaymentState::of_checkout(&refunded.checkout));
                return html(StatusCode::OK, pages::order_page(lang, &order, now, Some(&notice), false));
            }
            // The refund's own event records it; the order's page shows payonce's answer meanwhile.
            return Redirect::to(&order_path(&id, lang)).into_response();
        }
        // Done, but in a body the shop cannot read: the order's page reads the checkout.
        Err(PayonceError::Unreadable { status, .. }) if status.is_success() => {
            return Redirect::to(&order_path(&id, lang)).into_response();
        }
        Err(error) => error,
    };
    tracing::warn!(order = %id, checkout = %checkout_id, "refund failed: {error}");
    if error.ends_the_refund() {
        let _ = state.store.forget_refund_key(&order.id, &key).await;
    }
    let live = match payonce_now(&state, order).await {
        Ok(live) => live,
        Err(store_error) => return store_failed(lang, &format!("/orders/{id}"), &store_error),
    };
    let status = if error.ends_the_refund() { StatusCode::CONFLICT } else { StatusCode::BAD_GATEWAY };
    html(status, pages::order_page(lang, &live.order, live.now, Some(&pages::refund_failed(lang, &error)), false))
}

/// `GET /orders`: the shop's own view of its orders, newest first.
async fn orders_list(State(state): State<AppState>, PageLang(lang): PageLang) -> Response {
    match state.store.orders().await {
        Ok(orders) => html(StatusCode::OK, pages::orders_page(lang, &orders)),
        Err(error) => store_failed(lang, "/orders", &error),
    }
}

/// One order in `GET /api/orders`, as recorded from payonce's events: what
/// tests compare with payonce's view.
#[derive(Serialize)]
struct OrderJson {
    id: String,
    checkout_id: Option<String>,
    amount: u64,
    status: &'static str,
}

async fn orders_json(State(state): State<AppState>) -> Response {
    match state.store.orders().await {
        Ok(orders) => Json(
            orders
                .into_iter()
                .map(|order| OrderJson {
                    status: order.status.as_str(),
                    id: order.id,
                    checkout_id: order.checkout_id,
                    amount: order.amount,
                })
                .collect::<Vec<_>>(),
        )
        .into_response(),
        Err(error) => {
            tracing::error!("listing orders: {error}");
            (StatusCode::INTERNAL_SERVER_ERROR, Json(serde_json::json!({ "error": error.to_string() }))).into_response()
        }
    }
}

async fn not_found(PageLang(lang): PageLang) -> Response {
    not_found_page(lang, "/")
}

fn not_found_page(lang: Lang, switch_path: &str) -> Response {
    let (title, message) = (
        lang.pick("Not found", "찾을 수 없음"),
        lang.pick("There is no such page or order.", "그런 페이지나 주문이 없습니다."),
    );
    html(StatusCode::NOT_FOUND, pages::message_page(lang, title, message, switch_path))
}

fn store_failed(lang: Lang, switch_path: &str, error: &StoreError) -> Response {
    tracing::error!("{error}");
    let (title, message) = (
        lang.pick("Please try again", "다시 시도해 주세요"),
        lang.pick(
            "The shop could not read or save its orders just now. Please try again in a moment.",
            "쇼핑몰이 지금 주문을 읽거나 저장하지 못했습니다. 잠시 후 다시 시도해 주세요.",
        ),
    );
    html(StatusCode::INTERNAL_SERVER_ERROR, pages::message_page(lang, title, message, switch_path))
}

/// The stored order `id`, or the response to give when there is none.
async fn find_order(state: &AppState, id: &str, lang: Lang) -> Result<ShopOrder, Response> {
    // Order ids are UUIDs: anything else is no order, without asking the database.
    if uuid::Uuid::parse_str(id).is_err() {
        return Err(not_found_page(lang, "/"));
    }
    match state.store.order(id).await {
        Ok(Some(order)) => Ok(order),
        Ok(None) => Err(not_found_page(lang, "/")),
        Err(error) => Err(store_failed(lang, "/", &error)),
    }
}

/// An order, with how payonce says its payment stands right now.
struct Live {
    order: ShopOrder,
    /// payonce's answer: none when it gave none, or when the order has no
    /// checkout, or when its recorded status can no longer change.
    now: Option<PaymentState>,
    /// Why payonce gave no answer, when it failed to.
    failed: Option<PayonceError>,
}

impl Live {
    /// What the customer is shown: payonce's answer when there is one, else the recorded status.
    fn shown(&self) -> PaymentState {
        self.now.unwrap_or_else(|| self.order.recorded())
    }
}

/// Asks payonce how the order's payment stands now, to show the customer,
/// never to store. The order's stored status comes from payonce's events
/// alone, so it has one writer and one order of updates (each event's
/// `sequence`); an answer read here may be older than an event that
/// arrived meanwhile, and storing it could move the order back. Yet an
/// event can be a moment behind the customer coming back from paying, so
/// the page shows payonce's answer, and the recorded status beside it.
/// Only the checkout's id, when the shop did not have it, is stored.
async fn payonce_now(state: &AppState, order: ShopOrder) -> Result<Live, StoreError> {
    if order.status.is_final() {
        return Ok(Live { order, now: None, failed: None });
    }
    let answer = match &order.checkout_id {
        Some(checkout_id) => state.payonce.checkout(checkout_id).await.map(Some),
        // No checkout stored: the create may have made one whose answer was
        // lost (a timeout, a crash before it was stored). Its reference is
        // this order's id, so payonce finds it.
        None => state.payonce.checkouts_of(&order.id).await.map(|list| {
            list.checkouts
                .into_iter()
                .find(|checkout| checkout.reference == order.id && checkout.amount == order.amount)
        }),
    };
    match answer {
        Ok(Some(checkout)) => {
            let now = Some(PaymentState::of_checkout(&checkout));
            let order = match order.checkout_id {
                Some(_) => order,
                None => state.store.record_checkout_id(&order.id, &checkout.id).await?.unwrap_or(order),
            };
            Ok(Live { order, now, failed: None })
        }
        Ok(None) => Ok(Live { order, now: None, failed: None }),
        Err(error) => {
            tracing::warn!(order = %order.id, "could not read the checkout: {error}");
            Ok(Live { order, now: None, failed: Some(error) })
        }
    }
}

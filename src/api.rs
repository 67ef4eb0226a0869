//! Every HTTP call the page makes, in one place, with the wire types of
//! `payonce_api`. Paths are relative to the page's origin (`/api/...`), which
//! the order server serves, or `trunk serve` proxies to it.

use std::future::Future;
use std::time::Duration;

use payonce_api::{
    ClaimRequest, ConfirmRequest, CreateOrderRequest, CustomerCheckout, IDEMPOTENCY_KEY_HEADER, Order, OrderSummary,
    PageConfig, PaymentSdk, Pg, PgWindow, PlacedOrder, Product,
};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, Response};

use crate::fetch::{self, Call};
use crate::flow::{ConfirmReply, retry_after_ms};
use crate::js_fields::{self, Fields, FromJs};
use crate::json::Serde;

pub use payonce_screens::ApiError;

/// Path segment encoding, so an order id from a URL cannot change the path.
fn segment(value: &str) -> String {
    js_sys::encode_uri_component(value).into()
}

async fn send(call: Call) -> Result<Response, ApiError> {
    call.send().await.map_err(ApiError::Network)
}

/// The body as `T`, parsed by the browser; an error's code.
async fn json<T: FromJs>(response: Response) -> Result<T, ApiError> {
    if !response.ok() {
        /// Only the code of an error body: what the page acts on.
        struct Code(String);
        impl FromJs for Code {
            fn from_js(value: JsValue) -> Result<Self, String> {
                Fields::of(value, "the error")?.text("code").map(Code)
            }
        }
        let status = response.status();
        let retry_after_ms =
            response.headers().get("retry-after").ok().flatten().and_then(|value| retry_after_ms(&value));
        let code = body::<Code>(response).await.ok().map(|Code(code)| code);
        return Err(ApiError::Server { status, code, retry_after_ms });
    }
    body(response).await.map_err(ApiError::Decode)
}

async fn body<T: FromJs>(response: Response) -> Result<T, String> {
    let parsing = response.json().map_err(|_| "the body was read already".to_owned())?;
    let value = JsFuture::from(parsing).await.map_err(|_| "the body is not JSON".to_owned())?;
    T::from_js(value)
}

async fn get<T: FromJs>(path: &str) -> Result<T, ApiError> {
    json(send(Call::get(path)).await?).await
}

/// A request that gives up after `within`, reported as a network error.
async fn send_within<T: FromJs>(call: Call, within: Duration) -> Result<T, ApiError> {
    let controller = web_sys::AbortController::new().map_err(|_| ApiError::Network("no AbortController".into()))?;
    let signal = controller.signal();
    let _deadline = gloo_timers::callback::Timeout::new(within.as_millis() as u32, move || controller.abort());
    json(send(call.signal(&signal)).await?).await
}

/// The page timings. Gives up after `within`, so a hung server cannot hold the
/// confirm page before its POST; the caller then uses the compiled-in defaults.
pub async fn page_config(within: Duration) -> Result<PageConfig, ApiError> {
    send_within(Call::get("/api/config"), within).await.map(Serde::into_inner)
}

/// How the cart can take a payment, from the same `/api/config` (the cart
/// needs only this part of it): Toss's SDK, and whether KakaoPay is offered too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentOptions {
    pub sdk: PaymentSdk,
    pub kakaopay: bool,
}

impl FromJs for PaymentOptions {
    fn from_js(value: JsValue) -> Result<Self, String> {
        let config = Fields::of(value, "the config")?;
        // An older server does not say: it does not take KakaoPay.
        let kakaopay = config.get("kakaopay").as_bool().unwrap_or(false);
        Ok(PaymentOptions { sdk: PaymentSdk::from_js(config.get("payment_sdk"))?, kakaopay })
    }
}

pub async fn payment_options() -> Result<PaymentOptions, ApiError> {
    get("/api/config").await
}

/// Prepares the order's KakaoPay payment (the server calls KakaoPay's ready),
/// or names the payment prepared for it already: where its window is.
pub async fn prepare_kakaopay(order_id: &str) -> Result<PgWindow, ApiError> {
    // `WindowRequest` written by hand: its one field is a fixed word (see js_fields on serde's weight).
    let body = format!(r#"{{"pg":"{}"}}"#, Pg::KakaoPay.as_str());
    json(send(Call::post(&format!("/api/orders/{}/window", segment(order_id))).json(&body)).await?).await
}

/// One check of an order; a check that hangs past `within` learned nothing.
pub async fn check_order(order_id: &str, within: Duration) -> Result<Order, ApiError> {
    send_within(Call::get(&format!("/api/orders/{}", segment(order_id))), within).await.map(Serde::into_inner)
}

/// One check that the server may hold up to `wait_ms` until the order changes;
/// it gives up `within` after the wait.
pub async fn check_order_waiting(order_id: &str, wait_ms: u64, within: Duration) -> Result<Order, ApiError> {
    let path = format!("/api/orders/{}?wait={wait_ms}ms", segment(order_id));
    send_within(Call::get(&path), within + Duration::from_millis(wait_ms)).await.map(Serde::into_inner)
}

/// Asks the server to close an order that never got a confirm, as FAILED. The
/// answer is the order as stored: closed, or in whatever state its payment is.
pub async fn abandon(order_id: &str, within: Duration) -> Result<Order, ApiError> {
    // `{}` as JSON: the server asks for that content type, which no other site's form can send.
    let call = Call::post(&format!("/api/orders/{}/abandon", segment(order_id))).json("{}");
    send_within(call, within).await.map(Serde::into_inner)
}

pub async fn catalog() -> Result<Vec<Product>, ApiError> {
    get("/api/catalog").await
}

/// The customer's order paid or being paid in the last ten minutes, if any.
pub async fn recent_payment() -> Result<Option<OrderSummary>, ApiError> {
    get("/api/orders/recent").await
}

pub async fn orders() -> Result<Vec<Order>, ApiError> {
    get("/api/orders").await.map(Serde::into_inner)
}

pub async fn order(order_id: &str) -> Result<Order, ApiError> {
    get(&format!("/api/orders/{}", segment(order_id))).await.map(Serde::into_inner)
}

pub async fn create_order(request: &CreateOrderRequest) -> Result<PlacedOrder, ApiError> {
    let body = js_fields::stringify(request).ok_or_else(|| ApiError::Decode("the cart cannot be written".into()))?;
    json(send(Call::post("/api/orders").json(&body)).await?).await
}

/// Opens a shop's checkout in this browser with the token of its link (the
/// part after `#`, sent in the body so that it is in no URL and no log; empty
/// when the link had none): this browser becomes its customer, or already is
/// (the server's cookie says so). Another browser's checkout is a 409
/// `CHECKOUT_LINK_USED`; an unknown one, or a wrong token, a 404.
pub async fn claim_checkout(checkout_id: &str, token: &str) -> Result<CustomerCheckout, ApiError> {
    let body = js_fields::stringify(&ClaimRequest { token: token.to_owned() })
        .ok_or_else(|| ApiError::Decode("the token cannot be written".into()))?;
    json(send(Call::post(&format!("/api/checkouts/{}/claim", segment(checkout_id))).json(&body)).await?).await
}

/// This browser's checkout as it stands now (a 404 for any other).
pub async fn checkout(checkout_id: &str) -> Result<CustomerCheckout, ApiError> {
    get(&format!("/api/checkouts/{}", segment(checkout_id))).await
}

/// Asks for the customer's own order to be cancelled and refunded. The same
/// `request_key` is the same cancel, so a second press cannot refund twice.
/// The answer is the order as stored: `CANCELED`, or `CANCEL_REQUESTED` while
/// the refund is on its way.
pub async fn cancel_order(order_id: &str, request_key: &str) -> Result<Order, ApiError> {
    let call =
        Call::post(&format!("/api/orders/{}/cancel", segment(order_id))).header(IDEMPOTENCY_KEY_HEADER, request_key);
    json(send(call).await?).await.map(Serde::into_inner)
}

/// Sends the confirm POST now and returns the future of its reply, reported raw
/// (the flow decides what it means). The request has left when this returns, so
/// the page's `confirm_wait` timer, started next, never starts before it.
pub fn send_confirm(
    order_id: &str,
    idempotency_key: &str,
    body: &ConfirmRequest,
    signal: &AbortSignal,
) -> impl Future<Output = ConfirmReply> + use<> {
    let fetch = crate::json::stringify(body).map(|body| {
        Call::post(&format!("/api/orders/{}/confirm", segment(order_id)))
            .header(IDEMPOTENCY_KEY_HEADER, idempotency_key)
            .signal(signal)
            .json(&body)
            .send()
    });
    async move {
        let Some(fetch) = fetch else {
            return ConfirmReply::NoResponse { detail: "the confirm cannot be written".to_owned() };
        };
        let response = match fetch.await {
            Ok(response) => response,
            Err(detail) => return ConfirmReply::NoResponse { detail },
        };
        let status = response.status();
        match fetch::text(&response).await {
            Ok(body) => ConfirmReply::Response { status, body },
            Err(error) => ConfirmReply::NoResponse { detail: format!("the response body was cut off: {error}") },
        }
    }
}

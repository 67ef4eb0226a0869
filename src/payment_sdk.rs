//! Opens the PG's payment window the way a Toss Payments merchant's page does:
//! loads the SDK script `/api/config` names, then calls
//! `TossPayments(clientKey).payment({ customerKey }).requestPayment({ method: "CARD",
//! amount: { currency: "KRW", value }, orderId, orderName, successUrl, failUrl })`.
//! In this redirect mode the browser leaves for the window; a request the SDK
//! refuses rejects with one of its error codes, which the page words itself.

use payonce_api::{PaymentSdk, PlacedOrder};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::js_fields::{number, object};

/// Toss's value for a customer without an account (`TossPayments.ANONYMOUS`).
const ANONYMOUS: &str = "@@ANONYMOUS";
pub use payonce_screens::payment_window::{SDK_UNAVAILABLE, closed_by_customer, closed_window_url};

#[wasm_bindgen]
extern "C" {
    type Sdk;
    type PaymentWindow;

    #[wasm_bindgen(catch, js_name = TossPayments)]
    fn toss_payments(client_key: &str) -> Result<Sdk, JsValue>;

    #[wasm_bindgen(method, catch)]
    fn payment(this: &Sdk, options: &JsValue) -> Result<PaymentWindow, JsValue>;

    #[wasm_bindgen(method, catch, js_name = requestPayment)]
    fn request_payment(this: &PaymentWindow, request: &JsValue) -> Result<js_sys::Promise, JsValue>;
}

/// Asks the PG for a card payment of `order`. Returns only if the window did
/// not open: the SDK's error code (or [`SDK_UNAVAILABLE`]).
pub async fn pay(sdk: &PaymentSdk, order: &PlacedOrder) -> String {
    if let Err(code) = load(&sdk.url).await {
        return code;
    }
    let request = object(&[
        ("method", "CARD".into()),
        ("amount", object(&[("currency", "KRW".into()), ("value", number(order.amount))])),
        ("orderId", order.order_id.as_str().into()),
        ("orderName", order.order_name.as_str().into()),
        ("successUrl", order.success_url.as_str().into()),
        ("failUrl", order.fail_url.as_str().into()),
    ]);
    let options = object(&[("customerKey", ANONYMOUS.into())]);
    let requested = toss_payments(&sdk.client_key)
        .and_then(|toss| toss.payment(&options))
        .and_then(|window| window.request_payment(&request));
    let outcome = match requested {
        Ok(promise) => JsFuture::from(promise).await,
        Err(error) => Err(error),
    };
    match outcome {
        // Redirect mode never resolves; a promise that does has nothing to go on.
        Ok(_) => SDK_UNAVAILABLE.to_owned(),
        Err(error) => js_sys::Reflect::get(&error, &"code".into())
            .ok()
            .and_then(|code| code.as_string())
            .unwrap_or_else(|| SDK_UNAVAILABLE.to_owned()),
    }
}

/// Adds the SDK's `<script>` once, and waits until it has run.
async fn load(url: &str) -> Result<(), String> {
    let window = web_sys::window().ok_or(SDK_UNAVAILABLE)?;
    if js_sys::Reflect::has(&window, &"TossPayments".into()).unwrap_or(false) {
        return Ok(());
    }
    let document = window.document().ok_or(SDK_UNAVAILABLE)?;
    let script = document.create_element("script").map_err(|_| SDK_UNAVAILABLE)?;
    script.set_attribute("src", url).map_err(|_| SDK_UNAVAILABLE)?;
    let loaded = js_sys::Promise::new(&mut |resolve, reject| {
        let _ = script.add_event_listener_with_callback("load", &resolve);
        let _ = script.add_event_listener_with_callback("error", &reject);
    });
    document.body().ok_or(SDK_UNAVAILABLE)?.append_child(&script).map_err(|_| SDK_UNAVAILABLE)?;
    JsFuture::from(loaded).await.map_err(|_| SDK_UNAVAILABLE)?;
    match js_sys::Reflect::has(&window, &"TossPayments".into()) {
        Ok(true) => Ok(()),
        _ => Err(SDK_UNAVAILABLE.to_owned()),
    }
}

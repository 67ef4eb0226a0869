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
/// Our own code when the SDK's script cannot be loaded or does not define `TossPayments`.
pub const SDK_UNAVAILABLE: &str = "SDK_UNAVAILABLE";

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

/// Whether the SDK's code says the customer closed its window: Toss's
/// `USER_CANCEL` (its ✕ when the window is an iframe over the page), or
/// `PAY_PROCESS_CANCELED` as the redirect's fail URL carries it. Nothing was
/// paid, and the order is the fail page's to close, on the server.
pub fn closed_by_customer(code: &str) -> bool {
    matches!(code, "USER_CANCEL" | "PAY_PROCESS_CANCELED")
}

/// Where a window the customer closed leads: the fail page, as the window's
/// redirect would, so that it closes the order and says what the server says.
/// An order id of another shape than the server's is left out (the page then
/// shows only that the payment was cancelled).
pub fn closed_window_url(fail_url: &str, order_id: &str) -> String {
    let separator = if fail_url.contains('?') { '&' } else { '?' };
    if !order_id.is_empty() && payonce_api::is_order_id_text(order_id) {
        format!("{fail_url}{separator}code=PAY_PROCESS_CANCELED&orderId={order_id}")
    } else {
        format!("{fail_url}{separator}code=PAY_PROCESS_CANCELED")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_the_customer_closed_goes_to_the_fail_page_with_its_order() {
        assert!(closed_by_customer("USER_CANCEL") && closed_by_customer("PAY_PROCESS_CANCELED"));
        for other in ["INVALID_CARD_NUMBER", SDK_UNAVAILABLE, "", "user_cancel"] {
            assert!(!closed_by_customer(other), "{other:?}");
        }
        assert_eq!(
            closed_window_url("https://shop.example/pay/fail", "ord_1a-B"),
            "https://shop.example/pay/fail?code=PAY_PROCESS_CANCELED&orderId=ord_1a-B"
        );
        assert_eq!(
            closed_window_url("/pay/fail?x=1", "ord_1"),
            "/pay/fail?x=1&code=PAY_PROCESS_CANCELED&orderId=ord_1"
        );
        assert_eq!(closed_window_url("/pay/fail", "ord_1&x=2"), "/pay/fail?code=PAY_PROCESS_CANCELED");
    }
}

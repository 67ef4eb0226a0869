//! The PG's payment window: which of its SDK's codes mean the customer closed
//! it, and where the page goes then.

/// Our own code when the SDK's script cannot be loaded or does not define `TossPayments`.
pub const SDK_UNAVAILABLE: &str = "SDK_UNAVAILABLE";

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

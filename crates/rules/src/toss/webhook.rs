//! What a Toss webhook event says, read as a hint and never as the truth: it
//! names an order whose payment may have changed at the PG, and nothing else is
//! taken from it. An event carries no signature (`PAYMENT_STATUS_CHANGED` has
//! none), so anyone may send one: the server only looks the payment up sooner.

use serde::Deserialize;

/// The parts of a webhook event the server reads.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookEvent {
    pub event_type: String,
    #[serde(default)]
    pub data: Option<WebhookPayment>,
}

/// The Payment a `PAYMENT_STATUS_CHANGED` event carries, as far as it is read.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookPayment {
    #[serde(default)]
    pub order_id: Option<String>,
}

/// The order whose payment an event says may have changed: only a
/// `PAYMENT_STATUS_CHANGED` event's. Any other event is none of this shop's
/// payments' business (deposits, payouts, Brandpay) and is acknowledged only.
pub fn order_to_look_up(event: &WebhookEvent) -> Option<&str> {
    if event.event_type != "PAYMENT_STATUS_CHANGED" {
        return None;
    }
    event.data.as_ref()?.order_id.as_deref().filter(|order_id| !order_id.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(event_type: &str, order_id: Option<&str>) -> WebhookEvent {
        WebhookEvent {
            event_type: event_type.to_owned(),
            data: Some(WebhookPayment { order_id: order_id.map(str::to_owned) }),
        }
    }

    #[test]
    fn only_a_payment_status_change_names_an_order_to_look_up() {
        assert_eq!(order_to_look_up(&event("PAYMENT_STATUS_CHANGED", Some("ord_1"))), Some("ord_1"));
        assert_eq!(order_to_look_up(&event("PAYMENT_STATUS_CHANGED", Some(""))), None);
        assert_eq!(order_to_look_up(&event("PAYMENT_STATUS_CHANGED", None)), None);
        assert_eq!(order_to_look_up(&event("DEPOSIT_CALLBACK", Some("ord_1"))), None);
        assert_eq!(order_to_look_up(&event("PAYOUT_STATUS_CHANGED", Some("ord_1"))), None);
        let no_data = WebhookEvent { event_type: "PAYMENT_STATUS_CHANGED".into(), data: None };
        assert_eq!(order_to_look_up(&no_data), None);
    }
}

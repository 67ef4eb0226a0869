//! An order's own page: what it offers the customer.

use payonce_api::{Order, OrderStatus};

/// Whether the customer may cancel the order now: paid (and nothing refunded
/// yet), no refund of it refused by the PG (asked again, it would refuse
/// again: the shop's to settle now), and still within the cancel window from
/// paying. The server decides again; this only spares the customer a button
/// that would be refused.
pub fn cancel_offered(order: &Order, paid_at_ms: Option<f64>, window_ms: u64, now_ms: f64) -> bool {
    order.status == OrderStatus::Paid
        && order.refund_refusal.is_none()
        && paid_at_ms.is_some_and(|paid| now_ms < paid + window_ms as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(status: OrderStatus) -> Order {
        Order {
            order_id: "ord_1".into(),
            status,
            amount: 12_900,
            order_name: "Mug".into(),
            items: vec![],
            created_at: "2026-11-30T00:00:00Z".into(),
            updated_at: "2026-11-30T00:00:00Z".into(),
            failure: None,
            refunded_amount: 0,
            paid_at: Some("2026-11-30T00:00:00Z".into()),
            refund_refusal: None,
            back: None,
        }
    }

    #[test]
    fn cancel_is_offered_for_a_paid_order_within_the_window_only() {
        let paid = Some(1_000.0);
        let window = 60_000;
        assert!(cancel_offered(&order(OrderStatus::Paid), paid, window, 60_999.0));
        assert!(!cancel_offered(&order(OrderStatus::Paid), paid, window, 61_000.0), "the window has passed");
        assert!(!cancel_offered(&order(OrderStatus::Paid), None, window, 2_000.0), "no payment time known");
        for status in OrderStatus::ALL.into_iter().filter(|status| *status != OrderStatus::Paid) {
            assert!(!cancel_offered(&order(status), paid, window, 2_000.0), "{status:?}");
        }
        let refused = Order {
            refund_refusal: Some(payonce_api::Failure { code: "EXCEED_MAX_REFUND_DUE".into(), message: String::new() }),
            ..order(OrderStatus::Paid)
        };
        assert!(!cancel_offered(&refused, paid, window, 2_000.0), "the PG refused its refund");
    }
}

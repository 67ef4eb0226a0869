//! What the shop asks payonce for: a shop order as a `POST /v1/checkouts` body.
//!
//! The body is made from the stored order alone, the same every time: a
//! retried create sends the same Idempotency-Key (the order's id) with the
//! same body, which payonce answers with the same checkout. Any difference
//! (a name, a URL) would make payonce refuse it as `IDEMPOTENCY_KEY_REUSED`.

use payonce_api::{CheckoutLine, CreateCheckoutRequest, Names};

use crate::store::ShopOrder;

/// The checkout for `order`; the customer comes back to `public_url`.
pub fn checkout_request(order: &ShopOrder, public_url: &str) -> CreateCheckoutRequest {
    CreateCheckoutRequest {
        reference: order.id.clone(),
        name: order_name(order),
        lines: order
            .lines
            .iter()
            .map(|line| CheckoutLine {
                // A checkout line has one name, in no language in particular:
                // the customer's page may be in either, so it carries both.
                name: format!("{} / {}", line.name_en, line.name_ko),
                quantity: line.quantity,
                unit_amount: line.unit_amount,
            })
            .collect(),
        amount: order.amount,
        return_url: return_url(public_url, &order.id),
        metadata: Default::default(),
        // All of the shop's PGs, and payonce's default time to pay.
        pay_with: None,
        expires_in: None,
    }
}

/// Where payonce sends the customer back: it says nothing of the outcome,
/// which the shop learns from payonce's events (and its page asks payonce).
pub fn return_url(public_url: &str, order_id: &str) -> String {
    format!("{}/orders/{order_id}/back", public_url.trim_end_matches('/'))
}

/// "The Vegetarian and 2 more" / "채식주의자 외 2건": what the PG's window shows.
fn order_name(order: &ShopOrder) -> Names {
    let first = order.lines.first();
    let (en, ko) = (first.map_or("", |line| line.name_en.as_str()), first.map_or("", |line| line.name_ko.as_str()));
    let more = order.lines.len().saturating_sub(1);
    if more == 0 {
        Names { en: Some(en.to_owned()), ko: Some(ko.to_owned()) }
    } else {
        Names { en: Some(format!("{en} and {more} more")), ko: Some(format!("{ko} 외 {more}건")) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::PaymentStatus;
    use crate::store::OrderLine;

    fn order(lines: Vec<OrderLine>) -> ShopOrder {
        ShopOrder {
            id: "4d7c8b8e-3c8a-4e0b-9a57-0f1f3d1c2b3a".into(),
            amount: lines.iter().map(OrderLine::total).sum(),
            lines,
            created_at: "2026-12-05T08:00:00.000Z".into(),
            checkout_id: None,
            status: PaymentStatus::New,
            amount_refunded: 0,
            refund_key: None,
            event_sequence: 0,
        }
    }

    fn line(en: &str, ko: &str, quantity: u32, unit_amount: u64) -> OrderLine {
        OrderLine { sku: en.to_lowercase(), name_en: en.into(), name_ko: ko.into(), quantity, unit_amount }
    }

    #[test]
    fn the_checkout_is_the_orders_lines_total_and_reference_with_a_way_back() {
        let order =
            order(vec![line("The Vegetarian", "채식주의자", 1, 13_500), line("Human Acts", "소년이 온다", 2, 14_000)]);
        let request = checkout_request(&order, "http://127.0.0.1:4000/");
        assert_eq!(request.reference, order.id);
        assert_eq!(request.amount, 41_500);
        assert_eq!(
            request.lines.iter().map(|line| line.quantity as u64 * line.unit_amount).sum::<u64>(),
            request.amount
        );
        assert_eq!(request.lines[1].name, "Human Acts / 소년이 온다");
        assert_eq!(request.name.en.as_deref(), Some("The Vegetarian and 1 more"));
        assert_eq!(request.name.ko.as_deref(), Some("채식주의자 외 1건"));
        assert_eq!(request.return_url, format!("http://127.0.0.1:4000/orders/{}/back", order.id));
        // Made from the stored order alone: a retry sends the very same body.
        assert_eq!(checkout_request(&order, "http://127.0.0.1:4000/"), request);
    }

    #[test]
    fn one_book_is_named_as_itself() {
        let request =
            checkout_request(&order(vec![line("Human Acts", "소년이 온다", 3, 14_000)]), "https://books.example");
        assert_eq!(request.name.en.as_deref(), Some("Human Acts"));
        assert_eq!(request.name.ko.as_deref(), Some("소년이 온다"));
        // payonce refuses unknown fields, and needs none of the optional ones here.
        let body = serde_json::to_value(&request).unwrap();
        assert!(body.get("pay_with").is_none() && body.get("expires_in").is_none());
    }
}

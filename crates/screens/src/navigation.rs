//! Where the page's links and buttons lead, decided from what the server said
//! and what the address holds: never a link the server did not make safe.

use payonce_api::{Order, OrderStatus};

/// Whether the page links to `url`: http(s) only. The server takes only
/// addresses on the shop's own origins; this keeps any other kind of address
/// (`javascript:`) out of a link whatever it sends.
pub fn is_web_address(url: &str) -> bool {
    let starts_with = |prefix: &str| url.get(..prefix.len()).is_some_and(|head| head.eq_ignore_ascii_case(prefix));
    starts_with("https://") || starts_with("http://")
}

/// Whether `path` is a shop's checkout page.
pub fn on_a_checkout(path: &str) -> bool {
    path.starts_with("/checkout/")
}

/// Where "Choose another way to pay" leads: the checkout's own page, or the cart.
pub fn way_back(order_id: &str, from_checkout: bool) -> String {
    if from_checkout && !order_id.is_empty() && payonce_api::is_order_id_text(order_id) {
        format!("/checkout/{order_id}")
    } else {
        "/".to_owned()
    }
}

/// Where "Try again" leads, if anywhere: the cart, for its own orders (and
/// while the server has not said what the order is); a shop's checkout is paid
/// on its own page, again only while the server keeps it open.
pub fn retry_from(order: Option<&Order>) -> Option<String> {
    match order {
        Some(order) if order.back.is_some() => (order.status == OrderStatus::Created
            && payonce_api::is_order_id_text(&order.order_id))
        .then(|| format!("/checkout/{}", order.order_id)),
        Some(_) | None => Some("/".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use payonce_api::{BackToShop, Names};

    use super::*;

    #[test]
    fn only_web_addresses_are_linked() {
        assert!(is_web_address("https://books.example/orders/1042/back"));
        assert!(is_web_address("HTTPS://books.example/"));
        assert!(is_web_address("http://localhost:4000/back"));
        for other in ["javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,x", "//books.example", "", "http"] {
            assert!(!is_web_address(other), "{other:?}");
        }
    }

    #[test]
    fn the_cart_is_not_offered_on_a_shops_checkout() {
        assert!(on_a_checkout("/checkout/po_books_1"));
        for path in ["/", "/orders", "/orders/po_books_1", "/pay/success", "/checkout"] {
            assert!(!on_a_checkout(path), "{path}");
        }
    }

    #[test]
    fn another_way_to_pay_is_the_checkouts_own_page_or_the_cart() {
        assert_eq!(way_back("po_books_1", true), "/checkout/po_books_1");
        assert_eq!(way_back("po_books_1", false), "/");
        assert_eq!(way_back("../admin", true), "/", "only an order id makes a checkout's address");
        assert_eq!(way_back("", true), "/");
    }

    fn order(status: OrderStatus, back: Option<BackToShop>) -> Order {
        Order {
            order_id: "po_books_1".into(),
            status,
            amount: 27_500,
            order_name: "Two novels".into(),
            items: vec![],
            created_at: "2026-12-05T08:00:00Z".into(),
            updated_at: "2026-12-05T08:00:00Z".into(),
            failure: None,
            refunded_amount: 0,
            paid_at: None,
            refund_refusal: None,
            back,
        }
    }

    #[test]
    fn a_shops_checkout_is_tried_again_on_its_own_page_while_it_is_open_and_never_in_the_cart() {
        let back = BackToShop {
            shop: Names { en: Some("Seoul Books".into()), ko: None },
            url: "https://books.example/back".into(),
        };
        assert_eq!(retry_from(None).as_deref(), Some("/"), "not known yet: as for any order");
        assert_eq!(retry_from(Some(&order(OrderStatus::Failed, None))).as_deref(), Some("/"));
        assert_eq!(retry_from(Some(&order(OrderStatus::Failed, Some(back.clone())))), None);
        assert_eq!(retry_from(Some(&order(OrderStatus::Created, Some(back)))).as_deref(), Some("/checkout/po_books_1"));
    }
}

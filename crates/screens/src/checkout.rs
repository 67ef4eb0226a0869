//! A shop's checkout (`/checkout/{id}`): what the claim of its link answered,
//! where the checkout stands, and how its address, name and lines read.

use payonce_api::{CheckoutLine, CustomerCheckout, ErrorCode, Names, OrderStatus};

use crate::ApiError;
use crate::words::{Lang, name_in};

/// What the claim of the checkout answered, as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claimed {
    /// This browser's checkout.
    Open(Box<CustomerCheckout>),
    /// Another browser opened the link first: nothing of the checkout is shown.
    LinkUsed,
    /// No such checkout, or a wrong token.
    NotFound,
    /// No answer, or one the page cannot act on: it may try again.
    Problem(ApiError),
}

impl Claimed {
    pub fn of(answer: Result<CustomerCheckout, ApiError>) -> Self {
        match answer {
            Ok(checkout) => Claimed::Open(Box::new(checkout)),
            Err(ApiError::Server { code: Some(code), .. }) if code == ErrorCode::CheckoutLinkUsed.as_str() => {
                Claimed::LinkUsed
            }
            Err(ApiError::Server { status: 404, .. }) => Claimed::NotFound,
            Err(error) => Claimed::Problem(error),
        }
    }

    /// Whether the server has given its word on the token: it need not be sent again.
    pub fn is_definitive(&self) -> bool {
        !matches!(self, Claimed::Problem(_))
    }

    /// Which of the page's views this is, for the focus to follow a change of view.
    pub fn view(&self) -> u8 {
        match self {
            Claimed::Open(_) => 1,
            Claimed::LinkUsed => 2,
            Claimed::NotFound => 3,
            Claimed::Problem(_) => 4,
        }
    }
}

/// What the customer can do with the checkout now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Open: Pay.
    Payable,
    /// Still `CREATED`, but past its `expires_at` by this browser's clock: the
    /// server closes it, and would refuse its confirm.
    TimeUp,
    /// A payment was sent and is being settled; its order page follows it.
    InProgress,
    /// Paid, failed, expired or refunded: the journey is over.
    Over,
}

/// Where a checkout in `status` stands at `now_ms`, given when it expires (if
/// the page could read that; otherwise the server alone decides).
pub fn standing(status: OrderStatus, expires_at_ms: Option<u64>, now_ms: u64) -> Standing {
    match status {
        OrderStatus::Created if expires_at_ms.is_some_and(|expires_at| now_ms >= expires_at) => Standing::TimeUp,
        OrderStatus::Created => Standing::Payable,
        OrderStatus::Pending | OrderStatus::Unknown => Standing::InProgress,
        OrderStatus::Paid
        | OrderStatus::Failed
        | OrderStatus::Canceled
        | OrderStatus::PartiallyRefunded
        | OrderStatus::CancelRequested => Standing::Over,
    }
}

/// The token in an address's fragment (`location.hash`, with its `#`).
pub fn token_of(fragment: &str) -> &str {
    fragment.strip_prefix('#').unwrap_or(fragment)
}

/// The checkout's name in `lang` (or the other language), else the order's
/// name; and the language to mark it with when it is not the page's.
pub fn checkout_name(names: &Names, order_name: &str, lang: Lang) -> (String, Option<Lang>) {
    match name_in(names, lang) {
        ("", _) => (order_name.to_owned(), None),
        (name, name_lang) => (name.to_owned(), (name_lang != lang).then_some(name_lang)),
    }
}

/// A line's amount: its quantity times its unit amount.
pub fn line_amount(line: &CheckoutLine) -> u64 {
    line.unit_amount.saturating_mul(u64::from(line.quantity))
}

/// The checkout's id in a page address's path (`/checkout/{id}`, as the
/// browser has it: percent-encoded), for a page without a router.
pub fn checkout_id_in(path: &str) -> &str {
    let id = path.strip_prefix("/checkout/").unwrap_or_default();
    id.split('/').next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_created_checkout_within_its_time_is_payable() {
        let expires_at = Some(10_000);
        assert_eq!(standing(OrderStatus::Created, expires_at, 9_999), Standing::Payable);
        assert_eq!(standing(OrderStatus::Created, expires_at, 10_000), Standing::TimeUp);
        assert_eq!(standing(OrderStatus::Created, None, u64::MAX), Standing::Payable, "the server alone decides");
        assert_eq!(standing(OrderStatus::Pending, expires_at, 0), Standing::InProgress);
        assert_eq!(standing(OrderStatus::Unknown, expires_at, 20_000), Standing::InProgress);
        for status in OrderStatus::ALL.into_iter().filter(|status| status.is_final()) {
            assert_eq!(standing(status, expires_at, 0), Standing::Over, "{status:?}");
            assert_eq!(standing(status, expires_at, 20_000), Standing::Over, "{status:?}");
        }
    }

    #[test]
    fn the_claims_answers_are_told_apart() {
        let server = |status: u16, code: Option<&str>| ApiError::Server {
            status,
            code: code.map(str::to_owned),
            retry_after_ms: None,
        };
        assert_eq!(Claimed::of(Err(server(409, Some("CHECKOUT_LINK_USED")))), Claimed::LinkUsed);
        assert_eq!(Claimed::of(Err(server(404, Some("ORDER_NOT_FOUND")))), Claimed::NotFound);
        assert_eq!(Claimed::of(Err(server(404, None))), Claimed::NotFound);
        let busy = server(429, Some("TOO_MANY_REQUESTS"));
        assert_eq!(Claimed::of(Err(busy.clone())), Claimed::Problem(busy));
        let conflict = server(409, Some("SOMETHING_ELSE"));
        assert_eq!(Claimed::of(Err(conflict.clone())), Claimed::Problem(conflict));
        let offline = ApiError::Network("offline".into());
        assert_eq!(Claimed::of(Err(offline.clone())), Claimed::Problem(offline));
        assert!(Claimed::LinkUsed.is_definitive() && Claimed::NotFound.is_definitive());
        assert!(!Claimed::Problem(ApiError::Network(String::new())).is_definitive());
    }

    #[test]
    fn the_checkouts_id_is_the_paths_segment_after_checkout() {
        assert_eq!(checkout_id_in("/checkout/ord_books_0193f1c2"), "ord_books_0193f1c2");
        assert_eq!(checkout_id_in("/checkout/ord_books_0193f1c2/"), "ord_books_0193f1c2");
        assert_eq!(checkout_id_in("/checkout/"), "");
        assert_eq!(checkout_id_in("/orders/ord_1"), "");
    }

    #[test]
    fn the_token_is_the_fragment_without_its_hash() {
        assert_eq!(token_of("#k3J9-x_Y"), "k3J9-x_Y");
        assert_eq!(token_of(""), "");
        assert_eq!(token_of("#"), "");
    }

    #[test]
    fn the_checkouts_name_falls_back_to_the_other_language_then_to_the_orders() {
        let names = Names { en: Some("Two novels".into()), ko: None };
        assert_eq!(checkout_name(&names, "Two novels", Lang::En), ("Two novels".to_owned(), None));
        assert_eq!(checkout_name(&names, "Two novels", Lang::Ko), ("Two novels".to_owned(), Some(Lang::En)));
        assert_eq!(checkout_name(&Names::default(), "Order 1042", Lang::Ko), ("Order 1042".to_owned(), None));
    }

    #[test]
    fn a_lines_amount_is_its_quantity_times_its_unit_amount() {
        let line = CheckoutLine { name: "Mug".into(), quantity: 3, unit_amount: 13_500 };
        assert_eq!(line_amount(&line), 40_500);
    }
}

use serde::{Deserialize, Serialize};

/// Whether `text` uses only the characters of the server's order ids, which
/// are those Toss accepts in an orderId: A-Z, a-z, 0-9, `_` and `-`.
pub fn is_order_id_text(text: &str) -> bool {
    text.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"_-".contains(&byte))
}

/// Where an order is in its payment. Written by the server, read by the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OrderStatus {
    /// Created; the customer has not confirmed a payment yet.
    Created,
    /// A confirm is stored and the PG is being asked.
    Pending,
    /// The PG charged the customer. Final.
    Paid,
    /// The PG declined, or the call never reached it. Nothing was charged. Final.
    Failed,
    /// The PG call ended without a definitive answer; recovery will settle it.
    Unknown,
    /// The PG charged the customer, then the whole payment was cancelled and
    /// refunded. Final.
    Canceled,
    /// The PG charged the customer, then part of it was refunded. Final as a
    /// payment; an operator may still refund the rest.
    PartiallyRefunded,
    /// The PG charged the customer and a refund is stored and being sent; the
    /// PG's answer moves the order to `CANCELED` or `PARTIALLY_REFUNDED` (or
    /// back to where it was, if the PG refuses the refund). Final as a payment.
    CancelRequested,
}

impl OrderStatus {
    /// Whether the payment's outcome is settled: charged or not, it will never
    /// be charged again or turn out unpaid. A charge may still be refunded
    /// afterwards (see [`OrderStatus::is_refund_in_progress`]).
    pub fn is_final(self) -> bool {
        match self {
            OrderStatus::Paid
            | OrderStatus::Failed
            | OrderStatus::Canceled
            | OrderStatus::PartiallyRefunded
            | OrderStatus::CancelRequested => true,
            OrderStatus::Created | OrderStatus::Pending | OrderStatus::Unknown => false,
        }
    }

    /// Whether a refund of the order is stored and its outcome not known yet.
    pub fn is_refund_in_progress(self) -> bool {
        self == OrderStatus::CancelRequested
    }

    /// Whether a payment for the order may be under way at the PG right now.
    pub fn is_in_progress(self) -> bool {
        match self {
            OrderStatus::Pending | OrderStatus::Unknown => true,
            OrderStatus::Created
            | OrderStatus::Paid
            | OrderStatus::Failed
            | OrderStatus::Canceled
            | OrderStatus::PartiallyRefunded
            | OrderStatus::CancelRequested => false,
        }
    }

    /// The wire spelling, also used as the database value.
    pub fn as_str(self) -> &'static str {
        match self {
            OrderStatus::Created => "CREATED",
            OrderStatus::Pending => "PENDING",
            OrderStatus::Paid => "PAID",
            OrderStatus::Failed => "FAILED",
            OrderStatus::Unknown => "UNKNOWN",
            OrderStatus::Canceled => "CANCELED",
            OrderStatus::PartiallyRefunded => "PARTIALLY_REFUNDED",
            OrderStatus::CancelRequested => "CANCEL_REQUESTED",
        }
    }

    /// Every status, in lifecycle order.
    pub const ALL: [OrderStatus; 8] = [
        Self::Created,
        Self::Pending,
        Self::Paid,
        Self::Failed,
        Self::Unknown,
        Self::Canceled,
        Self::PartiallyRefunded,
        Self::CancelRequested,
    ];

    /// Parses the wire spelling.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|status| status.as_str() == value)
    }
}

/// Why a payment failed, in words a customer can act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Failure {
    pub code: String,
    pub message: String,
}

/// One line of an order, priced by the server when the order was created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LineItem {
    pub sku: String,
    pub name: String,
    pub unit_price: u64,
    pub quantity: u32,
}

/// An order as the customer sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Order {
    pub order_id: String,
    pub status: OrderStatus,
    /// Total in KRW (no minor unit).
    pub amount: u64,
    pub order_name: String,
    pub items: Vec<LineItem>,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// RFC 3339, UTC.
    pub updated_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// How much of the amount was refunded (KRW); 0 unless cancelled.
    #[serde(default)]
    pub refunded_amount: u64,
    /// When the order was paid (RFC 3339, UTC), if it was: the customer's
    /// cancel window runs from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paid_at: Option<String>,
    /// Why the PG refused this order's last refund, when it did: nothing of
    /// that refund was paid back, and the order stands as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_refusal: Option<Failure>,
    /// For a shop's checkout: the way back to the shop, which the page offers
    /// once the journey ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub back: Option<crate::checkout::BackToShop>,
}

/// A cart line in `POST /api/orders`; the server looks up the price.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RequestedItem {
    pub sku: String,
    pub quantity: u32,
}

/// Body of `POST /api/orders/{order_id}/abandon`: `{}`. It carries nothing;
/// it is asked for so that the request needs `Content-Type: application/json`,
/// which a form on another site (a sibling subdomain included) cannot send.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AbandonRequest {}

/// Body of `POST /api/orders`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreateOrderRequest {
    pub items: Vec<RequestedItem>,
}

/// Answer to `POST /api/orders`: the order, and where the PG's window sends the
/// customer back (the page passes both to the SDK's `requestPayment`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreatedOrder {
    #[serde(flatten)]
    pub order: Order,
    /// `/pay/success` on the shop's public URL.
    pub success_url: String,
    /// `/pay/fail` on the shop's public URL.
    pub fail_url: String,
}

/// The part of an [`Order`] the cart needs (to ask before a second purchase).
/// It decodes any `Order`; the cart, the page a customer lands on, is spared
/// the code that decodes items and failures.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct OrderSummary {
    pub order_id: String,
    pub status: OrderStatus,
    pub amount: u64,
    pub order_name: String,
    pub created_at: String,
}

/// The part of a [`CreatedOrder`] the cart needs to open the PG's window. It
/// decodes any `CreatedOrder`, without the `flatten` machinery that type needs.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PlacedOrder {
    pub order_id: String,
    pub amount: u64,
    pub order_name: String,
    pub success_url: String,
    pub fail_url: String,
}

/// Body of the operators' `POST /admin/orders/:id/cancel`: refund `amount`
/// (KRW) of what is left of the payment, or all of it without one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OperatorCancelRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<u64>,
    /// Why, for the PG and the audit log (1 to 200 characters).
    pub reason: String,
}

/// Body of `POST /api/orders/:id/confirm`, from the PG's success redirect:
/// Toss's `paymentKey` as `payment_key`, or KakaoPay's `pg_token` with the
/// `ready` its return URL names (the KakaoPay payment the server prepared for
/// the order, in the window the token comes from).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ConfirmRequest {
    #[serde(default)]
    pub payment_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pg_token: Option<String>,
    /// KakaoPay's return URL's `ready`: which prepared payment the window was.
    /// Without it, the order's latest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<String>,
    pub amount: u64,
}

/// The PG an order's payment goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Pg {
    /// Cards, through Toss Payments.
    Toss,
    /// KakaoPay.
    #[serde(rename = "kakaopay")]
    KakaoPay,
}

impl Pg {
    pub const ALL: [Pg; 2] = [Pg::Toss, Pg::KakaoPay];

    /// Its wire spelling, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Pg::Toss => "toss",
            Pg::KakaoPay => "kakaopay",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|pg| pg.as_str() == text)
    }

    /// What a customer knows it as ("this shop does not take …").
    pub fn known_as(self) -> &'static str {
        match self {
            Pg::Toss => "cards",
            Pg::KakaoPay => "KakaoPay",
        }
    }
}

/// A PG read from its stored spelling.
impl TryFrom<String> for Pg {
    type Error = String;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        Pg::parse(&text).ok_or_else(|| format!("unknown PG {text:?}"))
    }
}

/// Body of `POST /api/orders/:id/window`: the PG whose window the customer opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct WindowRequest {
    pub pg: Pg,
}

/// Answer to `POST /api/orders/:id/window`, at a PG that asks for the payment
/// to be prepared before its window opens (KakaoPay's ready): where the window
/// of the order's prepared payment is (a QR code on a PC, the PG's app on a phone).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PgWindow {
    pub pc_url: String,
    pub mobile_url: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgs_round_trip_through_their_wire_spelling() {
        for pg in Pg::ALL {
            assert_eq!(serde_json::to_string(&pg).unwrap(), format!("\"{}\"", pg.as_str()));
            assert_eq!(Pg::parse(pg.as_str()), Some(pg));
        }
        assert_eq!(Pg::parse("kakao"), None);
    }

    #[test]
    fn a_confirm_carries_tosss_key_or_kakaopays_token() {
        let toss: ConfirmRequest = serde_json::from_str(r#"{"payment_key":"pk","amount":1}"#).unwrap();
        assert_eq!((toss.payment_key.as_str(), toss.pg_token), ("pk", None));
        let kakaopay: ConfirmRequest = serde_json::from_str(r#"{"pg_token":"t","amount":1}"#).unwrap();
        assert_eq!((kakaopay.payment_key.as_str(), kakaopay.pg_token.as_deref()), ("", Some("t")));
        let sent = ConfirmRequest { payment_key: "pk".into(), pg_token: None, ready: None, amount: 1 };
        assert_eq!(serde_json::to_string(&sent).unwrap(), r#"{"payment_key":"pk","amount":1}"#);
    }

    #[test]
    fn statuses_round_trip_through_their_wire_spelling() {
        for status in OrderStatus::ALL {
            let json = serde_json::to_string(&status).unwrap();
            assert_eq!(json, format!("\"{}\"", status.as_str()));
            assert_eq!(OrderStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(OrderStatus::parse("paid"), None);
    }

    #[test]
    fn only_settled_payments_are_final() {
        assert!(OrderStatus::Paid.is_final());
        assert!(OrderStatus::Failed.is_final());
        assert!(OrderStatus::Canceled.is_final());
        assert!(OrderStatus::PartiallyRefunded.is_final());
        assert!(OrderStatus::CancelRequested.is_final(), "charged: only a refund is under way");
        assert!(OrderStatus::CancelRequested.is_refund_in_progress());
        assert!(!OrderStatus::Paid.is_refund_in_progress());
        assert!(!OrderStatus::Unknown.is_final());
        assert!(!OrderStatus::Pending.is_final());
        assert!(!OrderStatus::Created.is_final());
    }

    #[test]
    fn created_order_flattens_the_order_next_to_the_return_urls() {
        let created = CreatedOrder {
            order: Order {
                order_id: "ord_1".into(),
                status: OrderStatus::Created,
                amount: 12_900,
                order_name: "Mug".into(),
                items: vec![LineItem { sku: "M".into(), name: "Mug".into(), unit_price: 12_900, quantity: 1 }],
                created_at: "2026-01-01T00:00:00Z".into(),
                updated_at: "2026-01-01T00:00:00Z".into(),
                failure: None,
                refunded_amount: 0,
                paid_at: None,
                refund_refusal: None,
                back: None,
            },
            success_url: "http://shop/pay/success".into(),
            fail_url: "http://shop/pay/fail".into(),
        };
        let value = serde_json::to_value(&created).unwrap();
        assert_eq!(value["order_id"], "ord_1");
        assert_eq!(value["success_url"], "http://shop/pay/success");
        assert!(value.get("failure").is_none(), "absent failure is omitted");
        let back: CreatedOrder = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(back, created);

        // The cart's views of the same JSON.
        let placed: PlacedOrder = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(placed.success_url, "http://shop/pay/success");
        assert_eq!((placed.order_id.as_str(), placed.amount), ("ord_1", 12_900));
        let summary: OrderSummary = serde_json::from_value(value).unwrap();
        assert_eq!((summary.status, summary.order_name.as_str()), (OrderStatus::Created, "Mug"));
    }
}

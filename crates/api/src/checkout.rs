//! Checkouts: an order a shop's own backend creates through the shop API
//! (`/v1/checkouts`, server to server, with the shop's key), with its own
//! lines, prices and reference, paid by its customer on payonce's page, who
//! then goes back to the shop's `return_url`. A checkout *is* an order: the
//! same payment, the same statuses, the same exactly-once; these are its
//! shop-facing views.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::order::{Failure, LineItem, Order, OrderStatus, Pg};

/// The least one payment may be, in won: the least Toss Payments takes by card.
pub const MIN_AMOUNT: u64 = 100;
/// The most one payment may be, in won. The PGs document no single maximum
/// (a card's limit is its holder's); this bound keeps every amount, and every
/// sum of lines under it, far inside what the database and the PGs store.
pub const MAX_AMOUNT: u64 = 100_000_000;
/// Most lines in a checkout.
pub const MAX_LINES: usize = 50;
/// Most units on one line.
pub const MAX_QUANTITY: u32 = 999;
/// Most metadata pairs.
pub const MAX_METADATA: usize = 20;
/// How long a checkout stays open when the shop does not say: 90 minutes.
pub const DEFAULT_EXPIRES_IN_SECS: u64 = 90 * 60;
/// The least and the most a shop may say, in seconds.
pub const EXPIRES_IN_SECS: std::ops::RangeInclusive<u64> = 60..=24 * 60 * 60;

/// The order's name, as the PG's window and the customer's page show it: in
/// English, in Korean, or both (the page shows the customer's language, or
/// the one there is).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Names {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub en: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ko: Option<String>,
}

impl Names {
    /// The name in English when there is one, else in Korean.
    pub fn english_first(&self) -> &str {
        self.en.as_deref().or(self.ko.as_deref()).unwrap_or_default()
    }

    /// The name in Korean when there is one, else in English.
    pub fn korean_first(&self) -> &str {
        self.ko.as_deref().or(self.en.as_deref()).unwrap_or_default()
    }
}

/// One line of a checkout, priced by the shop: what it sells is its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CheckoutLine {
    /// What the customer sees for the line (1 to 100 characters).
    pub name: String,
    /// 1 to 999.
    pub quantity: u32,
    /// KRW, whole won.
    pub unit_amount: u64,
}

/// Body of `POST /v1/checkouts`. Unknown fields are refused, so a misspelt
/// optional field is an error instead of a default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateCheckoutRequest {
    /// The shop's own id for the order (1 to 64 printable characters); not
    /// unique: a shop may try to take payment for one of its orders again.
    pub reference: String,
    /// The order's name (1 to 100 characters each).
    pub name: Names,
    /// 1 to 50 lines.
    pub lines: Vec<CheckoutLine>,
    /// The total in KRW: the sum of the lines, within the PG's limits.
    pub amount: u64,
    /// Where the customer's browser goes back to when the payment journey
    /// ends: https (http only on this machine), on one of the shop's origins.
    /// It never carries the outcome: the shop asks for it.
    pub return_url: String,
    /// Up to 20 pairs, keys 1 to 40 characters, values up to 500; kept and
    /// given back, never shown to the customer.
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
    /// The PGs the customer may pay through: some of the shop's, all of them
    /// when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pay_with: Option<Vec<Pg>>,
    /// How long the checkout stays open, in seconds: 60 to 86,400, 5,400 (90 minutes) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in: Option<u64>,
}

/// Where a checkout is: an order's status, and `EXPIRED` for one closed
/// unpaid when its time was up (stored as a FAILED order with the code
/// `CHECKOUT_EXPIRED`: nothing was charged).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CheckoutStatus {
    Created,
    Pending,
    Unknown,
    Paid,
    Failed,
    Expired,
    CancelRequested,
    PartiallyRefunded,
    Canceled,
}

impl CheckoutStatus {
    /// The checkout's status for an order in `status` that failed with `failure_code`, if it failed.
    pub fn of(status: OrderStatus, failure_code: Option<&str>) -> Self {
        match status {
            OrderStatus::Created => Self::Created,
            OrderStatus::Pending => Self::Pending,
            OrderStatus::Unknown => Self::Unknown,
            OrderStatus::Paid => Self::Paid,
            OrderStatus::Failed if failure_code == Some(crate::ErrorCode::CheckoutExpired.as_str()) => Self::Expired,
            OrderStatus::Failed => Self::Failed,
            OrderStatus::CancelRequested => Self::CancelRequested,
            OrderStatus::PartiallyRefunded => Self::PartiallyRefunded,
            OrderStatus::Canceled => Self::Canceled,
        }
    }
}

/// The payment behind a checkout, once one was sent to a PG.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CheckoutPayment {
    pub pg: Pg,
    /// The PG's id of the payment (Toss's `paymentKey`, KakaoPay's `tid`).
    pub payment_id: String,
}

/// One change of a checkout's status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StatusChange {
    pub status: CheckoutStatus,
    /// RFC 3339, UTC.
    pub at: String,
}

/// A checkout as its shop sees it (`/v1/checkouts`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Checkout {
    /// payonce's id: also the order id the PG knows, starting with the shop's prefix.
    pub id: String,
    pub reference: String,
    pub status: CheckoutStatus,
    pub amount: u64,
    pub amount_refunded: u64,
    pub name: Names,
    pub lines: Vec<CheckoutLine>,
    pub return_url: String,
    pub metadata: BTreeMap<String, String>,
    pub pay_with: Vec<Pg>,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// RFC 3339, UTC: a checkout still CREATED then is closed EXPIRED.
    pub expires_at: String,
    /// Where to send the customer to pay: while the checkout is CREATED.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment: Option<CheckoutPayment>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// Why the PG refused the checkout's last refund, when it did: nothing of
    /// that refund was paid back, and the checkout stands as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_refusal: Option<Failure>,
    /// Every change of status, oldest first, from CREATED.
    pub history: Vec<StatusChange>,
}

/// A page of `GET /v1/checkouts`, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CheckoutList {
    pub checkouts: Vec<Checkout>,
    /// Give it as `after` for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// Body of `POST /v1/checkouts/{id}/refunds`: `amount` of what is left of the
/// payment, or all of it without one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ShopRefundRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<u64>,
    /// Why, for the PG and the audit log (1 to 200 characters); "refunded by the shop" when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Body of the page's `POST /api/checkouts/{id}/claim`: the token from the
/// `next_url`'s fragment (never sent in a URL, so never in a log).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClaimRequest {
    #[serde(default)]
    pub token: String,
}

/// Where the customer goes back to when the journey ends: the shop's name
/// and its `return_url`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BackToShop {
    pub shop: Names,
    pub url: String,
}

/// A checkout as its customer's page sees it (`/api/checkouts/{id}`): the
/// order, the shop's lines and names, the PGs allowed, where the PG's window
/// sends the customer back, and the way back to the shop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CustomerCheckout {
    pub order_id: String,
    pub status: OrderStatus,
    pub amount: u64,
    /// The name the PG's window shows (as stored with the order).
    pub order_name: String,
    pub name: Names,
    pub lines: Vec<CheckoutLine>,
    pub pay_with: Vec<Pg>,
    /// RFC 3339, UTC.
    pub expires_at: String,
    pub back: BackToShop,
    /// `/pay/success` on payonce's public URL (the PG's window returns there).
    pub success_url: String,
    /// `/pay/fail` on payonce's public URL.
    pub fail_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
}

/// The lines of a checkout as order lines: a line has no SKU, so it is
/// numbered (`1`, `2`, ...) in the order.
pub fn order_lines(lines: &[CheckoutLine]) -> Vec<LineItem> {
    lines
        .iter()
        .enumerate()
        .map(|(index, line)| LineItem {
            sku: (index + 1).to_string(),
            name: line.name.clone(),
            unit_price: line.unit_amount,
            quantity: line.quantity,
        })
        .collect()
}

/// Whether an order is one of a shop's checkouts: its page shows the way back.
pub fn is_checkout(order: &Order) -> bool {
    order.back.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expired_checkout_is_a_failed_order_with_its_own_code() {
        assert_eq!(CheckoutStatus::of(OrderStatus::Failed, Some("CHECKOUT_EXPIRED")), CheckoutStatus::Expired);
        assert_eq!(CheckoutStatus::of(OrderStatus::Failed, Some("PG_DECLINED")), CheckoutStatus::Failed);
        assert_eq!(CheckoutStatus::of(OrderStatus::Failed, None), CheckoutStatus::Failed);
        assert_eq!(CheckoutStatus::of(OrderStatus::Canceled, None), CheckoutStatus::Canceled);
        assert_eq!(serde_json::to_string(&CheckoutStatus::PartiallyRefunded).unwrap(), "\"PARTIALLY_REFUNDED\"");
    }

    #[test]
    fn a_create_request_refuses_fields_it_does_not_know() {
        let good = r#"{"reference":"r","name":{"en":"Mug"},"lines":[{"name":"Mug","quantity":1,"unit_amount":1000}],
                       "amount":1000,"return_url":"https://shop.example/back"}"#;
        let request: CreateCheckoutRequest = serde_json::from_str(good).unwrap();
        assert_eq!(request.name.korean_first(), "Mug");
        assert!(request.metadata.is_empty() && request.pay_with.is_none() && request.expires_in.is_none());
        let misspelt = good.replace("\"amount\"", "\"ammount\"");
        assert!(serde_json::from_str::<CreateCheckoutRequest>(&misspelt).is_err());
    }
}

//! Events: what payonce tells a shop about its checkouts. Each is written in
//! the transaction of the change it reports, so a change that committed
//! always has one and nothing else ever does; it is sent to the shop's
//! endpoint signed as Standard Webhooks 1.0 (`webhook-id` is the event's `id`),
//! and listed in the shop's feed (`GET /v1/events`). The body a shop receives
//! is an [`Event`] as JSON, the same bytes every time it is sent.

use serde::{Deserialize, Serialize};

use crate::checkout::CheckoutStatus;

/// What happened to a checkout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum EventType {
    /// The customer was charged.
    #[serde(rename = "checkout.paid")]
    Paid,
    /// Nothing was charged and nothing will be: the payment failed for good.
    #[serde(rename = "checkout.failed")]
    Failed,
    /// The checkout's time ran out before a payment: nothing was charged.
    #[serde(rename = "checkout.expired")]
    Expired,
    /// The whole charge was refunded.
    #[serde(rename = "checkout.refunded")]
    Refunded,
    /// Part of the charge was refunded (`amount_refunded` of it so far).
    #[serde(rename = "checkout.partially_refunded")]
    PartiallyRefunded,
    /// The PG refused a refund: nothing of it was paid back, and the
    /// checkout stands as it was before the refund was asked for.
    #[serde(rename = "checkout.refund_failed")]
    RefundFailed,
    /// The payment's outcome has stayed unknown past the time operators are
    /// alerted. Not a verdict: the customer may have been charged; a
    /// `checkout.paid` or `checkout.failed` follows once the PG tells.
    #[serde(rename = "checkout.unresolved")]
    Unresolved,
}

impl EventType {
    pub const ALL: [EventType; 7] = [
        EventType::Paid,
        EventType::Failed,
        EventType::Expired,
        EventType::Refunded,
        EventType::PartiallyRefunded,
        EventType::RefundFailed,
        EventType::Unresolved,
    ];

    /// The wire name, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Paid => "checkout.paid",
            EventType::Failed => "checkout.failed",
            EventType::Expired => "checkout.expired",
            EventType::Refunded => "checkout.refunded",
            EventType::PartiallyRefunded => "checkout.partially_refunded",
            EventType::RefundFailed => "checkout.refund_failed",
            EventType::Unresolved => "checkout.unresolved",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == name)
    }
}

/// One event, as sent and as listed: the Standard Webhooks payload shape
/// (`type`, `timestamp`, `data`), with its id beside them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Event {
    /// Never changes, however often the event is sent: also its `webhook-id`.
    /// A shop acts on each id once.
    pub id: String,
    #[serde(rename = "type")]
    pub kind: EventType,
    /// When the change was committed: RFC 3339, UTC.
    pub timestamp: String,
    pub data: EventData,
}

/// The checkout an event is about, as the change left it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventData {
    pub checkout_id: String,
    pub reference: String,
    /// 1 for the checkout's first event, then one more for each: a shop that
    /// holds event 3 knows any event 2 it receives later is older news.
    pub sequence: u64,
    /// The checkout's status after the change (`checkout.unresolved`: UNKNOWN).
    pub status: CheckoutStatus,
    pub amount: u64,
    pub amount_refunded: u64,
    /// Why the payment failed, or why the PG refused the refund.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_code: Option<String>,
}

/// A page of the feed, `GET /v1/events?after=`: the shop's events in the
/// order they were committed, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventList {
    pub events: Vec<Event>,
    /// Where the next page starts: give it as `after`. Present even when the
    /// page is empty (then it is the `after` given), so a shop keeps one
    /// cursor and asks again later.
    pub next_cursor: String,
}

/// The headers a sent event carries (Standard Webhooks 1.0).
pub const WEBHOOK_ID_HEADER: &str = "webhook-id";
pub const WEBHOOK_TIMESTAMP_HEADER: &str = "webhook-timestamp";
pub const WEBHOOK_SIGNATURE_HEADER: &str = "webhook-signature";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_reads_back_from_its_wire_name() {
        for kind in EventType::ALL {
            assert_eq!(EventType::parse(kind.as_str()), Some(kind));
            assert_eq!(serde_json::to_string(&kind).expect("encodes"), format!("\"{}\"", kind.as_str()));
        }
        assert_eq!(EventType::parse("checkout.paid "), None);
    }
}

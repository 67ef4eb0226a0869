//! What the operators' API answers, one type per answer, so that its OpenAPI
//! description (`GET /admin/openapi.json`) is made from the same types the
//! handlers return. Times are RFC 3339 in UTC; amounts are KRW.

use std::collections::HashMap;

use payonce_api::Order;
use serde::Serialize;
use utoipa::ToSchema;

use crate::db::{
    AttemptDetail, AuditLine, EventRow, HistoryLine, OperatorOrderRow, PgCallRow, Refund, SendRow, rfc3339,
};

/// `GET /admin/orders`.
/// The operator a token signs in as.
#[derive(Debug, Serialize, ToSchema)]
pub struct SignedInView {
    /// The name the audit log records for this operator's actions.
    pub name: String,
    /// `read-only` (reads only) or `refund` (also every POST).
    pub role: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OrderList {
    /// UNKNOWN first, then CANCEL_REQUESTED, each longest waiting first; at most 500.
    pub orders: Vec<OrderRow>,
}

/// One order in the list.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrderRow {
    pub order_id: String,
    /// The order's status (CREATED until a confirm is stored).
    pub status: String,
    /// The PG its payment went to (`toss` or `kakaopay`); none before a confirm is stored.
    pub pg: Option<String>,
    pub amount: i64,
    pub refunded_amount: i64,
    pub created_at: String,
    /// When the order last changed.
    pub changed_at: String,
    /// Seconds since it last changed.
    pub waiting_s: i64,
    /// The PG's last answer about its payment, as recovery recorded it.
    pub last_pg_answer: Option<String>,
    /// Why its payment became UNKNOWN, while it is.
    pub unknown_reason: Option<String>,
    pub recovery_passes: i64,
}

impl OrderRow {
    pub fn new(row: OperatorOrderRow, now_ms: i64) -> Self {
        Self {
            status: row.status.unwrap_or_else(|| payonce_api::OrderStatus::Created.as_str().to_owned()),
            pg: row.pg,
            amount: row.amount,
            refunded_amount: row.refunded_amount.unwrap_or(0),
            created_at: rfc3339(row.created_at_ms),
            changed_at: rfc3339(row.changed_at_ms),
            waiting_s: (now_ms - row.changed_at_ms).max(0) / 1_000,
            last_pg_answer: row.last_pg_answer,
            unknown_reason: row.unknown_reason,
            recovery_passes: row.recovery_passes.unwrap_or(0),
            order_id: row.order_id,
        }
    }
}

/// `GET /admin/orders/{order_id}`: an order's whole story.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrderStory {
    pub order: Order,
    /// Its payment attempt; none before a confirm is stored.
    pub attempt: Option<AttemptView>,
    /// Every status change, oldest first.
    pub history: Vec<StatusChange>,
    pub refunds: Vec<RefundView>,
    /// What operators did to it.
    pub audit: Vec<AuditView>,
    /// The calls to the PG about it (the newest 200, oldest first).
    pub pg_calls: Vec<PgCallView>,
    /// What its shop was told (a checkout's only), oldest first.
    pub events: Vec<EventView>,
}

/// An event told to a shop, and how its delivery stands.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventView {
    pub id: String,
    pub shop: String,
    pub order_id: String,
    /// `checkout.paid`, `checkout.refunded`, ...
    #[serde(rename = "type")]
    pub kind: String,
    pub sequence: i64,
    pub created_at: String,
    /// PENDING, DELIVERED, FAILED (past its retry window) or NO_ENDPOINT (its shop reads the feed).
    pub delivery: String,
    pub delivered_at: Option<String>,
    /// While PENDING: when it is sent next.
    pub next_send_at: Option<String>,
    pub failed_sends: i64,
    /// The shop's last answer: `HTTP 500`, `no answer within the timeout`, ...
    pub last_answer: Option<String>,
    /// Every send, oldest first (absent in lists).
    pub sends: Vec<EventSendView>,
}

/// One send of an event.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventSendView {
    pub at: String,
    pub took_ms: i64,
    pub http_status: Option<i64>,
    pub outcome: String,
}

impl EventView {
    /// The event, with those of `sends` that are its own.
    pub fn new(event: EventRow, sends: &[SendRow]) -> Self {
        let sends = sends
            .iter()
            .filter(|send| send.event_id == event.event_id)
            .map(|send| EventSendView {
                at: rfc3339(send.at_ms),
                took_ms: send.took_ms,
                http_status: send.http_status,
                outcome: send.outcome.clone(),
            })
            .collect();
        let pending = event.delivery == "PENDING";
        Self {
            id: event.event_id,
            shop: event.shop_id,
            order_id: event.order_id,
            kind: event.kind,
            sequence: event.sequence,
            created_at: rfc3339(event.created_at_ms),
            delivery: event.delivery,
            delivered_at: event.delivered_at_ms.map(rfc3339),
            next_send_at: pending.then(|| rfc3339(event.next_attempt_at_ms)),
            failed_sends: event.recovery_passes,
            last_answer: event.last_pg_answer,
            sends,
        }
    }
}

/// `GET /admin/events`: events that failed.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventList {
    pub events: Vec<EventView>,
}

/// What sending events again did.
#[derive(Debug, Serialize, ToSchema)]
pub struct Resent {
    pub resent: u64,
}

/// The payment attempt, with where recovery stands on it.
#[derive(Debug, Serialize, ToSchema)]
pub struct AttemptView {
    /// The PG it went to (`toss` or `kakaopay`); its payment there is `payment_key`.
    pub pg: String,
    /// The browser's key, of this shop's API.
    pub idempotency_key: Option<String>,
    /// The key the confirm went to the PG under, made by the server.
    pub pg_idempotency_key: Option<String>,
    pub payment_key: Option<String>,
    pub amount: i64,
    pub status: String,
    pub failure_code: Option<String>,
    pub failure_message: Option<String>,
    pub unknown_reason: Option<String>,
    pub last_pg_answer: Option<String>,
    pub recovery_passes: i64,
    /// When recovery looks next, if it will.
    pub next_recovery_at: Option<String>,
    /// Until when a server holds it for recovery, and which.
    pub lease_until: Option<String>,
    pub lease_owner: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<AttemptDetail> for AttemptView {
    fn from(attempt: AttemptDetail) -> Self {
        let instant = |ms: i64| (ms > 0).then(|| rfc3339(ms));
        Self {
            pg: attempt.pg,
            idempotency_key: attempt.idempotency_key,
            pg_idempotency_key: attempt.pg_idempotency_key,
            payment_key: attempt.payment_key,
            amount: attempt.amount,
            status: attempt.status,
            failure_code: attempt.failure_code,
            failure_message: attempt.failure_message,
            unknown_reason: attempt.unknown_reason,
            last_pg_answer: attempt.last_pg_answer,
            recovery_passes: attempt.recovery_passes,
            next_recovery_at: instant(attempt.next_attempt_at_ms),
            lease_until: instant(attempt.lease_until_ms),
            lease_owner: attempt.lease_owner,
            created_at: rfc3339(attempt.created_at_ms),
            updated_at: rfc3339(attempt.updated_at_ms),
        }
    }
}

/// One status change, and who made it (confirm, recovery, a refund, an operator...).
#[derive(Debug, Serialize, ToSchema)]
pub struct StatusChange {
    pub at: String,
    pub actor: String,
    pub from: String,
    pub to: String,
    pub code: Option<String>,
    pub detail: Option<String>,
}

impl From<HistoryLine> for StatusChange {
    fn from(event: HistoryLine) -> Self {
        Self {
            at: rfc3339(event.at_ms),
            actor: event.actor,
            from: event.from_status,
            to: event.to_status,
            code: event.code,
            detail: event.detail,
        }
    }
}

/// A refund of the order, and how far it got.
#[derive(Debug, Serialize, ToSchema)]
pub struct RefundView {
    pub refund_id: String,
    pub amount: u64,
    /// What was left of the payment before it.
    pub balance_before: u64,
    pub reason: String,
    /// REQUESTED, DONE or FAILED.
    pub status: String,
    pub failure_code: Option<String>,
    /// The order's status it came from, and goes back to if the PG refuses it.
    pub previous_status: String,
    /// The key every send of it to the PG carries.
    pub pg_idempotency_key: String,
    pub calls: u32,
    pub recovery_passes: u32,
    /// What the PG last said about it, as the cancel that sent it or
    /// recovery recorded it; none before it answered.
    pub last_pg_answer: Option<String>,
}

impl RefundView {
    /// The refund, with the PG's last answers about the order's refunds.
    pub fn new(refund: &Refund, answers: &HashMap<String, String>) -> Self {
        Self {
            last_pg_answer: answers.get(&refund.refund_id).cloned(),
            refund_id: refund.refund_id.clone(),
            amount: refund.amount,
            balance_before: refund.balance_before,
            reason: refund.reason.clone(),
            status: refund.status.as_str().to_owned(),
            failure_code: refund.failure_code.clone(),
            previous_status: refund.previous_status.as_str().to_owned(),
            pg_idempotency_key: refund.pg_idempotency_key.clone(),
            calls: refund.calls,
            recovery_passes: refund.recovery_passes,
        }
    }
}

/// One operator action.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuditView {
    pub at: String,
    pub operator: String,
    pub action: String,
    pub detail: Option<String>,
}

impl From<AuditLine> for AuditView {
    fn from(line: AuditLine) -> Self {
        Self { at: rfc3339(line.at_ms), operator: line.operator, action: line.action, detail: line.detail }
    }
}

/// One call to the PG about the order, recorded once it returned.
#[derive(Debug, Serialize, ToSchema)]
pub struct PgCallView {
    /// When it was sent.
    pub at: String,
    /// confirm, lookup or cancel.
    pub kind: String,
    /// customer, recovery or reconcile.
    pub caller: String,
    pub idempotency_key: Option<String>,
    /// The server that made it.
    pub server: String,
    pub took_ms: i64,
    /// The PG's answer, in short (status and code, or what went wrong).
    pub answer: String,
}

impl From<PgCallRow> for PgCallView {
    fn from(call: PgCallRow) -> Self {
        Self {
            at: rfc3339(call.started_at_ms),
            kind: call.kind,
            caller: call.caller,
            idempotency_key: call.idempotency_key,
            server: call.server,
            took_ms: call.took_ms,
            answer: call.answer,
        }
    }
}

//! The PG's own types, in the Toss Payments API shape. Only the fields the
//! server reads are declared; unknown fields and new statuses still parse.

use serde::{Deserialize, Serialize};

/// The API version every call asks for (`TossPayments-API-Version`), the one
/// these types are read against: without it the merchant account's default
/// applies, which its owner may change in Toss's developer centre.
pub const API_VERSION: &str = "2022-11-16";

/// Body of `POST /v1/payments/confirm`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfirmBody<'a> {
    pub payment_key: &'a str,
    pub order_id: &'a str,
    pub amount: u64,
}

/// Body of `POST /v1/payments/{paymentKey}/cancel`. Without `cancel_amount`
/// the PG refunds everything that is left.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelBody<'a> {
    pub cancel_reason: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancel_amount: Option<u64>,
}

/// The parts of a Toss Payment object the server acts on.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Payment {
    pub payment_key: String,
    pub order_id: String,
    pub status: PaymentStatus,
    pub total_amount: u64,
    /// What is left to refund; `None` from a PG that does not say.
    #[serde(default)]
    pub balance_amount: Option<u64>,
    #[serde(default)]
    pub failure: Option<ErrorBody>,
    /// Whether the PG can refund it in part (`false` for an escrow order or a
    /// cash card); `None` from a PG that does not say.
    #[serde(default)]
    pub is_partial_cancelable: Option<bool>,
}

/// Toss payment statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PaymentStatus {
    /// Created by the payment window; not yet authenticated.
    Ready,
    /// Authenticated in the window and waiting for a confirm, or being confirmed.
    InProgress,
    /// Virtual account issued; waiting for the transfer.
    WaitingForDeposit,
    /// Approved and charged.
    Done,
    /// Charged, then fully cancelled.
    Canceled,
    /// Charged, then partly cancelled.
    PartialCanceled,
    /// Approval failed; nothing charged.
    Aborted,
    /// Never confirmed in time; nothing charged.
    Expired,
    /// A status this server does not know yet.
    #[serde(other)]
    Unrecognised,
}

/// Toss error body.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
}

/// One entry of `GET /v1/transactions`: an approval (`DONE`, the amount
/// charged) or a cancel (what the payment became, the amount refunded).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Transaction {
    pub transaction_key: String,
    pub payment_key: String,
    pub order_id: String,
    pub status: PaymentStatus,
    pub amount: u64,
    #[serde(default)]
    pub transaction_at: Option<String>,
}

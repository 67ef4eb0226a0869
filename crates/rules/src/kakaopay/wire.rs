//! KakaoPay's own types (`https://open-api.kakaopay.com/online/v1/payment/…`,
//! every call a JSON `POST` with `Authorization: SECRET_KEY …`). Only the
//! fields the server sends or reads are declared; unknown fields and new
//! statuses still parse.

use serde::{Deserialize, Serialize};

/// The API's paths, under its host.
pub const READY_PATH: &str = "/online/v1/payment/ready";
pub const APPROVE_PATH: &str = "/online/v1/payment/approve";
pub const ORDER_PATH: &str = "/online/v1/payment/order";
pub const CANCEL_PATH: &str = "/online/v1/payment/cancel";

/// Body of `ready`: the payment prepared before the customer's window.
/// `approval_url` gets `pg_token` in its query when the customer finishes.
#[derive(Debug, Clone, Serialize)]
pub struct ReadyBody<'a> {
    pub cid: &'a str,
    pub partner_order_id: &'a str,
    pub partner_user_id: &'a str,
    pub item_name: &'a str,
    pub quantity: u32,
    pub total_amount: u64,
    pub tax_free_amount: u64,
    pub approval_url: &'a str,
    pub cancel_url: &'a str,
    pub fail_url: &'a str,
}

/// What `ready` answers: the payment's `tid` and where to send the customer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Ready {
    pub tid: String,
    /// The PC page (a QR code for the phone).
    pub next_redirect_pc_url: String,
    pub next_redirect_mobile_url: String,
    #[serde(default)]
    pub next_redirect_app_url: Option<String>,
}

/// Body of `approve`: the prepared payment, and the `pg_token` the window
/// gave the customer. `partner_order_id` and `partner_user_id` must be
/// `ready`'s.
#[derive(Debug, Clone, Serialize)]
pub struct ApproveBody<'a> {
    pub cid: &'a str,
    pub tid: &'a str,
    pub partner_order_id: &'a str,
    pub partner_user_id: &'a str,
    pub pg_token: &'a str,
    pub total_amount: u64,
}

/// Amounts, as every answer carries them (in won).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub struct Amount {
    pub total: u64,
    #[serde(default)]
    pub tax_free: u64,
}

/// What a successful `approve` answers (it carries no status: the answer
/// itself is the approval).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Approval {
    pub aid: String,
    pub tid: String,
    pub partner_order_id: String,
    pub amount: Amount,
}

/// Body of `order`, the lookup by `tid` (the only one: there is none by the
/// shop's order id).
#[derive(Debug, Clone, Serialize)]
pub struct OrderBody<'a> {
    pub cid: &'a str,
    pub tid: &'a str,
}

/// What `order` shows of a payment.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Order {
    pub tid: String,
    pub status: Status,
    pub partner_order_id: String,
    pub amount: Amount,
    #[serde(default)]
    pub canceled_amount: Option<Amount>,
    #[serde(default)]
    pub cancel_available_amount: Option<Amount>,
}

/// Body of `cancel`. `cancel_available_amount` is what the shop believes is
/// left to cancel before this cancel; it is sent so that a cancel built on a
/// stale balance can be refused.
#[derive(Debug, Clone, Serialize)]
pub struct CancelBody<'a> {
    pub cid: &'a str,
    pub tid: &'a str,
    pub cancel_amount: u64,
    pub cancel_tax_free_amount: u64,
    pub cancel_available_amount: u64,
}

/// What a successful `cancel` answers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Cancellation {
    pub tid: String,
    pub status: Status,
    #[serde(default)]
    pub approved_cancel_amount: Option<Amount>,
    #[serde(default)]
    pub canceled_amount: Option<Amount>,
    #[serde(default)]
    pub cancel_available_amount: Option<Amount>,
}

/// KakaoPay's payment statuses, in the order a payment moves through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// Prepared (`ready`); nothing else yet.
    Ready,
    /// The payment request was sent to the customer's phone.
    SendTms,
    /// The customer opened KakaoPay's payment screen.
    OpenPayment,
    /// The customer chose a method and authenticated.
    SelectMethod,
    /// An ARS authentication is under way.
    ArsWaiting,
    /// The customer's password was accepted: waiting for the shop's approve.
    AuthPassword,
    /// A subscription's key was issued (not a payment of this shop's kind).
    IssuedSid,
    /// Approved and charged.
    SuccessPayment,
    /// Charged, and part of it cancelled.
    PartCancelPayment,
    /// Charged, and all of it cancelled.
    CancelPayment,
    /// The customer's password failed.
    FailAuthPassword,
    /// The customer left the payment.
    QuitPayment,
    /// The approval failed.
    FailPayment,
    /// A status this adapter does not know (added later).
    #[serde(other)]
    Unrecognised,
}

/// KakaoPay's error body.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ErrorBody {
    pub error_code: i32,
    #[serde(default)]
    pub error_message: String,
    #[serde(default)]
    pub extras: Option<Extras>,
}

/// The payment method's own result, beside KakaoPay's code.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct Extras {
    #[serde(default)]
    pub method_result_code: Option<String>,
    #[serde(default)]
    pub method_result_message: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_order_parses_as_the_lookup_answers_it_and_a_new_status_is_kept_apart() {
        let order: Order = serde_json::from_str(
            r#"{"tid":"T1","cid":"TC0ONETIME","status":"PART_CANCEL_PAYMENT","partner_order_id":"ord",
                "partner_user_id":"u","payment_method_type":"CARD",
                "amount":{"total":12900,"tax_free":0,"vat":1173,"point":0,"discount":0,"green_deposit":0},
                "canceled_amount":{"total":2900,"tax_free":0},"cancel_available_amount":{"total":10000,"tax_free":0},
                "payment_action_details":[]}"#,
        )
        .unwrap();
        assert_eq!(order.status, Status::PartCancelPayment);
        assert_eq!(order.canceled_amount.map(|amount| amount.total), Some(2_900));
        let later: Order = serde_json::from_str(
            r#"{"tid":"T1","status":"SOMETHING_NEW","partner_order_id":"ord","amount":{"total":1}}"#,
        )
        .unwrap();
        assert_eq!(later.status, Status::Unrecognised);
    }

    #[test]
    fn an_error_parses_with_or_without_the_methods_result() {
        let error: ErrorBody = serde_json::from_str(
            r#"{"error_code":-780,"error_message":"approval failure!",
                "extras":{"method_result_code":"USER_LOCKED","method_result_message":"진행중인 거래가 있습니다."}}"#,
        )
        .unwrap();
        assert_eq!(error.error_code, -780);
        assert_eq!(error.extras.and_then(|extras| extras.method_result_code).as_deref(), Some("USER_LOCKED"));
        let bare: ErrorBody = serde_json::from_str(r#"{"error_code":-702}"#).unwrap();
        assert_eq!((bare.error_code, bare.extras), (-702, None));
    }
}

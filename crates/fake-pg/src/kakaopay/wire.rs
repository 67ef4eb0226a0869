//! KakaoPay's JSON: the request bodies, read field by field so that an error
//! names the field at fault, and the response bodies, rendered from the
//! store's payment and what the ready recorded.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::errors::KakaoError;
use crate::payment::{Cancel, Payment, PaymentStatus};
use crate::routes::api_call::{self, json_type};
use crate::store::{SessionView, WindowEnd};

/// KakaoPay's limits on the ready's fields.
const CID_CHARS: usize = 10;
const MAX_ID_CHARS: usize = 100;
const MAX_URL_CHARS: usize = 255;
const MAX_PAYLOAD_CHARS: usize = 200;
/// Long enough for any tid or pg_token; KakaoPay's are 20 characters.
const MAX_TOKEN_CHARS: usize = 100;

/// KakaoPay names the only payment method this fake charges `CARD`.
pub(crate) const PAYMENT_METHOD: &str = "CARD";

/// A valid ready.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ReadyRequest {
    pub(crate) cid: String,
    pub(crate) partner_order_id: String,
    pub(crate) partner_user_id: String,
    pub(crate) item_name: String,
    pub(crate) quantity: u64,
    pub(crate) total_amount: u64,
    pub(crate) tax_free_amount: u64,
    /// As given, else (total - tax free) / 11, rounded, as KakaoPay computes it.
    pub(crate) vat_amount: u64,
    pub(crate) approval_url: String,
    pub(crate) cancel_url: String,
    pub(crate) fail_url: String,
}

/// A valid approve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ApproveRequest {
    pub(crate) cid: String,
    pub(crate) tid: String,
    pub(crate) partner_order_id: String,
    pub(crate) partner_user_id: String,
    pub(crate) pg_token: String,
    pub(crate) total_amount: Option<u64>,
    pub(crate) payload: Option<String>,
}

/// A valid order lookup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OrderRequest {
    pub(crate) cid: String,
    pub(crate) tid: String,
}

/// A valid cancel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CancelRequest {
    pub(crate) cid: String,
    pub(crate) tid: String,
    pub(crate) cancel_amount: u64,
    pub(crate) note: CancelNote,
    /// What the merchant believes is left to cancel before this cancel.
    pub(crate) cancel_available_amount: Option<u64>,
}

/// What a KakaoPay cancel carries that the store's cancel does not. It rides
/// in the store's cancel reason (KakaoPay's cancel has none), so that a cancel
/// finished after its caller hung up still shows it in the order lookup.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub(crate) struct CancelNote {
    pub(crate) tax_free: u64,
    pub(crate) vat: u64,
    pub(crate) payload: Option<String>,
}

impl CancelNote {
    pub(crate) fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The note of a store cancel; a cancel with another reason (never one of
    /// this face) reads as taxable, without a payload.
    fn of(cancel: &Cancel) -> Self {
        serde_json::from_str(&cancel.cancel_reason).unwrap_or(Self {
            tax_free: 0,
            vat: vat_of(cancel.cancel_amount, 0),
            payload: None,
        })
    }
}

/// KakaoPay's default VAT: a tenth of the taxable supply, i.e. 1/11 of what
/// is not tax-free, rounded.
fn vat_of(total: u64, tax_free: u64) -> u64 {
    (total.saturating_sub(tax_free) + 5) / 11
}

type Fields = Map<String, Value>;

fn object(body: &[u8], fields: &str) -> Result<Fields, KakaoError> {
    api_call::json_object(body, fields).map_err(KakaoError::from_store)
}

fn text(fields: &Fields, name: &str, max: usize) -> Result<String, KakaoError> {
    api_call::text(fields, name, max).map_err(KakaoError::from_store)
}

fn optional_text(fields: &Fields, name: &str, max: usize) -> Result<Option<String>, KakaoError> {
    api_call::optional_text(fields, name, max).map_err(KakaoError::from_store)
}

/// A whole number of won (or items), 0 or more; `None` when absent or null.
fn optional_integer(fields: &Fields, name: &str) -> Result<Option<u64>, KakaoError> {
    match fields.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(number)) => number.as_u64().map(Some).ok_or_else(|| {
            KakaoError::invalid_param(format!("{name} must be a whole number, 0 or more, got {number}."))
        }),
        Some(other) => Err(KakaoError::invalid_param(format!("{name} must be an integer, got {}.", json_type(other)))),
    }
}

fn integer(fields: &Fields, name: &str) -> Result<u64, KakaoError> {
    optional_integer(fields, name)?.ok_or_else(|| KakaoError::invalid_param(format!("{name} is required.")))
}

fn positive(fields: &Fields, name: &str) -> Result<u64, KakaoError> {
    match integer(fields, name)? {
        0 => Err(KakaoError::invalid_param(format!("{name} must be more than 0."))),
        value => Ok(value),
    }
}

/// `cid`: required, 10 characters (the test cid is `TC0ONETIME`).
fn cid(fields: &Fields) -> Result<String, KakaoError> {
    let cid = text(fields, "cid", MAX_ID_CHARS)?;
    if cid.chars().count() != CID_CHARS {
        return Err(KakaoError::invalid_param(format!("cid must be {CID_CHARS} characters, got {cid:?}.")));
    }
    Ok(cid)
}

fn url(fields: &Fields, name: &str) -> Result<String, KakaoError> {
    let url = text(fields, name, MAX_URL_CHARS)?;
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(KakaoError::invalid_param(format!("{name} must be an absolute http(s) URL, got {url:?}.")));
    }
    Ok(url)
}

pub(crate) fn ready(body: &[u8]) -> Result<ReadyRequest, KakaoError> {
    let fields = object(body, "cid, partner_order_id, partner_user_id, item_name, quantity, total_amount, ...")?;
    let cid = cid(&fields)?;
    let partner_order_id = text(&fields, "partner_order_id", MAX_ID_CHARS)?;
    let partner_user_id = text(&fields, "partner_user_id", MAX_ID_CHARS)?;
    let item_name = text(&fields, "item_name", MAX_ID_CHARS)?;
    let quantity = positive(&fields, "quantity")?;
    let total_amount = positive(&fields, "total_amount")?;
    let tax_free_amount = integer(&fields, "tax_free_amount")?;
    if tax_free_amount > total_amount {
        return Err(KakaoError::invalid_param(format!(
            "tax_free_amount {tax_free_amount} is more than total_amount {total_amount}."
        )));
    }
    let vat_amount = optional_integer(&fields, "vat_amount")?.unwrap_or(vat_of(total_amount, tax_free_amount));
    if vat_amount > total_amount - tax_free_amount {
        return Err(KakaoError::invalid_param(format!(
            "vat_amount {vat_amount} is more than the taxable {} won.",
            total_amount - tax_free_amount
        )));
    }
    Ok(ReadyRequest {
        cid,
        partner_order_id,
        partner_user_id,
        item_name,
        quantity,
        total_amount,
        tax_free_amount,
        vat_amount,
        approval_url: url(&fields, "approval_url")?,
        cancel_url: url(&fields, "cancel_url")?,
        fail_url: url(&fields, "fail_url")?,
    })
}

pub(crate) fn approve(body: &[u8]) -> Result<ApproveRequest, KakaoError> {
    let fields = object(body, "cid, tid, partner_order_id, partner_user_id and pg_token")?;
    Ok(ApproveRequest {
        cid: cid(&fields)?,
        tid: text(&fields, "tid", MAX_TOKEN_CHARS)?,
        partner_order_id: text(&fields, "partner_order_id", MAX_ID_CHARS)?,
        partner_user_id: text(&fields, "partner_user_id", MAX_ID_CHARS)?,
        pg_token: text(&fields, "pg_token", MAX_TOKEN_CHARS)?,
        total_amount: optional_integer(&fields, "total_amount")?,
        payload: optional_text(&fields, "payload", MAX_PAYLOAD_CHARS)?,
    })
}

pub(crate) fn order(body: &[u8]) -> Result<OrderRequest, KakaoError> {
    let fields = object(body, "cid and tid")?;
    Ok(OrderRequest { cid: cid(&fields)?, tid: text(&fields, "tid", MAX_TOKEN_CHARS)? })
}

pub(crate) fn cancel(body: &[u8]) -> Result<CancelRequest, KakaoError> {
    let fields = object(body, "cid, tid, cancel_amount and cancel_tax_free_amount")?;
    let cid = cid(&fields)?;
    let tid = text(&fields, "tid", MAX_TOKEN_CHARS)?;
    let cancel_amount = positive(&fields, "cancel_amount")?;
    let tax_free = integer(&fields, "cancel_tax_free_amount")?;
    if tax_free > cancel_amount {
        return Err(KakaoError::invalid_param(format!(
            "cancel_tax_free_amount {tax_free} is more than cancel_amount {cancel_amount}."
        )));
    }
    let vat = optional_integer(&fields, "cancel_vat_amount")?.unwrap_or(vat_of(cancel_amount, tax_free));
    let cancel_available_amount = optional_integer(&fields, "cancel_available_amount")?;
    let payload = optional_text(&fields, "payload", MAX_PAYLOAD_CHARS)?;
    Ok(CancelRequest { cid, tid, cancel_amount, note: CancelNote { tax_free, vat, payload }, cancel_available_amount })
}

/// What the ready recorded that the store does not keep, and the approve's payload.
#[derive(Clone, Debug)]
pub(crate) struct Ready {
    pub(crate) request: ReadyRequest,
    /// Korean local time, without an offset.
    pub(crate) created_at: String,
    pub(crate) approve_payload: Option<String>,
}

/// KakaoPay writes times as Korean local date-times without an offset.
pub(crate) fn local(kst: &str) -> String {
    kst.trim_end_matches("+09:00").to_owned()
}

#[derive(Serialize)]
pub(crate) struct ReadyResponse {
    pub(crate) tid: String,
    pub(crate) next_redirect_app_url: String,
    pub(crate) next_redirect_mobile_url: String,
    pub(crate) next_redirect_pc_url: String,
    pub(crate) android_app_scheme: String,
    pub(crate) ios_app_scheme: String,
    pub(crate) created_at: String,
}

impl ReadyResponse {
    pub(crate) fn new(tid: &str, base_url: &str, created_at: String) -> Self {
        let window = |mode: &str| format!("{base_url}/kakaopay/window/{tid}?mode={mode}");
        Self {
            tid: tid.to_owned(),
            next_redirect_app_url: window("app"),
            next_redirect_mobile_url: window("mobile"),
            next_redirect_pc_url: window("pc"),
            // A phone has no app of this fake's: the schemes lead to the window too.
            android_app_scheme: window("app"),
            ios_app_scheme: window("app"),
            created_at,
        }
    }
}

/// KakaoPay's amount object.
#[derive(Serialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Amount {
    pub(crate) total: u64,
    pub(crate) tax_free: u64,
    pub(crate) vat: u64,
    pub(crate) point: u64,
    pub(crate) discount: u64,
    pub(crate) green_deposit: u64,
}

impl Amount {
    fn of(total: u64, tax_free: u64, vat: u64) -> Self {
        Self { total, tax_free, vat, ..Self::default() }
    }

    fn minus(self, other: Self) -> Self {
        Self::of(
            self.total.saturating_sub(other.total),
            self.tax_free.saturating_sub(other.tax_free),
            self.vat.saturating_sub(other.vat),
        )
    }

    fn plus(self, other: Self) -> Self {
        Self::of(self.total + other.total, self.tax_free + other.tax_free, self.vat + other.vat)
    }
}

/// The approve's `card_info`: every field a string, as KakaoPay sends it.
#[derive(Serialize)]
struct CardInfo {
    kakaopay_purchase_corp: &'static str,
    kakaopay_purchase_corp_code: &'static str,
    kakaopay_issuer_corp: &'static str,
    kakaopay_issuer_corp_code: &'static str,
    bin: &'static str,
    card_type: &'static str,
    install_month: &'static str,
    approved_id: String,
    card_mid: &'static str,
    interest_free_install: &'static str,
    installment_type: &'static str,
    card_item_code: &'static str,
}

/// The order's `selected_card_info`.
#[derive(Serialize)]
struct SelectedCardInfo {
    card_bin: &'static str,
    install_month: u32,
    installment_type: &'static str,
    card_corp_name: &'static str,
    interest_free_install: &'static str,
}

const CARD_CORP: &str = "KB국민카드";
const CARD_BIN: &str = "433012";

#[derive(Serialize)]
pub(crate) struct ApproveResponse {
    aid: String,
    tid: String,
    cid: String,
    partner_order_id: String,
    partner_user_id: String,
    payment_method_type: &'static str,
    amount: Amount,
    card_info: CardInfo,
    item_name: String,
    quantity: u64,
    created_at: String,
    approved_at: String,
    payload: Option<String>,
}

#[derive(Serialize)]
struct ActionDetail {
    aid: String,
    approved_at: String,
    amount: u64,
    point_amount: u64,
    discount_amount: u64,
    green_deposit: u64,
    payment_method_type: &'static str,
    payment_action_type: &'static str,
    payload: Option<String>,
}

#[derive(Serialize)]
pub(crate) struct OrderResponse {
    tid: String,
    cid: String,
    status: &'static str,
    partner_order_id: String,
    partner_user_id: String,
    payment_method_type: Option<&'static str>,
    amount: Amount,
    canceled_amount: Amount,
    cancel_available_amount: Amount,
    item_name: String,
    quantity: u64,
    created_at: String,
    approved_at: Option<String>,
    canceled_at: Option<String>,
    selected_card_info: Option<SelectedCardInfo>,
    payment_action_details: Vec<ActionDetail>,
}

#[derive(Serialize)]
pub(crate) struct CancelResponse {
    aid: String,
    tid: String,
    cid: String,
    status: &'static str,
    partner_order_id: String,
    partner_user_id: String,
    payment_method_type: &'static str,
    amount: Amount,
    approved_cancel_amount: Amount,
    canceled_amount: Amount,
    cancel_available_amount: Amount,
    item_name: String,
    quantity: u64,
    created_at: String,
    approved_at: Option<String>,
    canceled_at: Option<String>,
    payload: Option<String>,
}

/// A tid: KakaoPay's are "T" and 19 more letters and digits.
pub(crate) fn new_tid() -> String {
    use rand::Rng;
    let rest: String = rand::rng().sample_iter(rand::distr::Alphanumeric).take(19).map(char::from).collect();
    format!("T{rest}")
}

/// An aid (one per approval and cancel), "A" and 19 more, derived from what
/// the store keeps, so the same action always shows the same aid.
fn aid(seed: &str) -> String {
    let tail: String = seed.chars().filter(char::is_ascii_alphanumeric).take(19).collect();
    format!("A{tail:0<19}")
}

fn approval_aid(payment: &Payment) -> String {
    aid(payment.secret.as_deref().unwrap_or_default().trim_start_matches("ps_"))
}

/// The status KakaoPay's order lookup shows for a session as it stands.
pub(crate) fn status(view: &SessionView) -> &'static str {
    match (view.session.ended, view.payment.status) {
        (Some(WindowEnd::Quit), _) => "QUIT_PAYMENT",
        (Some(WindowEnd::WrongPassword), _) => "FAIL_AUTH_PASSWORD",
        (None, PaymentStatus::Ready) if view.session.opened => "OPEN_PAYMENT",
        (None, PaymentStatus::Ready) => "READY",
        (None, PaymentStatus::InProgress | PaymentStatus::WaitingForDeposit) => "AUTH_PASSWORD",
        (None, PaymentStatus::Done) => "SUCCESS_PAYMENT",
        (None, PaymentStatus::PartialCanceled) => "PART_CANCEL_PAYMENT",
        (None, PaymentStatus::Canceled) => "CANCEL_PAYMENT",
        // Declined at approve; or (undocumented by KakaoPay) never approved in time.
        (None, PaymentStatus::Aborted | PaymentStatus::Expired) => "FAIL_PAYMENT",
    }
}

fn amount_of(ready: &ReadyRequest) -> Amount {
    Amount::of(ready.total_amount, ready.tax_free_amount, ready.vat_amount)
}

fn cancel_amount(cancel: &Cancel) -> Amount {
    let note = CancelNote::of(cancel);
    Amount::of(cancel.cancel_amount, note.tax_free, note.vat)
}

fn canceled(payment: &Payment) -> Amount {
    payment.cancels.iter().flatten().map(cancel_amount).fold(Amount::default(), Amount::plus)
}

pub(crate) fn approve_response(ready: &Ready, tid: &str, payment: &Payment) -> ApproveResponse {
    let request = &ready.request;
    ApproveResponse {
        aid: approval_aid(payment),
        tid: tid.to_owned(),
        cid: request.cid.clone(),
        partner_order_id: request.partner_order_id.clone(),
        partner_user_id: request.partner_user_id.clone(),
        payment_method_type: PAYMENT_METHOD,
        amount: amount_of(request),
        card_info: CardInfo {
            kakaopay_purchase_corp: CARD_CORP,
            kakaopay_purchase_corp_code: "02",
            kakaopay_issuer_corp: CARD_CORP,
            kakaopay_issuer_corp_code: "02",
            bin: CARD_BIN,
            card_type: "CREDIT",
            install_month: "00",
            approved_id: payment.card.as_ref().map(|card| card.approve_no.clone()).unwrap_or_default(),
            card_mid: "123456789",
            interest_free_install: "N",
            installment_type: "CARD_INSTALLMENT",
            card_item_code: "",
        },
        item_name: request.item_name.clone(),
        quantity: request.quantity,
        created_at: ready.created_at.clone(),
        approved_at: payment.approved_at.as_deref().map(local).unwrap_or_default(),
        payload: ready.approve_payload.clone(),
    }
}

pub(crate) fn order_response(ready: &Ready, tid: &str, view: &SessionView) -> OrderResponse {
    let request = &ready.request;
    let payment = &view.payment;
    let approved = payment.status.is_charged();
    let amount = amount_of(request);
    let canceled_amount = canceled(payment);
    let mut details = Vec::new();
    if approved {
        details.push(ActionDetail {
            aid: approval_aid(payment),
            approved_at: payment.approved_at.as_deref().map(local).unwrap_or_default(),
            amount: payment.total_amount,
            point_amount: 0,
            discount_amount: 0,
            green_deposit: 0,
            payment_method_type: PAYMENT_METHOD,
            payment_action_type: "PAYMENT",
            payload: ready.approve_payload.clone(),
        });
    }
    for cancel in payment.cancels.iter().flatten() {
        details.push(ActionDetail {
            aid: aid(&cancel.transaction_key),
            approved_at: local(&cancel.canceled_at),
            amount: cancel.cancel_amount,
            point_amount: 0,
            discount_amount: 0,
            green_deposit: 0,
            payment_method_type: PAYMENT_METHOD,
            payment_action_type: "CANCEL",
            payload: CancelNote::of(cancel).payload,
        });
    }
    OrderResponse {
        tid: tid.to_owned(),
        cid: request.cid.clone(),
        status: status(view),
        partner_order_id: request.partner_order_id.clone(),
        partner_user_id: request.partner_user_id.clone(),
        payment_method_type: (approved || payment.method.is_some()).then_some(PAYMENT_METHOD),
        amount,
        canceled_amount,
        cancel_available_amount: if approved { amount.minus(canceled_amount) } else { Amount::default() },
        item_name: request.item_name.clone(),
        quantity: request.quantity,
        created_at: ready.created_at.clone(),
        approved_at: payment.approved_at.as_deref().map(local),
        canceled_at: payment.cancels.iter().flatten().last().map(|cancel| local(&cancel.canceled_at)),
        selected_card_info: approved.then_some(SelectedCardInfo {
            card_bin: CARD_BIN,
            install_month: 0,
            installment_type: "CARD_INSTALLMENT",
            card_corp_name: CARD_CORP,
            interest_free_install: "N",
        }),
        payment_action_details: details,
    }
}

/// The answer to a cancel that went through: `payment` as it left it, its
/// last cancel the one just processed.
pub(crate) fn cancel_response(ready: &Ready, tid: &str, payment: &Payment) -> CancelResponse {
    let request = &ready.request;
    let last = payment.cancels.iter().flatten().last();
    let amount = amount_of(request);
    let canceled_amount = canceled(payment);
    let status = if payment.status == PaymentStatus::Canceled { "CANCEL_PAYMENT" } else { "PART_CANCEL_PAYMENT" };
    CancelResponse {
        aid: last.map(|cancel| aid(&cancel.transaction_key)).unwrap_or_default(),
        tid: tid.to_owned(),
        cid: request.cid.clone(),
        status,
        partner_order_id: request.partner_order_id.clone(),
        partner_user_id: request.partner_user_id.clone(),
        payment_method_type: PAYMENT_METHOD,
        amount,
        approved_cancel_amount: last.map(cancel_amount).unwrap_or_default(),
        canceled_amount,
        cancel_available_amount: amount.minus(canceled_amount),
        item_name: request.item_name.clone(),
        quantity: request.quantity,
        created_at: ready.created_at.clone(),
        approved_at: payment.approved_at.as_deref().map(local),
        canceled_at: last.map(|cancel| local(&cancel.canceled_at)),
        payload: last.and_then(|cancel| CancelNote::of(cancel).payload),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(result: Result<impl std::fmt::Debug, KakaoError>) -> String {
        let error = result.unwrap_err();
        assert_eq!(error.code, -2, "{error:?}");
        error.message
    }

    const READY: &str = r#"{"cid":"TC0ONETIME","partner_order_id":"o1","partner_user_id":"u1","item_name":"Mug",
        "quantity":1,"total_amount":2200,"tax_free_amount":0,"approval_url":"http://shop/ok",
        "cancel_url":"http://shop/cancel","fail_url":"http://shop/fail"}"#;

    fn ready_without(field: &str) -> String {
        let mut value: Value = serde_json::from_str(READY).unwrap();
        value.as_object_mut().unwrap().remove(field);
        value.to_string()
    }

    #[test]
    fn a_ready_computes_the_vat_kakaopay_would() {
        let request = ready(READY.as_bytes()).unwrap();
        assert_eq!((request.total_amount, request.tax_free_amount, request.vat_amount), (2_200, 0, 200));
    }

    #[test]
    fn every_ready_error_names_its_field() {
        for field in ["cid", "partner_order_id", "partner_user_id", "item_name", "quantity", "total_amount"] {
            assert!(message(ready(ready_without(field).as_bytes())).contains(field), "{field}");
        }
        for field in ["tax_free_amount", "approval_url", "cancel_url", "fail_url"] {
            assert!(message(ready(ready_without(field).as_bytes())).contains(field), "{field}");
        }
        let with = |field: &str, value: Value| {
            let mut body: Value = serde_json::from_str(READY).unwrap();
            body[field] = value;
            message(ready(body.to_string().as_bytes()))
        };
        assert!(with("cid", "TC0".into()).contains("cid must be 10"));
        assert!(with("total_amount", "2200".into()).contains("total_amount must be an integer"));
        assert!(with("quantity", 1.5.into()).contains("quantity"));
        assert!(with("item_name", "x".repeat(101).into()).contains("item_name"));
        assert!(with("approval_url", "/ok".into()).contains("approval_url"));
        assert!(with("tax_free_amount", 3_000.into()).contains("tax_free_amount"));
        assert!(message(ready(b"{")).contains("JSON"));
    }

    #[test]
    fn a_cancel_note_survives_the_store() {
        let request =
            cancel(br#"{"cid":"TC0ONETIME","tid":"T1","cancel_amount":1100,"cancel_tax_free_amount":0,"payload":"p"}"#)
                .unwrap();
        assert_eq!(request.note, CancelNote { tax_free: 0, vat: 100, payload: Some("p".into()) });
        let cancel = Cancel {
            cancel_amount: 1_100,
            cancel_reason: request.note.encode(),
            tax_free_amount: 0,
            tax_exemption_amount: 0,
            refundable_amount: 0,
            transfer_discount_amount: 0,
            easy_pay_discount_amount: 0,
            canceled_at: "2026-12-04T10:00:00+09:00".into(),
            transaction_key: "ABCDEF0123456789ABCDEF0123456789".into(),
            receipt_key: None,
            cancel_status: "DONE".into(),
            cancel_request_id: None,
        };
        assert_eq!(CancelNote::of(&cancel), request.note);
        assert_eq!(aid(&cancel.transaction_key), "AABCDEF0123456789ABC", "A and 19 more");
        assert_eq!(local(&cancel.canceled_at), "2026-12-04T10:00:00");
    }

    #[test]
    fn tids_have_kakaopays_shape() {
        let tid = new_tid();
        assert!(tid.starts_with('T') && tid.len() == 20 && tid.chars().all(|c| c.is_ascii_alphanumeric()));
    }
}

//! The Toss Payment object (API version 2022-11-16), with every field Toss
//! always sends, so existing Toss client code parses it unchanged.

use rand::Rng;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The API version this fake speaks.
pub const API_VERSION: &str = "2022-11-16";
/// The merchant id of Toss's documented test merchant.
pub const MERCHANT_ID: &str = "tosspayments";

/// Where a payment is, in Toss's words.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PaymentStatus {
    /// Created by the payment window; the customer has not chosen yet.
    Ready,
    /// Authenticated in the window, or being confirmed right now.
    InProgress,
    /// Virtual account issued (never used by this fake).
    WaitingForDeposit,
    /// Approved: the customer was charged.
    Done,
    /// Canceled after approval: the whole amount was refunded.
    Canceled,
    /// Partly canceled after approval: some of the amount was refunded.
    PartialCanceled,
    /// Approval failed; nothing was charged.
    Aborted,
    /// Not confirmed in time; never charged.
    Expired,
}

impl PaymentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PaymentStatus::Ready => "READY",
            PaymentStatus::InProgress => "IN_PROGRESS",
            PaymentStatus::WaitingForDeposit => "WAITING_FOR_DEPOSIT",
            PaymentStatus::Done => "DONE",
            PaymentStatus::Canceled => "CANCELED",
            PaymentStatus::PartialCanceled => "PARTIAL_CANCELED",
            PaymentStatus::Aborted => "ABORTED",
            PaymentStatus::Expired => "EXPIRED",
        }
    }

    /// Whether money moved: an approval, even one canceled later, was a charge.
    pub fn is_charged(self) -> bool {
        match self {
            PaymentStatus::Done | PaymentStatus::Canceled | PaymentStatus::PartialCanceled => true,
            PaymentStatus::Ready
            | PaymentStatus::InProgress
            | PaymentStatus::WaitingForDeposit
            | PaymentStatus::Aborted
            | PaymentStatus::Expired => false,
        }
    }
}

/// Why a payment failed.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub code: String,
    pub message: String,
}

/// `receipt` and `checkout` are objects with one field.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Link {
    pub url: String,
}

/// The card used. This fake always charges the same test card.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Card {
    pub amount: u64,
    pub issuer_code: String,
    pub acquirer_code: String,
    pub number: String,
    pub installment_plan_months: u32,
    pub approve_no: String,
    pub use_card_point: bool,
    pub card_type: String,
    pub owner_type: String,
    pub acquire_status: String,
    pub is_interest_free: bool,
    pub interest_payer: Option<String>,
}

/// One entry of `Payment.cancels`: a cancel that went through, with every
/// field Toss sends for one.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Cancel {
    pub cancel_amount: u64,
    pub cancel_reason: String,
    pub tax_free_amount: u64,
    pub tax_exemption_amount: u64,
    /// What is left to refund after this cancel: the balance it left.
    pub refundable_amount: u64,
    pub transfer_discount_amount: u64,
    pub easy_pay_discount_amount: u64,
    pub canceled_at: String,
    /// The cancel's own transaction, also the payment's `lastTransactionKey`.
    pub transaction_key: String,
    /// A cash receipt's cancel; cards have none.
    pub receipt_key: Option<String>,
    /// `DONE`: this fake records only cancels that went through.
    pub cancel_status: String,
    pub cancel_request_id: Option<String>,
}

/// The Payment object as `POST /v1/payments/confirm` and the lookups answer it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Payment {
    pub version: String,
    pub payment_key: String,
    #[serde(rename = "type")]
    pub payment_type: String,
    pub order_id: String,
    pub order_name: String,
    #[serde(rename = "mId")]
    pub m_id: String,
    pub last_transaction_key: Option<String>,
    pub currency: String,
    pub method: Option<String>,
    pub total_amount: u64,
    pub balance_amount: u64,
    pub status: PaymentStatus,
    pub requested_at: String,
    pub approved_at: Option<String>,
    pub use_escrow: bool,
    pub culture_expense: bool,
    pub supplied_amount: u64,
    pub vat: u64,
    pub tax_free_amount: u64,
    pub tax_exemption_amount: u64,
    pub is_partial_cancelable: bool,
    pub card: Option<Card>,
    pub virtual_account: Option<Value>,
    pub transfer: Option<Value>,
    pub mobile_phone: Option<Value>,
    pub gift_certificate: Option<Value>,
    pub cash_receipt: Option<Value>,
    pub cash_receipts: Option<Value>,
    pub discount: Option<Value>,
    /// Every cancel, oldest first; `null` until the first one.
    pub cancels: Option<Vec<Cancel>>,
    pub secret: Option<String>,
    pub easy_pay: Option<Value>,
    pub country: String,
    pub failure: Option<Failure>,
    pub receipt: Option<Link>,
    pub checkout: Option<Link>,
    pub metadata: Option<Value>,
}

impl Payment {
    /// A payment as the window creates it, before the customer chooses.
    pub(crate) fn ready(
        payment_key: String,
        order_id: String,
        order_name: String,
        amount: u64,
        requested_at: String,
        checkout_url: Option<String>,
    ) -> Self {
        let vat = vat_of(amount);
        Self {
            version: API_VERSION.to_owned(),
            payment_key,
            payment_type: "NORMAL".to_owned(),
            order_id,
            order_name,
            m_id: MERCHANT_ID.to_owned(),
            last_transaction_key: None,
            currency: "KRW".to_owned(),
            method: None,
            total_amount: amount,
            balance_amount: amount,
            status: PaymentStatus::Ready,
            requested_at,
            approved_at: None,
            use_escrow: false,
            culture_expense: false,
            supplied_amount: amount - vat,
            vat,
            tax_free_amount: 0,
            tax_exemption_amount: 0,
            is_partial_cancelable: true,
            card: None,
            virtual_account: None,
            transfer: None,
            mobile_phone: None,
            gift_certificate: None,
            cash_receipt: None,
            cash_receipts: None,
            discount: None,
            cancels: None,
            secret: None,
            easy_pay: None,
            country: "KR".to_owned(),
            failure: None,
            receipt: None,
            checkout: checkout_url.map(|url| Link { url }),
            metadata: None,
        }
    }

    /// The customer authenticated a card (in the window, or implicitly by
    /// confirming a paymentKey no window issued).
    pub(crate) fn authenticate(&mut self) {
        self.status = PaymentStatus::InProgress;
        self.method = Some("카드".to_owned());
    }

    /// The charge went through.
    pub(crate) fn approve(&mut self, approved_at: String, receipt_url: String) {
        let mut rng = rand::rng();
        self.status = PaymentStatus::Done;
        self.approved_at = Some(approved_at);
        self.last_transaction_key = Some(new_transaction_key());
        self.secret = Some(format!("ps_{}", random_alphanumeric(&mut rng, 20)));
        self.receipt = Some(Link { url: receipt_url });
        self.card = Some(Card {
            amount: self.total_amount,
            issuer_code: "11".to_owned(),
            acquirer_code: "11".to_owned(),
            number: "43301234****123*".to_owned(),
            installment_plan_months: 0,
            approve_no: format!("{:08}", rng.random_range(0..100_000_000u32)),
            use_card_point: false,
            card_type: "신용".to_owned(),
            owner_type: "개인".to_owned(),
            acquire_status: "READY".to_owned(),
            is_interest_free: false,
            interest_payer: None,
        });
    }

    /// Approval failed; the failure is kept on the payment as Toss does.
    pub(crate) fn abort(&mut self, failure: Failure) {
        self.status = PaymentStatus::Aborted;
        self.last_transaction_key = Some(new_transaction_key());
        self.failure = Some(failure);
    }

    /// Refunds `amount` of the balance (the caller checked it fits) and
    /// returns the cancel entry. The payment is CANCELED once nothing is left.
    /// Toss shows `suppliedAmount` and `vat` of what remains (a partial cancel
    /// of theirs: balance 544.68 = supplied 495.16 + VAT 49.52), so they follow
    /// the balance.
    pub(crate) fn cancel(&mut self, amount: u64, reason: String, canceled_at: String) -> Cancel {
        self.balance_amount -= amount;
        self.status = if self.balance_amount == 0 { PaymentStatus::Canceled } else { PaymentStatus::PartialCanceled };
        self.vat = vat_of(self.balance_amount);
        self.supplied_amount = self.balance_amount - self.vat;
        let transaction_key = new_transaction_key();
        self.last_transaction_key = Some(transaction_key.clone());
        let cancel = Cancel {
            cancel_amount: amount,
            cancel_reason: reason,
            tax_free_amount: 0,
            tax_exemption_amount: 0,
            refundable_amount: self.balance_amount,
            transfer_discount_amount: 0,
            easy_pay_discount_amount: 0,
            canceled_at,
            transaction_key,
            receipt_key: None,
            cancel_status: "DONE".to_owned(),
            cancel_request_id: None,
        };
        self.cancels.get_or_insert_with(Vec::new).push(cancel.clone());
        cancel
    }

    /// The won refunded so far.
    pub fn refunded(&self) -> u64 {
        self.cancels.iter().flatten().map(|cancel| cancel.cancel_amount).sum()
    }
}

/// A new transactionKey: Toss's are 32 uppercase hex digits.
pub(crate) fn new_transaction_key() -> String {
    random_hex(&mut rand::rng(), 32)
}

/// A new paymentKey: Toss's keys are opaque 50-character alphanumerics.
pub(crate) fn new_payment_key() -> String {
    random_alphanumeric(&mut rand::rng(), 50)
}

/// Korean VAT is included in the price: a tenth of the supplied amount,
/// i.e. 1/11 of the total, rounded to the nearest won.
fn vat_of(total: u64) -> u64 {
    (total + 5) / 11
}

fn random_alphanumeric(rng: &mut impl Rng, len: usize) -> String {
    rng.sample_iter(rand::distr::Alphanumeric).take(len).map(char::from).collect()
}

fn random_hex(rng: &mut impl Rng, len: usize) -> String {
    (0..len).map(|_| char::from_digit(rng.random_range(0..16), 16).unwrap_or('0')).collect::<String>().to_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vat_matches_toss_examples() {
        // Toss's documented payment of 15,000 won: 13,636 supplied + 1,364 VAT.
        assert_eq!(vat_of(15_000), 1_364);
        assert_eq!(vat_of(12_900), 1_173);
        assert_eq!(vat_of(0), 0);
    }

    #[test]
    fn serializes_with_toss_field_names_and_nulls() {
        let mut payment = Payment::ready(
            "pk".into(),
            "order-1".into(),
            "Tee".into(),
            15_000,
            "2024-01-01T00:00:00+09:00".into(),
            None,
        );
        payment.authenticate();
        payment.approve("2024-01-01T00:00:01+09:00".into(), "http://x/r".into());
        let json = serde_json::to_value(&payment).unwrap();
        assert_eq!(json["mId"], "tosspayments");
        assert_eq!(json["type"], "NORMAL");
        assert_eq!(json["status"], "DONE");
        assert_eq!(json["method"], "카드");
        assert_eq!(json["suppliedAmount"], 13_636);
        assert_eq!(json["card"]["amount"], 15_000);
        assert_eq!(json["card"]["approveNo"].as_str().unwrap().len(), 8);
        assert_eq!(json["lastTransactionKey"].as_str().unwrap().len(), 32);
        for null in ["virtualAccount", "transfer", "easyPay", "failure", "cancels", "checkout"] {
            assert!(json.get(null).is_some_and(Value::is_null), "{null}");
        }
        let back: Payment = serde_json::from_value(json).unwrap();
        assert_eq!(back, payment);
    }

    #[test]
    fn cancels_reduce_the_balance_until_the_payment_is_canceled() {
        let mut payment = Payment::ready("pk".into(), "o".into(), "Tee".into(), 15_000, "t0".into(), None);
        payment.authenticate();
        payment.approve("t1".into(), "http://x/r".into());
        let first = payment.cancel(4_000, "size".into(), "t2".into());
        assert_eq!(
            (payment.status, payment.balance_amount, first.refundable_amount),
            (PaymentStatus::PartialCanceled, 11_000, 11_000)
        );
        assert_eq!((payment.supplied_amount, payment.vat), (10_000, 1_000), "supplied and VAT follow the balance");
        assert_eq!(payment.last_transaction_key.as_deref(), Some(first.transaction_key.as_str()));
        let rest = payment.cancel(11_000, "all".into(), "t3".into());
        assert_eq!((payment.status, payment.balance_amount, rest.refundable_amount), (PaymentStatus::Canceled, 0, 0));
        assert_eq!((payment.refunded(), payment.total_amount), (15_000, 15_000));
        let json = serde_json::to_value(&payment).unwrap();
        let entry = &json["cancels"][0];
        for field in [
            "cancelAmount",
            "cancelReason",
            "taxFreeAmount",
            "taxExemptionAmount",
            "refundableAmount",
            "transferDiscountAmount",
            "easyPayDiscountAmount",
            "canceledAt",
            "transactionKey",
            "cancelStatus",
        ] {
            assert!(!entry[field].is_null(), "{field}");
        }
        assert!(entry.get("receiptKey").is_some_and(Value::is_null) && entry.get("cancelRequestId").is_some());
        assert_eq!(serde_json::from_value::<Payment>(json).unwrap(), payment);
    }

    #[test]
    fn only_approvals_count_as_charges() {
        assert!(PaymentStatus::Done.is_charged());
        assert!(!PaymentStatus::InProgress.is_charged());
        assert!(!PaymentStatus::Aborted.is_charged());
    }
}

//! A shop order's payment status, as the shop stores it and as its customer
//! reads it. It is payonce's checkout status as payonce's events last told it
//! (payonce is the truth; the shop keeps a copy), and `NEW` before any event.

use payonce_api::money::format_krw;
use payonce_api::{Checkout, CheckoutStatus};

use crate::lang::Lang;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaymentStatus {
    /// No event about the order's checkout yet: there is no checkout, or
    /// its payment has not been settled (or its event is on its way).
    New,
    /// What payonce said about the order's checkout.
    Checkout(CheckoutStatus),
}

/// A payment's status and what was refunded of it: as recorded from
/// payonce's events, or as payonce answers right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaymentState {
    pub status: PaymentStatus,
    pub amount_refunded: u64,
}

impl PaymentState {
    /// What payonce answered about a checkout.
    pub fn of_checkout(checkout: &Checkout) -> PaymentState {
        PaymentState { status: PaymentStatus::Checkout(checkout.status), amount_refunded: checkout.amount_refunded }
    }
}

/// What a customer reads about a payment: a few words, then a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusWords {
    pub headline: &'static str,
    pub detail: String,
}

/// Every checkout status, for parsing the stored text.
const CHECKOUT_STATUSES: [CheckoutStatus; 9] = [
    CheckoutStatus::Created,
    CheckoutStatus::Pending,
    CheckoutStatus::Unknown,
    CheckoutStatus::Paid,
    CheckoutStatus::Failed,
    CheckoutStatus::Expired,
    CheckoutStatus::CancelRequested,
    CheckoutStatus::PartiallyRefunded,
    CheckoutStatus::Canceled,
];

impl PaymentStatus {
    /// The raw status: what the table stores, `data-status` shows and `/api/orders` gives.
    pub fn as_str(self) -> &'static str {
        match self {
            PaymentStatus::New => "NEW",
            // The same words as payonce's JSON; an exhaustive match, so a
            // status payonce adds breaks the build here instead of showing nonsense.
            PaymentStatus::Checkout(status) => match status {
                CheckoutStatus::Created => "CREATED",
                CheckoutStatus::Pending => "PENDING",
                CheckoutStatus::Unknown => "UNKNOWN",
                CheckoutStatus::Paid => "PAID",
                CheckoutStatus::Failed => "FAILED",
                CheckoutStatus::Expired => "EXPIRED",
                CheckoutStatus::CancelRequested => "CANCEL_REQUESTED",
                CheckoutStatus::PartiallyRefunded => "PARTIALLY_REFUNDED",
                CheckoutStatus::Canceled => "CANCELED",
            },
        }
    }

    pub fn parse(text: &str) -> Option<PaymentStatus> {
        std::iter::once(PaymentStatus::New)
            .chain(CHECKOUT_STATUSES.map(PaymentStatus::Checkout))
            .find(|status| status.as_str() == text)
    }

    /// Whether payonce can still change it. A paid order is not final: a
    /// refund, by this shop or by payonce's operators, moves it on. Failed,
    /// expired and fully refunded orders never change again, so the shop
    /// stops asking about them.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            PaymentStatus::Checkout(CheckoutStatus::Failed | CheckoutStatus::Expired | CheckoutStatus::Canceled)
        )
    }

    /// Whether no verdict on the payment is known yet: not paid, not failed,
    /// not closed. Only such an order is marked "being confirmed" by a
    /// `checkout.unresolved` event; a paid or closed one stays as it is.
    pub fn awaits_outcome(self) -> bool {
        matches!(
            self,
            PaymentStatus::New
                | PaymentStatus::Checkout(CheckoutStatus::Created | CheckoutStatus::Pending | CheckoutStatus::Unknown)
        )
    }

    /// Whether payonce is settling it on its own right now, so the order's
    /// page reloads itself until the outcome is known.
    pub fn updates_itself(self) -> bool {
        matches!(
            self,
            PaymentStatus::Checkout(
                CheckoutStatus::Pending | CheckoutStatus::Unknown | CheckoutStatus::CancelRequested
            )
        )
    }

    /// Whether the customer can (still) go and pay: the checkout is open, or
    /// there is none yet.
    pub fn can_pay(self) -> bool {
        matches!(self, PaymentStatus::New | PaymentStatus::Checkout(CheckoutStatus::Created))
    }

    /// Whether paying needs a new order: this one's checkout closed unpaid.
    pub fn can_order_again(self) -> bool {
        matches!(self, PaymentStatus::Checkout(CheckoutStatus::Failed | CheckoutStatus::Expired))
    }

    /// Whether the back office can refund (what is left of) the payment.
    pub fn can_refund(self) -> bool {
        matches!(self, PaymentStatus::Checkout(CheckoutStatus::Paid | CheckoutStatus::PartiallyRefunded))
    }

    /// The status in words a customer understands: above all, whether they
    /// paid, and when they did not, that nothing was charged.
    pub fn words(self, lang: Lang, amount_refunded: u64) -> StatusWords {
        let (headline, detail) = match self {
            PaymentStatus::New => (
                lang.pick("Not paid", "결제 전"),
                lang.pick(
                    "The payment has not started. Nothing was charged.",
                    "결제가 시작되지 않았습니다. 청구된 금액은 없습니다.",
                )
                .to_owned(),
            ),
            PaymentStatus::Checkout(status) => match status {
                CheckoutStatus::Created => (
                    lang.pick("Not paid", "결제 전"),
                    lang.pick(
                        "Not paid yet. Nothing was charged; you can continue to payment.",
                        "아직 결제되지 않았습니다. 청구된 금액은 없습니다. 결제를 계속할 수 있습니다.",
                    )
                    .to_owned(),
                ),
                CheckoutStatus::Pending | CheckoutStatus::Unknown => (
                    lang.pick("Still being confirmed", "결제 확인 중"),
                    lang.pick(
                        "Your payment is still being confirmed. Please do not pay again. This page updates itself.",
                        "결제를 확인하고 있습니다. 다시 결제하지 마세요. 이 페이지는 자동으로 새로 고쳐집니다.",
                    )
                    .to_owned(),
                ),
                CheckoutStatus::Paid => (
                    lang.pick("Paid", "결제 완료"),
                    lang.pick("Thank you: your payment was received.", "결제가 완료되었습니다. 감사합니다.").to_owned(),
                ),
                CheckoutStatus::Failed => (
                    lang.pick("Not paid", "결제 실패"),
                    lang.pick(
                        "The payment did not go through. Nothing was charged.",
                        "결제가 이루어지지 않았습니다. 청구된 금액은 없습니다.",
                    )
                    .to_owned(),
                ),
                CheckoutStatus::Expired => (
                    lang.pick("Expired", "결제 시간 만료"),
                    lang.pick(
                        "The time to pay ran out. Nothing was charged.",
                        "결제 가능 시간이 지났습니다. 청구된 금액은 없습니다.",
                    )
                    .to_owned(),
                ),
                CheckoutStatus::CancelRequested => (
                    lang.pick("Refund in progress", "환불 진행 중"),
                    lang.pick(
                        "The refund is being sent. This page updates itself.",
                        "환불을 처리하고 있습니다. 이 페이지는 자동으로 새로 고쳐집니다.",
                    )
                    .to_owned(),
                ),
                CheckoutStatus::PartiallyRefunded => (
                    lang.pick("Partly refunded", "부분 환불"),
                    match lang {
                        Lang::En => format!("{} was refunded; the rest stays paid.", format_krw(amount_refunded)),
                        Lang::Ko => {
                            format!("{}이 환불되었고, 나머지는 결제된 상태입니다.", format_krw(amount_refunded))
                        }
                    },
                ),
                CheckoutStatus::Canceled => (
                    lang.pick("Refunded", "환불 완료"),
                    lang.pick("The whole payment was refunded.", "결제 금액 전액이 환불되었습니다.").to_owned(),
                ),
            },
        };
        StatusWords { headline, detail }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> impl Iterator<Item = PaymentStatus> {
        std::iter::once(PaymentStatus::New).chain(CHECKOUT_STATUSES.map(PaymentStatus::Checkout))
    }

    #[test]
    fn the_stored_text_is_payonces_and_reads_back() {
        for status in all() {
            assert_eq!(PaymentStatus::parse(status.as_str()), Some(status));
            if let PaymentStatus::Checkout(checkout) = status {
                assert_eq!(serde_json::to_value(checkout).unwrap(), status.as_str());
            }
        }
        assert_eq!(PaymentStatus::parse("paid"), None);
    }

    #[test]
    fn a_customer_is_told_whether_they_paid_and_that_nothing_was_charged_when_not() {
        let words = |status, lang| PaymentStatus::Checkout(status).words(lang, 0);
        assert_eq!(words(CheckoutStatus::Paid, Lang::En).headline, "Paid");
        assert_eq!(words(CheckoutStatus::Paid, Lang::Ko).headline, "결제 완료");
        for status in [CheckoutStatus::Created, CheckoutStatus::Failed, CheckoutStatus::Expired] {
            assert!(words(status, Lang::En).detail.contains("Nothing was charged"), "{status:?}");
            assert!(words(status, Lang::Ko).detail.contains("청구된 금액은 없습니다"), "{status:?}");
        }
        assert!(PaymentStatus::New.words(Lang::En, 0).detail.contains("Nothing was charged"));
        assert_eq!(words(CheckoutStatus::Expired, Lang::En).headline, "Expired");
        assert_eq!(words(CheckoutStatus::Canceled, Lang::En).headline, "Refunded");
    }

    #[test]
    fn a_payment_being_confirmed_says_so_and_that_the_page_updates_itself() {
        for status in [CheckoutStatus::Pending, CheckoutStatus::Unknown, CheckoutStatus::CancelRequested] {
            let status = PaymentStatus::Checkout(status);
            assert!(status.updates_itself() && !status.is_final());
            assert!(status.words(Lang::En, 0).detail.contains("This page updates itself"), "{status:?}");
            assert!(status.words(Lang::Ko, 0).detail.contains("자동으로 새로 고쳐집니다"), "{status:?}");
        }
        assert_eq!(
            PaymentStatus::Checkout(CheckoutStatus::Unknown).words(Lang::En, 0).headline,
            "Still being confirmed"
        );
        assert!(!PaymentStatus::Checkout(CheckoutStatus::Paid).updates_itself());
    }

    #[test]
    fn a_partial_refund_says_how_much() {
        let words = PaymentStatus::Checkout(CheckoutStatus::PartiallyRefunded).words(Lang::En, 13_500);
        assert_eq!(words.headline, "Partly refunded");
        assert!(words.detail.contains("₩13,500"), "{}", words.detail);
        let words = PaymentStatus::Checkout(CheckoutStatus::PartiallyRefunded).words(Lang::Ko, 13_500);
        assert!(words.detail.contains("₩13,500"), "{}", words.detail);
    }

    #[test]
    fn only_what_can_never_change_again_is_final() {
        let finals: Vec<_> = all().filter(|status| status.is_final()).map(PaymentStatus::as_str).collect();
        assert_eq!(finals, ["FAILED", "EXPIRED", "CANCELED"]);
        let refundable: Vec<_> = all().filter(|status| status.can_refund()).map(PaymentStatus::as_str).collect();
        assert_eq!(refundable, ["PAID", "PARTIALLY_REFUNDED"]);
        let awaiting: Vec<_> = all().filter(|status| status.awaits_outcome()).map(PaymentStatus::as_str).collect();
        assert_eq!(awaiting, ["NEW", "CREATED", "PENDING", "UNKNOWN"]);
    }
}

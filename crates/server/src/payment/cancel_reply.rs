//! A refund's cancel as the order's PG answered it, Toss's or KakaoPay's, and
//! what it leads to by that PG's tables. The refund's code (storing, sending
//! under its lease, settling) is written once over this.

use payonce_rules::kakaopay::classify as kakaopay;
use payonce_rules::kakaopay::wire::Cancellation;
use payonce_rules::pg_reply::PgReply;
use payonce_rules::settlement::{RefundStep, after_cancel};

use crate::db::Refund;
use crate::pg::{self, Expected, ExpectedRefund, KakaoPayReply, TossReply};

/// Which send of a refund an answer is to: KakaoPay reads a refusal of a
/// cancel sent again as proving nothing (the first may have gone through).
pub(super) use payonce_rules::kakaopay::classify::Send;

/// A cancel's answer from the order's PG.
#[derive(Debug)]
pub(super) enum CancelReply {
    Toss(TossReply),
    KakaoPay(KakaoPayReply<Cancellation>),
}

impl CancelReply {
    /// What the answer leads to for `refund`, of an order of `order_amount`.
    pub(super) fn step(&self, refund: &Refund, order_amount: u64, send: Send) -> RefundStep {
        match self {
            CancelReply::Toss(answer) => {
                after_cancel(pg::cancel_verdict(pg::cancel_answer(answer, toss_expected(refund, order_amount))))
            }
            CancelReply::KakaoPay(answer) => {
                after_cancel(kakaopay::cancel_verdict(kakaopay::cancel_answer(answer, kakaopay_expected(refund)), send))
            }
        }
    }

    /// How much of the payment the answer shows refunded in all, when it says.
    pub(super) fn refunded_total(&self) -> Option<u64> {
        match self {
            CancelReply::Toss(answer) => pg::refunded_total(answer),
            CancelReply::KakaoPay(KakaoPayReply::Body { body, .. }) => body.canceled_amount.map(|amount| amount.total),
            CancelReply::KakaoPay(_) => None,
        }
    }

    /// The code a refused refund keeps.
    pub(super) fn refusal_code(&self) -> String {
        match self {
            CancelReply::Toss(answer) => pg::refusal_code(answer),
            CancelReply::KakaoPay(KakaoPayReply::Error { error_code, .. }) => {
                format!("KAKAOPAY_{}", error_code.unsigned_abs())
            }
            CancelReply::KakaoPay(_) => "KAKAOPAY_REFUSED".to_owned(),
        }
    }

    fn reply(&self) -> &dyn PgReply {
        match self {
            CancelReply::Toss(answer) => answer,
            CancelReply::KakaoPay(answer) => answer,
        }
    }
}

impl PgReply for CancelReply {
    fn unanswered(&self) -> bool {
        self.reply().unanswered()
    }

    fn shows_overload(&self) -> bool {
        self.reply().shows_overload()
    }

    fn shows_pg_unavailable(&self) -> bool {
        self.reply().shows_pg_unavailable()
    }

    fn describe(&self) -> String {
        self.reply().describe()
    }
}

/// What a refund expects Toss to show.
pub(super) fn toss_expected(refund: &Refund, order_amount: u64) -> ExpectedRefund<'_> {
    ExpectedRefund {
        payment: Expected { payment_key: &refund.payment_key, order_id: &refund.order_id, amount: order_amount },
        balance_before: refund.balance_before,
        balance_after: refund.balance_after(),
    }
}

/// What a refund expects KakaoPay to show.
pub(super) fn kakaopay_expected(refund: &Refund) -> kakaopay::ExpectedRefund<'_> {
    kakaopay::ExpectedRefund { tid: &refund.payment_key, balance_before: refund.balance_before, amount: refund.amount }
}

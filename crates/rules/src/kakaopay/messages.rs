//! What a customer reads when a KakaoPay payment fails: a code of payonce's
//! (KakaoPay's own numbers mean nothing to a customer) and a sentence saying
//! that nothing was charged, which is true of every failure here.

use payonce_api::{ErrorCode, Failure};

use super::KakaoPayReply;
use super::classify::ApproveAnswer;
use super::wire::Status;

/// KakaoPay declined the payment (the card company, a limit, the request).
pub const DECLINED: &str = "KAKAOPAY_DECLINED";
/// The payment's 15 minutes ended before it was approved.
pub const EXPIRED: &str = "KAKAOPAY_EXPIRED";
/// The customer finished in KakaoPay's window, and the approve sent for it
/// never completed (its answer lost, nothing approved by the end of its wait).
pub const NOT_APPROVED: &str = "KAKAOPAY_NOT_APPROVED";
/// KakaoPay did not take the call (credentials, registration, quota).
pub const UNAVAILABLE: &str = "KAKAOPAY_UNAVAILABLE";
/// The customer's password failed in KakaoPay's window.
pub const AUTH_FAILED: &str = "KAKAOPAY_AUTH_FAILED";
/// The customer left KakaoPay's window.
pub const QUIT: &str = "KAKAOPAY_QUIT";
/// KakaoPay's window sent the customer to `fail_url`: a failed password, or
/// a payment not finished in time (the URL cannot say which).
pub const WINDOW_FAILED: &str = "KAKAOPAY_FAILED";

/// The call never left (payonce's own code, as with Toss).
const UNREACHABLE: &str = ErrorCode::PgUnreachable.as_str();

/// The customer's sentence for one of the codes above.
pub fn customer_message(code: &str) -> &'static str {
    match code {
        DECLINED => "KakaoPay declined the payment. Nothing was charged.",
        EXPIRED => "The KakaoPay payment was not finished in time. Nothing was charged.",
        NOT_APPROVED => "KakaoPay did not complete the payment. Nothing was charged.",
        UNAVAILABLE => "KakaoPay could not take the payment right now. Nothing was charged.",
        AUTH_FAILED => "The KakaoPay password was not accepted. Nothing was charged.",
        QUIT => "The KakaoPay payment was left unfinished. Nothing was charged.",
        code if code == UNREACHABLE => "The payment could not be sent to KakaoPay. Nothing was charged.",
        _ => "The KakaoPay payment did not go through. Nothing was charged.",
    }
}

fn failure(code: &'static str, answer: &str) -> Failure {
    Failure { code: code.to_owned(), message: format!("{} ({answer})", customer_message(code)) }
}

/// The failure an approve's refusal stores: by the kind of the answer, with
/// what KakaoPay said after it, for operators.
pub fn approve_failure<T>(kind: ApproveAnswer, answer: &KakaoPayReply<T>) -> Failure {
    let code = match kind {
        ApproveAnswer::NotSent => UNREACHABLE,
        ApproveAnswer::SessionGone => EXPIRED,
        ApproveAnswer::TurnedAway => UNAVAILABLE,
        _ => DECLINED,
    };
    failure(code, &super::classify::describe(answer))
}

/// The failure a lookup that shows the payment failed stores. `FAIL_PAYMENT`
/// after an approve whose answer was lost says only that the approval did not
/// complete (a card's refusal, or the payment's time over while the approve
/// was lost): "declined" or "expired" would each be wrong for one of them.
pub fn status_failure(status: Option<Status>) -> Failure {
    let code = match status {
        Some(Status::FailAuthPassword) => AUTH_FAILED,
        Some(Status::QuitPayment) => QUIT,
        _ => NOT_APPROVED,
    };
    failure(code, &format!("KakaoPay shows {status:?}"))
}

/// The failure of a payment whose one approve never completed: the customer
/// finished in time, so it is not "expired" but not approved.
pub fn not_approved_failure() -> Failure {
    failure(NOT_APPROVED, "the approve sent for it was never processed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lookups_failure_names_the_customers_own_exit_or_says_only_not_approved() {
        let code = |status| status_failure(Some(status)).code;
        assert_eq!(code(Status::FailAuthPassword), AUTH_FAILED);
        assert_eq!(code(Status::QuitPayment), QUIT);
        assert_eq!(code(Status::FailPayment), NOT_APPROVED, "a lost approve's failure is neither declined nor expired");
        assert_eq!(status_failure(None).code, NOT_APPROVED);
        assert_eq!(not_approved_failure().code, NOT_APPROVED);
    }

    #[test]
    fn every_failure_says_nothing_was_charged() {
        for code in
            [DECLINED, EXPIRED, NOT_APPROVED, UNAVAILABLE, AUTH_FAILED, QUIT, WINDOW_FAILED, UNREACHABLE, "OTHER"]
        {
            assert!(customer_message(code).ends_with("Nothing was charged."), "{code}");
        }
        assert_ne!(customer_message(NOT_APPROVED), customer_message(EXPIRED), "the customer finished in time");
    }
}

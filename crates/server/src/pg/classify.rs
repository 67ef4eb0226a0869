//! The classification table of DESIGN.md, line for line: what a PG answer
//! tells us about the money. Anything not known to be definitive is unknown.

use payonce_api::Failure;

use super::client::PgAnswer;
use super::messages::customer_message;
use super::toss::PaymentStatus;

/// What one PG answer proves about the payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PgVerdict {
    /// The PG charged the customer.
    Charged,
    /// The PG processed the payment and refused it (card or validation). Nothing charged.
    Declined(Failure),
    /// The PG turned this request away before processing it (rate limit, consecutive
    /// requests, credentials). Nothing was charged *by this request*.
    TurnedAway(Failure),
    /// The request never left this server (connection refused, connect timeout).
    NotSent,
    /// The PG is still processing an earlier request with the same idempotency key.
    StillProcessing,
    /// The PG already processed this payment under another request; ask it for the payment.
    AlreadyProcessed,
    /// Nothing definitive was learned; the reason is for logs.
    Unknown(String),
}

/// Classifies one answer. Exhaustive on purpose: a new kind of answer must be decided here.
pub fn classify(answer: &PgAnswer) -> PgVerdict {
    match answer {
        PgAnswer::Payment { payment, .. } => match payment.status {
            PaymentStatus::Done => PgVerdict::Charged,
            PaymentStatus::Aborted | PaymentStatus::Expired => {
                let code = payment.failure.as_ref().map_or("PAYMENT_ABORTED", |f| f.code.as_str());
                PgVerdict::Declined(failure(code, payment.failure.as_ref().map(|f| f.message.as_str())))
            }
            PaymentStatus::Ready
            | PaymentStatus::InProgress
            | PaymentStatus::WaitingForDeposit
            | PaymentStatus::Canceled
            | PaymentStatus::PartialCanceled
            | PaymentStatus::Unrecognised => PgVerdict::Unknown(format!("payment status {:?}", payment.status)),
        },
        PgAnswer::Error { http_status, code, message } => classify_error(*http_status, code, message),
        PgAnswer::Unparsable { http_status } => PgVerdict::Unknown(format!("unparsable body with HTTP {http_status}")),
        PgAnswer::NotSent { .. } => PgVerdict::NotSent,
        PgAnswer::NoAnswer { detail } => PgVerdict::Unknown(format!("no answer: {detail}")),
    }
}

/// Classifies an answer about the payment of `order_id` for `amount`. A payment that
/// is not that one proves nothing about it: the answer is then unknown (and logged),
/// never taken as this order's charge or decline.
pub fn verdict_for(answer: &PgAnswer, order_id: &str, amount: u64) -> PgVerdict {
    if let PgAnswer::Payment { payment, .. } = answer
        && (payment.order_id != order_id || payment.total_amount != amount)
    {
        tracing::error!(
            order_id,
            amount,
            pg_order_id = payment.order_id,
            pg_amount = payment.total_amount,
            payment_key = payment.payment_key,
            "the PG answered with another payment"
        );
        return PgVerdict::Unknown(format!(
            "the PG answered about order {} for {}",
            payment.order_id, payment.total_amount
        ));
    }
    classify(answer)
}

fn classify_error(http_status: u16, code: &str, message: &str) -> PgVerdict {
    if http_status == 429 || code == "FORBIDDEN_CONSECUTIVE_REQUEST" || is_credentials_error(code) {
        return PgVerdict::TurnedAway(failure(code, Some(message)));
    }
    if http_status >= 500 {
        return PgVerdict::Unknown(format!("HTTP {http_status} {code}"));
    }
    match code {
        "IDEMPOTENT_REQUEST_PROCESSING" => PgVerdict::StillProcessing,
        "ALREADY_PROCESSED_PAYMENT" | "DUPLICATED_ORDER_ID" => PgVerdict::AlreadyProcessed,
        _ if is_decline(code) => PgVerdict::Declined(failure(code, Some(message))),
        _ => PgVerdict::Unknown(format!("unknown code {code} with HTTP {http_status}")),
    }
}

/// The PG refused our credentials: it did not look at the payment.
fn is_credentials_error(code: &str) -> bool {
    matches!(code, "UNAUTHORIZED_KEY" | "INVALID_API_KEY" | "INCORRECT_BASIC_AUTH_FORMAT")
}

/// Card and validation codes: the PG looked at the payment and refused it.
fn is_decline(code: &str) -> bool {
    const PREFIXES: [&str; 4] = ["REJECT_", "INVALID_", "EXCEED_", "NOT_SUPPORTED_"];
    const CODES: [&str; 13] = [
        "PAY_PROCESS_ABORTED",
        "PAY_PROCESS_CANCELED",
        "BELOW_MINIMUM_AMOUNT",
        "NOT_ALLOWED_POINT_USE",
        "RESTRICTED_TRANSFER_ACCOUNT",
        "NOT_REGISTERED_BUSINESS",
        "NOT_AVAILABLE_PAYMENT",
        "NOT_AVAILABLE_BANK",
        "NOT_FOUND_PAYMENT",
        "NOT_FOUND_PAYMENT_SESSION",
        "UNAPPROVED_ORDER_ID",
        "CARD_PROCESSING_ERROR",
        "FDS_ERROR",
    ];
    PREFIXES.iter().any(|prefix| code.starts_with(prefix)) || CODES.contains(&code)
}

fn failure(code: &str, pg_message: Option<&str>) -> Failure {
    Failure { code: code.to_owned(), message: customer_message(code, pg_message) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pg::toss::{ErrorBody, Payment};

    fn error(http_status: u16, code: &str) -> PgAnswer {
        PgAnswer::Error { http_status, code: code.into(), message: "PG message".into() }
    }

    fn payment(status: PaymentStatus) -> PgAnswer {
        PgAnswer::Payment {
            http_status: 200,
            payment: Payment {
                payment_key: "pk".into(),
                order_id: "ord".into(),
                status,
                total_amount: 1000,
                failure: None,
            },
        }
    }

    fn declined(code: &str) -> bool {
        matches!(classify(&error(400, code)), PgVerdict::Declined(f) if f.code == code)
    }

    #[test]
    fn done_is_charged_and_nothing_else_in_a_payment_is() {
        assert_eq!(classify(&payment(PaymentStatus::Done)), PgVerdict::Charged);
        for status in [
            PaymentStatus::Ready,
            PaymentStatus::InProgress,
            PaymentStatus::WaitingForDeposit,
            PaymentStatus::Canceled,
            PaymentStatus::PartialCanceled,
            PaymentStatus::Unrecognised,
        ] {
            assert!(matches!(classify(&payment(status)), PgVerdict::Unknown(_)), "{status:?}");
        }
    }

    #[test]
    fn an_aborted_payment_is_declined_with_its_failure() {
        let answer = PgAnswer::Payment {
            http_status: 200,
            payment: Payment {
                payment_key: "pk".into(),
                order_id: "ord".into(),
                status: PaymentStatus::Aborted,
                total_amount: 1000,
                failure: Some(ErrorBody { code: "REJECT_CARD_PAYMENT".into(), message: "m".into() }),
            },
        };
        assert!(matches!(classify(&answer), PgVerdict::Declined(f) if f.code == "REJECT_CARD_PAYMENT"));
    }

    #[test]
    fn card_and_validation_codes_are_declines() {
        for code in [
            "REJECT_CARD_PAYMENT",
            "REJECT_CARD_COMPANY",
            "INVALID_CARD_EXPIRATION",
            "INVALID_STOPPED_CARD",
            "INVALID_REQUEST",
            "INVALID_AMOUNT",
            "EXCEED_MAX_DAILY_PAYMENT_COUNT",
            "BELOW_MINIMUM_AMOUNT",
            "NOT_SUPPORTED_INSTALLMENT_PLAN_CARD_OR_MERCHANT",
            "NOT_FOUND_PAYMENT_SESSION",
            "PAY_PROCESS_ABORTED",
        ] {
            assert!(declined(code), "{code}");
        }
        assert!(matches!(classify(&error(403, "REJECT_CARD_PAYMENT")), PgVerdict::Declined(_)));
    }

    #[test]
    fn rate_limits_and_consecutive_requests_are_turned_away_before_processing() {
        assert!(matches!(classify(&error(429, "TOO_MANY_REQUESTS")), PgVerdict::TurnedAway(_)));
        assert!(matches!(classify(&error(429, "ANYTHING")), PgVerdict::TurnedAway(_)));
        assert!(matches!(classify(&error(403, "FORBIDDEN_CONSECUTIVE_REQUEST")), PgVerdict::TurnedAway(_)));
        assert!(matches!(classify(&error(401, "UNAUTHORIZED_KEY")), PgVerdict::TurnedAway(_)));
    }

    #[test]
    fn a_request_that_never_left_is_not_sent() {
        let answer = PgAnswer::NotSent { detail: "connection refused".into() };
        assert_eq!(classify(&answer), PgVerdict::NotSent);
    }

    #[test]
    fn everything_after_sending_without_a_definitive_answer_is_unknown() {
        let unknown = |answer: PgAnswer| matches!(classify(&answer), PgVerdict::Unknown(_));
        assert!(unknown(PgAnswer::NoAnswer { detail: "read timeout".into() }));
        assert!(unknown(PgAnswer::NoAnswer { detail: "connection reset".into() }));
        assert!(unknown(error(500, "FAILED_INTERNAL_SYSTEM_PROCESSING")));
        assert!(unknown(error(502, "REJECT_CARD_PAYMENT")), "a 5xx wins over its code");
        assert!(unknown(error(400, "SOMETHING_NEW")));
        assert!(unknown(PgAnswer::Unparsable { http_status: 200 }));
        assert!(unknown(PgAnswer::Unparsable { http_status: 400 }));
    }

    #[test]
    fn idempotency_answers_are_their_own_verdicts() {
        assert_eq!(classify(&error(409, "IDEMPOTENT_REQUEST_PROCESSING")), PgVerdict::StillProcessing);
        assert_eq!(classify(&error(400, "ALREADY_PROCESSED_PAYMENT")), PgVerdict::AlreadyProcessed);
        assert_eq!(classify(&error(400, "DUPLICATED_ORDER_ID")), PgVerdict::AlreadyProcessed);
    }

    #[test]
    fn a_payment_for_another_order_or_amount_proves_nothing() {
        let done = payment(PaymentStatus::Done);
        assert_eq!(verdict_for(&done, "ord", 1000), PgVerdict::Charged);
        assert!(matches!(verdict_for(&done, "other", 1000), PgVerdict::Unknown(_)));
        assert!(matches!(verdict_for(&done, "ord", 999), PgVerdict::Unknown(_)));
        let declined = error(403, "REJECT_CARD_PAYMENT");
        assert!(matches!(verdict_for(&declined, "ord", 1000), PgVerdict::Declined(_)));
    }

    #[test]
    fn failures_carry_a_message_for_the_customer_not_the_pg() {
        let PgVerdict::Declined(failure) = classify(&error(403, "REJECT_CARD_PAYMENT")) else {
            panic!("expected a decline");
        };
        assert!(failure.message.contains("not been charged"), "{}", failure.message);
        assert!(!failure.message.contains("PG message"));
    }
}

//! What a customer reads when a payment fails: plain words, what happened to
//! their money, and what they can do. PG messages are for logs, not people.

/// The message shown for a failure code.
pub fn customer_message(code: &str, pg_message: Option<&str>) -> String {
    let specific = match code {
        "REJECT_CARD_PAYMENT" | "REJECT_CARD_COMPANY" | "CARD_PROCESSING_ERROR" | "FDS_ERROR" => {
            "Your card issuer declined this payment."
        }
        "INVALID_CARD_EXPIRATION" => "Your card has expired or its expiry date is wrong.",
        "INVALID_STOPPED_CARD" | "INVALID_CARD_LOST_OR_STOLEN" => "This card can no longer be used.",
        "INVALID_CARD_NUMBER" => "The card number is not valid.",
        "BELOW_MINIMUM_AMOUNT" => "The amount is below the minimum for this card.",
        "TOO_MANY_REQUESTS" | "FORBIDDEN_CONSECUTIVE_REQUEST" => {
            "The payment provider is busy and did not process this payment."
        }
        "PG_BUSY" => "Too many payments are being processed right now.",
        "PG_UNREACHABLE" => "We could not reach the payment provider.",
        "PAY_PROCESS_CANCELED" => "The payment was cancelled in the payment window.",
        "UNAUTHORIZED_KEY" | "INVALID_API_KEY" | "INCORRECT_BASIC_AUTH_FORMAT" => {
            "The shop could not sign in to the payment provider."
        }
        _ if code.starts_with("EXCEED_") => "This payment is over a limit of your card or account.",
        _ => "",
    };
    let first = if specific.is_empty() {
        match pg_message {
            Some(message) if !message.is_empty() => format!("The payment was declined: {message}."),
            _ => "The payment was declined.".to_owned(),
        }
    } else {
        specific.to_owned()
    };
    format!("{first} You have not been charged.")
}

/// What a customer reads when the PG refused their refund: why, if the code
/// says, and that nothing was paid back.
pub fn refund_refusal_message(code: &str) -> String {
    let why = match code {
        "EXCEED_MAX_REFUND_DUE" => "The refund period for this payment has passed.",
        "NOT_ALLOWED_PARTIAL_REFUND" | "NOT_ALLOWED_PARTIAL_REFUND_WAITING_DEPOSIT" => {
            "This payment can only be refunded in full."
        }
        "REFUND_REJECTED" | "PROVIDER_ERROR" => "The card company refused the refund.",
        "EXCEED_CANCEL_LIMIT" | "NOT_CANCELABLE_AMOUNT" | "NOT_MATCHES_REFUNDABLE_AMOUNT" => {
            "The refund is more than the payment provider can refund now."
        }
        _ => "The payment provider refused the refund.",
    };
    format!("{why} Nothing was refunded and the payment stands; the shop has been told.")
}

#[cfg(test)]
mod tests {
    use super::{customer_message, refund_refusal_message};

    #[test]
    fn refund_refusals_say_why_and_that_nothing_was_refunded() {
        let table = [
            ("EXCEED_MAX_REFUND_DUE", "The refund period for this payment has passed."),
            ("NOT_ALLOWED_PARTIAL_REFUND", "This payment can only be refunded in full."),
            ("NOT_ALLOWED_PARTIAL_REFUND_WAITING_DEPOSIT", "This payment can only be refunded in full."),
            ("REFUND_REJECTED", "The card company refused the refund."),
            ("PROVIDER_ERROR", "The card company refused the refund."),
            ("EXCEED_CANCEL_LIMIT", "The refund is more than the payment provider can refund now."),
            ("NOT_CANCELABLE_AMOUNT", "The refund is more than the payment provider can refund now."),
            ("NOT_MATCHES_REFUNDABLE_AMOUNT", "The refund is more than the payment provider can refund now."),
            ("SOMETHING_NEW", "The payment provider refused the refund."),
        ];
        for (code, why) in table {
            assert_eq!(
                refund_refusal_message(code),
                format!("{why} Nothing was refunded and the payment stands; the shop has been told."),
                "{code}"
            );
        }
    }

    #[test]
    fn known_codes_get_plain_words() {
        assert_eq!(
            customer_message("REJECT_CARD_PAYMENT", Some("한도초과 혹은 잔액부족")),
            "Your card issuer declined this payment. You have not been charged."
        );
        assert!(customer_message("EXCEED_MAX_DAILY_PAYMENT_COUNT", None).starts_with("This payment is over"));
    }

    #[test]
    fn unknown_codes_fall_back_to_the_pg_words() {
        assert_eq!(
            customer_message("SOME_DECLINE", Some("Card refused")),
            "The payment was declined: Card refused. You have not been charged."
        );
        assert_eq!(customer_message("SOME_DECLINE", None), "The payment was declined. You have not been charged.");
    }
}

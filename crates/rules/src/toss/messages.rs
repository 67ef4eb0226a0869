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

#[cfg(test)]
mod tests {
    use super::customer_message;

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

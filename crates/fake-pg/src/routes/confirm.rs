//! `POST /v1/payments/confirm`.

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::post;
use axum::{Extension, Router};
use serde_json::Value;

use super::api_call::{self, json_type, text};
use crate::auth;
use crate::calls::OpenCall;
use crate::error::PgError;
use crate::faults::FrontDoorFault;
use crate::processing;
use crate::serve::Connection;
use crate::state::AppState;
use crate::store::{Begin, ConfirmRequest};

/// The longest a held 429 waits for another request to process its payment.
const HELD_AT_MOST: Duration = Duration::from_secs(60);

/// Toss's limits on the confirm body.
const MAX_PAYMENT_KEY_CHARS: usize = 200;
const MAX_ORDER_ID_CHARS: usize = 64;

pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/v1/payments/confirm", post(payments_confirm))
}

async fn payments_confirm(
    State(state): State<AppState>,
    connection: Option<Extension<Connection>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    state.store.note_confirm_request();
    let (result, payment_key, order_id) = match parse(&headers, &body, &state.settings.secret_key) {
        Ok(Parsed::Confirm(request)) => {
            let (payment_key, order_id) = (request.payment_key.clone(), request.order_id.clone());
            let _open = OpenCall::open(&state.store, &payment_key);
            let begin = state.store.begin(&request);
            if matches!(begin, Begin::FrontDoor(FrontDoorFault::RateLimit429Held)) {
                state.store.until_processed(&payment_key, state.settings.clock.scaled(HELD_AT_MOST)).await;
            }
            (processing::answer(&state, begin).await, payment_key, order_id)
        }
        Ok(Parsed::TestCode(code)) => {
            state.store.note_test_code();
            (Err(PgError::TestCode(code)), String::new(), String::new())
        }
        Err(error) => (Err(error), String::new(), String::new()),
    };
    api_call::log_answer("confirm", &payment_key, &order_id, &result);
    api_call::respond(result, connection).await
}

#[derive(Debug)]
enum Parsed {
    Confirm(ConfirmRequest),
    /// `TossPayments-Test-Code`: answer with that code, process nothing.
    TestCode(String),
}

/// Checks a confirm in Toss's order: key, idempotency key, body.
fn parse(headers: &HeaderMap, body: &[u8], secret_key: &str) -> Result<Parsed, PgError> {
    auth::authorize(headers, secret_key)?;
    let idempotency_key = api_call::idempotency_key(headers)?;
    let request = confirm_body(body, idempotency_key)?;
    match api_call::test_code(headers)? {
        Some(code) => Ok(Parsed::TestCode(code)),
        None => Ok(Parsed::Confirm(request)),
    }
}

/// Reads the body field by field, so an error names the field at fault.
fn confirm_body(body: &[u8], idempotency_key: Option<String>) -> Result<ConfirmRequest, PgError> {
    let fields = api_call::json_object(body, "paymentKey, orderId and amount")?;
    let payment_key = text(&fields, "paymentKey", MAX_PAYMENT_KEY_CHARS)?;
    let order_id = text(&fields, "orderId", MAX_ORDER_ID_CHARS)?;
    check_order_id(&order_id)?;
    let amount = match fields.get("amount") {
        None | Some(Value::Null) => {
            return Err(PgError::InvalidRequest("amount is required.".to_owned()));
        }
        Some(Value::Number(number)) => number.as_u64().filter(|amount| *amount > 0).ok_or_else(|| {
            PgError::InvalidRequest(format!("amount must be a positive whole number of won, got {number}."))
        })?,
        Some(other) => {
            return Err(PgError::InvalidRequest(format!("amount must be a number, got {}.", json_type(other))));
        }
    };
    Ok(ConfirmRequest { payment_key, order_id, amount, idempotency_key })
}

/// Toss's orderId alphabet.
pub(crate) fn check_order_id(order_id: &str) -> Result<(), PgError> {
    match order_id.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '='))) {
        Some(bad) => Err(PgError::InvalidRequest(format!(
            "orderId may hold only letters, digits, '-', '_' and '=', found {bad:?}."
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(result: Result<ConfirmRequest, PgError>) -> String {
        match result {
            Err(PgError::InvalidRequest(message)) => message,
            other => panic!("expected INVALID_REQUEST, got {other:?}"),
        }
    }

    #[test]
    fn body_errors_name_the_field() {
        let parse = |body: &str| confirm_body(body.as_bytes(), None);
        assert!(message(parse("{")).contains("not valid JSON"));
        assert!(message(parse("[]")).contains("JSON object"));
        assert!(message(parse(r#"{"orderId":"o1","amount":1}"#)).contains("paymentKey"));
        assert!(message(parse(r#"{"paymentKey":"p","amount":1}"#)).contains("orderId"));
        assert!(message(parse(r#"{"paymentKey":"p","orderId":"o1"}"#)).contains("amount"));
        assert!(
            message(parse(r#"{"paymentKey":"p","orderId":"o1","amount":"1"}"#)).contains("amount must be a number")
        );
        assert!(
            message(parse(r#"{"paymentKey":7,"orderId":"o1","amount":1}"#)).contains("paymentKey must be a string")
        );
        assert!(message(parse(r#"{"paymentKey":"p","orderId":"o 1","amount":1}"#)).contains("orderId"));
        assert!(message(parse(r#"{"paymentKey":"p","orderId":"o1","amount":-5}"#)).contains("positive"));
        assert!(message(parse(r#"{"paymentKey":"p","orderId":"o1","amount":1.5}"#)).contains("positive"));
    }

    #[test]
    fn a_valid_body_parses() {
        let request =
            confirm_body(br#"{"paymentKey":"pk","orderId":"ord_1","amount":12900}"#, Some("k".into())).unwrap();
        assert_eq!((request.payment_key.as_str(), request.order_id.as_str(), request.amount), ("pk", "ord_1", 12_900));
        assert_eq!(request.idempotency_key.as_deref(), Some("k"));
    }

    #[test]
    fn idempotency_keys_are_optional_and_at_most_300_chars() {
        let mut headers = HeaderMap::new();
        assert_eq!(api_call::idempotency_key(&headers), Ok(None));
        headers.insert("Idempotency-Key", "a".repeat(300).parse().unwrap());
        assert!(api_call::idempotency_key(&headers).unwrap().is_some());
        headers.insert("Idempotency-Key", "a".repeat(301).parse().unwrap());
        assert!(matches!(api_call::idempotency_key(&headers), Err(PgError::InvalidIdempotencyKey(_))));
        headers.insert("Idempotency-Key", "".parse().unwrap());
        assert!(api_call::idempotency_key(&headers).is_err());
    }
}

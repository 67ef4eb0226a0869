//! `POST /v1/payments/confirm`.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Extension, Json, Router};
use serde_json::Value;

use crate::auth;
use crate::calls::OpenCall;
use crate::error::PgError;
use crate::processing::{self, Reply};
use crate::serve::Connection;
use crate::state::AppState;
use crate::store::ConfirmRequest;

/// Toss's limit on an idempotency key.
const MAX_IDEMPOTENCY_KEY_CHARS: usize = 300;
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
            (processing::confirm(&state, request).await, payment_key, order_id)
        }
        Ok(Parsed::TestCode(code)) => {
            state.store.note_test_code();
            (Err(PgError::TestCode(code)), String::new(), String::new())
        }
        Err(error) => (Err(error), String::new(), String::new()),
    };
    log_answer(&payment_key, &order_id, &result);
    match result {
        Ok(Reply::Payment(payment)) => Json(payment).into_response(),
        Ok(Reply::Reset) => reset(connection).await,
        Err(error) => error.into_response(),
    }
}

/// One line per confirm answer, the PG's view of every outcome.
fn log_answer(payment_key: &str, order_id: &str, result: &Result<Reply, PgError>) {
    let (status, outcome) = match result {
        Ok(Reply::Payment(payment)) => (StatusCode::OK.as_u16(), payment.status.as_str()),
        Ok(Reply::Reset) => (0, "CONNECTION_RESET"),
        Err(error) => (error.status().as_u16(), error.code()),
    };
    tracing::info!(payment_key, order_id, status, outcome, "confirm");
}

/// Resets the connection; the caller gets no answer.
async fn reset(connection: Option<Extension<Connection>>) -> Response {
    match connection {
        Some(Extension(connection)) => {
            connection.reset();
            std::future::pending().await
        }
        // Only this crate's accept loop can reset; served any other way
        // (a test harness calling the router directly), say what happened.
        None => (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(serde_json::json!({
                "code": "CONNECTION_RESET",
                "message": "This answer stands in for a connection reset."
            })),
        )
            .into_response(),
    }
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
    let idempotency_key = idempotency_key(headers)?;
    let request = confirm_body(body, idempotency_key)?;
    match headers.get("TossPayments-Test-Code") {
        Some(value) => {
            let code = value.to_str().ok().map(str::trim).filter(|code| !code.is_empty()).ok_or_else(|| {
                PgError::InvalidRequest(
                    "The TossPayments-Test-Code header must be an error code such as REJECT_CARD_PAYMENT.".to_owned(),
                )
            })?;
            Ok(Parsed::TestCode(code.to_owned()))
        }
        None => Ok(Parsed::Confirm(request)),
    }
}

fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, PgError> {
    let Some(value) = headers.get("Idempotency-Key") else {
        return Ok(None);
    };
    let key = value
        .to_str()
        .map_err(|_| PgError::InvalidIdempotencyKey("Idempotency-Key must be printable ASCII.".to_owned()))?;
    if key.is_empty() {
        return Err(PgError::InvalidIdempotencyKey(
            "Idempotency-Key must not be empty; leave the header out for no idempotency.".to_owned(),
        ));
    }
    if key.chars().count() > MAX_IDEMPOTENCY_KEY_CHARS {
        return Err(PgError::InvalidIdempotencyKey(format!(
            "Idempotency-Key must be at most {MAX_IDEMPOTENCY_KEY_CHARS} characters, got {}.",
            key.chars().count()
        )));
    }
    Ok(Some(key.to_owned()))
}

/// Reads the body field by field, so an error names the field at fault.
fn confirm_body(body: &[u8], idempotency_key: Option<String>) -> Result<ConfirmRequest, PgError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|error| PgError::InvalidRequest(format!("The body is not valid JSON: {error}.")))?;
    let Value::Object(fields) = value else {
        return Err(PgError::InvalidRequest(
            "The body must be a JSON object with paymentKey, orderId and amount.".to_owned(),
        ));
    };
    let text = |name: &str, max: usize| -> Result<String, PgError> {
        match fields.get(name) {
            None | Some(Value::Null) => Err(PgError::InvalidRequest(format!("{name} is required."))),
            Some(Value::String(text)) if text.is_empty() => {
                Err(PgError::InvalidRequest(format!("{name} must not be empty.")))
            }
            Some(Value::String(text)) if text.chars().count() > max => {
                Err(PgError::InvalidRequest(format!("{name} must be at most {max} characters.")))
            }
            Some(Value::String(text)) => Ok(text.clone()),
            Some(other) => Err(PgError::InvalidRequest(format!("{name} must be a string, got {}.", json_type(other)))),
        }
    };
    let payment_key = text("paymentKey", MAX_PAYMENT_KEY_CHARS)?;
    let order_id = text("orderId", MAX_ORDER_ID_CHARS)?;
    if let Some(bad) = order_id.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '='))) {
        return Err(PgError::InvalidRequest(format!(
            "orderId may hold only letters, digits, '-', '_' and '=', found {bad:?}."
        )));
    }
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

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
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
        assert_eq!(idempotency_key(&headers), Ok(None));
        headers.insert("Idempotency-Key", "a".repeat(300).parse().unwrap());
        assert!(idempotency_key(&headers).unwrap().is_some());
        headers.insert("Idempotency-Key", "a".repeat(301).parse().unwrap());
        assert!(matches!(idempotency_key(&headers), Err(PgError::InvalidIdempotencyKey(_))));
        headers.insert("Idempotency-Key", "".parse().unwrap());
        assert!(idempotency_key(&headers).is_err());
    }
}

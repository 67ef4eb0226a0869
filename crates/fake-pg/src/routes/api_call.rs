//! What the confirm and the cancel routes share: the headers they read the
//! same way, and how a processing's reply becomes an HTTP answer.

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::Value;

use crate::error::PgError;
use crate::processing::Reply;
use crate::serve::Connection;

/// Toss's limit on an idempotency key.
const MAX_IDEMPOTENCY_KEY_CHARS: usize = 300;

/// The `Idempotency-Key`, if any. Empty, non-ASCII or over 300 characters is
/// 400 `INVALID_IDEMPOTENCY_KEY`.
pub(crate) fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, PgError> {
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

/// `TossPayments-Test-Code: CODE`: answer with that code and process nothing.
pub(crate) fn test_code(headers: &HeaderMap) -> Result<Option<String>, PgError> {
    let Some(value) = headers.get("TossPayments-Test-Code") else {
        return Ok(None);
    };
    let code = value.to_str().ok().map(str::trim).filter(|code| !code.is_empty()).ok_or_else(|| {
        PgError::InvalidRequest(
            "The TossPayments-Test-Code header must be an error code such as REJECT_CARD_PAYMENT.".to_owned(),
        )
    })?;
    Ok(Some(code.to_owned()))
}

/// The body as a JSON object, or 400 `INVALID_REQUEST` saying which fields
/// it should have had.
pub(crate) fn json_object(body: &[u8], fields: &str) -> Result<serde_json::Map<String, Value>, PgError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|error| PgError::InvalidRequest(format!("The body is not valid JSON: {error}.")))?;
    match value {
        Value::Object(fields) => Ok(fields),
        _ => Err(PgError::InvalidRequest(format!("The body must be a JSON object with {fields}."))),
    }
}

/// A string field of at most `max` characters; `None` when absent or null.
pub(crate) fn optional_text(
    fields: &serde_json::Map<String, Value>,
    name: &str,
    max: usize,
) -> Result<Option<String>, PgError> {
    match fields.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if text.is_empty() => {
            Err(PgError::InvalidRequest(format!("{name} must not be empty.")))
        }
        Some(Value::String(text)) if text.chars().count() > max => {
            Err(PgError::InvalidRequest(format!("{name} must be at most {max} characters.")))
        }
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(PgError::InvalidRequest(format!("{name} must be a string, got {}.", json_type(other)))),
    }
}

/// A string field that must be there.
pub(crate) fn text(fields: &serde_json::Map<String, Value>, name: &str, max: usize) -> Result<String, PgError> {
    optional_text(fields, name, max)?.ok_or_else(|| PgError::InvalidRequest(format!("{name} is required.")))
}

pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One log line per answer, the PG's view of every outcome.
pub(crate) fn log_answer(route: &'static str, payment_key: &str, order_id: &str, result: &Result<Reply, PgError>) {
    let (status, outcome) = match result {
        Ok(Reply::Payment(payment)) => (StatusCode::OK.as_u16(), payment.status.as_str()),
        Ok(Reply::Reset) => (0, "CONNECTION_RESET"),
        Err(error) => (error.status().as_u16(), error.code()),
    };
    tracing::info!(payment_key, order_id, status, outcome, "{route}");
}

/// The HTTP answer to a reply: the Payment, an error, or no answer at all.
pub(crate) async fn respond(result: Result<Reply, PgError>, connection: Option<Extension<Connection>>) -> Response {
    match result {
        Ok(Reply::Payment(payment)) => Json(payment).into_response(),
        Ok(Reply::Reset) => reset(connection).await,
        Err(error) => error.into_response(),
    }
}

/// Resets the connection; the caller gets no answer.
pub(crate) async fn reset(connection: Option<Extension<Connection>>) -> Response {
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

//! `POST /v1/payments/{paymentKey}/cancel`: a refund of all or part of an
//! approved payment, processed as a confirm is (latency, faults, idempotency,
//! going on after the caller hangs up).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::post;
use axum::{Extension, Router};
use serde_json::Value;

use super::api_call::{self, json_type, text};
use crate::auth;
use crate::calls::OpenCall;
use crate::error::PgError;
use crate::processing;
use crate::serve::Connection;
use crate::state::AppState;
use crate::store::CancelRequest;

/// Toss's limit on `cancelReason`.
const MAX_CANCEL_REASON_CHARS: usize = 200;

pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/v1/payments/{payment_key}/cancel", post(payments_cancel))
}

async fn payments_cancel(
    State(state): State<AppState>,
    connection: Option<Extension<Connection>>,
    Path(payment_key): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    state.store.note_cancel_request(state.store.lookup(&payment_key).map(|payment| payment.order_id));
    let result = match parse(&headers, &body, &state.settings.secret_key, &payment_key) {
        Ok(Parsed::Cancel(request)) => {
            let _open = OpenCall::open(&state.store, &payment_key);
            processing::answer(&state, state.store.begin_cancel(&request)).await
        }
        Ok(Parsed::TestCode(code)) => {
            state.store.note_test_code();
            Err(PgError::TestCode(code))
        }
        Err(error) => Err(error),
    };
    api_call::log_answer("cancel", &payment_key, "", &result);
    api_call::respond(result, connection).await
}

#[derive(Debug)]
enum Parsed {
    Cancel(CancelRequest),
    /// `TossPayments-Test-Code`: answer with that code, process nothing.
    TestCode(String),
}

/// Checks a cancel in the confirm's order: key, idempotency key, body.
fn parse(headers: &HeaderMap, body: &[u8], secret_key: &str, payment_key: &str) -> Result<Parsed, PgError> {
    auth::authorize(headers, secret_key)?;
    let idempotency_key = api_call::idempotency_key(headers)?;
    let request = cancel_body(body, payment_key, idempotency_key)?;
    match api_call::test_code(headers)? {
        Some(code) => Ok(Parsed::TestCode(code)),
        None => Ok(Parsed::Cancel(request)),
    }
}

/// `{cancelReason, cancelAmount?}`. Toss's other fields (`taxFreeAmount`,
/// `refundReceiveAccount`, `currency`) are accepted and ignored: cards only,
/// nothing tax-free here.
fn cancel_body(body: &[u8], payment_key: &str, idempotency_key: Option<String>) -> Result<CancelRequest, PgError> {
    let fields = api_call::json_object(body, "cancelReason and, for a partial cancel, cancelAmount")?;
    let reason = text(&fields, "cancelReason", MAX_CANCEL_REASON_CHARS)?;
    let amount = match fields.get("cancelAmount") {
        None | Some(Value::Null) => None,
        Some(Value::Number(number)) => {
            if number.as_f64().is_some_and(|amount| amount <= 0.0) {
                return Err(PgError::NotCancelableAmount(format!("cancelAmount must be more than 0, got {number}.")));
            }
            Some(number.as_u64().ok_or_else(|| {
                PgError::InvalidRequest(format!("cancelAmount must be a whole number of won, got {number}."))
            })?)
        }
        Some(other) => {
            return Err(PgError::InvalidRequest(format!("cancelAmount must be a number, got {}.", json_type(other))));
        }
    };
    Ok(CancelRequest { payment_key: payment_key.to_owned(), reason, amount, idempotency_key })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: &str) -> Result<CancelRequest, PgError> {
        cancel_body(body.as_bytes(), "pk", None)
    }

    #[test]
    fn a_reason_is_required_and_an_amount_must_be_positive_won() {
        let invalid = |body: &str, mentions: &str| match parse(body) {
            Err(PgError::InvalidRequest(message)) => assert!(message.contains(mentions), "{message}"),
            other => panic!("{body}: {other:?}"),
        };
        invalid("{", "not valid JSON");
        invalid("[]", "JSON object");
        invalid("{}", "cancelReason is required");
        invalid(r#"{"cancelReason":""}"#, "cancelReason");
        invalid(r#"{"cancelReason":7}"#, "cancelReason must be a string");
        invalid(&format!(r#"{{"cancelReason":"{}"}}"#, "x".repeat(201)), "200");
        invalid(r#"{"cancelReason":"r","cancelAmount":"5"}"#, "cancelAmount must be a number");
        invalid(r#"{"cancelReason":"r","cancelAmount":1.5}"#, "whole number");
        for nothing in ["0", "-5", "-0.5"] {
            let body = format!(r#"{{"cancelReason":"r","cancelAmount":{nothing}}}"#);
            assert!(matches!(parse(&body), Err(PgError::NotCancelableAmount(_))), "{nothing}");
        }
    }

    #[test]
    fn a_valid_body_parses_with_or_without_an_amount() {
        let full = parse(r#"{"cancelReason":"changed mind"}"#).unwrap();
        assert_eq!((full.reason.as_str(), full.amount), ("changed mind", None));
        let partial = parse(r#"{"cancelReason":"r","cancelAmount":1000,"taxFreeAmount":0}"#).unwrap();
        assert_eq!((partial.payment_key.as_str(), partial.amount), ("pk", Some(1_000)));
    }
}

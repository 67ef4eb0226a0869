//! KakaoPay's errors: `{error_code, error_message, extras?}` with a negative
//! code, and how the store's outcomes (Toss-shaped `PgError`s) translate to
//! them. KakaoPay answers its payment codes (-7xx) with HTTP 400; the common
//! codes (-400, -401, -404, -429, -500, -503) with the status of their number.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::error::PgError;

/// One KakaoPay error answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KakaoError {
    pub(crate) code: i32,
    pub(crate) status: StatusCode,
    pub(crate) message: String,
    /// What the card company said, for a failed approve or cancel.
    pub(crate) extras: Option<Extras>,
}

/// `extras` of a failure at the payment method.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Extras {
    pub(crate) method_result_code: String,
    pub(crate) method_result_message: String,
}

#[derive(Serialize)]
struct Body<'a> {
    error_code: i32,
    error_message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    extras: Option<&'a Extras>,
}

impl KakaoError {
    fn new(code: i32, status: StatusCode, message: impl Into<String>) -> Self {
        Self { code, status, message: message.into(), extras: None }
    }

    /// A payment error (-7xx): HTTP 400.
    fn payment(code: i32, message: impl Into<String>) -> Self {
        Self::new(code, StatusCode::BAD_REQUEST, message)
    }

    /// -2: a parameter is missing or invalid; the message names it.
    pub(crate) fn invalid_param(message: impl Into<String>) -> Self {
        Self::new(-2, StatusCode::BAD_REQUEST, message)
    }

    /// -400: no `Authorization` header.
    pub(crate) fn missing_authorization() -> Self {
        Self::new(
            -400,
            StatusCode::BAD_REQUEST,
            "The Authorization header is missing. Send `Authorization: SECRET_KEY <secret key>`.",
        )
    }

    /// -401: the secret key is wrong, or the scheme is not `SECRET_KEY`/`DEV_SECRET_KEY`.
    pub(crate) fn invalid_key() -> Self {
        Self::new(
            -401,
            StatusCode::UNAUTHORIZED,
            "The secret key is wrong. Send `Authorization: SECRET_KEY <secret key>` (or DEV_SECRET_KEY).",
        )
    }

    /// -404: no such API.
    pub(crate) fn no_such_api(status: StatusCode) -> Self {
        Self::new(-404, status, "No such API. KakaoPay's are POST /online/v1/payment/{ready,approve,order,cancel}.")
    }

    pub(crate) fn rate_limited() -> Self {
        Self::new(-429, StatusCode::TOO_MANY_REQUESTS, "Too many requests; nothing was processed. Try again later.")
    }

    pub(crate) fn internal() -> Self {
        Self::new(-500, StatusCode::INTERNAL_SERVER_ERROR, "An internal error occurred while processing the request.")
    }

    pub(crate) fn unavailable() -> Self {
        Self::new(-503, StatusCode::SERVICE_UNAVAILABLE, "The payment service is unavailable; nothing was processed.")
    }

    pub(crate) fn not_authenticated() -> Self {
        Self::payment(-701, "The customer has not finished authenticating in the payment window; no pg_token yet.")
    }

    pub(crate) fn already_approved() -> Self {
        Self::payment(-702, "This tid was approved already.")
    }

    pub(crate) fn amount_mismatch(given: u64, ready: u64) -> Self {
        Self::payment(-704, format!("total_amount {given} does not match the ready's total_amount {ready}."))
    }

    pub(crate) fn order_id_mismatch(given: &str, ready: &str) -> Self {
        Self::payment(-706, format!("partner_order_id {given:?} does not match the ready's {ready:?}."))
    }

    pub(crate) fn user_id_mismatch(given: &str, ready: &str) -> Self {
        Self::payment(-707, format!("partner_user_id {given:?} does not match the ready's {ready:?}."))
    }

    pub(crate) fn invalid_pg_token() -> Self {
        Self::payment(-708, "pg_token is not the one issued to this tid.")
    }

    pub(crate) fn over_cancelable(message: impl Into<String>) -> Self {
        Self::payment(-710, message)
    }

    pub(crate) fn unknown_tid(tid: &str) -> Self {
        Self::payment(-721, format!("tid {tid:?} does not exist."))
    }

    pub(crate) fn expired() -> Self {
        Self::payment(-723, "The payment expired: it was not approved within 15 minutes of its ready.")
    }

    pub(crate) fn cid_mismatch(given: &str, ready: &str) -> Self {
        Self::payment(-731, format!("cid {given:?} is not the cid {ready:?} this tid was readied with."))
    }

    pub(crate) fn approval_failed(extras: Extras) -> Self {
        Self { extras: Some(extras), ..Self::payment(-780, "approval failure!") }
    }

    pub(crate) fn cancel_failed(extras: Extras) -> Self {
        Self { extras: Some(extras), ..Self::payment(-781, "cancel failure!") }
    }

    pub(crate) fn not_approvable(state: &str) -> Self {
        Self::payment(-783, format!("The payment is {state}: it cannot be approved."))
    }

    pub(crate) fn not_cancelable(state: &str) -> Self {
        Self::payment(-784, format!("The payment is {state}: it cannot be canceled."))
    }

    pub(crate) fn duplicate(what: &str) -> Self {
        Self::payment(-785, format!("Another {what} of this tid is being processed."))
    }

    /// The store's outcome, in KakaoPay's terms. KakaoPay's own checks came
    /// first (`begin_checked`); what remains are faults, capacity, and the
    /// processing's end.
    pub(crate) fn from_store(error: PgError) -> Self {
        match error {
            PgError::TooManyRequests(_) => Self::rate_limited(),
            PgError::Unavailable => Self::unavailable(),
            PgError::ForbiddenConsecutiveRequest => Self::duplicate("request"),
            PgError::RejectCardPayment | PgError::InvalidCardExpiration | PgError::PayProcessAborted => {
                Self::approval_failed(Extras {
                    method_result_code: "REJECT_CARD".to_owned(),
                    method_result_message: "카드사에서 승인을 거절했습니다.".to_owned(),
                })
            }
            PgError::ProviderError => Self::cancel_failed(Extras {
                method_result_code: "REJECT_CANCEL".to_owned(),
                method_result_message: "카드사에서 취소를 처리하지 못했습니다.".to_owned(),
            }),
            PgError::NotFoundPayment(_) => Self::payment(-721, "The tid does not exist."),
            PgError::NotFoundPaymentSession(_) => Self::expired(),
            PgError::AlreadyProcessedPayment => Self::already_approved(),
            PgError::NotCancelableAmount(message) => Self::over_cancelable(message),
            PgError::NotCancelablePayment(message) => Self::payment(-784, message),
            PgError::AlreadyCanceledPayment => Self::not_cancelable("CANCEL_PAYMENT"),
            // KakaoPay documents no code of its own for these two: a payment
            // it refunds only in full, or past its refund period, is one "not
            // in a state that can be cancelled" (a guess, in docs/kakaopay.md).
            PgError::NotAllowedPartialRefund => {
                Self::payment(-784, "The payment can only be canceled in full; nothing was canceled.")
            }
            PgError::ExceedMaxRefundDue => {
                Self::payment(-784, "The payment is past the period it could be canceled in; nothing was canceled.")
            }
            PgError::InvalidRequest(message) => Self::invalid_param(message),
            _ => Self::internal(),
        }
    }
}

impl IntoResponse for KakaoError {
    fn into_response(self) -> Response {
        let body = Body { error_code: self.code, error_message: &self.message, extras: self.extras.as_ref() };
        (self.status, Json(body)).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payment_codes_are_400_and_common_codes_their_own_status() {
        assert_eq!(KakaoError::already_approved().status, StatusCode::BAD_REQUEST);
        assert_eq!(KakaoError::invalid_key().status, StatusCode::UNAUTHORIZED);
        let faults = [
            (PgError::TooManyRequests(String::new()), -429, 429),
            (PgError::FailedInternalSystemProcessing, -500, 500),
            (PgError::Unavailable, -503, 503),
            (PgError::RejectCardPayment, -780, 400),
            (PgError::ProviderError, -781, 400),
            (PgError::ForbiddenConsecutiveRequest, -785, 400),
            (PgError::NotAllowedPartialRefund, -784, 400),
            (PgError::ExceedMaxRefundDue, -784, 400),
        ];
        for (error, code, status) in faults {
            let kakao = KakaoError::from_store(error);
            assert_eq!((kakao.code, kakao.status.as_u16()), (code, status));
        }
    }

    #[test]
    fn extras_are_sent_only_where_the_card_company_spoke() {
        let plain = serde_json::to_value(Body { error_code: -702, error_message: "m", extras: None }).unwrap();
        assert!(plain.get("extras").is_none());
        let declined = KakaoError::from_store(PgError::RejectCardPayment);
        let extras = declined.extras.as_ref().unwrap();
        let body = Body { error_code: declined.code, error_message: &declined.message, extras: Some(extras) };
        let body = serde_json::to_value(body).unwrap();
        assert_eq!(body["extras"]["method_result_code"], "REJECT_CARD");
        assert_eq!(body["error_message"], "approval failure!");
    }
}

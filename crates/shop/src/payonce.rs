//! The shop's client of payonce's shop API (`/v1/checkouts` and the feed
//! `/v1/events`, with the shop's key). Every call has a 10 s timeout. Reading a checkout is retried
//! a couple of times, as reading changes nothing; creating one and refunding
//! are never retried here: the customer's (or the back office's) button
//! retries them, always with the same Idempotency-Key.

use std::time::Duration;

use payonce_api::{
    ApiErrorBody, Checkout, CheckoutList, CreateCheckoutRequest, EventList, IDEMPOTENCY_KEY_HEADER, ShopRefundRequest,
};
use reqwest::{RequestBuilder, StatusCode, Url};
use serde::de::DeserializeOwned;

/// How long one call to payonce may take, from connecting to the last byte.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The waits between reads of a checkout: three tries in all, in about a second.
const READ_BACKOFF: [Duration; 2] = [Duration::from_millis(200), Duration::from_millis(800)];

#[derive(Debug, thiserror::Error)]
pub enum PayonceError {
    /// No answer: payonce is down, unreachable, or took longer than the
    /// timeout. A create or a refund may or may not have been received.
    #[error("payonce could not be reached: {0}")]
    Unreachable(String),
    /// payonce answered with its `{code, message}` error.
    #[error("payonce answered {status} {code}: {message}")]
    Refused { status: StatusCode, code: String, message: String },
    /// payonce (or something in front of it) answered what the shop cannot read.
    #[error("payonce answered {status} with a body the shop cannot read: {detail}")]
    Unreadable { status: StatusCode, detail: String },
}

impl PayonceError {
    /// Whether the same request may answer otherwise in a moment.
    fn is_passing(&self) -> bool {
        match self {
            PayonceError::Unreachable(_) => true,
            PayonceError::Refused { status, .. } | PayonceError::Unreadable { status, .. } => {
                status.is_server_error() || *status == StatusCode::TOO_MANY_REQUESTS
            }
        }
    }

    /// Whether payonce refused the request itself and so, as its API
    /// promises, created or changed nothing: another key is then safe.
    pub fn changed_nothing(&self) -> bool {
        matches!(self, PayonceError::Refused { status, .. } if status.is_client_error())
    }

    /// Whether a refund that answered this is over, so the next click must be
    /// a new refund (a new key): payonce refused it, or the PG did
    /// (`CANCEL_REFUSED`, which the same key would only answer again).
    pub fn ends_the_refund(&self) -> bool {
        self.changed_nothing() || matches!(self, PayonceError::Refused { code, .. } if code == "CANCEL_REFUSED")
    }
}

/// What a refund answered.
#[derive(Debug)]
pub struct Refunded {
    pub checkout: Checkout,
    /// `202`: the refund is being sent; the checkout is `CANCEL_REQUESTED`.
    pub in_progress: bool,
}

#[derive(Clone)]
pub struct Payonce {
    http: reqwest::Client,
    /// Where payonce's `/v1` is.
    base: Url,
    api_key: String,
}

impl Payonce {
    pub fn new(base: Url, api_key: String) -> Result<Payonce, reqwest::Error> {
        let http = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .user_agent(concat!("payonce-shop/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Payonce { http, base, api_key })
    }

    /// `POST /v1/checkouts`. The same `idempotency_key` with the same body
    /// answers the same checkout, however many times it is sent.
    pub async fn create_checkout(
        &self,
        idempotency_key: &str,
        request: &CreateCheckoutRequest,
    ) -> Result<Checkout, PayonceError> {
        let url = self.url(&["v1", "checkouts"]);
        let answer =
            self.send(self.http.post(url).header(IDEMPOTENCY_KEY_HEADER, idempotency_key).json(request)).await?;
        Ok(answer.1)
    }

    /// `GET /v1/checkouts/{id}`, tried again after a short wait when payonce
    /// did not answer or answered a passing error.
    pub async fn checkout(&self, id: &str) -> Result<Checkout, PayonceError> {
        let url = self.url(&["v1", "checkouts", id]);
        self.read(|| self.http.get(url.clone())).await
    }

    /// `GET /v1/checkouts?reference=`: the reference's checkouts, newest
    /// first (the first page is enough: this shop makes one per order).
    pub async fn checkouts_of(&self, reference: &str) -> Result<CheckoutList, PayonceError> {
        let mut url = self.url(&["v1", "checkouts"]);
        url.query_pairs_mut().append_pair("reference", reference);
        self.read(|| self.http.get(url.clone())).await
    }

    /// `GET /v1/events?after=`: the shop's events after `cursor` (from the
    /// first without one), oldest first, retried like a read of a checkout.
    pub async fn events_after(&self, cursor: Option<&str>) -> Result<EventList, PayonceError> {
        let mut url = self.url(&["v1", "events"]);
        if let Some(cursor) = cursor {
            url.query_pairs_mut().append_pair("after", cursor);
        }
        self.read(|| self.http.get(url.clone())).await
    }

    /// `POST /v1/checkouts/{id}/refunds`. The same `idempotency_key` is the same refund.
    pub async fn refund(
        &self,
        checkout_id: &str,
        idempotency_key: &str,
        request: &ShopRefundRequest,
    ) -> Result<Refunded, PayonceError> {
        let url = self.url(&["v1", "checkouts", checkout_id, "refunds"]);
        let (status, checkout) =
            self.send(self.http.post(url).header(IDEMPOTENCY_KEY_HEADER, idempotency_key).json(request)).await?;
        Ok(Refunded { checkout, in_progress: status == StatusCode::ACCEPTED })
    }

    /// The base URL with `segments` appended, each percent-encoded as one
    /// segment (a checkout id is payonce's text, not the shop's).
    fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        // A base URL that cannot have a path was refused at start (`main`).
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url
    }

    async fn read<T: DeserializeOwned>(&self, request: impl Fn() -> RequestBuilder) -> Result<T, PayonceError> {
        let mut waits = READ_BACKOFF.iter();
        loop {
            match self.send(request()).await {
                Ok((_, value)) => return Ok(value),
                Err(error) if error.is_passing() => match waits.next() {
                    Some(wait) => {
                        tracing::info!("reading from payonce again in {wait:?}: {error}");
                        tokio::time::sleep(*wait).await;
                    }
                    None => return Err(error),
                },
                Err(error) => return Err(error),
            }
        }
    }

    async fn send<T: DeserializeOwned>(&self, request: RequestBuilder) -> Result<(StatusCode, T), PayonceError> {
        let response = request.bearer_auth(&self.api_key).send().await.map_err(unreachable)?;
        let status = response.status();
        let body = response.bytes().await.map_err(unreachable)?;
        if status.is_success() {
            return serde_json::from_slice(&body)
                .map(|value| (status, value))
                .map_err(|error| PayonceError::Unreadable { status, detail: error.to_string() });
        }
        match serde_json::from_slice::<ApiErrorBody>(&body) {
            Ok(error) => Err(PayonceError::Refused { status, code: error.code, message: error.message }),
            Err(_) => Err(PayonceError::Unreadable { status, detail: excerpt(&body) }),
        }
    }
}

fn unreachable(error: reqwest::Error) -> PayonceError {
    if error.is_timeout() {
        PayonceError::Unreachable(format!("no answer within {} s", TIMEOUT.as_secs()))
    } else {
        // Each cause in turn ("error sending request: ...: Connection refused"),
        // without the URL: it is the shop's own setting, logged at start.
        let error = error.without_url();
        let mut text = error.to_string();
        let mut cause = std::error::Error::source(&error);
        while let Some(inner) = cause {
            text = format!("{text}: {inner}");
            cause = inner.source();
        }
        PayonceError::Unreachable(text)
    }
}

/// The start of a body that is not payonce's error, for the log and the page.
fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    match text.char_indices().nth(120) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None if text.is_empty() => "an empty body".to_owned(),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_appended_to_the_base_one_segment_each() {
        let payonce = |base: &str| Payonce::new(Url::parse(base).unwrap(), "key".into()).unwrap();
        assert_eq!(
            payonce("http://127.0.0.1:8080").url(&["v1", "checkouts"]).as_str(),
            "http://127.0.0.1:8080/v1/checkouts"
        );
        assert_eq!(
            payonce("https://pay.example/payonce/").url(&["v1", "checkouts", "po_1/../x", "refunds"]).as_str(),
            "https://pay.example/payonce/v1/checkouts/po_1%2F..%2Fx/refunds"
        );
    }

    #[test]
    fn only_payonces_refusals_are_safe_to_send_again_with_another_key() {
        let refused = |status| PayonceError::Refused { status, code: "X".into(), message: "x".into() };
        assert!(refused(StatusCode::UNPROCESSABLE_ENTITY).changed_nothing());
        assert!(!refused(StatusCode::BAD_GATEWAY).changed_nothing());
        assert!(!PayonceError::Unreachable("down".into()).changed_nothing());
        assert!(refused(StatusCode::SERVICE_UNAVAILABLE).is_passing());
        assert!(refused(StatusCode::TOO_MANY_REQUESTS).is_passing());
        assert!(!refused(StatusCode::NOT_FOUND).is_passing());
    }

    #[test]
    fn an_unreadable_body_is_shown_short() {
        assert_eq!(excerpt(b"  "), "an empty body");
        assert_eq!(excerpt(b"<html>Bad Gateway</html>"), "<html>Bad Gateway</html>");
        assert_eq!(excerpt("가".repeat(200).as_bytes()).chars().count(), 121);
    }
}

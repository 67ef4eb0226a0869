//! The HTTP client to the PG. It reports what happened on the wire and leaves
//! the meaning to `classify`.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use reqwest::header::{AUTHORIZATION, HeaderValue};
use reqwest::{Response, Url};
use secrecy::{ExposeSecret, SecretString};

use super::PgTransport;

pub use payonce_rules::toss::TossReply;
use payonce_rules::toss::wire::{CancelBody, ConfirmBody, ErrorBody, Payment, Transaction};

/// One confirm call: the payment, and the idempotency key every retry reuses.
#[derive(Debug, Clone, Copy)]
pub struct TossConfirm<'a> {
    pub payment_key: &'a str,
    pub order_id: &'a str,
    pub amount: u64,
    pub idempotency_key: &'a str,
}

/// One cancel call: the refund, and the idempotency key every send of it reuses.
#[derive(Debug, Clone, Copy)]
pub struct TossCancel<'a> {
    pub payment_key: &'a str,
    /// The order it refunds (the PG's orderId for a charge no order made): not
    /// sent, it names the call in the log.
    pub order_id: &'a str,
    pub reason: &'a str,
    /// `None` refunds everything that is left.
    pub amount: Option<u64>,
    pub idempotency_key: &'a str,
}

/// The header that names the API version a call is answered in.
const API_VERSION_HEADER: reqwest::header::HeaderName =
    reqwest::header::HeaderName::from_static("tosspayments-api-version");

/// HTTP client for the PG's payments API.
#[derive(Debug, Clone)]
pub struct TossClient {
    http: reqwest::Client,
    base: Url,
    authorization: HeaderValue,
    lookup_timeout: Duration,
}

impl TossClient {
    /// A client for Toss's API at `base`, reached as `transport` says.
    pub fn new(base: &str, secret_key: &SecretString, transport: PgTransport) -> Self {
        let version = HeaderValue::from_static(super::toss::API_VERSION);
        let base = Url::parse(base).expect("the PG URL was validated at start-up");
        let http = transport
            .client_builder(&base)
            .default_headers(reqwest::header::HeaderMap::from_iter([(API_VERSION_HEADER, version)]))
            .build()
            .expect("the TLS backend initialises");
        let token = STANDARD.encode(format!("{}:", secret_key.expose_secret()));
        let mut authorization =
            HeaderValue::from_str(&format!("Basic {token}")).expect("base64 is a valid header value");
        // Debug output (and HTTP/2's header compression) leaves it out.
        authorization.set_sensitive(true);
        Self { http, base, authorization, lookup_timeout: transport.lookup_timeout() }
    }

    /// `POST /v1/payments/confirm` with the attempt's idempotency key.
    pub async fn confirm(&self, call: TossConfirm<'_>) -> TossReply {
        let body = ConfirmBody { payment_key: call.payment_key, order_id: call.order_id, amount: call.amount };
        let request = self
            .http
            .post(self.url("v1/payments/confirm"))
            .header(AUTHORIZATION, self.authorization.clone())
            .header("Idempotency-Key", call.idempotency_key)
            .json(&body);
        read_answer(request.send().await).await
    }

    /// `POST /v1/payments/{paymentKey}/cancel` with the refund's idempotency key.
    /// It waits as long as a confirm: the PG processes a refund as it does a charge.
    pub async fn cancel(&self, call: TossCancel<'_>) -> TossReply {
        let mut url = self.url("v1/payments/");
        url.path_segments_mut().expect("http URLs have paths").pop_if_empty().push(call.payment_key).push("cancel");
        let body = CancelBody { cancel_reason: call.reason, cancel_amount: call.amount };
        let request = self
            .http
            .post(url)
            .header(AUTHORIZATION, self.authorization.clone())
            .header("Idempotency-Key", call.idempotency_key)
            .json(&body);
        read_answer(request.send().await).await
    }

    /// `GET /v1/payments/{paymentKey}`: the payment as the PG has it now.
    pub async fn payment(&self, payment_key: &str) -> TossReply {
        let mut url = self.url("v1/payments/");
        url.path_segments_mut().expect("http URLs have paths").pop_if_empty().push(payment_key);
        let request = self.http.get(url).header(AUTHORIZATION, self.authorization.clone()).timeout(self.lookup_timeout);
        read_answer(request.send().await).await
    }

    /// `GET /v1/payments/orders/{orderId}`: the payment of an order as the PG
    /// has it now, whatever its paymentKey.
    pub async fn payment_of_order(&self, order_id: &str) -> TossReply {
        let mut url = self.url("v1/payments/orders/");
        url.path_segments_mut().expect("http URLs have paths").pop_if_empty().push(order_id);
        let request = self.http.get(url).header(AUTHORIZATION, self.authorization.clone()).timeout(self.lookup_timeout);
        read_answer(request.send().await).await
    }

    /// `GET /v1/transactions`: one page of the approvals and cancels between
    /// two Korean local date-times (both inclusive, to the second), after
    /// `starting_after`. A read, so it waits as long as a lookup.
    pub async fn transactions(
        &self,
        start: &str,
        end: &str,
        starting_after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Transaction>, TossReply> {
        let mut url = self.url("v1/transactions");
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("startDate", start).append_pair("endDate", end).append_pair("limit", &limit.to_string());
            if let Some(key) = starting_after {
                query.append_pair("startingAfter", key);
            }
        }
        let request = self.http.get(url).header(AUTHORIZATION, self.authorization.clone()).timeout(self.lookup_timeout);
        let response = match request.send().await {
            Ok(response) => response,
            Err(error) if error.is_connect() => return Err(TossReply::NotSent { detail: error_chain(&error) }),
            Err(error) => {
                return Err(TossReply::NoReply { detail: error_chain(&error), timed_out: error.is_timeout() });
            }
        };
        let http_status = response.status().as_u16();
        let body = match response.bytes().await {
            Ok(body) => body,
            Err(error) => {
                return Err(TossReply::NoReply { detail: error_chain(&error), timed_out: error.is_timeout() });
            }
        };
        if (200..300).contains(&http_status) {
            return serde_json::from_slice(&body).map_err(|_| TossReply::Unparsable { http_status });
        }
        Err(match serde_json::from_slice::<ErrorBody>(&body) {
            Ok(ErrorBody { code, message }) => TossReply::Error { http_status, code, message },
            Err(_) => TossReply::Unparsable { http_status },
        })
    }

    fn url(&self, path: &str) -> Url {
        let mut base = self.base.clone();
        if !base.path().ends_with('/') {
            base.set_path(&format!("{}/", base.path()));
        }
        base.join(path).expect("static paths join")
    }
}

async fn read_answer(sent: Result<Response, reqwest::Error>) -> TossReply {
    let response = match sent {
        Ok(response) => response,
        Err(error) if error.is_connect() => return TossReply::NotSent { detail: error_chain(&error) },
        Err(error) => return TossReply::NoReply { detail: error_chain(&error), timed_out: error.is_timeout() },
    };
    let http_status = response.status().as_u16();
    let body = match response.bytes().await {
        Ok(body) => body,
        Err(error) => return TossReply::NoReply { detail: error_chain(&error), timed_out: error.is_timeout() },
    };
    if (200..300).contains(&http_status) {
        return match serde_json::from_slice::<Payment>(&body) {
            Ok(payment) => TossReply::Payment { http_status, payment },
            Err(_) => TossReply::Unparsable { http_status },
        };
    }
    match serde_json::from_slice::<ErrorBody>(&body) {
        Ok(ErrorBody { code, message }) => TossReply::Error { http_status, code, message },
        Err(_) => TossReply::Unparsable { http_status },
    }
}

/// reqwest's top-level message hides the cause ("error sending request"); logs need it.
pub(super) fn error_chain(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::TossReply;

    fn error(http_status: u16) -> TossReply {
        TossReply::Error { http_status, code: "X".into(), message: String::new() }
    }

    #[test]
    fn refusals_for_load_and_timeouts_show_overload_and_nothing_else_does() {
        assert!(error(429).shows_overload());
        let consecutive =
            TossReply::Error { http_status: 403, code: "FORBIDDEN_CONSECUTIVE_REQUEST".into(), message: String::new() };
        assert!(consecutive.shows_overload());
        assert!(TossReply::NoReply { detail: String::new(), timed_out: true }.shows_overload());
        assert!(
            !TossReply::NoReply { detail: String::new(), timed_out: false }.shows_overload(),
            "a reset is not load"
        );
        assert!(!error(500).shows_overload());
        assert!(!error(403).shows_overload(), "a decline is not load");
    }

    #[test]
    fn only_missing_overloaded_or_failing_answers_show_the_pg_unavailable() {
        assert!(TossReply::NotSent { detail: String::new() }.shows_pg_unavailable());
        assert!(TossReply::NoReply { detail: String::new(), timed_out: false }.shows_pg_unavailable());
        assert!(error(500).shows_pg_unavailable());
        assert!(error(503).shows_pg_unavailable());
        assert!(error(429).shows_pg_unavailable());
        assert!(TossReply::Unparsable { http_status: 502 }.shows_pg_unavailable());
        assert!(!error(400).shows_pg_unavailable(), "an unknown 4xx is an answer");
        assert!(!error(404).shows_pg_unavailable());
        assert!(!error(409).shows_pg_unavailable());
        assert!(!TossReply::Unparsable { http_status: 200 }.shows_pg_unavailable());
    }
}

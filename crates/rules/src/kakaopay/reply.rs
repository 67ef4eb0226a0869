//! What a call to KakaoPay produced, before any interpretation: the client
//! in the server reports it, `classify` reads a meaning into it. `T` is the
//! body a successful call brings (an approval, an order, a cancel).

/// What a call to KakaoPay produced, before any interpretation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KakaoPayReply<T> {
    /// A 2xx with the call's body.
    Body { http_status: u16, body: T },
    /// A KakaoPay error body: a negative `error_code`, and the payment
    /// method's own result code when it gave one (`extras.method_result_code`).
    Error { http_status: u16, error_code: i32, method_result_code: Option<String>, message: String },
    /// A response whose body is neither.
    Unparsable { http_status: u16 },
    /// The connection was never made, so the request never left.
    NotSent { detail: String },
    /// The request left but no complete response came back (timeout, reset).
    NoReply { detail: String, timed_out: bool },
}

/// KakaoPay's codes for a refusal for load (`-429`, the daily quota) and for
/// its own failures (`-500` internal, `-503` maintenance).
const QUOTA_EXCEEDED: i32 = -429;
const INTERNAL_ERROR: i32 = -500;
const MAINTENANCE: i32 = -503;

/// Whether an HTTP status or KakaoPay's platform code says it could not serve
/// the request at all (load, its own failure, maintenance): worth a retry.
/// (An unreadable body has no code: pass 0.)
pub(super) fn unavailable(http_status: u16, error_code: i32) -> bool {
    http_status == 429 || http_status >= 500 || matches!(error_code, QUOTA_EXCEEDED | INTERNAL_ERROR | MAINTENANCE)
}

impl<T> KakaoPayReply<T> {
    /// The request left and no answer came back: KakaoPay may still be
    /// working on the call.
    pub fn unanswered(&self) -> bool {
        matches!(self, KakaoPayReply::NoReply { .. })
    }

    /// Whether KakaoPay refused the request for load or did not answer in
    /// time: the signals that the concurrency limit is too high.
    pub fn shows_overload(&self) -> bool {
        match self {
            KakaoPayReply::Error { http_status, error_code, .. } => {
                *http_status == 429 || *error_code == QUOTA_EXCEEDED
            }
            KakaoPayReply::NoReply { timed_out, .. } => *timed_out,
            KakaoPayReply::Body { .. } | KakaoPayReply::Unparsable { .. } | KakaoPayReply::NotSent { .. } => false,
        }
    }

    /// Whether KakaoPay could not serve the request at all: no connection, no
    /// answer, overloaded, failing or in maintenance. Recovery's circuit
    /// breaker counts only these.
    pub fn shows_pg_unavailable(&self) -> bool {
        match self {
            KakaoPayReply::NotSent { .. } | KakaoPayReply::NoReply { .. } => true,
            KakaoPayReply::Error { http_status, error_code, .. } => unavailable(*http_status, *error_code),
            KakaoPayReply::Unparsable { http_status } => unavailable(*http_status, 0),
            KakaoPayReply::Body { .. } => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(http_status: u16, error_code: i32) -> KakaoPayReply<()> {
        KakaoPayReply::Error { http_status, error_code, method_result_code: None, message: "m".into() }
    }

    #[test]
    fn load_and_unavailability_are_read_from_the_code_as_well_as_the_status() {
        assert!(error(400, -429).shows_overload(), "the quota's code, whatever the status");
        assert!(error(429, -2).shows_overload());
        assert!(!error(400, -780).shows_overload());
        assert!(KakaoPayReply::<()>::NoReply { detail: String::new(), timed_out: true }.shows_overload());
        assert!(!KakaoPayReply::<()>::NoReply { detail: String::new(), timed_out: false }.shows_overload());
        for unavailable in [error(400, -503), error(400, -500), error(502, -1), error(429, -2)] {
            assert!(unavailable.shows_pg_unavailable(), "{unavailable:?}");
        }
        assert!(!error(400, -780).shows_pg_unavailable(), "a declined card shows KakaoPay is up");
        assert!(KakaoPayReply::<()>::Unparsable { http_status: 503 }.shows_pg_unavailable());
        assert!(!KakaoPayReply::<()>::Unparsable { http_status: 200 }.shows_pg_unavailable());
        assert!(!KakaoPayReply::Body { http_status: 200, body: () }.shows_pg_unavailable());
        assert!(KakaoPayReply::<()>::NotSent { detail: String::new() }.shows_pg_unavailable());
        assert!(KakaoPayReply::<()>::NoReply { detail: String::new(), timed_out: false }.unanswered());
        assert!(!error(500, -500).unanswered());
    }
}

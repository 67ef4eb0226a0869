//! What a call to the PG produced, before any interpretation: the client in
//! the server reports it, `classify` reads a meaning into it.

use super::wire::Payment;

/// What a call to the PG produced, before any interpretation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TossReply {
    /// A Payment object.
    Payment { http_status: u16, payment: Payment },
    /// A Toss error body.
    Error { http_status: u16, code: String, message: String },
    /// A response whose body is neither.
    Unparsable { http_status: u16 },
    /// The connection was never made, so the request never left.
    NotSent { detail: String },
    /// The request left but no complete response came back (timeout, reset).
    NoReply { detail: String, timed_out: bool },
}

impl TossReply {
    /// The request left and no answer came back (we stopped waiting, or the
    /// connection was reset): the PG may still be working on the call.
    pub fn unanswered(&self) -> bool {
        matches!(self, TossReply::NoReply { .. })
    }

    /// Whether the PG refused the request for load (429, 403
    /// `FORBIDDEN_CONSECUTIVE_REQUEST`) or did not answer in time: the signals
    /// that the concurrency limit is too high.
    pub fn shows_overload(&self) -> bool {
        match self {
            TossReply::Error { http_status: 429, .. } => true,
            TossReply::Error { code, .. } => code == "FORBIDDEN_CONSECUTIVE_REQUEST",
            TossReply::NoReply { timed_out, .. } => *timed_out,
            TossReply::Payment { .. } | TossReply::Unparsable { .. } | TossReply::NotSent { .. } => false,
        }
    }

    /// Whether the PG could not serve the request at all: no connection, no answer,
    /// overloaded (429) or failing (5xx). Recovery's circuit breaker counts only these;
    /// an answer that settles nothing still shows the PG is up.
    pub fn shows_pg_unavailable(&self) -> bool {
        match self {
            TossReply::NotSent { .. } | TossReply::NoReply { .. } => true,
            TossReply::Error { http_status, .. } | TossReply::Unparsable { http_status } => {
                *http_status == 429 || *http_status >= 500
            }
            TossReply::Payment { .. } => false,
        }
    }
}

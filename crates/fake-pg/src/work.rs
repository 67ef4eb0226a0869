//! What a processing does once its latency has passed: a confirm's approval or
//! a cancel's refund. The store starts it, the counters count it.

use crate::error::PgError;

/// What a processing does once its latency has passed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Work {
    /// Charge the payment (a confirm).
    Approve,
    /// Refund part or all of its balance (a cancel).
    Cancel { reason: String },
}

impl Work {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Work::Approve => "confirm",
            Work::Cancel { .. } => "cancel",
        }
    }

    /// How the work ends when its caller hangs up and processing stops with
    /// the caller (`continue_after_disconnect: false`): nothing moved.
    pub(crate) fn abandoned(&self) -> PgError {
        match self {
            Work::Approve => PgError::PayProcessAborted,
            // Toss lists no cancel code for this; its generic 500 says "not done".
            Work::Cancel { .. } => PgError::FailedInternalSystemProcessing,
        }
    }
}

//! What a PG's answer means for the money, in words of no PG: each PG's
//! adapter (`pg/classify/` for Toss) reads its answers into these, and the
//! settlement rules and the job engine act on them.

/// What a confirm answer means for the attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmVerdict {
    /// PAID.
    Paid,
    /// FAILED with the PG's code: nothing was charged.
    Failed,
    /// FAILED `PG_UNREACHABLE`: the request never left.
    Unreachable,
    /// UNKNOWN: recovery will look the payment up.
    Unknown,
    /// Changes nothing (on a resend, an attempt is already UNKNOWN): the next
    /// lookup decides.
    Nothing,
}

/// What a lookup means for an unsettled attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusVerdict {
    Paid,
    /// FAILED: approval failed, or the session expired before any confirm.
    Failed,
    Canceled,
    PartiallyRefunded,
    /// Never confirmed (or being processed right now): resend the confirm with
    /// the attempt's own key, once this pass.
    NotConfirmed,
    /// A payment, but another order's (or another amount): the paymentKey
    /// proves nothing about this order; its id may.
    OtherPayment,
    /// Settles nothing; look again later.
    Nothing,
    /// Nothing learned; try the lookup again after a backoff.
    Retry,
}

/// What a cancel's answer means for the refund.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelVerdict {
    /// DONE: refunded, as the answer shows.
    Refunded,
    /// FAILED with the PG's code: nothing refunded, and nothing will be.
    Refused,
    /// Refused, to a cancel sent again: nothing refunded by this send, though
    /// an earlier send may have refunded it. A lookup made at once decides:
    /// the balance as before the refund settles it refused.
    RefusedUnlessDone,
    /// Still REQUESTED; a lookup settles it or sends it again, with the same key.
    Retry,
    /// Still REQUESTED; nothing was refunded and the key's answer is spent: the
    /// next send, after a lookup, goes under a new key.
    NewKey,
}

/// What a lookup means for a requested refund.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundLookupVerdict {
    /// DONE, as the lookup shows.
    Refunded,
    /// Send the cancel (again, with the refund's key).
    Send,
    /// Nothing learned; try the lookup again after a backoff.
    Retry,
    /// Settles nothing and sends nothing: look again later (and alert, in time).
    Nothing,
}

/// Which send of a call an answer is to: the first, or one recovery sent
/// again. A PG without keys reads a refusal of a cancel sent again as proving
/// nothing (the first may have gone through meanwhile).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sent {
    First,
    Again,
}

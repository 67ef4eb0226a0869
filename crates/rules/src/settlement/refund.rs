//! The refund's rules: what a cancel's answer, or a lookup of the payment,
//! leads to. A refund is sent until it goes out: only a documented refusal
//! ends it unrefunded, and an answer that may hide a done refund is looked up.

use super::verdicts::{CancelVerdict, RefundLookupVerdict};

/// What the rules say to do next about a requested refund.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundStep {
    /// Refunded, as the answer shows: settle it by the payment's balance.
    SettleRefunded,
    /// Refused for good: settle it refused, with the PG's code; the order goes back.
    SettleRefused,
    /// Nothing refunded, and the PG replays that answer for this key: the next
    /// send, after a lookup, goes under a new key.
    NewKey,
    /// Send the cancel (again), with the refund's key.
    Send,
    /// Not known yet: a lookup in a later pass decides.
    LookAgainLater,
}

/// What a cancel's answer leads to (the first send, or one sent again).
pub fn after_cancel(verdict: CancelVerdict) -> RefundStep {
    match verdict {
        CancelVerdict::Refunded => RefundStep::SettleRefunded,
        CancelVerdict::Refused => RefundStep::SettleRefused,
        CancelVerdict::NewKey => RefundStep::NewKey,
        CancelVerdict::Retry => RefundStep::LookAgainLater,
    }
}

/// What a cancel's answer leads to for the refund of a charge no order made.
/// Its key is derived from the paymentKey, so that every send of it is the
/// same request: it never takes a new one, and a refusal the card company
/// replays for that key is an operator's.
pub fn after_cancel_of_orphan(verdict: CancelVerdict) -> RefundStep {
    match after_cancel(verdict) {
        RefundStep::NewKey => RefundStep::SettleRefused,
        step => step,
    }
}

/// What a lookup of the payment shows a requested refund leads to.
pub fn after_refund_lookup(verdict: RefundLookupVerdict) -> RefundStep {
    match verdict {
        RefundLookupVerdict::Refunded => RefundStep::SettleRefunded,
        RefundLookupVerdict::Send => RefundStep::Send,
        RefundLookupVerdict::Nothing | RefundLookupVerdict::Retry => RefundStep::LookAgainLater,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refund_ends_unrefunded_only_on_a_documented_refusal() {
        #[rustfmt::skip]
        let table = [
            (CancelVerdict::Refunded, RefundStep::SettleRefunded, RefundStep::SettleRefunded),
            (CancelVerdict::Refused, RefundStep::SettleRefused, RefundStep::SettleRefused),
            (CancelVerdict::NewKey, RefundStep::NewKey, RefundStep::SettleRefused),
            (CancelVerdict::Retry, RefundStep::LookAgainLater, RefundStep::LookAgainLater),
        ];
        for (verdict, order_refund, orphan_refund) in table {
            assert_eq!(after_cancel(verdict), order_refund, "{verdict:?}");
            assert_eq!(after_cancel_of_orphan(verdict), orphan_refund, "{verdict:?} of an orphan");
        }
    }

    #[test]
    fn a_lookup_sends_again_only_when_it_shows_the_refund_not_done() {
        assert_eq!(after_refund_lookup(RefundLookupVerdict::Refunded), RefundStep::SettleRefunded);
        assert_eq!(after_refund_lookup(RefundLookupVerdict::Send), RefundStep::Send);
        assert_eq!(after_refund_lookup(RefundLookupVerdict::Nothing), RefundStep::LookAgainLater);
        assert_eq!(after_refund_lookup(RefundLookupVerdict::Retry), RefundStep::LookAgainLater);
    }
}

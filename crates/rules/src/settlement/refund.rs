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
    /// Refused, unless an earlier send went through: look the payment up now,
    /// and decide with [`after_refund_lookup_of_refusal`].
    LookUpTheRefusal,
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
        CancelVerdict::RefusedUnlessDone => RefundStep::LookUpTheRefusal,
        CancelVerdict::NewKey => RefundStep::NewKey,
        CancelVerdict::Retry => RefundStep::LookAgainLater,
    }
}

/// What a cancel of a charge no order made (a reconciliation refund, sent in
/// full under a key derived from its paymentKey) came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrphanCancel {
    /// Refunded in full, as the answer shows.
    Refunded,
    /// Refused with this code; the same key would only replay it: an operator's now.
    Refused(String),
    /// Not known yet: the job engine sends it again, with the same key.
    Retry,
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

/// What a lookup made right after a refusal of a cancel sent again leads to:
/// the refund's balance settles it refunded (an earlier send went through),
/// the balance as before it settles it refused (the PG refused this refund,
/// and a further send would only be refused again); anything else waits for
/// a later pass, whose lookup may send it again.
pub fn after_refund_lookup_of_refusal(verdict: RefundLookupVerdict) -> RefundStep {
    match verdict {
        RefundLookupVerdict::Refunded => RefundStep::SettleRefunded,
        RefundLookupVerdict::Send => RefundStep::SettleRefused,
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
            (CancelVerdict::RefusedUnlessDone, RefundStep::LookUpTheRefusal, RefundStep::LookUpTheRefusal),
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

    #[test]
    fn a_refusal_of_a_cancel_sent_again_ends_the_refund_only_on_the_balance_before_it() {
        use RefundLookupVerdict as L;
        assert_eq!(after_refund_lookup_of_refusal(L::Refunded), RefundStep::SettleRefunded);
        assert_eq!(after_refund_lookup_of_refusal(L::Send), RefundStep::SettleRefused);
        assert_eq!(after_refund_lookup_of_refusal(L::Nothing), RefundStep::LookAgainLater);
        assert_eq!(after_refund_lookup_of_refusal(L::Retry), RefundStep::LookAgainLater);
    }
}

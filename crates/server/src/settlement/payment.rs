//! The payment's rules: what each answer about a payment leads to. The
//! customer's first confirm always stores something; a lookup or a resend
//! during recovery settles the payment, sends the confirm again (only after a
//! lookup showed it never confirmed), or leaves it for a later pass. Never a
//! second confirm on an unknown outcome: nothing here answers `Resend` but a
//! lookup that showed the payment unconfirmed.

use payonce_api::Failure;

use super::lifecycle::Transition;
use super::verdicts::{ConfirmVerdict, StatusVerdict};

/// What the rules say to do next about an unsettled payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentStep {
    /// Store this transition.
    Settle(Transition),
    /// Send the confirm again, with the attempt's own key.
    Resend,
    /// Nothing settles it yet: the job engine looks again in a later pass.
    LookAgainLater,
}

/// What the customer's first confirm call stores: PAID, FAILED (with the PG's
/// reason, or `PG_UNREACHABLE` when the request never left), or UNKNOWN.
pub fn after_first_call(
    verdict: ConfirmVerdict,
    failure: impl FnOnce() -> Failure,
    unknown_reason: impl FnOnce() -> String,
) -> Transition {
    match verdict {
        ConfirmVerdict::Paid => Transition::Paid,
        ConfirmVerdict::Failed | ConfirmVerdict::Unreachable => Transition::Failed(failure()),
        ConfirmVerdict::Unknown | ConfirmVerdict::Nothing => Transition::Unknown(unknown_reason()),
    }
}

/// What a lookup of an unsettled payment leads to. (`Retry` is the lookup's
/// own business: a pass retries it, and one that never got a usable answer
/// ends without a verdict; if it arrives here it settles nothing.)
pub fn after_lookup(verdict: StatusVerdict, failure: impl FnOnce() -> Failure) -> PaymentStep {
    match verdict {
        StatusVerdict::Paid => PaymentStep::Settle(Transition::Paid),
        StatusVerdict::Failed => PaymentStep::Settle(Transition::Failed(failure())),
        StatusVerdict::Canceled => PaymentStep::Settle(Transition::Canceled),
        StatusVerdict::PartiallyRefunded => PaymentStep::Settle(Transition::PartiallyRefunded),
        StatusVerdict::NotConfirmed => PaymentStep::Resend,
        StatusVerdict::Nothing | StatusVerdict::Retry => PaymentStep::LookAgainLater,
    }
}

/// What recovery's resend of the confirm leads to: only a definitive answer
/// settles; anything else waits for the next lookup, never another resend now.
pub fn after_resend(verdict: ConfirmVerdict, failure: impl FnOnce() -> Failure) -> PaymentStep {
    match verdict {
        ConfirmVerdict::Paid => PaymentStep::Settle(Transition::Paid),
        ConfirmVerdict::Failed => PaymentStep::Settle(Transition::Failed(failure())),
        ConfirmVerdict::Unreachable | ConfirmVerdict::Unknown | ConfirmVerdict::Nothing => PaymentStep::LookAgainLater,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declined() -> Failure {
        Failure { code: "REJECT_CARD_PAYMENT".into(), message: "declined".into() }
    }

    #[test]
    fn the_first_call_always_stores_an_outcome() {
        let stored = |verdict| after_first_call(verdict, declined, || "timed out".into());
        assert_eq!(stored(ConfirmVerdict::Paid), Transition::Paid);
        assert_eq!(stored(ConfirmVerdict::Failed), Transition::Failed(declined()));
        assert_eq!(stored(ConfirmVerdict::Unreachable), Transition::Failed(declined()));
        assert_eq!(stored(ConfirmVerdict::Unknown), Transition::Unknown("timed out".into()));
        assert_eq!(stored(ConfirmVerdict::Nothing), Transition::Unknown("timed out".into()));
    }

    #[test]
    fn only_a_lookup_that_shows_no_confirm_sends_it_again() {
        #[rustfmt::skip]
        let table = [
            (StatusVerdict::Paid, PaymentStep::Settle(Transition::Paid)),
            (StatusVerdict::Failed, PaymentStep::Settle(Transition::Failed(declined()))),
            (StatusVerdict::Canceled, PaymentStep::Settle(Transition::Canceled)),
            (StatusVerdict::PartiallyRefunded, PaymentStep::Settle(Transition::PartiallyRefunded)),
            (StatusVerdict::NotConfirmed, PaymentStep::Resend),
            (StatusVerdict::Nothing, PaymentStep::LookAgainLater),
            (StatusVerdict::Retry, PaymentStep::LookAgainLater),
        ];
        for (verdict, step) in table {
            assert_eq!(after_lookup(verdict, declined), step, "{verdict:?}");
        }
    }

    #[test]
    fn a_resend_whose_outcome_is_unknown_is_never_sent_again_at_once() {
        for verdict in [ConfirmVerdict::Unreachable, ConfirmVerdict::Unknown, ConfirmVerdict::Nothing] {
            assert_eq!(after_resend(verdict, declined), PaymentStep::LookAgainLater, "{verdict:?}");
        }
        assert_eq!(after_resend(ConfirmVerdict::Paid, declined), PaymentStep::Settle(Transition::Paid));
        assert_eq!(after_resend(ConfirmVerdict::Failed, declined), PaymentStep::Settle(Transition::Failed(declined())));
    }
}

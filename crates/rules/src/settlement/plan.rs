//! One pass of the job engine over an unsettled payment, and one over a
//! requested refund, as the rules sequence them: the call a pass makes first,
//! and, after each answer, the next call, what to store, or the end of the
//! pass. The shell (`payment/recovery.rs`, `payment/refund_recovery.rs`)
//! makes the calls and stores what the plan says; the order of the calls,
//! and when a pass stops, are decided here.

use payonce_api::Failure;

use super::Transition;
use super::payment::{
    AttemptAge, FailedBecause, PaymentStep, Resending, Shown, after_lookup, after_order_lookup, after_resend,
};
use super::refund::{RefundStep, after_cancel, after_refund_lookup, after_refund_lookup_of_refusal};
use super::verdicts::{CancelVerdict, ConfirmVerdict, RefundLookupVerdict, StatusVerdict};

/// What comes next in a pass: a call, what to store, or its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next<Call, Store> {
    Call(Call),
    Store(Store),
    /// Nothing more this pass: a later one looks again.
    End,
}

/// A call of a pass over an unsettled payment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaymentCall {
    /// Look the payment up by its payment key.
    LookUp,
    /// Look it up by the order's id.
    LookUpByOrder,
    /// Send the confirm again, under the attempt's own key.
    Resend,
}

/// What a call of a payment's pass answered, as the PG's tables read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentAnswer {
    Looked(Shown),
    LookedByOrder(StatusVerdict),
    Resent(ConfirmVerdict),
}

/// What a pass over an unsettled payment is planned from: the attempt's age
/// when its lookup went out, and what its PG promises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaymentPass {
    pub age: AttemptAge,
    pub resending: Resending,
    pub lookup_by_order: bool,
}

impl PaymentPass {
    /// Every pass begins with a lookup by the payment key: never a resend.
    pub const FIRST: PaymentCall = PaymentCall::LookUp;

    /// What comes after `answer`. `failure` gives the failure a FAILED stores,
    /// by why (`PgSaid`: the answer's own).
    pub fn next(
        &self,
        answer: PaymentAnswer,
        failure: impl FnOnce(FailedBecause) -> Failure,
    ) -> Next<PaymentCall, Transition> {
        // A lookup by order, and a resend, settle or end the pass (their rules
        // never ask for another call): one of each at most, a pass.
        let step = match answer {
            PaymentAnswer::Looked(shown) => after_lookup(shown, self.age, self.resending, failure),
            PaymentAnswer::LookedByOrder(verdict) => after_order_lookup(verdict, failure),
            PaymentAnswer::Resent(verdict) => after_resend(verdict, || failure(FailedBecause::PgSaid)),
        };
        match step {
            PaymentStep::Settle(transition) => Next::Store(transition),
            PaymentStep::Resend => Next::Call(PaymentCall::Resend),
            PaymentStep::LookUpByOrder if self.lookup_by_order => Next::Call(PaymentCall::LookUpByOrder),
            // A PG that cannot look a payment up by order leaves it to an operator's eyes.
            PaymentStep::LookUpByOrder | PaymentStep::LookAgainLater => Next::End,
        }
    }
}

/// A call of a pass over a requested refund.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundCall {
    /// Look the payment up, to see whether the refund is done.
    LookUp,
    /// Send the cancel again (its key, or the balance it expects).
    Cancel,
    /// Look it up again at once, after a cancel sent again was refused.
    LookUpTheRefusal,
}

/// What a call of a refund's pass answered, as the PG's tables read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundAnswer {
    Looked(RefundLookupVerdict),
    Canceled(CancelVerdict),
    LookedAfterRefusal(RefundLookupVerdict),
}

/// What a refund's pass stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundStore {
    /// Refunded, by the balance the answer shows.
    Refunded,
    /// Refused for good, with the refusing cancel's code (only the lease's
    /// holder stores it: see `db::settle_refund`).
    Refused,
    /// Nothing refunded under this key, which the PG replays: the next send
    /// goes under a new one (the pass ends).
    NewKey,
}

/// A pass over a requested refund.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefundPass;

impl RefundPass {
    /// Every pass begins with a lookup: a refund is sent again only once the
    /// PG shows it not done.
    pub const FIRST: RefundCall = RefundCall::LookUp;

    /// What comes after `answer`.
    pub fn next(answer: RefundAnswer) -> Next<RefundCall, RefundStore> {
        // A cancel's answer and the lookup after a refusal settle or end the
        // pass (their rules never ask to send now): one cancel at most, a pass.
        let step = match answer {
            RefundAnswer::Looked(verdict) => after_refund_lookup(verdict),
            RefundAnswer::Canceled(verdict) => after_cancel(verdict),
            RefundAnswer::LookedAfterRefusal(verdict) => after_refund_lookup_of_refusal(verdict),
        };
        match step {
            RefundStep::SettleRefunded => Next::Store(RefundStore::Refunded),
            RefundStep::SettleRefused => Next::Store(RefundStore::Refused),
            RefundStep::NewKey => Next::Store(RefundStore::NewKey),
            RefundStep::Send => Next::Call(RefundCall::Cancel),
            RefundStep::LookUpTheRefusal => Next::Call(RefundCall::LookUpTheRefusal),
            RefundStep::LookAgainLater => Next::End,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(why: FailedBecause) -> Failure {
        Failure { code: format!("{why:?}"), message: String::new() }
    }

    fn shown(verdict: StatusVerdict) -> PaymentAnswer {
        PaymentAnswer::Looked(Shown { verdict, refunded_total: None })
    }

    const YOUNG_AT_TOSS: PaymentPass =
        PaymentPass { age: AttemptAge::Young, resending: Resending::UnderTheSameKey, lookup_by_order: true };
    const YOUNG_AT_KAKAOPAY: PaymentPass =
        PaymentPass { age: AttemptAge::Young, resending: Resending::Never, lookup_by_order: false };

    #[test]
    fn a_payment_pass_looks_up_first_and_resends_once_only_where_keys_allow() {
        assert_eq!(PaymentPass::FIRST, PaymentCall::LookUp);
        let not_confirmed = || shown(StatusVerdict::NotConfirmed);
        assert_eq!(YOUNG_AT_TOSS.next(not_confirmed(), failure), Next::Call(PaymentCall::Resend));
        assert_eq!(YOUNG_AT_KAKAOPAY.next(not_confirmed(), failure), Next::End);
        // The resend's answer settles it, or the pass ends: never a second resend.
        for verdict in [ConfirmVerdict::Unknown, ConfirmVerdict::Nothing, ConfirmVerdict::Unreachable] {
            assert_eq!(YOUNG_AT_TOSS.next(PaymentAnswer::Resent(verdict), failure), Next::End, "{verdict:?}");
        }
        assert_eq!(
            YOUNG_AT_TOSS.next(PaymentAnswer::Resent(ConfirmVerdict::Paid), failure),
            Next::Store(Transition::Paid)
        );
        assert_eq!(
            YOUNG_AT_TOSS.next(PaymentAnswer::Resent(ConfirmVerdict::Failed), failure),
            Next::Store(Transition::Failed(failure(FailedBecause::PgSaid)))
        );
    }

    #[test]
    fn another_orders_payment_is_looked_up_by_order_once_where_the_pg_can() {
        let other = || shown(StatusVerdict::OtherPayment);
        assert_eq!(YOUNG_AT_TOSS.next(other(), failure), Next::Call(PaymentCall::LookUpByOrder));
        assert_eq!(YOUNG_AT_KAKAOPAY.next(other(), failure), Next::End);
        let by_order = |verdict| YOUNG_AT_TOSS.next(PaymentAnswer::LookedByOrder(verdict), failure);
        assert_eq!(
            by_order(StatusVerdict::NotConfirmed),
            Next::Store(Transition::Failed(failure(FailedBecause::KeyOfAnotherOrder)))
        );
        assert_eq!(by_order(StatusVerdict::OtherPayment), Next::End, "one lookup by order a pass");
        assert_eq!(by_order(StatusVerdict::Paid), Next::End, "a charge under another key is an operator's");
    }

    #[test]
    fn a_lookup_settles_what_it_shows() {
        assert_eq!(YOUNG_AT_TOSS.next(shown(StatusVerdict::Paid), failure), Next::Store(Transition::Paid));
        let past = PaymentPass { age: AttemptAge::PastSession, ..YOUNG_AT_KAKAOPAY };
        assert_eq!(
            past.next(shown(StatusVerdict::NotConfirmed), failure),
            Next::Store(Transition::Failed(failure(FailedBecause::SessionOver)))
        );
        assert_eq!(YOUNG_AT_TOSS.next(shown(StatusVerdict::Nothing), failure), Next::End);
    }

    #[test]
    fn a_refund_pass_looks_up_first_sends_once_and_looks_a_refusal_up_at_once() {
        assert_eq!(RefundPass::FIRST, RefundCall::LookUp);
        let next = RefundPass::next;
        assert_eq!(next(RefundAnswer::Looked(RefundLookupVerdict::Send)), Next::Call(RefundCall::Cancel));
        assert_eq!(next(RefundAnswer::Looked(RefundLookupVerdict::Refunded)), Next::Store(RefundStore::Refunded));
        assert_eq!(next(RefundAnswer::Looked(RefundLookupVerdict::Nothing)), Next::End);
        assert_eq!(next(RefundAnswer::Looked(RefundLookupVerdict::Retry)), Next::End);
        assert_eq!(next(RefundAnswer::Canceled(CancelVerdict::Refunded)), Next::Store(RefundStore::Refunded));
        assert_eq!(next(RefundAnswer::Canceled(CancelVerdict::Refused)), Next::Store(RefundStore::Refused));
        assert_eq!(next(RefundAnswer::Canceled(CancelVerdict::NewKey)), Next::Store(RefundStore::NewKey));
        assert_eq!(next(RefundAnswer::Canceled(CancelVerdict::Retry)), Next::End, "never two cancels a pass");
        assert_eq!(
            next(RefundAnswer::Canceled(CancelVerdict::RefusedUnlessDone)),
            Next::Call(RefundCall::LookUpTheRefusal)
        );
        let after_refusal = |verdict| next(RefundAnswer::LookedAfterRefusal(verdict));
        assert_eq!(after_refusal(RefundLookupVerdict::Refunded), Next::Store(RefundStore::Refunded));
        assert_eq!(after_refusal(RefundLookupVerdict::Send), Next::Store(RefundStore::Refused));
        assert_eq!(after_refusal(RefundLookupVerdict::Nothing), Next::End);
        assert_eq!(after_refusal(RefundLookupVerdict::Retry), Next::End);
    }
}

//! The payment's rules: what each answer about a payment leads to. The
//! customer's first confirm always stores something; a lookup or a resend
//! during recovery settles the payment, sends the confirm again (only after a
//! lookup showed it never confirmed), or leaves it for a later pass. Never a
//! second confirm on an unknown outcome: nothing here answers `Resend` but a
//! lookup that showed the payment unconfirmed.
//!
//! Every unsettled payment settles in the end: past the PG's session lifetime
//! (plus the longest processing, plus a margin) nothing unconfirmed can be
//! charged any more, so a lookup that shows nothing charged then settles it
//! FAILED; and a lookup by the customer's paymentKey that shows another
//! order's payment is decided by a lookup by the order's id.

use std::time::Duration;

use payonce_api::Failure;

use super::lifecycle::Transition;
use super::millis;
use super::verdicts::{ConfirmVerdict, StatusVerdict};

/// What the rules say to do next about an unsettled payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentStep {
    /// Store this transition.
    Settle(Transition),
    /// Send the confirm again, with the attempt's own key.
    Resend,
    /// The paymentKey names another order's payment: look the payment up by
    /// the order's id, and decide with [`after_order_lookup`].
    LookUpByOrder,
    /// Nothing settles it yet: the job engine looks again in a later pass.
    LookAgainLater,
}

/// How old an attempt is, against how long the PG could still charge it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttemptAge {
    /// Within the PG's session lifetime plus the longest processing: a
    /// payment not confirmed yet may still be.
    Young,
    /// Past it: what the PG has not charged by now it never will.
    PastSession,
}

impl AttemptAge {
    /// The age of an attempt stored at `created_ms`, at `now_ms`, when the PG
    /// charges nothing unconfirmed after `session_over_after`.
    pub fn at(created_ms: i64, now_ms: i64, session_over_after: Duration) -> Self {
        let age = u128::try_from(now_ms.saturating_sub(created_ms)).unwrap_or(0);
        if age > session_over_after.as_millis() { AttemptAge::PastSession } else { AttemptAge::Young }
    }
}

/// When an attempt's first confirm may still go out, and when nothing
/// unconfirmed can be charged any more: decided here for every PG from its
/// `Resending`, so the shell only measures time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadlines {
    /// The longest a confirm can be processed once sent, with a margin: the
    /// lease a confirm task takes with its attempt, and recovery's wait.
    pub confirm_wait: Duration,
    /// How long the PG's session lets a confirm charge.
    pub session_lifetime: Duration,
}

impl Deadlines {
    /// Whether the customer's first confirm may still go out, `since_stored`
    /// after its attempt was stored. Under a key, always: a late one is the
    /// same request as any resend, and the PG refuses it after the session.
    /// Without keys, only while the lease the confirm task took with the
    /// attempt holds: a task that wakes later (frozen, its machine paused)
    /// sends nothing, because recovery, which may have taken the attempt over
    /// by then, counts on the one confirm having left within that lease
    /// (see [`Deadlines::nothing_charges_after`]).
    pub fn first_call_may_go(&self, since_stored: Duration, resending: Resending) -> bool {
        match resending {
            Resending::UnderTheSameKey => true,
            Resending::Never => since_stored < self.confirm_wait,
        }
    }

    /// How old an attempt must be before nothing unconfirmed can be charged.
    /// Under a key, recovery may resend the confirm until the session's very
    /// end, and it is processed within its wait after that. Without keys the
    /// one confirm left within the confirm task's lease and is processed
    /// within its wait; that alone would end it after two waits, but it rests
    /// on the PG never taking longer than the wait, which no PG without keys
    /// documents. So it waits for the session's end as well, plus a wait: the
    /// slower reading, which never says "not charged" of a slow charge.
    pub fn nothing_charges_after(&self, resending: Resending) -> Duration {
        match resending {
            Resending::UnderTheSameKey => self.session_lifetime + self.confirm_wait,
            Resending::Never => self.session_lifetime.max(self.confirm_wait) + self.confirm_wait,
        }
    }

    /// How old an attempt never confirmed is when the clock alone settles it,
    /// so that recovery looks then rather than a backoff later: without keys,
    /// once nothing can charge it; under a key never by the clock alone (a
    /// resend or a lookup settles it first).
    pub fn settles_unconfirmed_after(&self, resending: Resending) -> Option<Duration> {
        match resending {
            Resending::UnderTheSameKey => None,
            Resending::Never => Some(self.nothing_charges_after(resending)),
        }
    }

    /// The moment (in ms) by which recovery looks again at an attempt stored
    /// at `created_at_ms`, whatever its backoff says: `margin` after the clock
    /// alone settles it, while that is still ahead of `now_ms`.
    pub fn look_again_by_ms(
        &self,
        created_at_ms: i64,
        now_ms: i64,
        resending: Resending,
        margin: Duration,
    ) -> Option<i64> {
        let settles_after = self.settles_unconfirmed_after(resending)?;
        Some(created_at_ms.saturating_add(millis(settles_after)).saturating_add(millis(margin)))
            .filter(|at| *at > now_ms)
    }
}

/// Why a lookup settles a payment FAILED, for the failure the adapter stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailedBecause {
    /// The PG shows the payment failed (aborted, expired): its own reason.
    PgSaid,
    /// Never confirmed, and nothing can charge it any more: the PG's session
    /// is over (under a key), or the one confirm's wait (without keys).
    SessionOver,
    /// The paymentKey was another order's, and this order has no charge.
    KeyOfAnotherOrder,
}

/// What a lookup showed: its verdict and, for a charge cancelled in part,
/// how much of it is refunded (`None` when the answer does not say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    pub verdict: StatusVerdict,
    pub refunded_total: Option<u64>,
}

/// What a PG offers that makes sending a confirm again safe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resending {
    /// Every confirm carries the attempt's idempotency key, and the PG
    /// processes a key at most once (Toss): once a lookup shows the payment
    /// unconfirmed, the confirm may go again under the same key.
    UnderTheSameKey,
    /// No idempotency key (KakaoPay's approve): a second approve is a second
    /// request, so an approve goes out once and only lookups learn what it did.
    /// An unconfirmed payment waits for the PG's session to end.
    Never,
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

/// What a lookup (by paymentKey) of an unsettled payment of `age` leads to,
/// at a PG that allows `resending` or not.
/// (`Retry` is the lookup's own business: a pass retries it, and one that
/// never got a usable answer ends without a verdict; if it arrives here it
/// settles nothing.)
pub fn after_lookup(
    shown: Shown,
    age: AttemptAge,
    resending: Resending,
    failure: impl FnOnce(FailedBecause) -> Failure,
) -> PaymentStep {
    match (shown.verdict, age) {
        (StatusVerdict::Paid, _) => PaymentStep::Settle(Transition::Paid),
        (StatusVerdict::Failed, _) => PaymentStep::Settle(Transition::Failed(failure(FailedBecause::PgSaid))),
        (StatusVerdict::Canceled, _) => PaymentStep::Settle(Transition::Canceled),
        // Recorded with what the PG refunded, so a later refund asks for the real balance.
        (StatusVerdict::PartiallyRefunded, _) => match shown.refunded_total {
            Some(refunded_total) => PaymentStep::Settle(Transition::PartiallyRefunded { refunded_total }),
            None => PaymentStep::LookAgainLater,
        },
        (StatusVerdict::NotConfirmed, AttemptAge::Young) => match resending {
            Resending::UnderTheSameKey => PaymentStep::Resend,
            Resending::Never => PaymentStep::LookAgainLater,
        },
        (StatusVerdict::NotConfirmed, AttemptAge::PastSession) => {
            PaymentStep::Settle(Transition::Failed(failure(FailedBecause::SessionOver)))
        }
        (StatusVerdict::OtherPayment, _) => PaymentStep::LookUpByOrder,
        (StatusVerdict::Nothing | StatusVerdict::Retry, _) => PaymentStep::LookAgainLater,
    }
}

/// What a lookup by the order's id leads to, once the lookup by paymentKey
/// showed another order's payment. The confirm named a payment of another
/// order, which the PG never approves for this one: if this order has no
/// charge either, nothing can charge it, and it settles FAILED. A charge of
/// this order under another key is an operator's to look at.
pub fn after_order_lookup(by_order: StatusVerdict, failure: impl FnOnce(FailedBecause) -> Failure) -> PaymentStep {
    match by_order {
        StatusVerdict::NotConfirmed | StatusVerdict::Failed => {
            PaymentStep::Settle(Transition::Failed(failure(FailedBecause::KeyOfAnotherOrder)))
        }
        StatusVerdict::Paid
        | StatusVerdict::Canceled
        | StatusVerdict::PartiallyRefunded
        | StatusVerdict::OtherPayment
        | StatusVerdict::Nothing
        | StatusVerdict::Retry => PaymentStep::LookAgainLater,
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

    fn because(why: FailedBecause) -> Failure {
        Failure { code: format!("{why:?}"), message: "m".into() }
    }

    fn shown(verdict: StatusVerdict) -> Shown {
        Shown { verdict, refunded_total: Some(3_000) }
    }

    #[test]
    fn only_a_young_lookup_that_shows_no_confirm_sends_it_again() {
        use AttemptAge::{PastSession, Young};
        let failed = |why| PaymentStep::Settle(Transition::Failed(because(why)));
        #[rustfmt::skip]
        let table = [
            (StatusVerdict::Paid, Young, PaymentStep::Settle(Transition::Paid)),
            (StatusVerdict::Failed, Young, failed(FailedBecause::PgSaid)),
            (StatusVerdict::Canceled, PastSession, PaymentStep::Settle(Transition::Canceled)),
            (StatusVerdict::PartiallyRefunded, Young, PaymentStep::Settle(Transition::PartiallyRefunded { refunded_total: 3_000 })),
            (StatusVerdict::NotConfirmed, Young, PaymentStep::Resend),
            (StatusVerdict::NotConfirmed, PastSession, failed(FailedBecause::SessionOver)),
            (StatusVerdict::OtherPayment, Young, PaymentStep::LookUpByOrder),
            (StatusVerdict::Nothing, PastSession, PaymentStep::LookAgainLater),
            (StatusVerdict::Retry, PastSession, PaymentStep::LookAgainLater),
        ];
        for (verdict, age, step) in table {
            assert_eq!(
                after_lookup(shown(verdict), age, Resending::UnderTheSameKey, because),
                step,
                "{verdict:?} {age:?}"
            );
        }
    }

    #[test]
    fn without_idempotency_keys_a_lookup_never_sends_the_confirm_again() {
        use AttemptAge::{PastSession, Young};
        let keyless = |verdict, age| after_lookup(shown(verdict), age, Resending::Never, because);
        assert_eq!(keyless(StatusVerdict::NotConfirmed, Young), PaymentStep::LookAgainLater);
        assert_eq!(
            keyless(StatusVerdict::NotConfirmed, PastSession),
            PaymentStep::Settle(Transition::Failed(because(FailedBecause::SessionOver))),
            "the session's end still settles it"
        );
        // Everything else reads the same at either PG.
        for verdict in [
            StatusVerdict::Paid,
            StatusVerdict::Failed,
            StatusVerdict::Canceled,
            StatusVerdict::OtherPayment,
            StatusVerdict::Nothing,
        ] {
            for age in [Young, PastSession] {
                assert_eq!(
                    keyless(verdict, age),
                    after_lookup(shown(verdict), age, Resending::UnderTheSameKey, because),
                    "{verdict:?} {age:?}"
                );
            }
        }
    }

    #[test]
    fn a_partial_refund_is_recorded_only_with_its_amount() {
        let unsaid = Shown { verdict: StatusVerdict::PartiallyRefunded, refunded_total: None };
        assert_eq!(
            after_lookup(unsaid, AttemptAge::Young, Resending::UnderTheSameKey, because),
            PaymentStep::LookAgainLater
        );
    }

    #[test]
    fn another_orders_key_fails_the_order_only_when_the_order_has_no_charge() {
        let failed = PaymentStep::Settle(Transition::Failed(because(FailedBecause::KeyOfAnotherOrder)));
        assert_eq!(after_order_lookup(StatusVerdict::NotConfirmed, because), failed);
        assert_eq!(after_order_lookup(StatusVerdict::Failed, because), failed);
        for charged in [StatusVerdict::Paid, StatusVerdict::PartiallyRefunded, StatusVerdict::Canceled] {
            assert_eq!(after_order_lookup(charged, because), PaymentStep::LookAgainLater, "{charged:?}");
        }
    }

    const DEADLINES: Deadlines =
        Deadlines { confirm_wait: Duration::from_secs(65), session_lifetime: Duration::from_secs(900) };

    #[test]
    fn without_keys_the_one_confirm_goes_out_only_while_the_confirm_tasks_lease_holds() {
        let may_go = |since_stored, resending| DEADLINES.first_call_may_go(since_stored, resending);
        assert!(may_go(Duration::ZERO, Resending::Never));
        assert!(may_go(Duration::from_millis(64_999), Resending::Never));
        assert!(!may_go(Duration::from_secs(65), Resending::Never), "a task that woke late sends nothing");
        assert!(may_go(Duration::from_secs(3_600), Resending::UnderTheSameKey), "a key makes a late one a resend");
    }

    #[test]
    fn nothing_charges_once_the_session_and_the_last_confirms_wait_are_over() {
        assert_eq!(DEADLINES.nothing_charges_after(Resending::UnderTheSameKey), Duration::from_secs(965));
        assert_eq!(DEADLINES.nothing_charges_after(Resending::Never), Duration::from_secs(965));
        // A session shorter than the wait: the one confirm may leave as late as the wait's end.
        let short = Deadlines { session_lifetime: Duration::from_secs(5), ..DEADLINES };
        assert_eq!(short.nothing_charges_after(Resending::Never), Duration::from_secs(130));
        assert_eq!(short.nothing_charges_after(Resending::UnderTheSameKey), Duration::from_secs(70));
    }

    #[test]
    fn only_without_keys_does_the_clock_alone_settle_an_unconfirmed_payment() {
        assert_eq!(DEADLINES.settles_unconfirmed_after(Resending::Never), Some(Duration::from_secs(965)));
        assert_eq!(DEADLINES.settles_unconfirmed_after(Resending::UnderTheSameKey), None, "a resend settles it first");
    }

    #[test]
    fn without_keys_recovery_looks_again_a_margin_after_the_clock_settles_it_while_that_is_ahead() {
        let margin = Duration::from_secs(5);
        let by = |now_ms, resending| DEADLINES.look_again_by_ms(10_000, now_ms, resending, margin);
        assert_eq!(by(10_000, Resending::Never), Some(980_000), "stored at 10 s, settled by the clock at 975 s");
        assert_eq!(by(979_999, Resending::Never), Some(980_000));
        assert_eq!(by(980_000, Resending::Never), None, "past it, the backoff alone says when");
        assert_eq!(by(10_000, Resending::UnderTheSameKey), None);
    }

    #[test]
    fn an_attempt_is_past_the_session_only_after_it() {
        let limit = Duration::from_secs(600);
        assert_eq!(AttemptAge::at(0, 600_000, limit), AttemptAge::Young);
        assert_eq!(AttemptAge::at(0, 600_001, limit), AttemptAge::PastSession);
        assert_eq!(AttemptAge::at(5_000, 0, limit), AttemptAge::Young, "a clock that went back");
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

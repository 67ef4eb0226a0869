//! Recovery's timings, in proportion to the recovery interval.

use std::time::Duration;

/// Recovery's timings, each a fraction or a multiple of the recovery interval,
/// so a shop (or a test) that recovers faster keeps the same proportions. The
/// figures in the comments are those of the default 60 s interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timings {
    /// The longest the job engine sleeps between two looks for due jobs (60 s).
    pub interval: Duration,
    /// Before the first look at a new unknown outcome, and after a pass the
    /// PG gave no usable answer (5 s).
    pub backoff_base: Duration,
    /// After an attempt's first answered-but-unsettled pass; it doubles with
    /// each further one (5 s; 20 s when the PG's webhooks announce each change).
    pub unsettled_backoff: Duration,
    /// The longest wait between two passes over one attempt (15 min).
    pub backoff_cap: Duration,
    /// The shortest pause between two passes, so a busy table is not spun on (1 s).
    pub min_gap: Duration,
    /// How long a pass held back by the budget waits before trying again (10 s).
    pub budget_retry: Duration,
    /// How long the open breaker refuses calls before its probe (30 s).
    pub breaker_cool_down: Duration,
}

impl Timings {
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            backoff_base: interval / 12,
            unsettled_backoff: interval / 12,
            backoff_cap: interval * 15,
            min_gap: interval / 60,
            budget_retry: interval / 6,
            breaker_cool_down: interval / 2,
        }
    }

    /// The timings of a shop that takes the PG's webhooks: a change of a
    /// payment is announced, and the announcement brings its lookup forward,
    /// so polling is only the safety net for a lost one, and a payment the PG
    /// has not settled yet is asked four times less often. The first look at a
    /// new unknown outcome stays as soon: the PG may have finished already.
    #[must_use]
    pub fn announced_by_webhooks(self) -> Self {
        Self { unsettled_backoff: self.unsettled_backoff.saturating_mul(4).min(self.backoff_cap), ..self }
    }

    /// How long an attempt waits after its `passes`-th answered-but-unsettled
    /// pass: doubling from the unsettled backoff up to the cap, so one that
    /// the PG cannot settle yet is asked less and less often and never crowds
    /// out the others.
    pub fn pass_backoff(&self, passes: u32) -> Duration {
        self.unsettled_backoff.saturating_mul(2u32.saturating_pow(passes.saturating_sub(1))).min(self.backoff_cap)
    }

    /// How long after a first unknown outcome recovery first looks: soon, but
    /// not at once (the PG may still be processing what timed out).
    pub fn first_check_delay_ms(&self) -> i64 {
        super::millis(self.backoff_base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attempt_the_pg_cannot_settle_is_asked_less_and_less_often() {
        let timings = Timings::new(Duration::from_secs(60));
        let waits: Vec<u64> = (1..=10).map(|passes| timings.pass_backoff(passes).as_secs()).collect();
        assert_eq!(waits, [5, 10, 20, 40, 80, 160, 320, 640, 900, 900]);
        assert_eq!(timings.pass_backoff(u32::MAX), timings.backoff_cap);
    }

    #[test]
    fn timings_keep_their_proportions_to_the_interval() {
        let shipped = Timings::new(Duration::from_secs(60));
        assert_eq!(
            (shipped.min_gap, shipped.budget_retry, shipped.breaker_cool_down),
            (Duration::from_secs(1), Duration::from_secs(10), Duration::from_secs(30))
        );
        let tenfold = Timings::new(Duration::from_secs(6));
        assert_eq!(tenfold.backoff_base, Duration::from_millis(500));
        assert_eq!(tenfold.pass_backoff(3), Duration::from_secs(2));
    }

    #[test]
    fn with_webhooks_an_unsettled_payment_is_polled_four_times_less_often_but_first_looked_at_as_soon() {
        let polling = Timings::new(Duration::from_secs(60));
        let announced = polling.announced_by_webhooks();
        let waits: Vec<u64> = (1..=7).map(|passes| announced.pass_backoff(passes).as_secs()).collect();
        assert_eq!(waits, [20, 40, 80, 160, 320, 640, 900]);
        assert_eq!(announced.first_check_delay_ms(), polling.first_check_delay_ms());
        assert_eq!(announced.backoff_base, polling.backoff_base, "a PG that gives no answer is asked as soon");
        assert_eq!((announced.backoff_cap, announced.min_gap), (polling.backoff_cap, polling.min_gap));
        let short = Timings { backoff_cap: Duration::from_secs(30), ..polling }.announced_by_webhooks();
        assert_eq!(short.unsettled_backoff, Duration::from_secs(20));
        let shorter = Timings { backoff_cap: Duration::from_secs(10), ..polling }.announced_by_webhooks();
        assert_eq!(shorter.unsettled_backoff, Duration::from_secs(10), "never past the cap");
    }

    #[test]
    fn a_new_unknown_outcome_is_first_looked_at_after_the_backoff_base() {
        assert_eq!(Timings::new(Duration::from_secs(60)).first_check_delay_ms(), 5_000);
        assert_eq!(Timings::new(Duration::from_secs(6)).first_check_delay_ms(), 500);
    }
}

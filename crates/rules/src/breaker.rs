//! Recovery's circuit breaker, as rules without a clock: what it allows at
//! `now`, and what an answer or a failure makes of it. The server's
//! `CircuitBreaker` keeps one `Phase` behind a lock and reads the time; the
//! model checker drives the same rules with a clock of its own.

/// Failures in a row that open recovery's breaker: the server's, and the
/// model checker's when it lets the PG be out for a stretch.
pub const FAILURE_THRESHOLD: u32 = 5;

/// The breaker's state and rules, without a clock: what it allows at `now`,
/// and what an answer or a failure makes of it. Generic over time, so the
/// model checker drives the same rules with a clock of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase<T> {
    Closed {
        failures: u32,
    },
    Open {
        until: T,
    },
    /// One probe call is out; everyone else waits for its result, but not past
    /// `probe_until`, the longest the probe could take: a probe granted and
    /// never sent (its worker stopped, or found the job taken) must not hold
    /// recovery back for good.
    HalfOpen {
        probe_until: T,
    },
}

impl<T: Copy + Ord> Phase<T> {
    pub const CLOSED: Self = Phase::Closed { failures: 0 };

    /// Whether a call may go now; a call let through after the cool-down (or
    /// after a probe that never reported) is the probe, out until `probe_until`.
    pub fn allows_call(&mut self, now: T, probe_until: T) -> bool {
        match *self {
            Phase::Closed { .. } => true,
            Phase::Open { until } | Phase::HalfOpen { probe_until: until } if now >= until => {
                *self = Phase::HalfOpen { probe_until };
                true
            }
            Phase::Open { .. } | Phase::HalfOpen { .. } => false,
        }
    }

    /// The PG answered: closed. Says whether it was not closed before.
    pub fn record_answer(&mut self) -> bool {
        let was_closed = matches!(self, Phase::Closed { .. });
        *self = Self::CLOSED;
        !was_closed
    }

    /// The PG gave no usable answer: one more failure, or open until
    /// `open_until` once there were `threshold` in a row. Says whether this
    /// opened it.
    pub fn record_failure(&mut self, open_until: T, threshold: u32) -> bool {
        match *self {
            Phase::Closed { failures } if failures + 1 < threshold => {
                *self = Phase::Closed { failures: failures + 1 };
                false
            }
            Phase::Closed { .. } | Phase::HalfOpen { .. } | Phase::Open { .. } => {
                *self = Phase::Open { until: open_until };
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Phase;

    const THRESHOLD: u32 = 3;

    #[test]
    fn a_closed_breaker_lets_every_call_through_and_opens_on_the_thresholdth_failure_in_a_row() {
        let mut phase = Phase::CLOSED;
        assert!(phase.allows_call(0, 10) && phase.allows_call(0, 10), "closed: every call, no probe");
        assert_eq!(phase, Phase::CLOSED);
        assert!(!phase.record_failure(100, THRESHOLD));
        assert!(!phase.record_failure(100, THRESHOLD));
        assert_eq!(phase, Phase::Closed { failures: 2 });
        assert!(phase.record_failure(100, THRESHOLD), "the third failure in a row opens it");
        assert_eq!(phase, Phase::Open { until: 100 });
    }

    #[test]
    fn an_answer_closes_it_and_forgets_the_failures() {
        let mut phase = Phase::Closed { failures: THRESHOLD - 1 };
        assert!(!phase.record_answer(), "it was closed already");
        assert_eq!(phase, Phase::CLOSED);
        assert!(!phase.record_failure(100, THRESHOLD), "the count started again");

        let mut open = Phase::Open { until: 100 };
        assert!(open.record_answer(), "an open breaker closed");
        assert_eq!(open, Phase::CLOSED);
        let mut half_open = Phase::HalfOpen { probe_until: 100 };
        assert!(half_open.record_answer(), "the probe's answer closed it");
    }

    #[test]
    fn an_open_breaker_refuses_until_its_cool_down_ends_then_lets_one_probe_through() {
        let mut phase = Phase::Open { until: 100 };
        assert!(!phase.allows_call(99, 200), "still cooling down");
        assert_eq!(phase, Phase::Open { until: 100 });
        assert!(phase.allows_call(100, 200), "the probe, at the end of the cool-down");
        assert_eq!(phase, Phase::HalfOpen { probe_until: 200 });
        assert!(!phase.allows_call(150, 250), "only one probe while it may be out");
        assert!(!phase.allows_call(199, 299));
        assert!(phase.allows_call(200, 300), "another probe once the first could have ended");
        assert_eq!(phase, Phase::HalfOpen { probe_until: 300 });
    }

    #[test]
    fn a_failed_probe_opens_it_again_at_once() {
        let mut phase = Phase::HalfOpen { probe_until: 200 };
        assert!(phase.record_failure(400, THRESHOLD), "one failure of the probe reopens it");
        assert_eq!(phase, Phase::Open { until: 400 });
        let mut open = Phase::Open { until: 100 };
        assert!(open.record_failure(500, THRESHOLD), "a failure while open pushes the cool-down on");
        assert_eq!(open, Phase::Open { until: 500 });
    }
}

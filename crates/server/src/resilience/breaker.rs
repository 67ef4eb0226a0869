//! One circuit breaker for all recovery calls: after repeated failures to get
//! any answer from the PG, recovery stops calling it for a while instead of
//! adding load to a PG that is already struggling.

use std::sync::Mutex;
use std::time::Duration;

use payonce_rules::breaker::{FAILURE_THRESHOLD, Phase};
use tokio::time::Instant;
/// How long an open breaker refuses calls before letting one probe through,
/// unless told otherwise (the server derives it from its recovery interval).
const COOL_DOWN: Duration = Duration::from_secs(30);

#[derive(Debug)]
pub struct CircuitBreaker {
    phase: Mutex<Phase<Instant>>,
    cool_down: Duration,
    probe_timeout: Duration,
}

impl Default for CircuitBreaker {
    fn default() -> Self {
        Self::new(COOL_DOWN, COOL_DOWN)
    }
}

impl CircuitBreaker {
    /// A breaker that cools down for `cool_down` once open, and waits at most
    /// `probe_timeout` (the longest recovery call) for its probe's result.
    pub fn new(cool_down: Duration, probe_timeout: Duration) -> Self {
        Self { phase: Mutex::new(Phase::CLOSED), cool_down, probe_timeout }
    }

    /// Whether a call may go to the PG now.
    pub fn allows_call(&self) -> bool {
        let now = Instant::now();
        self.phase.lock().expect("breaker lock").allows_call(now, now + self.probe_timeout)
    }

    /// The PG answered (whatever it said). Says whether this closed an open or
    /// half-open breaker, so recovery can go on at once with what it held back.
    pub fn record_answer(&self) -> bool {
        let reopened = self.phase.lock().expect("breaker lock").record_answer();
        if reopened {
            tracing::info!("PG circuit breaker closed: the PG answers again");
        }
        reopened
    }

    /// The PG gave no usable answer: unreachable, timed out, 5xx or overloaded.
    pub fn record_failure(&self) {
        let opened =
            self.phase.lock().expect("breaker lock").record_failure(Instant::now() + self.cool_down, FAILURE_THRESHOLD);
        if opened {
            crate::metrics::breaker_opened();
            tracing::warn!(cool_down = ?self.cool_down, "PG circuit breaker open: recovery pauses");
        }
    }

    /// How long the breaker still refuses every call, if it does: it is open and
    /// its cool-down has not ended. (After the cool-down one probe may go.)
    pub fn refuses_for(&self) -> Option<Duration> {
        match *self.phase.lock().expect("breaker lock") {
            Phase::Open { until } => until.checked_duration_since(Instant::now()).filter(|left| !left.is_zero()),
            Phase::Closed { .. } | Phase::HalfOpen { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn opens_after_repeated_failures_and_probes_after_the_cool_down() {
        let breaker = CircuitBreaker::default();
        for _ in 0..FAILURE_THRESHOLD - 1 {
            breaker.record_failure();
            assert!(breaker.allows_call());
        }
        breaker.record_failure();
        assert!(!breaker.allows_call(), "open at the threshold");

        assert_eq!(breaker.refuses_for(), Some(COOL_DOWN));
        tokio::time::advance(COOL_DOWN).await;
        assert_eq!(breaker.refuses_for(), None, "the cool-down is over");
        assert!(breaker.allows_call(), "one probe after the cool-down");
        assert!(!breaker.allows_call(), "only one");

        breaker.record_failure();
        assert!(!breaker.allows_call(), "a failed probe opens it again");
        tokio::time::advance(COOL_DOWN).await;
        assert!(breaker.allows_call());
        assert!(breaker.record_answer(), "the probe's answer closes it");
        assert!(breaker.allows_call() && breaker.allows_call(), "an answer closes it");
        assert!(!breaker.record_answer(), "it was closed already");
    }

    #[tokio::test(start_paused = true)]
    async fn a_probe_that_never_reports_does_not_hold_the_breaker_half_open() {
        let breaker = CircuitBreaker::new(COOL_DOWN, Duration::from_secs(70));
        for _ in 0..FAILURE_THRESHOLD {
            breaker.record_failure();
        }
        tokio::time::advance(COOL_DOWN).await;
        assert!(breaker.allows_call(), "the probe");
        // Its worker stopped before sending it: nothing is ever recorded.
        tokio::time::advance(Duration::from_secs(69)).await;
        assert!(!breaker.allows_call(), "the probe may still be out");
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(breaker.allows_call(), "another probe once the first could have ended");
        assert!(!breaker.allows_call(), "only one");
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_resets_the_failure_count() {
        let breaker = CircuitBreaker::default();
        for _ in 0..FAILURE_THRESHOLD - 1 {
            breaker.record_failure();
        }
        breaker.record_answer();
        for _ in 0..FAILURE_THRESHOLD - 1 {
            breaker.record_failure();
        }
        assert!(breaker.allows_call());
    }
}

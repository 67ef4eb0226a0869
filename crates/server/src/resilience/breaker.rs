//! One circuit breaker for all recovery calls: after repeated failures to get
//! any answer from the PG, recovery stops calling it for a while instead of
//! adding load to a PG that is already struggling.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// Consecutive failures that open the breaker.
const FAILURE_THRESHOLD: u32 = 5;
/// How long an open breaker refuses calls before letting one probe through,
/// unless told otherwise (the server derives it from its recovery interval).
const COOL_DOWN: Duration = Duration::from_secs(30);

#[derive(Debug)]
pub struct CircuitBreaker {
    state: Mutex<State>,
    cool_down: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Closed {
        failures: u32,
    },
    Open {
        until: Instant,
    },
    /// One probe call is out; everyone else waits for its result.
    HalfOpen,
}

impl Default for CircuitBreaker {
    fn default() -> Self {
        Self::new(COOL_DOWN)
    }
}

impl CircuitBreaker {
    pub fn new(cool_down: Duration) -> Self {
        Self { state: Mutex::new(State::Closed { failures: 0 }), cool_down }
    }

    /// Whether a call may go to the PG now.
    pub fn allows_call(&self) -> bool {
        let mut state = self.state.lock().expect("breaker lock");
        match *state {
            State::Closed { .. } => true,
            State::Open { until } if Instant::now() >= until => {
                *state = State::HalfOpen;
                true
            }
            State::Open { .. } | State::HalfOpen => false,
        }
    }

    /// The PG answered (whatever it said). Says whether this closed an open or
    /// half-open breaker, so recovery can go on at once with what it held back.
    pub fn record_answer(&self) -> bool {
        let mut state = self.state.lock().expect("breaker lock");
        let was_closed = matches!(*state, State::Closed { .. });
        *state = State::Closed { failures: 0 };
        if !was_closed {
            tracing::info!("PG circuit breaker closed: the PG answers again");
        }
        !was_closed
    }

    /// The PG gave no usable answer: unreachable, timed out, 5xx or overloaded.
    pub fn record_failure(&self) {
        let mut state = self.state.lock().expect("breaker lock");
        *state = match *state {
            State::Closed { failures } if failures + 1 < FAILURE_THRESHOLD => State::Closed { failures: failures + 1 },
            State::Closed { .. } | State::HalfOpen | State::Open { .. } => {
                crate::metrics::breaker_opened();
                tracing::warn!(cool_down = ?self.cool_down, "PG circuit breaker open: recovery pauses");
                State::Open { until: Instant::now() + self.cool_down }
            }
        };
    }

    /// How long the breaker still refuses every call, if it does: it is open and
    /// its cool-down has not ended. (After the cool-down one probe may go.)
    pub fn refuses_for(&self) -> Option<Duration> {
        match *self.state.lock().expect("breaker lock") {
            State::Open { until } => until.checked_duration_since(Instant::now()).filter(|left| !left.is_zero()),
            State::Closed { .. } | State::HalfOpen => None,
        }
    }

    pub fn is_open(&self) -> bool {
        matches!(*self.state.lock().expect("breaker lock"), State::Open { .. })
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
        assert!(breaker.is_open());
        assert!(!breaker.allows_call());

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

//! Recovery's retry budget: the rules' counts (`payonce_rules::retry_budget`)
//! behind a lock, on tokio's clock (so paused-time tests drive it). Every call
//! recovery makes is counted against a tenth of customers' confirms over the
//! last window, with a floor; the window is the recovery interval (a minute by
//! default), so a shop run at a shorter interval, as tests and time-scaled
//! experiments do, keeps the same proportions.

use std::sync::Mutex;
use std::time::Duration;

use payonce_rules::retry_budget::Counts;
use tokio::time::Instant;

#[derive(Debug)]
pub struct RetryBudget {
    counts: Mutex<Counts>,
    /// Where the counts' clock starts.
    origin: Instant,
}

impl RetryBudget {
    pub fn new(window: Duration) -> Self {
        let window_ms = u64::try_from(window.as_millis()).unwrap_or(u64::MAX);
        Self { counts: Mutex::new(Counts::new(window_ms)), origin: Instant::now() }
    }

    /// A customer's confirm went to the PG.
    pub fn record_first_call(&self) {
        let now_ms = self.now_ms();
        self.counts.lock().expect("budget lock").record_first_call(now_ms);
    }

    /// Whether one more recovery call fits the budget now.
    pub fn has_room(&self) -> bool {
        let now_ms = self.now_ms();
        self.counts.lock().expect("budget lock").has_room(now_ms)
    }

    /// Takes one recovery call from the budget if the budget has room; says whether it did.
    pub fn try_recovery_call(&self) -> bool {
        let now_ms = self.now_ms();
        self.counts.lock().expect("budget lock").try_recovery_call(now_ms)
    }

    fn now_ms(&self) -> u64 {
        u64::try_from((Instant::now() - self.origin).as_millis()).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use payonce_rules::retry_budget::FLOOR_PER_WINDOW;

    fn recovery_calls_allowed(budget: &RetryBudget) -> u64 {
        (0..100_000).take_while(|_| budget.try_recovery_call()).count() as u64
    }

    #[tokio::test(start_paused = true)]
    async fn a_quiet_shop_gets_the_floor() {
        let budget = RetryBudget::new(Duration::from_secs(60));
        assert_eq!(recovery_calls_allowed(&budget), FLOOR_PER_WINDOW);
    }

    #[tokio::test(start_paused = true)]
    async fn under_load_recovery_adds_at_most_a_tenth() {
        let budget = RetryBudget::new(Duration::from_secs(60));
        for _ in 0..3_000 {
            budget.record_first_call();
        }
        assert_eq!(recovery_calls_allowed(&budget), 300, "a tenth of 3,000, not a tenth plus the floor");
    }

    #[tokio::test(start_paused = true)]
    async fn calls_older_than_a_minute_no_longer_count() {
        let budget = RetryBudget::new(Duration::from_secs(60));
        assert_eq!(recovery_calls_allowed(&budget), FLOOR_PER_WINDOW);
        tokio::time::advance(Duration::from_secs(30)).await;
        assert_eq!(recovery_calls_allowed(&budget), 0, "still inside the minute");
        tokio::time::advance(Duration::from_secs(31)).await;
        assert_eq!(recovery_calls_allowed(&budget), FLOOR_PER_WINDOW, "the window moved on");
        tokio::time::advance(Duration::from_secs(3_600)).await;
        assert_eq!(recovery_calls_allowed(&budget), FLOOR_PER_WINDOW, "an idle hour clears everything");
    }
}

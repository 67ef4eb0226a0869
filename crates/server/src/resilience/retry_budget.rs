//! Recovery's retry budget (Google SRE book, "Handling Overload": a client
//! retries at most a tenth of its requests). Every call recovery makes (its
//! lookups, and the confirms it resends) is a retry of a customer's confirm
//! whose answer was lost; over the last window they may number at most a
//! tenth of customers' confirms, or [`FLOOR_PER_WINDOW`], whichever is more:
//! under a brownout recovery adds at most 10 % to the PG's calls, and a quiet
//! shop still settles its unknown payments, 60 calls a window at least.
//!
//! The window is the recovery interval (a minute by default), so a shop run
//! at a shorter interval, as tests and time-scaled experiments do, keeps the
//! same proportions.
//!
//! tower's `TpsBudget` was the first choice; it adds its floor *to* the
//! percentage (reserve + 10 %), so under a brownout recovery could add more
//! than a tenth. This keeps the larger of the two instead.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// Buckets the window is counted in.
const BUCKETS: usize = 60;
/// Recovery calls allowed per window however few confirms there were.
pub const FLOOR_PER_WINDOW: u64 = 60;
/// Recovery calls allowed per confirm in the window.
const RATIO: f64 = 0.1;

/// Counts of calls over the last minute, in one-second buckets.
#[derive(Debug)]
pub struct RetryBudget {
    counts: Mutex<Counts>,
    /// The window the budget looks back over.
    window: Duration,
}

#[derive(Debug)]
struct Counts {
    /// `(first calls, recovery calls)` per bucket, oldest first after `start`.
    buckets: [(u64, u64); BUCKETS],
    /// The bucket that `now` falls in, by index since `origin`.
    current: u64,
    origin: Instant,
    window: Duration,
}

impl RetryBudget {
    pub fn new(window: Duration) -> Self {
        let counts = Counts { buckets: [(0, 0); BUCKETS], current: 0, origin: Instant::now(), window };
        Self { counts: Mutex::new(counts), window }
    }

    pub fn window(&self) -> Duration {
        self.window
    }

    /// A customer's confirm went to the PG.
    pub fn record_first_call(&self) {
        let mut counts = self.counts.lock().expect("budget lock");
        counts.bucket_now().0 += 1;
    }

    /// Whether one more recovery call fits the budget now.
    pub fn has_room(&self) -> bool {
        self.counts.lock().expect("budget lock").has_room()
    }

    /// Takes one recovery call from the budget if the budget has room; says whether it did.
    pub fn try_recovery_call(&self) -> bool {
        let mut counts = self.counts.lock().expect("budget lock");
        if !counts.has_room() {
            return false;
        }
        counts.bucket_now().1 += 1;
        true
    }
}

impl Counts {
    fn has_room(&mut self) -> bool {
        self.advance();
        let (first, recovery) =
            self.buckets.iter().fold((0, 0), |(first, recovery), bucket| (first + bucket.0, recovery + bucket.1));
        recovery < FLOOR_PER_WINDOW.max((first as f64 * RATIO) as u64)
    }

    /// Clears the buckets that fell out of the window since the last call.
    fn advance(&mut self) {
        let bucket_ms = (self.window.as_millis() as u64 / BUCKETS as u64).max(1);
        let now = (Instant::now() - self.origin).as_millis() as u64 / bucket_ms;
        let stale = (now - self.current).min(BUCKETS as u64);
        for step in 1..=stale {
            self.buckets[((self.current + step) % BUCKETS as u64) as usize] = (0, 0);
        }
        self.current = now;
    }

    fn bucket_now(&mut self) -> &mut (u64, u64) {
        self.advance();
        &mut self.buckets[(self.current % BUCKETS as u64) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

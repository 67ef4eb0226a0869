//! Recovery's retry budget (Google SRE book, "Handling Overload": a client
//! retries at most a tenth of its requests), as counts without a clock: the
//! caller passes the time, in milliseconds since any fixed moment.
//!
//! Every call recovery makes (its lookups, and the confirms it resends) is a
//! retry of a customer's confirm whose answer was lost; over the last window
//! they may number at most a tenth of customers' confirms, or
//! [`FLOOR_PER_WINDOW`], whichever is more: under a brownout recovery adds at
//! most 10 % to the PG's calls, and a quiet shop still settles its unknown
//! payments, 60 calls a window at least.
//!
//! tower's `TpsBudget` was the first choice; it adds its floor *to* the
//! percentage (reserve + 10 %), so under a brownout recovery could add more
//! than a tenth. This keeps the larger of the two instead.

/// Buckets the window is counted in.
const BUCKETS: usize = 60;
/// Recovery calls allowed per window however few confirms there were.
pub const FLOOR_PER_WINDOW: u64 = 60;
/// Recovery calls allowed per confirm in the window.
const RATIO: f64 = 0.1;

/// Counts of calls over the last window, in sixtieths of it.
#[derive(Debug, Clone)]
pub struct Counts {
    /// `(first calls, recovery calls)` per bucket, in a ring indexed by the
    /// bucket's number since the clock's origin.
    buckets: [(u64, u64); BUCKETS],
    /// The number of the bucket the last call fell in.
    current: u64,
    window_ms: u64,
}

impl Counts {
    /// Empty counts over a window of `window_ms`, starting at time 0.
    pub fn new(window_ms: u64) -> Self {
        Self { buckets: [(0, 0); BUCKETS], current: 0, window_ms }
    }

    /// A customer's confirm went to the PG.
    pub fn record_first_call(&mut self, now_ms: u64) {
        self.bucket_at(now_ms).0 += 1;
    }

    /// Whether one more recovery call fits the budget at `now_ms`.
    pub fn has_room(&mut self, now_ms: u64) -> bool {
        self.advance(now_ms);
        let (first, recovery) =
            self.buckets.iter().fold((0, 0), |(first, recovery), bucket| (first + bucket.0, recovery + bucket.1));
        recovery < FLOOR_PER_WINDOW.max((first as f64 * RATIO) as u64)
    }

    /// Takes one recovery call from the budget if it has room; says whether it did.
    pub fn try_recovery_call(&mut self, now_ms: u64) -> bool {
        if !self.has_room(now_ms) {
            return false;
        }
        self.bucket_at(now_ms).1 += 1;
        true
    }

    /// Clears the buckets that fell out of the window since the last call.
    fn advance(&mut self, now_ms: u64) {
        let bucket_ms = (self.window_ms / BUCKETS as u64).max(1);
        // A clock read before the last one (two callers racing for the lock)
        // counts in the current bucket.
        let now = (now_ms / bucket_ms).max(self.current);
        let stale = (now - self.current).min(BUCKETS as u64);
        for step in 1..=stale {
            self.buckets[((self.current + step) % BUCKETS as u64) as usize] = (0, 0);
        }
        self.current = now;
    }

    fn bucket_at(&mut self, now_ms: u64) -> &mut (u64, u64) {
        self.advance(now_ms);
        &mut self.buckets[(self.current % BUCKETS as u64) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE_MS: u64 = 60_000;

    fn recovery_calls_allowed(counts: &mut Counts, now_ms: u64) -> u64 {
        (0..100_000).take_while(|_| counts.try_recovery_call(now_ms)).count() as u64
    }

    #[test]
    fn a_quiet_shop_gets_the_floor() {
        let mut counts = Counts::new(MINUTE_MS);
        assert!(counts.has_room(0));
        assert_eq!(recovery_calls_allowed(&mut counts, 0), FLOOR_PER_WINDOW);
        assert!(!counts.has_room(0), "the floor is spent");
    }

    #[test]
    fn under_load_recovery_adds_at_most_a_tenth() {
        let mut counts = Counts::new(MINUTE_MS);
        for _ in 0..3_000 {
            counts.record_first_call(0);
        }
        assert_eq!(recovery_calls_allowed(&mut counts, 0), 300, "a tenth of 3,000, not a tenth plus the floor");
    }

    #[test]
    fn a_tenth_is_rounded_down_and_never_less_than_the_floor() {
        let mut counts = Counts::new(MINUTE_MS);
        for _ in 0..609 {
            counts.record_first_call(0);
        }
        assert_eq!(recovery_calls_allowed(&mut counts, 0), FLOOR_PER_WINDOW, "60.9 is 60");
        for _ in 0..2 {
            counts.record_first_call(0);
        }
        assert_eq!(recovery_calls_allowed(&mut counts, 0), 1, "611 confirms allow 61");
    }

    #[test]
    fn calls_older_than_the_window_no_longer_count() {
        let mut counts = Counts::new(MINUTE_MS);
        assert_eq!(recovery_calls_allowed(&mut counts, 0), FLOOR_PER_WINDOW);
        assert_eq!(recovery_calls_allowed(&mut counts, 30_000), 0, "still inside the minute");
        assert_eq!(recovery_calls_allowed(&mut counts, 59_999), 0, "the last moment of the minute");
        assert_eq!(recovery_calls_allowed(&mut counts, 61_000), FLOOR_PER_WINDOW, "the window moved on");
        assert_eq!(recovery_calls_allowed(&mut counts, 3_661_000), FLOOR_PER_WINDOW, "an idle hour clears everything");
    }

    #[test]
    fn a_window_slides_bucket_by_bucket() {
        let mut counts = Counts::new(MINUTE_MS);
        for _ in 0..1_000 {
            counts.record_first_call(0);
        }
        assert_eq!(recovery_calls_allowed(&mut counts, 30_000), 100, "a tenth of the minute's confirms");
        // At 60 s the confirms' bucket has left the window; the calls at 30 s have not.
        assert_eq!(recovery_calls_allowed(&mut counts, 60_000), 0, "100 calls still count against the floor of 60");
        assert_eq!(recovery_calls_allowed(&mut counts, 90_000), FLOOR_PER_WINDOW, "and then they leave it too");
    }

    #[test]
    fn a_short_window_keeps_the_same_proportions() {
        let mut counts = Counts::new(6_000);
        assert_eq!(recovery_calls_allowed(&mut counts, 0), FLOOR_PER_WINDOW);
        assert_eq!(recovery_calls_allowed(&mut counts, 5_999), 0);
        assert_eq!(recovery_calls_allowed(&mut counts, 6_000), FLOOR_PER_WINDOW, "a window of 6 s has passed");
    }

    #[test]
    fn a_clock_read_before_the_last_counts_in_the_current_bucket() {
        let mut counts = Counts::new(MINUTE_MS);
        assert_eq!(recovery_calls_allowed(&mut counts, 30_000), FLOOR_PER_WINDOW);
        assert_eq!(recovery_calls_allowed(&mut counts, 29_000), 0, "an earlier reading clears nothing");
    }
}

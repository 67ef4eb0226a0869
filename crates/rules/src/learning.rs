//! The rules of a learned PG concurrency limit (`--pg-limit auto`),
//! apart from where the limit is kept: one server's memory or the database a
//! cluster shares (the server's `pg::limit` and `pg::limit::cluster`).
//!
//! A PG contract limits the confirms in processing at once, and a PG counts the
//! ones whose caller hung up. It refuses a confirm over its limit at once (429,
//! or 403 `FORBIDDEN_CONSECUTIVE_REQUEST`) but takes one under it silently and
//! answers only when the card company has, which may be twenty seconds later.
//! Waiting for answers to learn would be far too slow, so the learned limit
//! reads a confirm that was *not refused within a short moment* as room:
//!
//! - **Room**: a confirm taken while every allowed place is in use raises the
//!   limit: by one per such confirm until the first sign of overload (slow
//!   start), then by one per window at most (congestion avoidance).
//! - **Overload**: a refusal for load, or a read timeout, lowers it to 95 %,
//!   at most once per window, never below the floor.
//!
//! Existing crates were weighed: `congestion-limiter`'s AIMD, Gradient and
//! Vegas (after Netflix's concurrency-limits) learn from each job's *completion*
//! and latency, twenty seconds late here, have no early "taken" signal, and
//! cut the limit on every overloaded job of a burst rather than once per window.

/// The lowest a learned limit goes: a few payments always get through to learn from.
pub const FLOOR: u32 = 4;
/// The highest a learned limit goes.
pub const CEILING: u32 = 1_000;
/// Where a learned limit starts: the fixed limit's old default, so a shop that
/// learns never turns away more in its first seconds than one with a fixed limit
/// of 40 would; slow start takes it up quickly from there, an overload down.
pub const INITIAL: u32 = 40;
/// What one overload keeps of the limit.
const DECREASE_TO: f64 = 0.95;

/// A learned limit and what it remembers, with times in milliseconds on any
/// clock that only moves forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Learned {
    pub limit: u32,
    /// Whether an overload was seen yet: before it, room is probed fast.
    pub slow_start: bool,
    pub last_decrease_ms: Option<i64>,
    pub last_increase_ms: i64,
}

impl Learned {
    pub fn initial(now_ms: i64) -> Self {
        Self { limit: INITIAL, slow_start: true, last_decrease_ms: None, last_increase_ms: now_ms }
    }

    /// A call was taken while `in_use` places were held. Says whether the limit rose.
    pub fn room(&mut self, in_use: u32, now_ms: i64, window_ms: i64) -> bool {
        // Only a limit in use says anything about whether it is too low.
        if in_use < self.limit || self.limit >= CEILING {
            return false;
        }
        if !self.slow_start && now_ms - self.last_increase_ms < window_ms {
            return false;
        }
        self.limit += 1;
        self.last_increase_ms = now_ms;
        true
    }

    /// A call was refused for load or timed out. Says whether the limit fell.
    pub fn overload(&mut self, now_ms: i64, window_ms: i64) -> bool {
        if self.last_decrease_ms.is_some_and(|last| now_ms - last < window_ms) {
            return false;
        }
        let lowered = ((f64::from(self.limit) * DECREASE_TO).floor() as u32).max(FLOOR);
        tracing::info!(from = self.limit, to = lowered, "the PG shows overload: lowering the concurrency limit");
        self.limit = lowered;
        self.slow_start = false;
        self.last_decrease_ms = Some(now_ms);
        // A whole window before probing up again.
        self.last_increase_ms = now_ms;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: i64 = 5_000;

    #[test]
    fn slow_start_grows_by_one_per_call_taken_at_the_limit() {
        let mut learned = Learned::initial(0);
        for call in 0..50 {
            assert!(learned.room(learned.limit, call, WINDOW));
        }
        assert_eq!(learned.limit, INITIAL + 50);
        assert!(!learned.room(learned.limit - 1, 60, WINDOW), "a limit not in use is not raised");
    }

    #[test]
    fn an_overload_lowers_once_per_window_and_never_below_the_floor() {
        let mut learned = Learned { limit: 100, ..Learned::initial(0) };
        assert!(learned.overload(1_000, WINDOW));
        assert!(!learned.overload(2_000, WINDOW), "a burst of refusals is one overload");
        assert_eq!(learned.limit, 95);
        for window in 1..200 {
            learned.overload(1_000 + window * WINDOW, WINDOW);
        }
        assert_eq!(learned.limit, FLOOR);
    }

    #[test]
    fn the_next_overload_lowers_it_again_from_one_window_on() {
        let mut learned = Learned { limit: 100, ..Learned::initial(0) };
        assert!(learned.overload(100_000, WINDOW));
        assert!(!learned.overload(100_000 + WINDOW - 1, WINDOW), "still the same window");
        assert!(learned.overload(100_000 + WINDOW, WINDOW), "a window later");
        assert_eq!(learned.limit, 90, "95 % of 95, rounded down");
    }

    #[test]
    fn after_an_overload_it_probes_up_one_per_window() {
        let mut learned = Learned { limit: 20, ..Learned::initial(0) };
        learned.overload(1_000, WINDOW);
        let lowered = learned.limit;
        assert!(!learned.room(lowered, 2_000, WINDOW), "no probing within the window");
        assert!(learned.room(lowered, 1_000 + WINDOW, WINDOW));
        assert!(!learned.room(lowered + 1, 1_001 + WINDOW, WINDOW), "one per window");
        assert_eq!(learned.limit, lowered + 1);
    }

    #[test]
    fn it_never_passes_the_ceiling() {
        let mut learned = Learned { limit: CEILING, ..Learned::initial(0) };
        assert!(!learned.room(CEILING, 1, WINDOW));
    }
}

//! How many calls may be out at the PG at once: a fixed cap, or a limit the
//! server learns from the PG's own answers (`--pg-max-concurrency auto`).
//!
//! A PG contract caps the confirms in processing at once, and a PG counts the
//! ones whose caller hung up. It refuses a confirm over its cap at once (429,
//! or 403 `FORBIDDEN_CONSECUTIVE_REQUEST`) but takes one under it silently and
//! answers only when the card company has, which may be twenty seconds later.
//! Waiting for answers to learn would be far too slow, so the learned limit
//! reads a confirm that was *not refused within a short moment* as room:
//!
//! - **Room**: a confirm taken while every allowed slot is in use raises the
//!   limit: by one per such confirm until the first sign of overload (slow
//!   start), then by one per window at most (congestion avoidance).
//! - **Overload**: a refusal for load, or a read timeout, lowers it to 95 %,
//!   at most once per window, never below the floor.
//!
//! Existing crates were weighed: `congestion-limiter`'s AIMD, Gradient and
//! Vegas (after Netflix's concurrency-limits) learn from each job's *completion*
//! and latency, twenty seconds late here, have no early "taken" signal, and
//! cut the limit on every overloaded job of a burst rather than once per window.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::metrics;

/// The lowest a learned limit goes: a few payments always get through to learn from.
pub const FLOOR: u32 = 4;
/// The highest a learned limit goes.
pub const CEILING: u32 = 1_000;
/// Where a learned limit starts; slow start takes it up quickly.
const INITIAL: f64 = 8.0;
/// What one overload keeps of the limit.
const DECREASE_TO: f64 = 0.95;

/// How the cap is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// At most this many calls at once.
    Fixed(u32),
    /// Learned from the PG's answers; changes at most once per `window`.
    Adaptive { window: Duration },
}

/// The cap, and the calls holding a place under it.
#[derive(Debug)]
pub struct ConcurrencyLimit {
    policy: Policy,
    state: Mutex<State>,
    freed: Notify,
}

#[derive(Debug)]
struct State {
    in_flight: u32,
    limit: f64,
    /// Whether an overload was seen yet: before it, room is probed fast.
    slow_start: bool,
    last_decrease: Option<Instant>,
    last_increase: Instant,
}

/// A place under the cap; the call it allows is in flight until it is dropped.
#[derive(Debug)]
pub struct Place {
    limit: Arc<ConcurrencyLimit>,
    /// Whether this call already told the limit what it showed.
    signalled: bool,
}

impl ConcurrencyLimit {
    pub fn new(policy: Policy) -> Arc<Self> {
        let limit = match policy {
            Policy::Fixed(cap) => f64::from(cap),
            Policy::Adaptive { .. } => INITIAL,
        };
        metrics::pg_concurrency_limit(limit.floor());
        let state = State { in_flight: 0, limit, slow_start: true, last_decrease: None, last_increase: Instant::now() };
        Arc::new(Self { policy, state: Mutex::new(state), freed: Notify::new() })
    }

    /// The calls allowed at once now.
    pub fn current(&self) -> u32 {
        self.state.lock().expect("limit lock").limit.floor() as u32
    }

    /// A place now, or `None` at the cap.
    pub fn try_acquire(self: &Arc<Self>) -> Option<Place> {
        let mut state = self.state.lock().expect("limit lock");
        if f64::from(state.in_flight) >= state.limit.floor() {
            return None;
        }
        state.in_flight += 1;
        metrics::pg_in_flight(1.0);
        Some(Place { limit: self.clone(), signalled: false })
    }

    /// A place, waiting for one.
    pub async fn acquire(self: &Arc<Self>) -> Place {
        loop {
            // Registered before the check, so a place freed in between is not missed.
            let freed = self.freed.notified();
            if let Some(place) = self.try_acquire() {
                return place;
            }
            freed.await;
        }
    }

    /// After a window, how long a confirm must go unrefused to count as taken.
    pub fn taken_after(&self) -> Option<Duration> {
        match self.policy {
            Policy::Fixed(_) => None,
            Policy::Adaptive { window } => Some(window / 10),
        }
    }

    fn room(&self, now: Instant) {
        let Policy::Adaptive { window } = self.policy else { return };
        let mut state = self.state.lock().expect("limit lock");
        // Only a limit in use says anything about whether it is too low.
        if f64::from(state.in_flight) < state.limit.floor() {
            return;
        }
        if !state.slow_start && now.duration_since(state.last_increase) < window {
            return;
        }
        state.limit = (state.limit + 1.0).min(f64::from(CEILING));
        state.last_increase = now;
        metrics::pg_concurrency_limit(state.limit.floor());
    }

    fn overload(&self, now: Instant) {
        let Policy::Adaptive { window } = self.policy else { return };
        let mut state = self.state.lock().expect("limit lock");
        if state.last_decrease.is_some_and(|last| now.duration_since(last) < window) {
            return;
        }
        let lowered = (state.limit * DECREASE_TO).floor().max(f64::from(FLOOR));
        tracing::info!(
            from = state.limit.floor(),
            to = lowered,
            "the PG shows overload: lowering the concurrency limit"
        );
        state.limit = lowered;
        state.slow_start = false;
        state.last_decrease = Some(now);
        // A whole window before probing up again.
        state.last_increase = now;
        metrics::pg_concurrency_limit(lowered);
    }

    fn release(&self) {
        let mut state = self.state.lock().expect("limit lock");
        state.in_flight = state.in_flight.saturating_sub(1);
        metrics::pg_in_flight(-1.0);
        drop(state);
        self.freed.notify_one();
    }
}

impl Place {
    /// The PG took the call: it was not refused within a moment, or it answered.
    pub fn taken(&mut self) {
        if !std::mem::replace(&mut self.signalled, true) {
            self.limit.room(Instant::now());
        }
    }

    /// The PG refused the call for load, or did not answer in time.
    pub fn overloaded(&mut self) {
        self.signalled = true;
        self.limit.overload(Instant::now());
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.limit.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: Duration = Duration::from_secs(5);

    fn adaptive() -> Arc<ConcurrencyLimit> {
        ConcurrencyLimit::new(Policy::Adaptive { window: WINDOW })
    }

    /// Fills every place and signals each as taken; returns the places.
    fn fill(limit: &Arc<ConcurrencyLimit>) -> Vec<Place> {
        let mut places = Vec::new();
        while let Some(mut place) = limit.try_acquire() {
            place.taken();
            places.push(place);
        }
        places
    }

    #[test]
    fn a_fixed_cap_never_moves() {
        let limit = ConcurrencyLimit::new(Policy::Fixed(3));
        let mut places = fill(&limit);
        assert_eq!((places.len(), limit.current()), (3, 3));
        places[0].overloaded();
        assert_eq!(limit.current(), 3);
        places.pop();
        assert!(limit.try_acquire().is_some(), "a freed place is free again");
    }

    #[tokio::test(start_paused = true)]
    async fn slow_start_grows_with_every_confirm_taken_at_the_limit() {
        let limit = adaptive();
        let mut held = Vec::new();
        for _ in 0..50 {
            let mut place = limit.try_acquire().expect("room in slow start");
            place.taken();
            held.push(place);
        }
        assert_eq!(limit.current(), 51, "one more for each confirm taken while the limit was full");
    }

    #[tokio::test(start_paused = true)]
    async fn an_overload_lowers_the_limit_once_per_window_and_never_below_the_floor() {
        let limit = adaptive();
        let mut places = fill(&limit);
        places.extend(fill(&limit));
        let before = limit.current();
        for place in &mut places {
            place.overloaded();
        }
        assert_eq!(
            limit.current(),
            (f64::from(before) * DECREASE_TO).floor() as u32,
            "a burst of refusals is one overload"
        );
        for _ in 0..200 {
            tokio::time::advance(WINDOW).await;
            places[0].overloaded();
        }
        assert_eq!(limit.current(), FLOOR);
    }

    #[tokio::test(start_paused = true)]
    async fn after_an_overload_the_limit_probes_up_one_per_window_and_only_when_in_use() {
        let limit = adaptive();
        let mut places = fill(&limit);
        places[0].overloaded();
        let lowered = limit.current();
        drop(places);

        let mut places = fill(&limit);
        assert_eq!(limit.current(), lowered, "no probing within the window");
        tokio::time::advance(WINDOW).await;
        let mut extra = limit.try_acquire();
        assert!(extra.is_none(), "still at the limit");
        drop(places.pop());
        extra = limit.try_acquire();
        extra.as_mut().expect("a freed place").taken();
        assert_eq!(limit.current(), lowered + 1, "a window on, a confirm taken at the limit raises it");

        drop(places);
        drop(extra);
        tokio::time::advance(WINDOW).await;
        limit.try_acquire().expect("room").taken();
        assert_eq!(limit.current(), lowered + 1, "a limit not in use is not raised");
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiter_gets_the_place_freed() {
        let limit = ConcurrencyLimit::new(Policy::Fixed(1));
        let held = limit.try_acquire().unwrap();
        let waiter = tokio::spawn({
            let limit = limit.clone();
            async move { limit.acquire().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        drop(held);
        waiter.await.unwrap();
    }
}

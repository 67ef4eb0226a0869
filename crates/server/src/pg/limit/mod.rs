//! How many calls may be out at the PG at once, kept in this server's memory:
//! a fixed limit, or a limit learned from the PG's own answers (see `learning`).
//! A cluster keeps its places in the database instead (`cluster`).

pub(super) mod cluster;
pub use payonce_rules::learning;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use payonce_api::Pg;
use payonce_rules::places::{self, CallKind, RecentCalls};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::metrics;
use learning::Learned;

/// How the limit is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// At most this many calls at once.
    Fixed(u32),
    /// Learned from the PG's answers; changes at most once per `window`.
    Adaptive { window: Duration },
}

/// The limit, and the calls holding a place under it.
#[derive(Debug)]
pub struct ConcurrencyLimit {
    /// The PG it limits calls to, for its metrics.
    pg: Pg,
    policy: Policy,
    /// The longest a call can be out (our own timeouts).
    call_deadline: Duration,
    state: Mutex<State>,
    freed: Notify,
    /// The learning clock's zero.
    started: Instant,
}

#[derive(Debug)]
struct State {
    in_flight: u32,
    learned: Learned,
    recent: RecentCalls,
}

/// A place under the limit; the call it allows is in flight until it is dropped.
#[derive(Debug)]
pub struct Place {
    limit: Arc<ConcurrencyLimit>,
    /// Whether this call already told the limit what it showed.
    signalled: bool,
    taken_at: Instant,
    /// The call ended without an answer; the PG may still be processing it.
    unanswered: bool,
    kind: CallKind,
}

impl ConcurrencyLimit {
    /// A limit by `policy` on calls to `pg` that are out for `call_deadline` at most.
    pub fn new(pg: Pg, policy: Policy, call_deadline: Duration) -> Arc<Self> {
        let mut learned = Learned::initial(0);
        if let Policy::Fixed(limit) = policy {
            learned.limit = limit;
        }
        metrics::pg_limit(pg, f64::from(learned.limit));
        let state = State { in_flight: 0, learned, recent: RecentCalls::default() };
        Arc::new(Self {
            pg,
            policy,
            call_deadline,
            state: Mutex::new(state),
            freed: Notify::new(),
            started: Instant::now(),
        })
    }

    /// The calls allowed at once now.
    pub fn current(&self) -> u32 {
        self.state.lock().expect("limit lock").learned.limit
    }

    /// A place now, or `None` at the limit.
    pub fn try_acquire(self: &Arc<Self>) -> Option<Place> {
        let mut state = self.state.lock().expect("limit lock");
        if state.in_flight >= state.learned.limit {
            return None;
        }
        state.in_flight += 1;
        metrics::pg_in_flight(self.pg, 1.0);
        Some(Place {
            limit: self.clone(),
            signalled: false,
            taken_at: Instant::now(),
            unanswered: false,
            kind: CallKind::Quick,
        })
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

    fn clock_ms(&self, now: Instant) -> i64 {
        i64::try_from(now.duration_since(self.started).as_millis()).unwrap_or(i64::MAX)
    }

    fn room(&self, now: Instant) {
        let Policy::Adaptive { window } = self.policy else { return };
        let now_ms = self.clock_ms(now);
        let mut state = self.state.lock().expect("limit lock");
        let in_flight = state.in_flight;
        if state.learned.room(in_flight, now_ms, window_ms(window)) {
            metrics::pg_limit(self.pg, f64::from(state.learned.limit));
        }
    }

    fn overload(&self, now: Instant) {
        let Policy::Adaptive { window } = self.policy else { return };
        let now_ms = self.clock_ms(now);
        let mut state = self.state.lock().expect("limit lock");
        if state.learned.overload(now_ms, window_ms(window)) {
            metrics::pg_limit(self.pg, f64::from(state.learned.limit));
        }
    }

    /// Remembers how long a call ran, and how long its place stays taken
    /// after it: `None` when it was answered.
    fn ended(&self, ran: Duration, unanswered: bool, kind: CallKind) -> Option<Duration> {
        let mut state = self.state.lock().expect("limit lock");
        let kept = unanswered.then(|| places::kept_without_answer(ran, &state.recent, self.call_deadline));
        state.recent.remember(kind, ran);
        kept
    }

    fn release(&self) {
        let mut state = self.state.lock().expect("limit lock");
        state.in_flight = state.in_flight.saturating_sub(1);
        metrics::pg_in_flight(self.pg, -1.0);
        drop(state);
        self.freed.notify_one();
    }
}

pub(super) fn window_ms(window: Duration) -> i64 {
    i64::try_from(window.as_millis()).unwrap_or(i64::MAX)
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

    /// The call ended without an answer (a read timeout, a reset): the PG
    /// may still be processing it (see `payonce_rules::places`).
    pub fn unanswered(&mut self) {
        self.unanswered = true;
    }

    /// The call is one the PG processes: its time says how long "lately" is.
    pub fn processing(&mut self) {
        self.kind = CallKind::Processing;
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let Some(kept) = self.limit.ended(self.taken_at.elapsed(), self.unanswered, self.kind) else {
            self.limit.release();
            return;
        };
        // The place stays taken while the PG may still be processing the call.
        let limit = self.limit.clone();
        let until = Instant::now() + kept;
        tokio::spawn(async move {
            tokio::time::sleep_until(until).await;
            limit.release();
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pg::limit::learning::FLOOR;

    const WINDOW: Duration = Duration::from_secs(5);
    const DEADLINE: Duration = Duration::from_secs(60);

    fn adaptive() -> Arc<ConcurrencyLimit> {
        ConcurrencyLimit::new(Pg::Toss, Policy::Adaptive { window: WINDOW }, DEADLINE)
    }

    /// Fills every place and signals each as taken; returns the places. At
    /// most the learned limit's ceiling and one: a limit that never fills
    /// fails its test instead of taking places for ever.
    fn fill(limit: &Arc<ConcurrencyLimit>) -> Vec<Place> {
        let mut places = Vec::new();
        while let Some(mut place) = limit.try_acquire() {
            place.taken();
            places.push(place);
            if places.len() > learning::CEILING as usize {
                break;
            }
        }
        places
    }

    #[test]
    fn a_learned_limit_starts_at_40_as_the_readme_says() {
        let limit = adaptive();
        assert_eq!(limit.current(), 40);
        let out: Vec<Place> = std::iter::from_fn(|| limit.try_acquire()).take(41).collect();
        assert_eq!(out.len(), 40, "40 calls go out before the limit learns anything");
    }

    #[test]
    fn a_fixed_limit_never_moves() {
        let limit = ConcurrencyLimit::new(Pg::Toss, Policy::Fixed(3), DEADLINE);
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
        assert_eq!(limit.current(), before * 95 / 100, "a burst of refusals is one overload");
        for _ in 0..200 {
            tokio::time::advance(WINDOW).await;
            places[0].overloaded();
        }
        assert_eq!(limit.current(), FLOOR);
    }

    #[tokio::test(start_paused = true)]
    async fn refusals_spread_over_one_window_lower_the_limit_once() {
        let limit = adaptive();
        let mut places = fill(&limit);
        let before = limit.current();
        for place in places.iter_mut().take(4) {
            place.overloaded();
            tokio::time::advance(Duration::from_secs(1)).await;
        }
        assert_eq!(limit.current(), before * 95 / 100, "four refusals within 5 s are one overload");
        tokio::time::advance(WINDOW).await;
        places[4].overloaded();
        assert_eq!(limit.current(), before * 95 / 100 * 95 / 100, "the next window's refusal lowers it again");
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
    async fn a_call_we_stopped_waiting_for_keeps_its_place_as_long_again() {
        let limit = ConcurrencyLimit::new(Pg::Toss, Policy::Fixed(1), DEADLINE);
        let mut place = limit.try_acquire().unwrap();
        tokio::time::advance(Duration::from_secs(60)).await;
        place.unanswered();
        drop(place);
        tokio::time::advance(Duration::from_secs(59)).await;
        assert!(limit.try_acquire().is_none(), "the PG may still be processing it");
        tokio::time::advance(Duration::from_secs(2)).await;
        // Let the task that frees it run.
        tokio::task::yield_now().await;
        assert!(limit.try_acquire().is_some(), "as long again, then it is free");
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_reset_at_once_keeps_its_place_as_long_as_calls_take_lately() {
        let limit = ConcurrencyLimit::new(Pg::Toss, Policy::Fixed(1), DEADLINE);
        for _ in 0..places::KNOWN_AFTER {
            let mut place = limit.try_acquire().unwrap();
            place.processing();
            tokio::time::advance(Duration::from_secs(5)).await;
            drop(place);
        }
        let mut place = limit.try_acquire().unwrap();
        tokio::time::advance(Duration::from_millis(10)).await;
        place.unanswered();
        drop(place);
        tokio::time::advance(Duration::from_secs(4)).await;
        assert!(limit.try_acquire().is_none(), "the PG may still be processing the reset call");
        tokio::time::advance(Duration::from_secs(2)).await;
        tokio::task::yield_now().await;
        assert!(limit.try_acquire().is_some(), "once calls lately are done, it is free");
    }

    #[tokio::test(start_paused = true)]
    async fn an_answered_call_frees_its_place_at_once() {
        let limit = ConcurrencyLimit::new(Pg::Toss, Policy::Fixed(1), DEADLINE);
        let place = limit.try_acquire().unwrap();
        tokio::time::advance(Duration::from_secs(30)).await;
        drop(place);
        assert!(limit.try_acquire().is_some());
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiter_gets_the_place_freed() {
        let limit = ConcurrencyLimit::new(Pg::Toss, Policy::Fixed(1), DEADLINE);
        let held = limit.try_acquire().unwrap();
        let waiter = tokio::spawn({
            let limit = limit.clone();
            async move { limit.acquire().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        drop(held);
        // Bounded: a place never freed fails here instead of hanging the run.
        let freed = tokio::time::timeout(DEADLINE, waiter).await;
        assert!(freed.is_ok_and(|joined| joined.is_ok()), "the waiter got the place freed");
    }
}

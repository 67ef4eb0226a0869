//! How long a call to the PG counts against its contract. The PG counts a call
//! from when it arrives until it has processed it, whether or not its caller
//! still listens: a call we got no answer for (our read timeout, or a
//! connection reset while the PG may still be working on it) keeps its place
//! under the limit for as long as the PG may still take.
//!
//! How long is that? The PG has been at it for as long as the call ran; it
//! takes, lately, as long as the longest of the recent calls; and never longer
//! than our own deadline for a call (what the limit's places are sized by).
//! Before enough calls have been seen to know "lately", a call is assumed to
//! take as long as it can. Only calls the PG processes (a confirm, an approve,
//! a cancel) say how long "lately" is: a lookup or a `ready` is answered in a
//! moment, and counting it would free a reset confirm's place long before the
//! PG is done with it.

use std::collections::VecDeque;
use std::time::Duration;

/// How many of the latest calls "lately" covers.
pub const RECENT_CALLS: usize = 64;
/// Below this many calls seen, nothing is known of how long the PG takes.
pub const KNOWN_AFTER: usize = 16;

/// What a call under the limit is, for how long "lately" is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// A call the PG processes, and may go on processing without us.
    Processing,
    /// A read (a lookup) or a call answered at once (KakaoPay's `ready`).
    Quick,
}

/// How long the latest calls the PG processed took, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecentCalls {
    took: VecDeque<Duration>,
}

impl RecentCalls {
    /// Remembers a call that took `took`, forgetting the oldest past `RECENT_CALLS`.
    pub fn push(&mut self, took: Duration) {
        if self.took.len() == RECENT_CALLS {
            self.took.pop_front();
        }
        self.took.push_back(took);
    }

    /// Remembers a call of `kind` that took `took`: only one the PG processed.
    pub fn remember(&mut self, kind: CallKind, took: Duration) {
        if kind == CallKind::Processing {
            self.push(took);
        }
    }

    /// How long a call takes at the PG lately, at most `deadline`: the longest
    /// of the recent calls once `KNOWN_AFTER` were seen, `deadline` before.
    pub fn longest(&self, deadline: Duration) -> Duration {
        if self.took.len() < KNOWN_AFTER {
            return deadline;
        }
        self.took.iter().max().copied().unwrap_or(deadline).min(deadline)
    }
}

/// How long, from now, the place of a call that ran for `ran` and ended
/// without an answer stays taken: as long again as it ran (a read timeout), or
/// as long as calls take lately (a reset before that), at most `deadline`.
pub fn kept_without_answer(ran: Duration, recent: &RecentCalls, deadline: Duration) -> Duration {
    ran.max(recent.longest(deadline)).min(deadline)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEADLINE: Duration = Duration::from_secs(60);

    fn seen(calls: usize, took: Duration) -> RecentCalls {
        let mut recent = RecentCalls::default();
        for _ in 0..calls {
            recent.push(took);
        }
        recent
    }

    #[test]
    fn before_enough_calls_are_seen_a_call_takes_as_long_as_it_can() {
        assert_eq!(RecentCalls::default().longest(DEADLINE), DEADLINE);
        assert_eq!(seen(KNOWN_AFTER - 1, Duration::from_secs(1)).longest(DEADLINE), DEADLINE);
        assert_eq!(seen(KNOWN_AFTER, Duration::from_secs(1)).longest(DEADLINE), Duration::from_secs(1));
    }

    #[test]
    fn lately_is_the_longest_of_the_last_64_calls_and_never_past_the_deadline() {
        let mut recent = seen(KNOWN_AFTER, Duration::from_secs(1));
        recent.push(Duration::from_secs(9));
        recent.push(Duration::from_secs(2));
        assert_eq!(recent.longest(DEADLINE), Duration::from_secs(9), "the longest, not the last");
        for _ in 1..RECENT_CALLS - 1 {
            recent.push(Duration::from_secs(2));
        }
        assert_eq!(recent.longest(DEADLINE), Duration::from_secs(9), "still among the last 64");
        recent.push(Duration::from_secs(2));
        assert_eq!(recent.longest(DEADLINE), Duration::from_secs(2), "64 calls later it is forgotten");
        recent.push(Duration::from_secs(600));
        assert_eq!(recent.longest(DEADLINE), DEADLINE);
    }

    #[test]
    fn quick_calls_do_not_make_a_reset_confirms_place_come_back_early() {
        let mut recent = RecentCalls::default();
        for _ in 0..RECENT_CALLS {
            recent.remember(CallKind::Quick, Duration::from_millis(20));
        }
        assert_eq!(recent.longest(DEADLINE), DEADLINE, "lookups say nothing of how long a confirm takes");
        let mut confirms = seen(KNOWN_AFTER, Duration::from_secs(5));
        for _ in 0..RECENT_CALLS {
            confirms.remember(CallKind::Quick, Duration::from_millis(20));
        }
        assert_eq!(kept_without_answer(Duration::from_millis(10), &confirms, DEADLINE), Duration::from_secs(5));
        confirms.remember(CallKind::Processing, Duration::from_secs(7));
        assert_eq!(confirms.longest(DEADLINE), Duration::from_secs(7));
    }

    #[test]
    fn a_call_that_timed_out_keeps_its_place_as_long_again() {
        let recent = seen(KNOWN_AFTER, Duration::from_millis(300));
        assert_eq!(kept_without_answer(Duration::from_secs(20), &recent, DEADLINE), Duration::from_secs(20));
        assert_eq!(kept_without_answer(Duration::from_secs(90), &recent, DEADLINE), DEADLINE, "at most the deadline");
    }

    #[test]
    fn a_call_reset_early_keeps_its_place_as_long_as_calls_take_lately() {
        let recent = seen(KNOWN_AFTER, Duration::from_secs(5));
        assert_eq!(kept_without_answer(Duration::from_millis(10), &recent, DEADLINE), Duration::from_secs(5));
        assert_eq!(
            kept_without_answer(Duration::from_millis(10), &RecentCalls::default(), DEADLINE),
            DEADLINE,
            "nothing known yet: as long as a call can take"
        );
    }
}

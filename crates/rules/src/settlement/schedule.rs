//! When a job the engine did not settle is looked at again, and when it is
//! reported to an operator: what one pass over a payment or a refund came to,
//! and what follows from it. The I/O (the release, the jitter, the alert's log
//! line) is `payment/pass.rs`'s.

use std::time::Duration;

use super::timings::Timings;

/// Every this many answered passes, a job still open is reported as needing an operator.
pub const PASSES_BEFORE_ALERT: u32 = 10;

/// What one pass over a job came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovered {
    /// This worker settled it.
    Settled,
    /// The PG answered, but nothing settles it yet.
    Unsettled,
    /// The breaker refused the call: the PG was not asked.
    HeldBack,
    /// The PG was asked and gave no usable answer (no answer, 5xx, 429).
    Unavailable,
    /// The retry budget was spent.
    OverBudget,
    /// Someone else holds it, or settled it first.
    NotOurs,
}

/// How a pass that did not settle its job hands it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    /// Whether the PG answered: only such passes back off and count toward the alert.
    pub answered: bool,
    /// How long until the next look (jitter is drawn from its upper half);
    /// `None`: due again at once.
    pub wait: Option<Duration>,
}

/// How a job is handed back after a pass that came to `pass` (`None`: the
/// database failed under it), having had `passes_before` answered passes;
/// `None` when there is nothing to hand back (settled, or not this worker's).
/// A pass the PG answered backs off, doubling; one it answered with nothing
/// usable, or the database failed, waits a first step so as not to spin; one
/// the breaker or the budget held back is due again at once.
pub fn release(pass: Option<Recovered>, passes_before: u32, timings: &Timings) -> Option<Release> {
    match pass {
        Some(Recovered::Settled | Recovered::NotOurs) => None,
        Some(Recovered::Unsettled) => {
            Some(Release { answered: true, wait: Some(timings.pass_backoff(passes_before.saturating_add(1))) })
        }
        Some(Recovered::Unavailable) | None => Some(Release { answered: false, wait: Some(timings.backoff_base) }),
        Some(Recovered::HeldBack | Recovered::OverBudget) => Some(Release { answered: false, wait: None }),
    }
}

/// Whether a job still open after `passes` answered passes is reported to an
/// operator now: every `PASSES_BEFORE_ALERT`, so an alert missed is raised again.
pub fn alerts(passes: u32) -> bool {
    passes > 0 && passes.is_multiple_of(PASSES_BEFORE_ALERT)
}

/// What the job engine's passes came to since it last looked for due jobs.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PassReport {
    pub settled: usize,
    /// Answered but not settled, or failed (the database under it, say).
    pub unsettled: usize,
    /// Left for later without an answer from the PG: the breaker refused the
    /// call, or the PG gave no usable answer.
    pub held_back: usize,
    /// Left for later because the retry budget was spent.
    pub over_budget: usize,
}

impl PassReport {
    /// Counts a pass that came to `pass`; `None`: it failed, and settled nothing.
    pub fn count(&mut self, pass: Option<Recovered>) {
        match pass {
            Some(Recovered::Settled) => self.settled += 1,
            Some(Recovered::Unsettled) | None => self.unsettled += 1,
            Some(Recovered::HeldBack | Recovered::Unavailable) => self.held_back += 1,
            Some(Recovered::OverBudget) => self.over_budget += 1,
            Some(Recovered::NotOurs) => {}
        }
    }

    /// Whether a pass settled a job or heard the PG about one: worth a line in
    /// the log (passes held back say so while the breaker or budget does).
    pub fn has_news(&self) -> bool {
        self.settled + self.unsettled > 0
    }
}

/// The job engine's workers at once: a quarter of the PG limit `pg_limit`
/// (of 40 at most), so customers' confirms keep most of it; at least one.
/// Each holds at most one PG place.
pub fn recovery_workers(pg_limit: u32) -> usize {
    (pg_limit.min(40) as usize / 4).max(1)
}

/// How long the job engine sleeps before it looks for due jobs again (a
/// wake-up cuts it short): while the breaker is open (`cool_down`), until its
/// probe; after a pass found the retry budget spent, the budget's retry; else
/// until the next job falls due (`next_due_ms`, against `now_ms`), at least
/// the shortest gap and at most an interval.
pub fn pause(
    cool_down: Option<Duration>,
    report: &PassReport,
    next_due_ms: Option<i64>,
    now_ms: i64,
    timings: &Timings,
) -> Duration {
    let (min_gap, interval) = (timings.min_gap, timings.interval);
    if let Some(cool_down) = cool_down {
        return cool_down.clamp(min_gap, interval);
    }
    if report.over_budget > 0 {
        return timings.budget_retry;
    }
    match next_due_ms {
        Some(due) => Duration::from_millis(u64::try_from(due - now_ms).unwrap_or(0)).clamp(min_gap, interval),
        None => interval,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_answered_pass_backs_off_and_a_held_back_one_is_due_at_once() {
        let timings = Timings::new(Duration::from_secs(60));
        let answered =
            |passes_before: u32| Release { answered: true, wait: Some(timings.pass_backoff(passes_before + 1)) };
        let first_step = Release { answered: false, wait: Some(Duration::from_secs(5)) };
        let at_once = Release { answered: false, wait: None };
        #[rustfmt::skip]
        let table = [
            (Some(Recovered::Settled), 3, None),
            (Some(Recovered::NotOurs), 3, None),
            (Some(Recovered::Unsettled), 0, Some(answered(0))),
            (Some(Recovered::Unsettled), 3, Some(answered(3))),
            (Some(Recovered::Unavailable), 3, Some(first_step)),
            (None, 3, Some(first_step)),
            (Some(Recovered::HeldBack), 3, Some(at_once)),
            (Some(Recovered::OverBudget), 3, Some(at_once)),
        ];
        for (pass, passes_before, expected) in table {
            assert_eq!(release(pass, passes_before, &timings), expected, "{pass:?} after {passes_before}");
        }
        assert_eq!(answered(3).wait, Some(Duration::from_secs(40)));
    }

    #[test]
    fn a_report_counts_each_pass_under_what_it_came_to_and_has_news_only_of_the_pgs_answers() {
        let mut report = PassReport::default();
        assert!(!report.has_news());
        let passes = [Recovered::HeldBack, Recovered::Unavailable, Recovered::OverBudget, Recovered::NotOurs];
        for pass in passes {
            report.count(Some(pass));
        }
        assert_eq!(report, PassReport { settled: 0, unsettled: 0, held_back: 2, over_budget: 1 });
        assert!(!report.has_news(), "passes held back are no news");

        let mut settled = report;
        settled.count(Some(Recovered::Settled));
        assert_eq!((settled.settled, settled.unsettled), (1, 0));
        assert!(settled.has_news());
        let mut unsettled = report;
        unsettled.count(Some(Recovered::Unsettled));
        unsettled.count(None);
        assert_eq!((unsettled.settled, unsettled.unsettled), (0, 2), "a failed pass settled nothing");
        assert!(unsettled.has_news());
    }

    #[test]
    fn recovery_takes_a_quarter_of_the_pg_limit_at_most_ten_and_at_least_one() {
        let workers: Vec<usize> = [1, 4, 7, 8, 40, 41, 400].into_iter().map(recovery_workers).collect();
        assert_eq!(workers, [1, 1, 1, 2, 10, 10, 10]);
    }

    #[test]
    fn the_engine_sleeps_out_the_breaker_then_the_budget_then_until_the_next_job_within_bounds() {
        let timings = Timings::new(Duration::from_secs(60));
        let (idle, now) = (PassReport::default(), 1_000_000);
        let spent = PassReport { over_budget: 1, ..idle };
        let secs = Duration::from_secs;
        #[rustfmt::skip]
        let table = [
            // (breaker's cool-down, report, next due, pause)
            (Some(secs(20)), spent, Some(now), secs(20)),
            (Some(secs(600)), idle, None, secs(60)),
            (Some(Duration::ZERO), idle, None, secs(1)),
            (None, spent, Some(now), secs(10)),
            (None, idle, Some(now + 7_500), Duration::from_millis(7_500)),
            (None, idle, Some(now + 90_000), secs(60)),
            (None, idle, Some(now + 200), secs(1)),
            (None, idle, Some(now - 5_000), secs(1)),
            (None, idle, None, secs(60)),
        ];
        for (cool_down, report, next_due, expected) in table {
            assert_eq!(
                pause(cool_down, &report, next_due, now, &timings),
                expected,
                "{cool_down:?} {report:?} {next_due:?}"
            );
        }
    }

    #[test]
    fn an_open_job_is_reported_every_ten_answered_passes() {
        let alerted: Vec<u32> = (0..=35).filter(|&passes| alerts(passes)).collect();
        assert_eq!(alerted, [10, 20, 30]);
    }
}

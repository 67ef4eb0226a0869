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
    fn an_open_job_is_reported_every_ten_answered_passes() {
        let alerted: Vec<u32> = (0..=35).filter(|&passes| alerts(passes)).collect();
        assert_eq!(alerted, [10, 20, 30]);
    }
}

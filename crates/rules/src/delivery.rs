//! Delivering an event to a shop's endpoint, without I/O: what one send
//! comes to, and when a failed one is sent again. A 2xx is the shop's word
//! that it has the event; anything else (another status, a timeout, a reset,
//! a refused connection) is sent again, with exponential backoff and jitter,
//! until the retry window ends. Nothing a shop answers makes an event
//! undeliverable sooner: a 4xx may be a shop's deploy gone wrong for an hour.

use std::time::Duration;

use rand::Rng;

/// How deliveries are paced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pacing {
    /// The wait after the first failed send; each next one doubles.
    pub first_retry: Duration,
    /// The longest wait between two sends.
    pub longest_wait: Duration,
    /// How long an event is sent again before it is given up (72 h).
    pub window: Duration,
}

/// How one send went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The shop answered with this HTTP status.
    Status(u16),
    /// No answer: a timeout, a refused or reset connection, a redirect's
    /// body never read... anything that is not a status.
    None,
}

impl Answer {
    pub fn took_it(self) -> bool {
        matches!(self, Answer::Status(200..=299))
    }
}

/// What a send comes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    Delivered,
    /// Send it again after this long.
    Retry(Duration),
    /// The window is over: stop, and alert operators.
    GiveUp,
}

/// What a send that got `answer` comes to, for an event that had
/// `failed_before` failed sends and whose window started `in_window` ago.
pub fn after_send(
    answer: Answer,
    failed_before: u32,
    in_window: Duration,
    pacing: &Pacing,
    rng: &mut impl Rng,
) -> Next {
    if answer.took_it() {
        return Next::Delivered;
    }
    let wait = retry_wait(failed_before, pacing, rng);
    if in_window + wait > pacing.window {
        return Next::GiveUp;
    }
    Next::Retry(wait)
}

/// The wait before the send after `failed_before` failed ones: the ceiling
/// doubles from `first_retry` up to `longest_wait`, and the wait is drawn
/// from its upper half, so a backlog's events spread out and none comes back
/// much sooner than planned.
pub fn retry_wait(failed_before: u32, pacing: &Pacing, rng: &mut impl Rng) -> Duration {
    let ceiling = pacing.first_retry.saturating_mul(2u32.saturating_pow(failed_before)).min(pacing.longest_wait);
    crate::backoff::half_jitter(ceiling, rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    const HOUR: Duration = Duration::from_secs(3600);

    fn pacing() -> Pacing {
        Pacing { first_retry: Duration::from_secs(5), longest_wait: HOUR, window: 72 * HOUR }
    }

    #[test]
    fn only_a_2xx_delivers() {
        let mut rng = SmallRng::seed_from_u64(1);
        for status in [200, 201, 204, 299] {
            assert_eq!(after_send(Answer::Status(status), 0, Duration::ZERO, &pacing(), &mut rng), Next::Delivered);
        }
        for answer in [
            Answer::Status(199),
            Answer::Status(300),
            Answer::Status(302),
            Answer::Status(400),
            Answer::Status(410),
            Answer::Status(500),
            Answer::None,
        ] {
            assert!(matches!(after_send(answer, 0, Duration::ZERO, &pacing(), &mut rng), Next::Retry(_)), "{answer:?}");
        }
    }

    #[test]
    fn waits_double_from_the_first_up_to_the_longest() {
        let mut rng = SmallRng::seed_from_u64(2);
        for (failed_before, ceiling) in [(0, 5), (1, 10), (2, 20), (5, 160), (10, 3600), (40, 3600)] {
            let waits: Vec<_> = (0..300).map(|_| retry_wait(failed_before, &pacing(), &mut rng)).collect();
            let ceiling = Duration::from_secs(ceiling);
            assert!(waits.iter().all(|wait| *wait <= ceiling && *wait >= ceiling / 2), "{failed_before}");
            assert!(waits.iter().collect::<std::collections::HashSet<_>>().len() > 100, "jittered");
        }
    }

    #[test]
    fn a_send_whose_next_try_would_fall_past_the_window_gives_up() {
        let mut rng = SmallRng::seed_from_u64(3);
        let window = pacing().window;
        assert!(matches!(after_send(Answer::Status(500), 30, window - 2 * HOUR, &pacing(), &mut rng), Next::Retry(_)));
        assert_eq!(after_send(Answer::Status(500), 30, window, &pacing(), &mut rng), Next::GiveUp);
        assert_eq!(after_send(Answer::None, 30, window - Duration::from_secs(60), &pacing(), &mut rng), Next::GiveUp);
        // A next try that falls at the window's very end still goes.
        let no_wait = Pacing { first_retry: Duration::ZERO, longest_wait: Duration::ZERO, window };
        assert_eq!(after_send(Answer::None, 3, window, &no_wait, &mut rng), Next::Retry(Duration::ZERO));
        // Even at the window's end, a 2xx is a delivery.
        assert_eq!(after_send(Answer::Status(200), 30, window, &pacing(), &mut rng), Next::Delivered);
    }

    #[test]
    fn over_the_default_window_an_event_is_sent_about_eighty_times() {
        let mut rng = SmallRng::seed_from_u64(4);
        let (mut sends, mut elapsed) = (1, Duration::ZERO);
        while let Next::Retry(wait) = after_send(Answer::None, sends - 1, elapsed, &pacing(), &mut rng) {
            elapsed += wait;
            sends += 1;
            // A rule that never gives up, or never waits, fails here instead of hanging.
            assert!(sends <= 1_000, "still sending after {sends} sends, {elapsed:?} into the window");
        }
        assert!((60..=150).contains(&sends), "{sends} sends over {elapsed:?}");
        assert!(elapsed <= pacing().window && elapsed > pacing().window - HOUR);
    }
}

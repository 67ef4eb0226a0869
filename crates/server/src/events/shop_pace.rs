//! How much goes to one shop, and when: its places (sends at once), the
//! events taken ahead of them, and its health. A shop that fails rests at its
//! own backoff and is then sent one event, a probe; the events taken before
//! it failed wait untried; a burst of sends failing together counts once.

use std::sync::{Arc, Mutex};

use payonce_rules::delivery::Pacing;
use tokio::sync::Semaphore;

use crate::db::now_ms;
use crate::resilience::lease;

/// The longest a shop that fails rests between two probes, in first
/// retries: a minute by default, when a probe a minute costs nothing and a
/// shop back after hours hears within a minute.
const LONGEST_REST_IN_FIRST_RETRIES: u32 = 12;
/// How many waves of a shop's places may be taken ahead of its sends.
pub(super) const WAVES_TAKEN: usize = 8;

/// One shop's sends: its places, the events taken ahead of them, its health.
pub(super) struct ShopSends {
    pub id: String,
    /// Its sends under way: at most `--event-sends-per-shop`.
    pub places: Arc<Semaphore>,
    /// Events taken and not yet sent, or being sent: a few waves of its
    /// places, so that taking events (a database write) does not hold up
    /// sending them.
    pub taken: Arc<Semaphore>,
    pub place_count: usize,
    health: Mutex<Health>,
}

/// How a shop's endpoint has been answering. A shop that fails is sent one
/// event at a time (a probe), at its own backoff, and the rest of its events
/// wait untried: a shop down for hours costs one send per probe, not one per
/// event, and no database write for the events it is not sent.
#[derive(Debug, Default)]
struct Health {
    /// Rounds of sends that failed in a row; 0 while it takes events.
    failures: u32,
    /// When the next probe may go.
    probe_at_ms: i64,
    /// A probe is out.
    probing: bool,
    /// One more each time the shop is found failing, or taking events again:
    /// a send that started in an earlier round does not count against it
    /// again (a burst of sends already out when the shop went down is one
    /// failure, not one each).
    round: u64,
}

impl ShopSends {
    pub(super) fn new(id: &str, places: usize) -> Self {
        ShopSends {
            id: id.to_owned(),
            places: Arc::new(Semaphore::new(places)),
            taken: Arc::new(Semaphore::new(places * WAVES_TAKEN)),
            place_count: places,
            health: Mutex::new(Health::default()),
        }
    }

    /// How many of its events may be taken now, and whether they are a probe:
    /// up to its free places while it takes events, one when its probe is
    /// due, else none.
    pub(super) fn may_send(&self, now_ms: i64) -> (usize, bool) {
        let free = self.taken.available_permits();
        let mut health = self.health.lock().expect("health lock");
        match health.failures {
            0 => (free, false),
            _ if health.probing || now_ms < health.probe_at_ms || free == 0 => (0, false),
            _ => {
                health.probing = true;
                (1, true)
            }
        }
    }

    /// Events taken and not yet done with.
    pub(super) fn waiting(&self) -> usize {
        self.place_count * WAVES_TAKEN - self.taken.available_permits()
    }

    /// Whether an event taken (as a probe, or not) may be sent now, and the
    /// round it is sent in: an event taken while the shop was taking events
    /// waits, untried, once it is found failing.
    pub(super) fn may_go(&self, probe: bool) -> Option<u64> {
        let health = self.health.lock().expect("health lock");
        (probe || health.failures == 0).then_some(health.round)
    }

    /// A taken event was not sent, or its send's answer was not stored.
    pub(super) fn not_sent(&self, probe: bool) {
        if probe {
            self.health.lock().expect("health lock").probing = false;
        }
    }

    /// When it may be sent to again, if it rests after failing.
    pub(super) fn resting_until(&self) -> Option<i64> {
        let health = self.health.lock().expect("health lock");
        (health.failures > 0 && !health.probing).then_some(health.probe_at_ms)
    }

    /// Notes how a send of `round` went; says whether the shop took events
    /// again after failing.
    pub(super) fn note(&self, took_it: bool, probe: bool, round: u64, pacing: &Pacing) -> bool {
        let mut health = self.health.lock().expect("health lock");
        if probe {
            health.probing = false;
        }
        if took_it {
            if health.failures == 0 {
                return false;
            }
            health.failures = 0;
            health.round += 1;
            return true;
        }
        if round != health.round {
            return false;
        }
        let resting = Pacing { longest_wait: pacing.first_retry * LONGEST_REST_IN_FIRST_RETRIES, ..*pacing };
        let wait = payonce_rules::delivery::retry_wait(health.failures, &resting, &mut rand::rng());
        health.failures = health.failures.saturating_add(1);
        health.round += 1;
        health.probe_at_ms = now_ms() + lease::millis(wait);
        false
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn shop() -> ShopSends {
        ShopSends::new("books", 4)
    }

    fn pacing() -> Pacing {
        Pacing {
            first_retry: Duration::from_secs(5),
            longest_wait: Duration::from_secs(3600),
            window: Duration::from_secs(72 * 3600),
        }
    }

    #[test]
    fn a_burst_of_sends_failing_together_is_one_failure_and_the_rest_wait_untried() {
        let shop = shop();
        assert_eq!(shop.may_send(0), (4 * WAVES_TAKEN, false));
        let rounds: Vec<u64> = (0..4).map(|_| shop.may_go(false).expect("healthy: every send goes")).collect();
        for round in rounds {
            assert!(!shop.note(false, false, round, &pacing()));
        }
        assert_eq!(shop.health.lock().unwrap().failures, 1, "four sends of one round failed: one failure");
        let resting = shop.resting_until().expect("it rests");
        assert!((now_ms() + 2_000..=now_ms() + 5_000).contains(&resting), "the first wait: 2.5 to 5 s");
        assert_eq!(shop.may_go(false), None, "an event taken before it failed waits, untried");
        assert_eq!(shop.may_send(resting - 1), (0, false));

        // The probe is one event; when it is taken, the shop is back.
        assert_eq!(shop.may_send(resting), (1, true));
        assert_eq!(shop.may_send(resting), (0, false), "one probe at a time");
        let round = shop.may_go(true).expect("a probe goes");
        assert!(shop.note(true, true, round, &pacing()), "back");
        assert_eq!(shop.may_send(resting), (4 * WAVES_TAKEN, false));
        assert_eq!(shop.resting_until(), None);
    }

    #[test]
    fn a_failed_probe_doubles_the_rest_up_to_a_minute() {
        let shop = shop();
        let mut waits = Vec::new();
        for _ in 0..10 {
            let (_, probe) = shop.may_send(i64::MAX);
            let round = shop.may_go(probe).expect("goes");
            shop.note(false, probe, round, &pacing());
            waits.push(shop.resting_until().unwrap() - now_ms());
        }
        assert!(waits[0] <= 5_000 && waits[3] >= 20_000 && waits[3] <= 40_000, "{waits:?}");
        assert!(waits.iter().all(|wait| *wait <= 60_000), "{waits:?}");
    }
}

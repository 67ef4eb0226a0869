//! Exponential backoff with full jitter: the wait before retry `n` is uniform in
//! `[0, min(cap, base * 2^n)]`, so retries from many payments spread out instead
//! of arriving at the PG together.

use std::time::Duration;

use rand::Rng;

pub const BASE: Duration = Duration::from_millis(500);
pub const CAP: Duration = Duration::from_secs(8);

/// The wait before retry number `retry` (0 for the first retry).
pub fn full_jitter(retry: u32, rng: &mut impl Rng) -> Duration {
    let ceiling = BASE.saturating_mul(2u32.saturating_pow(retry)).min(CAP);
    let ceiling_ms = u64::try_from(ceiling.as_millis()).unwrap_or(u64::MAX);
    Duration::from_millis(rng.random_range(0..=ceiling_ms))
}

/// The wait before try number `try_number` of a call tried again while the
/// PG gives nothing usable (0 for the first try, which is no retry and waits
/// for nothing): full jitter before each retry.
pub fn before_retry(try_number: u32, rng: &mut impl Rng) -> Option<Duration> {
    let retry = try_number.checked_sub(1)?;
    Some(full_jitter(retry, rng))
}

/// A wait spread over its upper half, uniform in `[wait / 2, wait]`: passes
/// over many refunds spread out, and none comes back much sooner than planned.
pub fn half_jitter(wait: Duration, rng: &mut impl Rng) -> Duration {
    let wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
    Duration::from_millis(rng.random_range(wait_ms / 2..=wait_ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    #[test]
    fn the_first_try_waits_for_nothing_and_each_retry_for_its_full_jitter() {
        let mut rng = SmallRng::seed_from_u64(7);
        assert_eq!(before_retry(0, &mut rng), None);
        for (try_number, ceiling) in [(1, 500), (2, 1_000), (3, 2_000)] {
            let waits: Vec<_> = (0..500).map(|_| before_retry(try_number, &mut rng).unwrap()).collect();
            let longest = waits.iter().max().unwrap();
            assert!(*longest <= Duration::from_millis(ceiling), "try {try_number}: {longest:?}");
            assert!(*longest > Duration::from_millis(ceiling * 8 / 10), "try {try_number} uses its range");
        }
    }

    #[test]
    fn waits_stay_under_a_ceiling_that_doubles_up_to_the_cap() {
        let mut rng = SmallRng::seed_from_u64(7);
        for (retry, ceiling) in [(0, 500), (1, 1_000), (2, 2_000), (3, 4_000), (4, 8_000), (10, 8_000), (40, 8_000)] {
            let waits: Vec<_> = (0..500).map(|_| full_jitter(retry, &mut rng)).collect();
            let longest = waits.iter().max().unwrap();
            assert!(*longest <= Duration::from_millis(ceiling), "retry {retry}: {longest:?}");
            assert!(*longest > Duration::from_millis(ceiling * 8 / 10), "retry {retry} uses its range");
        }
    }

    #[test]
    fn half_jitter_stays_in_the_upper_half() {
        let mut rng = SmallRng::seed_from_u64(3);
        let waits: Vec<_> = (0..200).map(|_| half_jitter(Duration::from_secs(10), &mut rng)).collect();
        assert!(waits.iter().all(|wait| (Duration::from_secs(5)..=Duration::from_secs(10)).contains(wait)));
        assert!(waits.iter().collect::<std::collections::HashSet<_>>().len() > 100);
    }

    #[test]
    fn waits_are_spread_not_fixed() {
        let mut rng = SmallRng::seed_from_u64(1);
        let waits: std::collections::HashSet<_> = (0..50).map(|_| full_jitter(3, &mut rng)).collect();
        assert!(waits.len() > 40);
    }
}

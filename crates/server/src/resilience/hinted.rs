//! Lookups a webhook asked for draw on an allowance of their own before the
//! retry budget. A webhook says the PG has just changed a payment: the lookup
//! it brings forward is what settles the payment within a second, and the lookups
//! of many payments the PG was still working on must not have spent the
//! budget it needs. The allowance is a token bucket (`governor`): a burst of
//! `BURST` lookups, refilled at `PER_MINUTE`; past it, hinted lookups go
//! under the retry budget like any other, so a flood of forged events costs
//! the PG at most the bucket and the budget together.

use std::num::NonZeroU32;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};

/// Hinted lookups that may go at once beside the retry budget: a flash sale's
/// worth of payments the PG finishes together.
pub const BURST: u32 = 100;
/// How fast the allowance comes back.
pub const PER_MINUTE: u32 = 100;

#[derive(Debug)]
pub struct HintedLookups {
    bucket: DefaultDirectRateLimiter,
}

impl Default for HintedLookups {
    fn default() -> Self {
        let quota = Quota::per_minute(NonZeroU32::new(PER_MINUTE).expect("not zero"))
            .allow_burst(NonZeroU32::new(BURST).expect("not zero"));
        Self { bucket: RateLimiter::direct(quota) }
    }
}

impl HintedLookups {
    /// Takes one hinted lookup from the allowance; `false` once it is spent.
    pub fn take(&self) -> bool {
        self.bucket.check().is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowance_is_a_burst_then_spent() {
        let hinted = HintedLookups::default();
        let taken = (0..BURST * 2).filter(|_| hinted.take()).count();
        // The bucket refills while the loop runs: a token at most, at 100 a minute.
        assert!((BURST as usize..=BURST as usize + 1).contains(&taken), "{taken}");
        assert!(!hinted.take());
    }
}

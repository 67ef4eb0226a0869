//! Failed sign-ins to the operators' API, counted per client address: after
//! [`FAILURES_ALLOWED`] wrong or missing tokens from one address, its next
//! attempts are refused (429 `RATE_LIMITED`, `Retry-After`) without looking
//! at their token, until the allowance comes back (one attempt every
//! [`ONE_MORE_EVERY`]). Guessing a token is then hopeless, and a good token
//! from any other address still works. A request that signs in spends
//! nothing.
//!
//! governor counts the failures. It cannot be asked whether an address is
//! over without spending from its allowance, and a good token must spend
//! nothing; so when governor refuses a failure, the address is remembered as
//! refused until governor's own answer says it may try again.

use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use governor::clock::Clock;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// Wrong or missing tokens one address may send before it is refused.
pub const FAILURES_ALLOWED: u32 = 10;
/// How often one more attempt comes back to a refused address.
pub const ONE_MORE_EVERY: Duration = Duration::from_secs(60);
/// The most refused addresses remembered; past it, those whose time is up are forgotten.
const REFUSED_KEPT: usize = 10_000;

/// The failures of each client address, shared by the admin listener's requests.
#[derive(Clone)]
pub struct SignInFailures {
    failures: Arc<DefaultKeyedRateLimiter<IpAddr>>,
    refused_until: Arc<Mutex<HashMap<IpAddr, Instant>>>,
}

impl std::fmt::Debug for SignInFailures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignInFailures").finish_non_exhaustive()
    }
}

impl Default for SignInFailures {
    fn default() -> Self {
        let allowed = NonZeroU32::new(FAILURES_ALLOWED).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::with_period(ONE_MORE_EVERY).unwrap_or_else(|| Quota::per_minute(NonZeroU32::MIN));
        Self { failures: Arc::new(RateLimiter::keyed(quota.allow_burst(allowed))), refused_until: Arc::default() }
    }
}

impl SignInFailures {
    /// How long `address` must still wait before its token is looked at, if it must.
    pub fn refused(&self, address: IpAddr) -> Option<Duration> {
        let refused = self.refused_until.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let until = refused.get(&address)?;
        until.checked_duration_since(Instant::now()).filter(|wait| !wait.is_zero())
    }

    /// Counts a failed attempt from `address`; answers how long it must wait
    /// if this one was beyond its allowance.
    pub fn failed(&self, address: IpAddr) -> Option<Duration> {
        let not_until = self.failures.check_key(&address).err()?;
        let wait = not_until.wait_time_from(self.failures.clock().now());
        let mut refused = self.refused_until.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if refused.len() >= REFUSED_KEPT {
            let now = Instant::now();
            refused.retain(|_, until| *until > now);
        }
        refused.insert(address, Instant::now() + wait);
        Some(wait)
    }

    /// Forgets addresses whose allowance is whole again.
    pub fn forget_idle(&self) {
        self.failures.retain_recent();
        let now = Instant::now();
        self.refused_until.lock().unwrap_or_else(std::sync::PoisonError::into_inner).retain(|_, until| *until > now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_refused_after_its_failures_and_another_is_not() {
        let failures = SignInFailures::default();
        let guesser: IpAddr = "192.0.2.7".parse().unwrap();
        for attempt in 1..=FAILURES_ALLOWED {
            assert_eq!(failures.refused(guesser), None, "attempt {attempt}");
            assert_eq!(failures.failed(guesser), None, "attempt {attempt}");
        }
        let wait = failures.failed(guesser).expect("one failure too many");
        assert!(wait > Duration::ZERO && wait <= ONE_MORE_EVERY, "{wait:?}");
        assert!(failures.refused(guesser).is_some());
        assert_eq!(failures.refused("192.0.2.8".parse().unwrap()), None);
    }
}

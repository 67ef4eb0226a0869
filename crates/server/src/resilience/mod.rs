//! What keeps the PG's trouble from becoming ours, shared by every job that
//! calls it in the background: one circuit breaker, one retry budget (and the
//! allowance of lookups a webhook asked for), backoff with jitter, and the
//! leases a worker holds a payment or a refund by. None of it knows what a
//! payment is.

mod breaker;
mod hinted;
pub mod lease;
mod retry_budget;

pub use breaker::CircuitBreaker;
pub use hinted::HintedLookups;
pub use payonce_rules::backoff;
pub use payonce_rules::breaker::Phase as BreakerPhase;
pub use retry_budget::RetryBudget;

//! The rules payonce settles payments by, without I/O. The server does the
//! I/O and asks these what it means; the model checker explores every
//! interleaving of the same functions; mutation testing changes them one at a
//! time (`scripts/mutants.sh`) and checks the tests notice.
//!
//! - `settlement`: the core, in words of no PG: what a payment or a refund may
//!   become, what each verdict leads to, what a charge at the PG is to the shop,
//!   when a job not settled is looked at again.
//! - `toss`: Toss's adapter tables: its wire types, the raw answer of a call,
//!   and what each answer means as a verdict of the core.
//! - `kakaopay`: KakaoPay's, beside them: the same verdicts from a PG that
//!   takes no idempotency key.
//! - `learning`, `breaker`, `retry_budget`, `backoff`: the rules of the PG's
//!   learned concurrency limit, recovery's circuit breaker and retry budget,
//!   and jittered backoff, each without a clock (the caller passes the time).
//! - `pg_reply`: what the PG-neutral parts of the server need of any PG's
//!   raw answer (`PgReply`), said by each adapter.
//! - `places`: how long a call to the PG counts against its contract, answered
//!   or not.
//! - `delivery`: what sending an event to a shop's endpoint comes to, and
//!   when a failed send goes again.

pub mod backoff;
pub mod breaker;
pub mod delivery;
pub mod kakaopay;
pub mod learning;
pub mod pg_reply;
pub mod places;
pub mod retry_budget;
pub mod settlement;
pub mod toss;

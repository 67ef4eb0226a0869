//! KakaoPay's adapter tables (its online single-payment API): its wire types
//! (`wire`), what one call produced before any meaning is read into it
//! (`answer`), and the one place its answers get a meaning (`classify`).
//! Nothing outside this module names a KakaoPay field or code.
//!
//! KakaoPay differs from Toss where it tests the core: a payment is prepared
//! (`ready`) before the customer's window and approved after it, and no call
//! takes an idempotency key. An approve is therefore sent once
//! ([`RESENDING`]); what happened to one whose answer was lost is learned by
//! looking the payment up by its `tid`, and an unapproved payment waits for
//! the end of its preparation ([`READY_EXPIRES_AFTER`]) to settle as failed.
//! `docs/kakaopay.md` lists each fact these tables rely on, with its source,
//! and what is a guess.

pub mod classify;
pub mod messages;
mod reply;
pub mod wire;

use std::time::Duration;

pub use reply::KakaoPayReply;

use crate::settlement::Resending;

/// No idempotency key: an approve is never sent again.
pub const RESENDING: Resending = Resending::Never;

/// A prepared payment the customer has not finished in 15 minutes is failed
/// by KakaoPay (the customer is sent to `fail_url`, an approve answers -723).
pub const READY_EXPIRES_AFTER: Duration = Duration::from_secs(15 * 60);

//! Toss Payments' adapter tables: its wire types (`wire`), what one call
//! produced before any meaning is read into it (`answer`), the one place its
//! answers get a meaning (`classify`), and what a customer reads for its codes
//! (`messages`), and what a webhook event names (`webhook`). Nothing outside this module names a Toss field or code.

pub mod classify;
pub mod messages;
mod reply;
pub mod webhook;
pub mod wire;

pub use reply::TossReply;

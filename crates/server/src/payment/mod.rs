//! Payments and refunds, with their I/O: confirming, settling outcomes,
//! recovering the ones the PG left unknown, refunding charges, and
//! reconciliation. The lifecycle they follow is `settlement`'s. Every
//! transition is committed before it is reported.

pub mod abandon;
pub mod confirm;
pub mod jobs;
pub mod operator;
mod orphan_recovery;
mod pass;
pub mod reconcile;
mod recovery;
pub mod refund;
mod refund_recovery;
mod settle;
pub mod webhook;
pub mod window;

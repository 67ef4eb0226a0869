//! Everything about talking to the PG: its wire types, the HTTP client with its
//! timeouts, the concurrency limit (`limit/`: one server's, or a cluster's, and
//! how it is learned), and what the rest of the server may use of the rules' Toss
//! tables (`payonce_rules::toss`), the one place its answers are classified.

pub mod adapters;
mod client;
mod gateway;
mod kakaopay;
pub mod limit;
mod transport;

// Toss's adapter tables (its wire types, and what its answers mean) are rules
// without I/O, in their own crate.
pub use payonce_rules::toss::wire as toss;
use payonce_rules::toss::{classify, messages};

pub use classify::{
    CancelAnswer, ConfirmAnswer, Expected, ExpectedRefund, OrphanCancel, RefundLookup, StatusAnswer, TransactionKind,
    cancel_answer, cancel_verdict, confirm_answer, describe, failure_of, first_call_verdict, order_status_answer,
    orphan_cancel, refund_lookup, refund_lookup_verdict, refunded_only_in_full, refunded_total, refusal_code,
    resend_verdict, status_answer, status_verdict, transaction_kind,
};
pub use client::{TossCancel, TossClient, TossConfirm, TossReply};
pub use gateway::{LookupBy, PgGateway, PgPlace};
pub use kakaopay::{KakaoPayApprove, KakaoPayCancel, KakaoPayClient, KakaoPayReady, KakaoPayReply};
pub use messages::customer_message;
pub use transport::PgTransport;

/// Toss processes an idempotency key at most once, so a confirm a lookup shows
/// unconfirmed may go again under the attempt's key.
pub const RESENDING: payonce_rules::settlement::Resending = payonce_rules::settlement::Resending::UnderTheSameKey;

//! One adapter per PG, behind one trait: how a payment is confirmed there,
//! looked up, refunded and its refund looked up, what its answers mean (its
//! tables in `payonce_rules`, read here into the rules' verdicts), and what
//! it can and cannot promise. The payment, recovery and refund code works
//! only with verdicts and names no PG.
//!
//! A new PG is a module here (its client in `pg/`, its tables in the rules)
//! implementing [`PgAdapter`], a variant of `payonce_api::Pg`, and one line in
//! [`Adapters::of`]. ARCHITECTURE.md lists what it must provide.

mod kakaopay;
pub mod ledger;
mod reply_facts;
mod toss;

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use payonce_api::{ConfirmRequest, Failure, Pg, PgWindow};
use payonce_rules::pg_reply::PgReply;
use payonce_rules::settlement::{CancelVerdict, ConfirmVerdict, FailedBecause, RefundLookupVerdict, Resending, Shown};

pub use self::kakaopay::KakaoPayAdapter;
use self::ledger::PgLedger;
pub use self::reply_facts::ReplyFacts;
pub use self::toss::TossAdapter;
use super::PgPlace;
use crate::db::{Db, PgCaller, Refund};
use crate::error::AppError;

pub use payonce_rules::settlement::Sent;

/// What a PG can and cannot promise, for the rules to decide with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Promises {
    /// Whether a confirm may go again under the attempt's key.
    pub resending: Resending,
    /// Whether a payment can be looked up by the order's id (when its
    /// payment key shows another order's payment).
    pub lookup_by_order: bool,
    /// How long its session lets a confirm charge.
    pub session_lifetime: Duration,
}

/// The payment a confirm request names at the order's PG, and the proof of
/// authorisation the PG asks for with it (none for Toss: its paymentKey is both).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToConfirm {
    pub payment_key: String,
    pub token: Option<String>,
}

/// One confirm of an order's payment.
#[derive(Debug, Clone, Copy)]
pub struct ConfirmCall<'a> {
    pub order_id: &'a str,
    /// The customer paying (a first call's: recovery does not know it).
    pub customer_id: Option<&'a str>,
    pub payment_key: &'a str,
    /// The window's proof of authorisation, where the PG asks for it beside
    /// the payment key (a first call's: it is not stored).
    pub token: Option<&'a str>,
    pub amount: u64,
    /// The attempt's own key at the PG (a PG without keys ignores it).
    pub idempotency_key: &'a str,
}

/// An order's payment at its PG, as recovery looks it up.
#[derive(Debug, Clone, Copy)]
pub struct PaymentAt<'a> {
    pub order_id: &'a str,
    pub payment_key: &'a str,
    pub amount: u64,
}

/// An order whose payment the customer is about to make in the PG's window.
#[derive(Debug, Clone, Copy)]
pub struct WindowFor<'a> {
    pub order_id: &'a str,
    pub customer_id: &'a str,
    pub order_name: &'a str,
    pub amount: u64,
    /// Where the page is served: the window sends the customer back there.
    pub public_base_url: &'a str,
}

/// Implements `PgReply` for an answer type through its `reply` field.
macro_rules! reply_facts_of {
    ($($answer:ty),*) => {$(
        impl PgReply for $answer {
            fn unanswered(&self) -> bool {
                self.reply.unanswered()
            }

            fn shows_overload(&self) -> bool {
                self.reply.shows_overload()
            }

            fn shows_pg_unavailable(&self) -> bool {
                self.reply.shows_pg_unavailable()
            }

            fn describe(&self) -> String {
                self.reply.describe()
            }
        }
    )*};
}

/// A confirm's answer: its verdict, and the failure it stores if it fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmed {
    pub verdict: ConfirmVerdict,
    pub failure: Failure,
    pub reply: ReplyFacts,
}

/// A lookup's answer: what it shows, and the failure the PG gave (stored
/// when the rules settle it FAILED because the PG said so).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Looked {
    pub shown: Shown,
    pub pg_said: Failure,
    pub reply: ReplyFacts,
}

/// A cancel's answer: its verdict (read for the send it was), how much the PG
/// shows refunded in all when it says, and the code a refusal keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canceled {
    pub verdict: CancelVerdict,
    pub refunded_total: Option<u64>,
    pub refusal_code: String,
    pub reply: ReplyFacts,
}

/// A refund's lookup: its verdict, and how much the PG shows refunded in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefundLooked {
    pub verdict: RefundLookupVerdict,
    pub refunded_total: Option<u64>,
    pub reply: ReplyFacts,
}

reply_facts_of!(Confirmed, Looked, Canceled, RefundLooked, ledger::OrphanCanceled, ledger::OrphanLooked);

/// What every PG provides. Each call goes under a place of the PG's own
/// limit (given back once answered) and is recorded; its answer comes back
/// read by the PG's tables.
#[async_trait]
pub trait PgAdapter: Debug + Send + Sync {
    fn pg(&self) -> Pg;

    fn promises(&self) -> Promises;

    /// Its ledger, where it keeps one the shop can read (reconciliation's).
    fn ledger(&self) -> Option<&dyn PgLedger> {
        None
    }

    /// A place under the PG's limit now, or `None` at the limit.
    async fn try_place(&self) -> Result<Option<PgPlace>, sqlx::Error>;

    /// A place, waiting for one.
    async fn place(&self) -> Result<PgPlace, sqlx::Error>;

    /// Prepares the order's payment for the PG's window and says where the
    /// window is, at a PG that asks for the payment before its window opens
    /// (KakaoPay's ready). A PG whose window the page opens by itself, with
    /// nothing from the server (Toss's SDK), prepares nothing.
    async fn prepare_window(&self, _db: &Db, _order: WindowFor<'_>) -> Result<PgWindow, AppError> {
        Err(AppError::InvalidRequest {
            message: format!("the page opens the window for {} by itself: nothing is prepared", self.pg().known_as()),
        })
    }

    /// The payment a confirm request for `order_id` (checked by
    /// [`Adapters::checked`]) names here.
    async fn to_confirm(&self, db: &Db, order_id: &str, request: &ConfirmRequest) -> Result<ToConfirm, AppError>;

    /// Sends a confirm (`Sent::Again`: recovery's, under the attempt's key;
    /// only a PG whose `resending` allows it is ever asked).
    async fn confirm(&self, place: PgPlace, call: ConfirmCall<'_>, caller: PgCaller, send: Sent) -> Confirmed;

    /// What a confirm never sent (`detail` says why) comes to, read as the
    /// PG's tables read a call that did not leave.
    fn not_sent(&self, detail: String) -> Confirmed;

    /// Looks an order's payment up by its payment key.
    async fn look_up(&self, place: PgPlace, payment: PaymentAt<'_>, caller: PgCaller) -> Looked;

    /// Looks an order's payment up by the order's id; asked only of a PG
    /// that promises `lookup_by_order`.
    async fn look_up_by_order(&self, place: PgPlace, order_id: &str, amount: u64, caller: PgCaller) -> Looked;

    /// The failure a payment settled FAILED by a lookup stores, by why.
    fn failure_because(&self, why: FailedBecause, looked: &Looked) -> Failure;

    /// Sends a refund's cancel (`send`: its first, or one sent again), of an
    /// order of `order_amount`.
    async fn cancel(
        &self,
        place: PgPlace,
        refund: &Refund,
        order_amount: u64,
        caller: PgCaller,
        send: Sent,
    ) -> Canceled;

    /// Looks a refund's payment up, to see whether the refund is done.
    async fn look_up_refund(
        &self,
        place: PgPlace,
        refund: &Refund,
        order_amount: u64,
        caller: PgCaller,
    ) -> RefundLooked;

    /// Whether the PG shows the payment as one it refunds only in full, when
    /// it says before a cancel (a PG that does not say answers `false`: its
    /// answer to the cancel decides).
    async fn refunded_only_in_full(&self, _payment: PaymentAt<'_>) -> bool {
        false
    }
}

/// The PGs this shop takes: the one registration of each adapter.
#[derive(Debug, Clone)]
pub struct Adapters {
    pub toss: Arc<TossAdapter>,
    pub kakaopay: Option<Arc<KakaoPayAdapter>>,
}

impl Adapters {
    /// The adapter of `pg`, or the error a customer gets where the shop does not take it.
    pub fn of(&self, pg: Pg) -> Result<&dyn PgAdapter, AppError> {
        match pg {
            Pg::Toss => Ok(self.toss.as_ref()),
            Pg::KakaoPay => {
                self.kakaopay.as_deref().map(|adapter| adapter as &dyn PgAdapter).ok_or(AppError::PgNotOffered(pg))
            }
        }
    }

    /// Whether the shop takes `pg`.
    pub fn takes(&self, pg: Pg) -> bool {
        self.of(pg).is_ok()
    }

    /// Every PG the shop takes.
    pub fn all(&self) -> impl Iterator<Item = &dyn PgAdapter> {
        Pg::ALL.into_iter().filter_map(|pg| self.of(pg).ok())
    }

    /// The PG a confirm request is for, by the proof of authorisation it
    /// carries (Toss's paymentKey or KakaoPay's pg_token, never both), its
    /// fields checked by that PG's adapter before anything is read or stored.
    pub fn checked(request: &ConfirmRequest) -> Result<Pg, AppError> {
        let pg = match (&request.pg_token, request.payment_key.is_empty()) {
            (Some(_), false) => {
                return Err(AppError::InvalidRequest {
                    message: "send payment_key (Toss) or pg_token (KakaoPay), not both".to_owned(),
                });
            }
            (Some(_), true) => Pg::KakaoPay,
            (None, _) => Pg::Toss,
        };
        match pg {
            Pg::Toss => TossAdapter::check(request)?,
            Pg::KakaoPay => KakaoPayAdapter::check(request)?,
        }
        Ok(pg)
    }
}

/// Checks a token the PG's window gave the customer.
fn validate_token(field: &str, value: &str, max: usize) -> Result<(), AppError> {
    let valid = !value.is_empty() && value.len() <= max && value.bytes().all(|byte| byte.is_ascii_graphic());
    if valid {
        Ok(())
    } else {
        Err(AppError::InvalidRequest { message: format!("{field} must be 1 to {max} printable ASCII characters") })
    }
}

//! What the model keeps: the shop's database (one order's attempt), the PG,
//! two servers with their tasks and breakers, the page, and the budgets that
//! bound the exploration.

use payonce_api::OrderStatus;
use payonce_rules::breaker::{FAILURE_THRESHOLD, Phase as BreakerPhase};
use payonce_rules::settlement::AttemptAge;

pub use crate::lease::Holder;
use crate::pg::{CancelReply, Looked, Pg, Reply};

/// The attempt's row in the shop's database.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Row {
    pub status: OrderStatus,
    pub refunded: u64,
    /// `lease_owner`: kept when the lease is released or lapses, as in SQL.
    pub owner: Option<Holder>,
    /// The lease has lapsed (`lease_until_ms` passed, or set to 0).
    pub lapsed: bool,
}

impl Row {
    /// Open for recovery, and free to claim.
    pub fn claimable(&self) -> bool {
        self.is_open() && (self.owner.is_none() || self.lapsed)
    }

    /// PENDING or UNKNOWN: what recovery settles.
    pub fn is_open(&self) -> bool {
        matches!(self.status, OrderStatus::Pending | OrderStatus::Unknown)
    }
}

/// A refund's row: one refund of the order, asked by an operator.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RefundRow {
    pub settled: Option<RefundEnd>,
    pub amount: u64,
    pub balance_before: u64,
    /// Where the order goes back to if the PG refuses it.
    pub back_to: OrderStatus,
    /// Which of the refund's keys is current (a new one after `PROVIDER_ERROR`).
    pub key: u8,
    pub owner: Option<Holder>,
    pub lapsed: bool,
}

/// How a refund ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefundEnd {
    Refunded,
    Refused,
}

impl RefundRow {
    pub fn is_open(&self) -> bool {
        self.settled.is_none()
    }

    pub fn claimable(&self) -> bool {
        self.is_open() && (self.owner.is_none() || self.lapsed)
    }
}

/// The job a worker took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Job {
    Payment,
    Refund,
}

/// Which lookup a worker makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lookup {
    ByKey,
    ByOrder,
}

/// A call a worker is about to make, once the breaker and its lease allow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Call {
    Lookup(Lookup),
    Resend,
    /// A lookup of the payment for a refund.
    RefundLookup,
    /// The cancel, sent (again) under the refund's current key.
    Cancel,
    /// A lookup of the payment right after a cancel sent again was refused
    /// (`after_refund_lookup_of_refusal` decides).
    RefusalLookup,
}

impl Call {
    /// A call about the refund, under the refund's lease.
    pub fn for_refund(self) -> bool {
        matches!(self, Call::RefundLookup | Call::Cancel | Call::RefusalLookup)
    }
}

/// What one task is doing. Slot 0 of a server is the customer's confirm
/// request; slots 1 and 2 are its background workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Task {
    Idle,
    /// The customer's confirm arrived; the attempt is not stored yet.
    ConfirmReceived,
    /// The attempt is stored PENDING under this task's lease.
    ConfirmStored(Holder),
    /// The confirm is at the PG.
    ConfirmAwaiting(Holder),
    /// The PG's reply (or none) is in.
    ConfirmAnswered(Holder, Reply),
    /// An operator's refund is stored, CANCEL_REQUESTED, under this task's lease.
    RefundStored(Holder),
    /// A cancel is at the PG.
    CancelAwaiting(Holder),
    CancelAnswered(Holder, CancelReply),
    /// A worker took the attempt's lease.
    Claimed(Holder),
    /// A worker took the refund's lease.
    RefundClaimed(Holder),
    /// A refund worker's lookup of the payment is in.
    RefundLookedUp(Holder, Looked),
    /// Its lookup after a refusal of the cancel it sent again is in.
    RefusalLookedUp(Holder, Looked),
    /// Asking the breaker for a call.
    AtGate(Holder, Call),
    /// The breaker let the call through (a probe, if it was half-open).
    Granted(Holder, Call),
    /// A lookup's answer is in, with the attempt's age when it went out.
    LookedUp(Holder, Lookup, Looked, AttemptAge),
    /// The resent confirm is at the PG.
    ResendAwaiting(Holder),
    ResendAnswered(Holder, Reply),
}

impl Task {
    /// The lease this task acts under, if it holds one.
    pub fn holder(&self) -> Option<Holder> {
        match *self {
            Task::Idle | Task::ConfirmReceived => None,
            Task::ConfirmStored(holder)
            | Task::ConfirmAwaiting(holder)
            | Task::ConfirmAnswered(holder, _)
            | Task::Claimed(holder)
            | Task::AtGate(holder, _)
            | Task::Granted(holder, _)
            | Task::LookedUp(holder, ..)
            | Task::ResendAwaiting(holder)
            | Task::ResendAnswered(holder, _)
            | Task::RefundStored(holder)
            | Task::CancelAwaiting(holder)
            | Task::CancelAnswered(holder, _)
            | Task::RefundClaimed(holder)
            | Task::RefundLookedUp(holder, _)
            | Task::RefusalLookedUp(holder, _) => Some(holder),
        }
    }
}

pub const SERVERS: u8 = 2;
pub const SLOTS: u8 = 3;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Server {
    /// The breaker, on a clock of deadlines 0 (come) or 1 (to come).
    pub breaker: BreakerPhase<u8>,
    pub tasks: [Task; SLOTS as usize],
}

impl Server {
    pub fn fresh() -> Self {
        Server { breaker: BreakerPhase::CLOSED, tasks: [Task::Idle; SLOTS as usize] }
    }
}

/// The PG's outage, where the protocol has one (`Protocol::with_outage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outage {
    NotYet,
    /// The PG answers no lookup; `failed` have gone unanswered so far.
    Out {
        failed: u8,
    },
    Over,
}

/// Lookups an outage leaves unanswered before it ends: enough to open one
/// server's breaker at the server's threshold, and to fail the probe it lets
/// through after its cool-down.
pub const OUTAGE_LOOKUPS: u8 = FAILURE_THRESHOLD as u8 + 1;

/// What the page has told the customer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Said {
    Nothing,
    NotCharged,
    Paid,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct State {
    pub row: Row,
    pub refund: Option<RefundRow>,
    /// An operator will refund the order once it is paid (the bounds say so).
    pub refund_expected: bool,
    pub pg: Pg,
    pub servers: [Server; SERVERS as usize],
    pub submitted: bool,
    /// The page asked the server to close the order.
    pub page_closed: bool,
    /// A second tab will still send its confirm (the bounds have one, and it
    /// has not): until it has, an order its first tab left CREATED is not
    /// settled, as the second tab's confirm may still come.
    pub second_tab_to_come: bool,
    pub said: Said,
    /// The customer confirmed with a paymentKey of another order.
    pub names_other_order: bool,
    /// Faults still allowed: a kill, a freeze past a lease, a database
    /// error, a timeout, a 429, a stored 5xx, a failed lookup.
    pub faults_left: u8,
    /// The PG's outage (one of the faults, where the protocol has one).
    pub outage: Outage,
    /// Recovery passes so far (each claim is one); no claim past the bound.
    pub passes: u8,
    /// Refund passes so far, bounded the same way.
    pub refund_passes: u8,
    pub operator_asked: bool,
    /// What the shop was told of the order, by the same rule the status
    /// writer tells it by (`settlement::event_of`).
    pub shop: ShopHeard,
    /// The payment was settled at some step before (PAID, FAILED, or a
    /// refund's status): it must stay settled.
    pub settled_once: bool,
}

/// The shop's side: the status of the last event it was told, and whether
/// any event it was told was untrue when it was written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ShopHeard {
    pub last: Option<OrderStatus>,
    pub told_untrue: bool,
}

impl State {
    /// A status change was stored: the shop is told of it if the rule says so.
    pub fn told_shop(&mut self, from: OrderStatus, code: Option<&str>, refunded_before: u64) {
        use payonce_api::EventType;
        let (to, refunded_after) = (self.row.status, self.row.refunded);
        let change = payonce_rules::settlement::Told { from, to, code, refunded_before, refunded_after };
        let Some(kind) = payonce_rules::settlement::event_of(change) else { return };
        let untrue = match kind {
            EventType::Paid => !self.pg.charged,
            EventType::Failed | EventType::Expired => self.pg.charged,
            _ => false,
        };
        self.shop.told_untrue |= untrue;
        self.shop.last = Some(to);
    }

    pub fn task(&self, server: u8, worker: u8) -> Task {
        self.servers[server as usize].tasks[worker as usize]
    }

    pub fn set_task(&mut self, server: u8, worker: u8, task: Task) {
        self.servers[server as usize].tasks[worker as usize] = task;
    }

    /// Whether a live task acts under `holder`.
    pub fn held_by_a_task(&self, holder: Holder) -> bool {
        self.servers.iter().flat_map(|server| server.tasks.iter()).any(|task| task.holder() == Some(holder))
    }
}

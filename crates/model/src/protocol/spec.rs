//! What the model explores: its bounds, the protocol with the old rules it
//! puts back, and each actor's atomic steps.

use std::collections::BTreeSet;

use payonce_rules::breaker::FAILURE_THRESHOLD;
use payonce_rules::settlement::Resending;

use crate::old_rules::OldRule;
use crate::pg::{CancelProcessing, CancelRequest, Processing, Request};
use crate::state::Job;

/// What an operator refunds, in the model's units (the order's amount is 2).
pub const REFUND_AMOUNT: u64 = 1;

/// How far the exploration goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Faults in one run: kills, freezes past a lease, database errors,
    /// timeouts, 429s, stored 5xx, failed lookups.
    pub faults: u8,
    /// Recovery passes after each of the session's two moments (its end, and
    /// the end of the longest processing after it), beyond one for each fault
    /// and one for the operator's ask (each may cost a pass): recovery must
    /// settle what it can within them.
    pub passes: u8,
    /// Background workers per server (1 or 2).
    pub workers: u8,
    /// An operator refunds part of a paid order (and the PG's cancels are in play).
    pub refunds: bool,
    /// Tabs of the page that pay for the order (1 or 2).
    pub tabs: u8,
}

impl Bounds {
    /// The bound the test command explores.
    pub const TESTED: Bounds = Bounds { faults: 2, passes: 2, workers: 2, refunds: true, tabs: 1 };

    /// The most passes recovery gets after each of the session's moments.
    pub fn pass_limit(&self) -> u8 {
        self.passes + self.faults + 1
    }
}

/// The protocol, with the old rules put back that `old_rules` names.
#[derive(Debug, Clone)]
pub struct Protocol {
    pub bounds: Bounds,
    pub old_rules: BTreeSet<OldRule>,
    /// Check only this property (the exploration stops at its first discovery).
    pub only: Option<&'static str>,
    /// The PG takes no idempotency key (KakaoPay's approve).
    pub keyless_pg: bool,
    /// What the server's rules allow after a lookup shows no confirm.
    pub resending: Resending,
    /// The PG also answers a confirm with a 409 while its key's first request
    /// is processing, or with a body that cannot be read, and a connection may
    /// fail before the request arrives (a run of its own: these multiply the
    /// states several times over).
    pub wire_faults: bool,
    /// One fault may be an outage: the PG answers no lookup until the
    /// breaker could have opened at the server's threshold and a probe failed
    /// once more, and the breaker opens at the server's threshold, not at the
    /// first failure (a run of its own).
    pub outage: bool,
}

impl Protocol {
    pub fn new(bounds: Bounds) -> Self {
        Protocol {
            bounds,
            old_rules: BTreeSet::new(),
            only: None,
            keyless_pg: false,
            resending: Resending::UnderTheSameKey,
            wire_faults: false,
            outage: false,
        }
    }

    /// The same protocol at a PG without idempotency keys, under the rules the
    /// server applies to one: an approve goes out once.
    pub fn without_idempotency_keys(mut self) -> Self {
        self.keyless_pg = true;
        self.resending = Resending::Never;
        self
    }

    /// The same protocol with the server resending as `resending` says,
    /// whatever the PG (to see the checker catch a resend without keys).
    pub fn resending(mut self, resending: Resending) -> Self {
        self.resending = resending;
        self
    }

    /// The same protocol with the PG's rarer answers in play (`wire_faults`).
    pub fn with_wire_faults(mut self) -> Self {
        self.wire_faults = true;
        self
    }

    /// The same protocol with an outage in play and the server's breaker
    /// threshold (`outage`).
    pub fn with_outage(mut self) -> Self {
        self.outage = true;
        self
    }

    /// Failures in a row that open a server's breaker: the server's own under
    /// an outage; otherwise the first, so that one or two faults reach every
    /// phase of the breaker.
    pub(super) fn breaker_threshold(&self) -> u32 {
        if self.outage { FAILURE_THRESHOLD } else { 1 }
    }

    /// The same protocol, checked for one property only.
    pub fn only(mut self, property: &'static str) -> Self {
        self.only = Some(property);
        self
    }

    /// The same protocol with one old rule back.
    pub fn with_old_rule(mut self, rule: OldRule) -> Self {
        self.old_rules.insert(rule);
        self
    }

    pub(super) fn old(&self, rule: OldRule) -> bool {
        self.old_rules.contains(&rule)
    }
}

/// One step of one actor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// The page sends its one confirm, to a server.
    Submit {
        server: u8,
    },
    /// The page checks the order and shows what the server says.
    PageChecks,
    /// A second tab of the page, back from the window, sends its confirm (its
    /// own idempotency key) to a server, before the order has an outcome. (Its
    /// checks read the same order as the first tab's.)
    SecondTabSubmits {
        server: u8,
    },
    /// The page's window ended with the server holding no confirm: it asks the
    /// server to close the order (`abandon`), FAILED only if it has no attempt.
    PageClosesOrder,
    /// The confirm task stores the attempt PENDING, under a lease of its own.
    StoreAttempt {
        server: u8,
    },
    SendConfirm {
        server: u8,
    },
    /// The confirm task stores what the PG's reply (or its absence) means.
    SettleConfirm {
        server: u8,
    },
    /// An operator refunds part of the paid order, on a server.
    AskRefund {
        server: u8,
    },
    /// The refund's task sends its first cancel.
    SendCancel {
        server: u8,
    },
    /// A worker takes the attempt's, or the refund's, lapsed lease.
    Claim {
        server: u8,
        worker: u8,
        job: Job,
    },
    /// It marks a PENDING attempt UNKNOWN, then asks to look it up.
    BeginPass {
        server: u8,
        worker: u8,
    },
    /// It asks its server's breaker for the call.
    AskBreaker {
        server: u8,
        worker: u8,
    },
    /// It renews its lease and makes the call (a lookup fails if `fails`).
    RenewAndCall {
        server: u8,
        worker: u8,
        fails: bool,
    },
    /// It does what the rules say the answer leads to.
    Decide {
        server: u8,
        worker: u8,
    },
    /// The PG processes a confirm it received.
    Process {
        request: Request,
        processing: Processing,
    },
    /// The PG processes a cancel it received.
    ProcessCancel {
        request: CancelRequest,
        processing: CancelProcessing,
    },
    /// A task stops waiting for the PG (a timeout).
    GiveUp {
        server: u8,
        worker: u8,
    },
    /// The PG's session for the payment ends.
    SessionEnds,
    /// Past the session and the longest processing: the attempt is old.
    SessionLongOver,
    /// Someone cancels part of the charge at the PG (its console).
    PartialCancelAtPg,
    /// Time passes: breaker deadlines come.
    Tick,
    /// The PG goes out: it answers no lookup for a stretch (`Outage`).
    OutageBegins,
    /// SIGKILL: the server's tasks and breaker are lost; it restarts.
    Kill {
        server: u8,
    },
    /// A database call fails at an await: the task ends there.
    TaskStops {
        server: u8,
        worker: u8,
    },
    /// The lease's holder freezes past it.
    Freeze {
        job: Job,
    },
    /// The lease of a task that is gone runs out.
    LeaseRunsOut {
        job: Job,
    },
    /// An operator's "ask the PG now".
    AskPgNow,
}

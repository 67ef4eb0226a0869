//! The steps each actor can take, one atomic step at a time, so the checker
//! interleaves them every way they can. Each step that decides anything calls
//! the server's own rules; the model only carries their inputs and outputs.

use std::collections::BTreeSet;

use payonce_api::{Failure, OrderStatus};
use payonce_server::pg::{
    ExpectedRefund, PgAnswer, cancel_answer, cancel_verdict, confirm_answer, failure_of, first_call_verdict,
    order_status_answer, refund_lookup, refund_lookup_verdict, refunded_total, refusal_code, resend_verdict,
    status_answer, status_verdict,
};
use payonce_server::settlement::{
    AttemptAge, FailedBecause, PaymentStep, RefundStep, Shown, Transition, after_cancel, after_first_call,
    after_lookup, after_order_lookup, after_refund_lookup, after_resend,
};
use stateright::{Model, Property};

use crate::old_rules::OldRule;
use crate::pg::{
    self, AMOUNT, CancelProcessing, CancelReply, CancelRequest, ExpiryShows, Pg, Processing, Reply, Request,
};
use crate::properties;
use crate::state::{Call, Holder, Job, Lookup, RefundEnd, RefundRow, Row, SERVERS, Said, Server, State, Task};

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
}

impl Protocol {
    pub fn new(bounds: Bounds) -> Self {
        Protocol { bounds, old_rules: BTreeSet::new(), only: None }
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

    fn old(&self, rule: OldRule) -> bool {
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
        slot: u8,
        job: Job,
    },
    /// It marks a PENDING attempt UNKNOWN, then asks to look it up.
    BeginPass {
        server: u8,
        slot: u8,
    },
    /// It asks its server's breaker for the call.
    AskBreaker {
        server: u8,
        slot: u8,
    },
    /// It renews its lease and makes the call (a lookup fails if `fails`).
    RenewAndCall {
        server: u8,
        slot: u8,
        fails: bool,
    },
    /// It does what the rules say the answer leads to.
    Decide {
        server: u8,
        slot: u8,
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
        slot: u8,
    },
    /// The PG's session for the payment ends.
    SessionEnds,
    /// Past the session and the longest processing: the attempt is old.
    SessionLongOver,
    /// Someone cancels part of the charge at the PG (its console).
    PartialCancelAtPg,
    /// Time passes: breaker deadlines come.
    Tick,
    /// SIGKILL: the server's tasks and breaker are lost; it restarts.
    Kill {
        server: u8,
    },
    /// A database call fails at an await: the task ends there.
    TaskStops {
        server: u8,
        slot: u8,
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

impl Model for Protocol {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        let mut states = Vec::new();
        for names_other_order in [false, true] {
            for declines in [false, true] {
                for expiry_shows in [ExpiryShows::Expired, ExpiryShows::NotFound] {
                    if names_other_order && declines {
                        continue; // the card never reaches the card company
                    }
                    states.push(State {
                        row: Row { status: OrderStatus::Created, refunded: 0, owner: None, lapsed: false },
                        refund: None,
                        refund_expected: self.bounds.refunds,
                        pg: Pg::new(declines, expiry_shows),
                        servers: [Server::fresh(), Server::fresh()],
                        submitted: false,
                        said: Said::Nothing,
                        names_other_order,
                        faults_left: self.bounds.faults,
                        passes: 0,
                        refund_passes: 0,
                        page_closed: false,
                        second_tab_submitted: false,
                        operator_asked: false,
                    });
                }
            }
        }
        states
    }

    fn actions(&self, state: &State, actions: &mut Vec<Action>) {
        let fault = state.faults_left > 0;
        if !state.submitted {
            for server in 0..SERVERS {
                actions.push(Action::Submit { server });
            }
        } else {
            actions.push(Action::PageChecks);
            if !state.page_closed && state.row.status == OrderStatus::Created {
                actions.push(Action::PageClosesOrder);
            }
        }
        let before_an_outcome = matches!(state.row.status, OrderStatus::Created | OrderStatus::Pending);
        if self.bounds.tabs > 1 && !state.second_tab_submitted && before_an_outcome {
            for server in (0..SERVERS).filter(|&server| state.task(server, 0) == Task::Idle) {
                actions.push(Action::SecondTabSubmits { server });
            }
        }
        for server in 0..SERVERS {
            let breaker_refuses = matches!(state.servers[server as usize].breaker, BreakerPhaseOf::Open { until: 1 });
            let mut busy = false;
            for slot in 0..=self.bounds.workers {
                let task = state.task(server, slot);
                busy |= task != Task::Idle;
                match task {
                    Task::Idle if slot > 0 => {
                        let limit = self.bounds.pass_limit();
                        if state.row.claimable() && !breaker_refuses && state.passes < limit {
                            actions.push(Action::Claim { server, slot, job: Job::Payment });
                        }
                        let refund_claimable = state.refund.as_ref().is_some_and(RefundRow::claimable);
                        if refund_claimable && !breaker_refuses && state.refund_passes < limit {
                            actions.push(Action::Claim { server, slot, job: Job::Refund });
                        }
                    }
                    Task::Idle => {
                        let paid = matches!(state.row.status, OrderStatus::Paid | OrderStatus::PartiallyRefunded);
                        if self.bounds.refunds && state.refund.is_none() && paid {
                            actions.push(Action::AskRefund { server });
                        }
                    }
                    Task::RefundStored(_) => actions.push(Action::SendCancel { server }),
                    Task::RefundClaimed(_) => actions.push(Action::BeginPass { server, slot }),
                    Task::ConfirmReceived => actions.push(Action::StoreAttempt { server }),
                    Task::ConfirmStored(_) => actions.push(Action::SendConfirm { server }),
                    Task::ConfirmAnswered(..) => actions.push(Action::SettleConfirm { server }),
                    Task::Claimed(_) => actions.push(Action::BeginPass { server, slot }),
                    Task::AtGate(..) => actions.push(Action::AskBreaker { server, slot }),
                    Task::Granted(_, call) => {
                        actions.push(Action::RenewAndCall { server, slot, fails: false });
                        if fault && matches!(call, Call::Lookup(_) | Call::RefundLookup) {
                            actions.push(Action::RenewAndCall { server, slot, fails: true });
                        }
                    }
                    Task::LookedUp(..)
                    | Task::ResendAnswered(..)
                    | Task::CancelAnswered(..)
                    | Task::RefundLookedUp(..) => {
                        actions.push(Action::Decide { server, slot });
                    }
                    Task::ConfirmAwaiting(_) | Task::ResendAwaiting(_) | Task::CancelAwaiting(_) => {
                        if fault {
                            actions.push(Action::GiveUp { server, slot });
                        }
                    }
                }
                if fault && task != Task::Idle {
                    actions.push(Action::TaskStops { server, slot });
                }
            }
            if fault && busy {
                actions.push(Action::Kill { server });
            }
        }
        for &request in &state.pg.inbox {
            actions.push(Action::Process { request, processing: Processing::AsDocumented });
            if fault && state.pg.stored.is_none() {
                actions.push(Action::Process { request, processing: Processing::TurnedAway });
                actions.push(Action::Process { request, processing: Processing::StoredServerError });
            }
        }
        for &request in &state.pg.cancel_inbox {
            actions.push(Action::ProcessCancel { request, processing: CancelProcessing::AsDocumented });
            if fault && state.pg.cancel_stored[usize::from(request.key)].is_none() {
                actions.push(Action::ProcessCancel { request, processing: CancelProcessing::TurnedAway });
                if usize::from(request.key) + 1 < pg::REFUND_KEYS {
                    actions.push(Action::ProcessCancel { request, processing: CancelProcessing::ProviderError });
                }
            }
        }
        if !state.pg.session_over {
            actions.push(Action::SessionEnds);
        } else if !state.pg.long_over && !state.pg.processing_from_the_session() {
            actions.push(Action::SessionLongOver);
        }
        if state.pg.payment == pg::PaymentAtPg::Done && !state.pg.partly_cancelled && console_refund_in_scope(state) {
            actions.push(Action::PartialCancelAtPg);
        }
        if state.servers.iter().any(|server| deadline_to_come(server.breaker)) {
            actions.push(Action::Tick);
        }
        let refund_lease =
            state.refund.as_ref().and_then(|refund| refund.owner.filter(|_| !refund.lapsed && refund.is_open()));
        let leases = [
            (Job::Payment, state.row.owner.filter(|_| !state.row.lapsed && state.row.is_open())),
            (Job::Refund, refund_lease),
        ];
        for (job, owner) in leases {
            let Some(owner) = owner else { continue };
            if !state.held_by_a_task(owner) {
                actions.push(Action::LeaseRunsOut { job });
            } else if fault {
                actions.push(Action::Freeze { job });
            }
        }
        if !state.operator_asked && state.row.is_open() {
            actions.push(Action::AskPgNow);
        }
    }

    fn next_state(&self, last: &State, action: Action) -> Option<State> {
        let mut state = last.clone();
        match action {
            Action::Submit { server } => {
                state.submitted = true;
                state.set_task(server, 0, Task::ConfirmReceived);
            }
            Action::PageChecks => {
                let said = page_says(&state.row, state.said);
                if said == state.said {
                    return None;
                }
                state.said = said;
            }
            Action::SecondTabSubmits { server } => {
                state.second_tab_submitted = true;
                state.set_task(server, 0, Task::ConfirmReceived);
            }

            Action::PageClosesOrder => {
                // `close_unconfirmed`: one statement, decided by the order's key.
                state.page_closed = true;
                if state.row.status == OrderStatus::Created {
                    state.row.status = OrderStatus::Failed;
                }
            }
            Action::StoreAttempt { server } => {
                if state.row.status == OrderStatus::Created {
                    let holder = self.new_holder(&state, server, 0);
                    state.row = Row { status: OrderStatus::Pending, refunded: 0, owner: Some(holder), lapsed: false };
                    state.set_task(server, 0, Task::ConfirmStored(holder));
                } else {
                    state.set_task(server, 0, Task::Idle);
                }
            }
            Action::SendConfirm { server } => {
                let Task::ConfirmStored(holder) = state.task(server, 0) else { return None };
                state.pg.inbox.push(Request { to: (server, 0), holder, in_session: !state.pg.session_over });
                state.pg.inbox.sort();
                state.set_task(server, 0, Task::ConfirmAwaiting(holder));
            }
            Action::SettleConfirm { server } => {
                let Task::ConfirmAnswered(holder, reply) = state.task(server, 0) else { return None };
                let answer = pg::confirm_answer(reply, state.names_other_order);
                let kind = confirm_answer(&answer, pg::expected(state.names_other_order));
                let transition =
                    after_first_call(first_call_verdict(kind), || failure_of(&answer), || pg::describe(&answer));
                let guarded = !self.old(OldRule::ConfirmSettlesWithoutLease);
                self.write(&mut state, &transition, holder, guarded);
                state.set_task(server, 0, Task::Idle);
            }
            Action::AskRefund { server } => {
                let holder = self.new_holder(&state, server, 0);
                let balance_before = AMOUNT - state.row.refunded;
                let requested = Transition::CancelRequested { balance_before };
                let moved = requested.from(state.row.status, AMOUNT, state.row.refunded)?;
                state.refund = Some(RefundRow {
                    settled: None,
                    amount: REFUND_AMOUNT,
                    balance_before,
                    back_to: state.row.status,
                    key: 0,
                    owner: Some(holder),
                    lapsed: false,
                });
                state.row.status = moved.to;
                state.set_task(server, 0, Task::RefundStored(holder));
            }
            Action::SendCancel { server } => {
                let Task::RefundStored(holder) = state.task(server, 0) else { return None };
                let key = state.refund.as_ref()?.key;
                state.pg.cancel_inbox.push(CancelRequest { to: (server, 0), holder, key });
                state.pg.cancel_inbox.sort();
                state.set_task(server, 0, Task::CancelAwaiting(holder));
            }
            Action::Claim { server, slot, job } => {
                let holder = self.new_holder(&state, server, slot);
                match job {
                    Job::Payment => {
                        state.row.owner = Some(holder);
                        state.row.lapsed = false;
                        state.passes += 1;
                        state.set_task(server, slot, Task::Claimed(holder));
                    }
                    Job::Refund => {
                        let refund = state.refund.as_mut()?;
                        refund.owner = Some(holder);
                        refund.lapsed = false;
                        state.refund_passes += 1;
                        state.set_task(server, slot, Task::RefundClaimed(holder));
                    }
                }
            }
            Action::BeginPass { server, slot } => {
                if let Task::RefundClaimed(holder) = state.task(server, slot) {
                    state.set_task(server, slot, Task::AtGate(holder, Call::RefundLookup));
                    return Some(state);
                }
                let Task::Claimed(holder) = state.task(server, slot) else { return None };
                if state.row.status == OrderStatus::Pending {
                    let unknown = Transition::Unknown("left pending".to_owned());
                    self.write_from(&mut state, &unknown, &[OrderStatus::Pending], holder, true, false);
                }
                state.set_task(server, slot, Task::AtGate(holder, Call::Lookup(Lookup::ByKey)));
            }
            Action::AskBreaker { server, slot } => {
                let Task::AtGate(holder, call) = state.task(server, slot) else { return None };
                let probe_until = if self.old(OldRule::HalfOpenForever) { u8::MAX } else { 1 };
                let breaker = &mut state.servers[server as usize].breaker;
                if breaker.allows_call(0, probe_until) {
                    state.set_task(server, slot, Task::Granted(holder, call));
                } else {
                    // Held back until the probe's deadline, which time brings: the
                    // engine comes round again, and such a pass is not one of the
                    // bound's. One held back by a deadline that never comes is.
                    let refund_call = matches!(call, Call::RefundLookup | Call::Cancel);
                    if deadline_to_come(*breaker) {
                        let passes = if refund_call { &mut state.refund_passes } else { &mut state.passes };
                        *passes = passes.saturating_sub(1);
                    }
                    if refund_call {
                        release_refund(&mut state.refund, holder);
                    } else {
                        release(&mut state.row, holder);
                    }
                    state.set_task(server, slot, Task::Idle);
                }
            }
            Action::RenewAndCall { server, slot, fails } => {
                let Task::Granted(holder, call) = state.task(server, slot) else { return None };
                if matches!(call, Call::RefundLookup | Call::Cancel) {
                    return Some(self.renew_and_call_for_refund(state, (server, slot), holder, call, fails));
                }
                if state.row.owner != Some(holder) || !state.row.is_open() {
                    // Settled or taken over: nothing is sent (a probe granted is lost).
                    state.set_task(server, slot, Task::Idle);
                    return Some(state);
                }
                state.row.lapsed = false;
                match call {
                    Call::Lookup(by) => {
                        if fails {
                            state.faults_left -= 1;
                        }
                        let looked = match (fails, by) {
                            (true, _) => pg::Looked::Unavailable,
                            (false, Lookup::ByKey) => state.pg.look_up_by_key(state.names_other_order),
                            (false, Lookup::ByOrder) => state.pg.look_up_by_order(),
                        };
                        note_health(&mut state.servers[server as usize], &pg::lookup_answer(looked));
                        let age = self.age(&state);
                        state.set_task(server, slot, Task::LookedUp(holder, by, looked, age));
                    }
                    Call::RefundLookup | Call::Cancel => unreachable!("refund calls are made above"),
                    Call::Resend => {
                        let in_session = !state.pg.session_over;
                        state.pg.inbox.push(Request { to: (server, slot), holder, in_session });
                        state.pg.inbox.sort();
                        state.set_task(server, slot, Task::ResendAwaiting(holder));
                    }
                }
            }
            Action::Decide { server, slot } => {
                let next = match state.task(server, slot) {
                    Task::LookedUp(holder, by, looked, age) => {
                        let answer = pg::lookup_answer(looked);
                        let step = self.after_looking(&state, by, &answer, age);
                        self.take_step(&mut state, holder, step)
                    }
                    Task::RefundLookedUp(holder, looked) => {
                        let answer = pg::lookup_answer(looked);
                        let refund = state.refund.clone()?;
                        let shown = refund_lookup(&answer, expected_refund(&refund));
                        match after_refund_lookup(refund_lookup_verdict(shown)) {
                            RefundStep::SettleRefunded => {
                                settle_refund(&mut state, RefundEnd::Refunded, &answer);
                                Task::Idle
                            }
                            RefundStep::Send => Task::AtGate(holder, Call::Cancel),
                            RefundStep::SettleRefused | RefundStep::NewKey | RefundStep::LookAgainLater => {
                                release_refund(&mut state.refund, holder);
                                Task::Idle
                            }
                        }
                    }
                    Task::CancelAnswered(holder, reply) => {
                        let answer = pg::cancel_answer(reply);
                        if slot > 0 {
                            note_health(&mut state.servers[server as usize], &answer);
                        }
                        let refund = state.refund.clone()?;
                        match after_cancel(cancel_verdict(cancel_answer(&answer, expected_refund(&refund)))) {
                            RefundStep::SettleRefunded => settle_refund(&mut state, RefundEnd::Refunded, &answer),
                            RefundStep::SettleRefused => settle_refund(&mut state, RefundEnd::Refused, &answer),
                            RefundStep::NewKey => {
                                // `replace_refund_key`: only the refund's lease holder.
                                if let Some(refund) = state.refund.as_mut()
                                    && refund.owner == Some(holder)
                                    && refund.is_open()
                                {
                                    refund.key += 1;
                                }
                                release_refund(&mut state.refund, holder);
                            }
                            RefundStep::Send | RefundStep::LookAgainLater => release_refund(&mut state.refund, holder),
                        }
                        Task::Idle
                    }
                    Task::ResendAnswered(holder, reply) => {
                        let answer = pg::confirm_answer(reply, state.names_other_order);
                        note_health(&mut state.servers[server as usize], &answer);
                        let kind = confirm_answer(&answer, pg::expected(state.names_other_order));
                        let step = after_resend(resend_verdict(kind), || failure_of(&answer));
                        self.take_step(&mut state, holder, step)
                    }
                    _ => return None,
                };
                state.set_task(server, slot, next);
            }
            Action::Process { request, processing } => {
                let position = state.pg.inbox.iter().position(|sent| *sent == request)?;
                state.pg.inbox.remove(position);
                if processing != Processing::AsDocumented {
                    state.faults_left -= 1;
                }
                let reply = state.pg.process(request, state.names_other_order, processing);
                let (server, slot) = request.to;
                match state.task(server, slot) {
                    Task::ConfirmAwaiting(holder) if holder == request.holder => {
                        state.set_task(server, slot, Task::ConfirmAnswered(holder, reply));
                    }
                    Task::ResendAwaiting(holder) if holder == request.holder => {
                        state.set_task(server, slot, Task::ResendAnswered(holder, reply));
                    }
                    // Its caller gave up or is gone: the reply is lost, its effect is not.
                    _ => {}
                }
            }
            Action::ProcessCancel { request, processing } => {
                let position = state.pg.cancel_inbox.iter().position(|sent| *sent == request)?;
                state.pg.cancel_inbox.remove(position);
                if processing != CancelProcessing::AsDocumented {
                    state.faults_left -= 1;
                }
                let amount = state.refund.as_ref()?.amount;
                let reply = state.pg.process_cancel(request, amount, processing);
                let (server, slot) = request.to;
                if state.task(server, slot) == Task::CancelAwaiting(request.holder) {
                    state.set_task(server, slot, Task::CancelAnswered(request.holder, reply));
                }
            }
            Action::GiveUp { server, slot } => {
                state.faults_left -= 1;
                let task = match state.task(server, slot) {
                    Task::CancelAwaiting(holder) => Task::CancelAnswered(holder, CancelReply::NoAnswer),
                    Task::ConfirmAwaiting(holder) => Task::ConfirmAnswered(holder, Reply::NoAnswer),
                    Task::ResendAwaiting(holder) => Task::ResendAnswered(holder, Reply::NoAnswer),
                    _ => return None,
                };
                state.set_task(server, slot, task);
            }
            Action::SessionEnds => {
                state.pg.session_over = true;
                state.passes = 0;
            }
            Action::SessionLongOver => {
                state.pg.long_over = true;
                state.passes = 0;
            }
            Action::PartialCancelAtPg => {
                state.pg.payment = pg::PaymentAtPg::PartialCanceled;
                state.pg.refunded = 1;
                state.pg.refunded_at_console = 1;
                state.pg.partly_cancelled = true;
            }
            Action::Tick => {
                for server in &mut state.servers {
                    server.breaker = match server.breaker {
                        BreakerPhaseOf::Open { until: 1 } => BreakerPhaseOf::Open { until: 0 },
                        BreakerPhaseOf::HalfOpen { probe_until: 1 } => BreakerPhaseOf::HalfOpen { probe_until: 0 },
                        phase => phase,
                    };
                }
            }
            Action::Kill { server } => {
                state.faults_left -= 1;
                state.servers[server as usize] = Server::fresh();
            }
            Action::TaskStops { server, slot } => {
                state.faults_left -= 1;
                state.set_task(server, slot, Task::Idle);
            }
            Action::Freeze { job } => {
                state.faults_left -= 1;
                lapse(&mut state, job)?;
            }
            Action::LeaseRunsOut { job } => lapse(&mut state, job)?,
            Action::AskPgNow => {
                state.operator_asked = true;
                state.row.lapsed = true;
            }
        }
        Some(state)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        let mut properties = properties::all();
        if !self.bounds.refunds {
            properties.retain(|property| property.name != properties::CAN_BE_REFUNDED);
        }
        if let Some(only) = self.only {
            properties.retain(|property| property.name == only);
        }
        properties
    }
}

/// The breaker's phases, on the model's clock.
type BreakerPhaseOf = payonce_server::resilience::BreakerPhase<u8>;

fn deadline_to_come(phase: BreakerPhaseOf) -> bool {
    matches!(phase, BreakerPhaseOf::Open { until: 1 } | BreakerPhaseOf::HalfOpen { probe_until: 1 })
}

/// The breaker hears how the PG answered (`pass::note_health`). It opens at
/// the first failure here, so that few faults reach every phase.
fn note_health(server: &mut Server, answer: &PgAnswer) {
    if answer.shows_pg_unavailable() {
        server.breaker.record_failure(1, 1);
    } else {
        server.breaker.record_answer();
    }
}

/// A refund made at the PG's console, not by the shop, is in the model's
/// scope only while the shop's record is UNKNOWN and the shop is quiet (no
/// task at work, nothing of its own at the PG): recovery's next lookup must
/// then find it and record it. One made while the shop acts on what it read
/// before, once it stored a charge, or during its own refund, the shop cannot
/// tell from its own doing (the model found each of these): it is
/// reconciliation's to flag, and an operator's to settle.
fn console_refund_in_scope(state: &State) -> bool {
    let quiet = state.servers.iter().flat_map(|server| server.tasks.iter()).all(|task| *task == Task::Idle)
        && state.pg.inbox.is_empty()
        && state.pg.cancel_inbox.is_empty();
    state.row.status == OrderStatus::Unknown && state.refund.is_none() && quiet
}

/// What a tab shows after checking the order, from what it showed.
fn page_says(row: &Row, said: Said) -> Said {
    match row.status {
        OrderStatus::Failed => Said::NotCharged,
        OrderStatus::Paid | OrderStatus::PartiallyRefunded | OrderStatus::Canceled => Said::Paid,
        _ => said,
    }
}

/// The lease of `job` lapses.
fn lapse(state: &mut State, job: Job) -> Option<()> {
    match job {
        Job::Payment => state.row.lapsed = true,
        Job::Refund => state.refund.as_mut()?.lapsed = true,
    }
    Some(())
}

/// What the refund expects the PG to show once it is done.
fn expected_refund(refund: &RefundRow) -> ExpectedRefund<'static> {
    ExpectedRefund {
        payment: pg::expected(false),
        balance_before: refund.balance_before,
        balance_after: refund.balance_before - refund.amount,
    }
}

/// Settles the refund (`settle_refunded`, or a refusal) and the order with it,
/// if it is still open.
fn settle_refund(state: &mut State, end: RefundEnd, answer: &PgAnswer) {
    let Some(refund) = state.refund.as_mut().filter(|refund| refund.is_open()) else { return };
    refund.settled = Some(end);
    let transition = match end {
        RefundEnd::Refunded => {
            let refunded_total = refunded_total(answer).unwrap_or(state.row.refunded + refund.amount);
            Transition::RefundSettled { refunded_total }
        }
        RefundEnd::Refused => Transition::RefundRefused { back_to: refund.back_to, code: refusal_code(answer) },
    };
    if let Some(moved) = transition.from(state.row.status, AMOUNT, state.row.refunded) {
        state.row.status = moved.to;
        state.row.refunded = moved.refunded;
    }
}

/// A worker's release of a refund it did not settle.
fn release_refund(refund: &mut Option<RefundRow>, holder: Holder) {
    if let Some(refund) = refund.as_mut()
        && refund.owner == Some(holder)
        && refund.is_open()
    {
        refund.lapsed = true;
    }
}

/// A worker's release of a job it did not settle (`release_job`).
fn release(row: &mut Row, holder: Holder) {
    if row.owner == Some(holder) && row.is_open() {
        row.lapsed = true;
    }
}

impl Protocol {
    /// A holder for a new lease: each claim its own, or, under the old rule,
    /// one per server. The serial is the smallest that no earlier holder of
    /// this slot still in the state has (the row's owner, a request at the
    /// PG), so that states differing only in spent names are one state.
    fn new_holder(&self, state: &State, server: u8, slot: u8) -> Holder {
        if self.old(OldRule::OneLeaseNamePerServer) {
            return Holder { server, slot: 0, serial: 0 };
        }
        let in_use = |serial| {
            let holder = Holder { server, slot, serial };
            state.row.owner == Some(holder) || state.pg.inbox.iter().any(|request| request.holder == holder)
        };
        let serial = (0..).find(|&serial| !in_use(serial)).expect("a free serial");
        Holder { server, slot, serial }
    }

    /// A refund worker renews the refund's lease and makes its call.
    fn renew_and_call_for_refund(
        &self,
        mut state: State,
        (server, slot): (u8, u8),
        holder: Holder,
        call: Call,
        fails: bool,
    ) -> State {
        let Some(refund) = state.refund.as_mut().filter(|refund| refund.owner == Some(holder) && refund.is_open())
        else {
            state.set_task(server, slot, Task::Idle);
            return state;
        };
        refund.lapsed = false;
        let key = refund.key;
        if call == Call::Cancel {
            state.pg.cancel_inbox.push(CancelRequest { to: (server, slot), holder, key });
            state.pg.cancel_inbox.sort();
            state.set_task(server, slot, Task::CancelAwaiting(holder));
            return state;
        }
        if fails {
            state.faults_left -= 1;
        }
        let looked = if fails { pg::Looked::Unavailable } else { state.pg.look_up_by_order() };
        note_health(&mut state.servers[server as usize], &pg::lookup_answer(looked));
        state.set_task(server, slot, Task::RefundLookedUp(holder, looked));
        state
    }

    /// The attempt's age as the server computes it when a lookup goes out.
    fn age(&self, state: &State) -> AttemptAge {
        if state.pg.long_over && !self.old(OldRule::NoAgeRule) { AttemptAge::PastSession } else { AttemptAge::Young }
    }

    /// What a lookup's answer leads to.
    fn after_looking(&self, state: &State, by: Lookup, answer: &PgAnswer, age: AttemptAge) -> PaymentStep {
        let failure = |why: FailedBecause| Failure { code: format!("{why:?}"), message: pg::describe(answer) };
        match by {
            Lookup::ByKey => {
                let verdict = status_verdict(status_answer(answer, pg::expected(state.names_other_order)));
                let shown = Shown { verdict, refunded_total: refunded_total(answer) };
                match after_lookup(shown, age, failure) {
                    PaymentStep::LookUpByOrder if self.old(OldRule::LookupByKeyOnly) => PaymentStep::LookAgainLater,
                    step => step,
                }
            }
            Lookup::ByOrder => {
                after_order_lookup(status_verdict(order_status_answer(answer, pg::ORDER_ID, AMOUNT)), failure)
            }
        }
    }

    /// Does what a step says; returns the worker's next task.
    fn take_step(&self, state: &mut State, holder: Holder, step: PaymentStep) -> Task {
        match step {
            PaymentStep::Settle(transition) => {
                self.write(state, &transition, holder, true);
                Task::Idle
            }
            PaymentStep::Resend => Task::AtGate(holder, Call::Resend),
            PaymentStep::LookUpByOrder => Task::AtGate(holder, Call::Lookup(Lookup::ByOrder)),
            PaymentStep::LookAgainLater => {
                release(&mut state.row, holder);
                Task::Idle
            }
        }
    }

    /// `settle::apply`: from PENDING or UNKNOWN, releasing the lease.
    fn write(&self, state: &mut State, transition: &Transition, holder: Holder, guarded: bool) -> bool {
        let from = [OrderStatus::Pending, OrderStatus::Unknown];
        self.write_from(state, transition, &from, holder, guarded, true)
    }

    /// `Db::write_status`: the lifecycle's move, stored only by the lease's
    /// holder when the transition needs it (unless `guarded` is off).
    fn write_from(
        &self,
        state: &mut State,
        transition: &Transition,
        from: &[OrderStatus],
        holder: Holder,
        guarded: bool,
        release_lease: bool,
    ) -> bool {
        let row = &mut state.row;
        for &status in from {
            if row.status != status {
                continue;
            }
            let Some(moved) = transition.from(status, AMOUNT, row.refunded) else { continue };
            if guarded && transition.needs_lease() && row.owner != Some(holder) {
                continue;
            }
            row.status = moved.to;
            row.refunded = match transition {
                Transition::PartiallyRefunded { .. } if self.old(OldRule::PartialRefundWithoutAmount) => row.refunded,
                _ => moved.refunded,
            };
            if release_lease {
                row.lapsed = true;
            }
            return true;
        }
        false
    }
}

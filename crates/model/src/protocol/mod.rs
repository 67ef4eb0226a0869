//! The steps each actor can take, one atomic step at a time, so the checker
//! interleaves them every way they can. Each step that decides anything calls
//! the server's own rules; the model only carries their inputs and outputs.
//!
//! - `spec`: the bounds, the protocol and its actions;
//! - `enabled`: which steps a state allows;
//! - `reading`: a reply read with the real tables of the PG the model stands for;
//! - `rows`: what a step does to the shop's rows and a server's breaker;
//! - `refund`: the refund's own steps.

mod enabled;
mod reading;
mod refund;
mod rows;
mod spec;

use payonce_api::{ErrorCode, Failure, OrderStatus};
use payonce_rules::settlement::{
    AttemptAge, PaymentAnswer, RefundAnswer, RefundPass, Sent, Transition, after_first_call,
};
use stateright::{Model, Property};

use self::refund::release_refund;
use self::rows::{BreakerPhaseOf, deadline_to_come, lapse, page_says, release};
pub use self::spec::{Action, Bounds, Protocol, REFUND_AMOUNT};
use crate::old_rules::OldRule;
use crate::pg::{
    self, AMOUNT, CancelProcessing, CancelReply, CancelRequest, ExpiryShows, Pg, Processing, Reply, Request,
};
use crate::properties;
use crate::state::{Call, Job, Lookup, Outage, RefundRow, Row, Said, Server, ShopHeard, State, Task};

/// The code a refund keeps when the lookup after a refusal of a cancel sent
/// again shows nothing refunded: KakaoPay's "not in a state that can be
/// cancelled" (only a PG without keys asks for that lookup).
const REFUSED_FOR_GOOD: &str = "KAKAOPAY_784";

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
                    if names_other_order && self.keyless_pg {
                        continue; // KakaoPay's tid is the one the server prepared for the order
                    }
                    states.push(State {
                        row: Row { status: OrderStatus::Created, refunded: 0, owner: None, lapsed: false },
                        refund: None,
                        refund_expected: self.bounds.refunds,
                        pg: Pg::new(declines, expiry_shows, self.keyless_pg),
                        servers: [Server::fresh(), Server::fresh()],
                        submitted: false,
                        said: Said::Nothing,
                        names_other_order,
                        faults_left: self.bounds.faults,
                        outage: Outage::NotYet,
                        passes: 0,
                        refund_passes: 0,
                        page_closed: false,
                        second_tab_to_come: self.bounds.tabs > 1,
                        shop: ShopHeard::default(),
                        settled_once: false,
                        operator_asked: false,
                    });
                }
            }
        }
        states
    }

    fn actions(&self, state: &State, actions: &mut Vec<Action>) {
        self.push_enabled(state, actions);
    }

    fn next_state(&self, last: &State, action: Action) -> Option<State> {
        let mut state = self.step(last, action)?;
        // Remembered, so that "once settled, always settled" is checked at every
        // step, not only where a path ends, as "every payment settles" is.
        state.settled_once |= crate::properties::payment_settled(state.row.status);
        Some(state)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        let mut properties = properties::all();
        if !self.bounds.refunds {
            properties.retain(|property| property.name != properties::CAN_BE_REFUNDED);
        }
        if self.bounds.faults == 0 {
            properties.retain(|property| property.name != properties::BREAKER_CAN_OPEN);
        }
        if let Some(only) = self.only {
            properties.retain(|property| property.name == only);
        }
        properties
    }
}

impl Protocol {
    /// One step of one actor: the state after `action`, or `None` when the
    /// state does not allow it.
    fn step(&self, last: &State, action: Action) -> Option<State> {
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
                state.second_tab_to_come = false;
                state.set_task(server, 0, Task::ConfirmReceived);
            }

            Action::PageClosesOrder => {
                // `close_unconfirmed`: one statement, decided by the order's key
                // (an insert that an attempt already stored wins), moving the
                // order as the lifecycle moves a failure from CREATED.
                state.page_closed = true;
                let closed = Transition::Failed(Failure {
                    code: ErrorCode::ConfirmNotReceived.as_str().to_owned(),
                    message: String::new(),
                });
                if state.row.status == OrderStatus::Created
                    && let Some(moved) = closed.from(OrderStatus::Created, AMOUNT, 0)
                {
                    state.row.status = moved.to;
                    state.told_shop(OrderStatus::Created, closed.code(), 0);
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
                let read = self.read_confirm(reply, state.names_other_order, Sent::First);
                let transition = after_first_call(read.verdict, || read.failure, || read.described);
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
                let from = state.row.status;
                state.row.status = moved.to;
                state.told_shop(from, None, state.row.refunded);
                state.set_task(server, 0, Task::RefundStored(holder));
            }
            Action::SendCancel { server } => {
                let Task::RefundStored(holder) = state.task(server, 0) else { return None };
                let key = state.refund.as_ref()?.key;
                state.pg.cancel_inbox.push(CancelRequest { to: (server, 0), holder, key });
                state.pg.cancel_inbox.sort();
                state.set_task(server, 0, Task::CancelAwaiting(holder));
            }
            Action::Claim { server, worker, job } => {
                let holder = self.new_holder(&state, server, worker);
                match job {
                    Job::Payment => {
                        state.row.owner = Some(holder);
                        state.row.lapsed = false;
                        state.passes += 1;
                        state.set_task(server, worker, Task::Claimed(holder));
                    }
                    Job::Refund => {
                        let refund = state.refund.as_mut()?;
                        refund.owner = Some(holder);
                        refund.lapsed = false;
                        state.refund_passes += 1;
                        state.set_task(server, worker, Task::RefundClaimed(holder));
                    }
                }
            }
            Action::BeginPass { server, worker } => {
                if let Task::RefundClaimed(holder) = state.task(server, worker) {
                    state.set_task(server, worker, Task::AtGate(holder, Call::RefundLookup));
                    return Some(state);
                }
                let Task::Claimed(holder) = state.task(server, worker) else { return None };
                if state.row.status == OrderStatus::Pending {
                    let unknown = Transition::Unknown("left pending".to_owned());
                    self.write_from(&mut state, &unknown, &[OrderStatus::Pending], holder, true, false);
                }
                state.set_task(server, worker, Task::AtGate(holder, Call::Lookup(Lookup::ByKey)));
            }
            Action::AskBreaker { server, worker } => {
                let Task::AtGate(holder, call) = state.task(server, worker) else { return None };
                let probe_until = if self.old(OldRule::HalfOpenForever) { u8::MAX } else { 1 };
                let breaker = &mut state.servers[server as usize].breaker;
                if breaker.allows_call(0, probe_until) {
                    state.set_task(server, worker, Task::Granted(holder, call));
                } else {
                    // Held back until the probe's deadline, which time brings: the
                    // engine comes round again, and such a pass is not one of the
                    // bound's. One held back by a deadline that never comes is.
                    let refund_call = call.for_refund();
                    if deadline_to_come(*breaker) {
                        let passes = if refund_call { &mut state.refund_passes } else { &mut state.passes };
                        *passes = passes.saturating_sub(1);
                    }
                    if refund_call {
                        release_refund(&mut state.refund, holder);
                    } else {
                        release(&mut state.row, holder);
                    }
                    state.set_task(server, worker, Task::Idle);
                }
            }
            Action::RenewAndCall { server, worker, fails } => {
                let Task::Granted(holder, call) = state.task(server, worker) else { return None };
                if call.for_refund() {
                    return Some(self.renew_and_call_for_refund(state, (server, worker), holder, call, fails));
                }
                if state.row.owner != Some(holder) || !state.row.is_open() {
                    // Settled or taken over: nothing is sent (a probe granted is lost).
                    state.set_task(server, worker, Task::Idle);
                    return Some(state);
                }
                state.row.lapsed = false;
                match call {
                    Call::Lookup(by) => {
                        if fails {
                            self.lookup_fails(&mut state, Job::Payment);
                        }
                        let looked = match (fails, by) {
                            (true, _) => pg::Looked::Unavailable,
                            (false, Lookup::ByKey) => state.pg.look_up_by_key(state.names_other_order),
                            (false, Lookup::ByOrder) => state.pg.look_up_by_order(),
                        };
                        let unavailable = match by {
                            Lookup::ByKey => self.read_lookup(looked, state.names_other_order).unavailable,
                            Lookup::ByOrder => pg::lookup_answer(looked).shows_pg_unavailable(),
                        };
                        self.note_health(&mut state.servers[server as usize], unavailable);
                        let age = self.age(&state);
                        state.set_task(server, worker, Task::LookedUp(holder, by, looked, age));
                    }
                    Call::RefundLookup | Call::Cancel | Call::RefusalLookup => {
                        unreachable!("refund calls are made above")
                    }
                    Call::Resend => {
                        let in_session = !state.pg.session_over;
                        state.pg.inbox.push(Request { to: (server, worker), holder, in_session });
                        state.pg.inbox.sort();
                        state.set_task(server, worker, Task::ResendAwaiting(holder));
                    }
                }
            }
            Action::Decide { server, worker } => {
                let next = match state.task(server, worker) {
                    Task::LookedUp(holder, by, looked, age) => {
                        let step = self.after_looking(&state, by, looked, age);
                        self.take_step(&mut state, holder, step)
                    }
                    Task::RefundLookedUp(holder, looked) => {
                        let refund = state.refund.clone()?;
                        let read = self.read_refund_lookup(looked, &refund);
                        let next = RefundPass::next(RefundAnswer::Looked(read.verdict));
                        self.take_refund_step(&mut state, holder, next, (read.refunded_total, ""))
                    }
                    Task::RefusalLookedUp(holder, looked) => {
                        let refund = state.refund.clone()?;
                        let read = self.read_refund_lookup(looked, &refund);
                        let next = RefundPass::next(RefundAnswer::LookedAfterRefusal(read.verdict));
                        self.take_refund_step(&mut state, holder, next, (read.refunded_total, REFUSED_FOR_GOOD))
                    }
                    Task::CancelAnswered(holder, reply) => {
                        // Slot 0 is the operator's request, which sends the refund's first cancel.
                        let sent = if worker == 0 { Sent::First } else { Sent::Again };
                        let refund = state.refund.clone()?;
                        let read = self.read_cancel(reply, &refund, sent);
                        if worker > 0 {
                            self.note_health(&mut state.servers[server as usize], read.unavailable);
                        }
                        let next = RefundPass::next(RefundAnswer::Canceled(read.verdict));
                        self.take_refund_step(&mut state, holder, next, (read.refunded_total, &read.code))
                    }
                    Task::ResendAnswered(holder, reply) => {
                        let read = self.read_confirm(reply, state.names_other_order, Sent::Again);
                        self.note_health(&mut state.servers[server as usize], read.unavailable);
                        // A resend's answer: its age does not matter to the plan.
                        let next = self
                            .pass_plan(AttemptAge::Young)
                            .next(PaymentAnswer::Resent(read.verdict), |_| read.failure);
                        self.take_step(&mut state, holder, next)
                    }
                    _ => return None,
                };
                state.set_task(server, worker, next);
            }
            Action::Process { request, processing } => {
                let position = state.pg.inbox.iter().position(|sent| *sent == request)?;
                state.pg.inbox.remove(position);
                if !matches!(processing, Processing::AsDocumented | Processing::KeyInUse) {
                    state.faults_left -= 1;
                }
                let reply = state.pg.process(request, state.names_other_order, processing);
                let (server, worker) = request.to;
                match state.task(server, worker) {
                    Task::ConfirmAwaiting(holder) if holder == request.holder => {
                        state.set_task(server, worker, Task::ConfirmAnswered(holder, reply));
                    }
                    Task::ResendAwaiting(holder) if holder == request.holder => {
                        state.set_task(server, worker, Task::ResendAnswered(holder, reply));
                    }
                    // Its caller gave up or is gone: the reply is lost, its effect is not.
                    _ => {}
                }
            }
            Action::ProcessCancel { request, processing } => {
                let position = state.pg.cancel_inbox.iter().position(|sent| *sent == request)?;
                state.pg.cancel_inbox.remove(position);
                // KakaoPay refusing to cancel the payment is its choice, not a fault (see `enabled`).
                let refusal_without_keys = self.keyless_pg && processing == CancelProcessing::ProviderError;
                if processing != CancelProcessing::AsDocumented && !refusal_without_keys {
                    state.faults_left -= 1;
                }
                let refund = state.refund.as_ref()?;
                let reply = state.pg.process_cancel(request, (refund.amount, refund.balance_before), processing);
                let (server, worker) = request.to;
                if state.task(server, worker) == Task::CancelAwaiting(request.holder) {
                    state.set_task(server, worker, Task::CancelAnswered(request.holder, reply));
                }
            }
            Action::GiveUp { server, worker } => {
                state.faults_left -= 1;
                let task = match state.task(server, worker) {
                    Task::CancelAwaiting(holder) => Task::CancelAnswered(holder, CancelReply::NoReply),
                    Task::ConfirmAwaiting(holder) => Task::ConfirmAnswered(holder, Reply::NoReply),
                    Task::ResendAwaiting(holder) => Task::ResendAnswered(holder, Reply::NoReply),
                    _ => return None,
                };
                state.set_task(server, worker, task);
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
            Action::OutageBegins => {
                state.faults_left -= 1;
                state.outage = Outage::Out { failed: 0 };
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
            Action::TaskStops { server, worker } => {
                state.faults_left -= 1;
                state.set_task(server, worker, Task::Idle);
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
}

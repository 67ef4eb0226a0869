//! Which steps each actor can take in a state: only those that change it.

use payonce_api::OrderStatus;

use super::rows::{BreakerPhaseOf, deadline_to_come};
use super::spec::{Action, Protocol};
use crate::pg::{self, CancelProcessing, Processing};
use crate::state::{Call, Job, Outage, RefundRow, SERVERS, State, Task};

impl Protocol {
    /// Pushes every step that can be taken in `state`.
    pub(super) fn push_enabled(&self, state: &State, actions: &mut Vec<Action>) {
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
        if state.second_tab_to_come && before_an_outcome {
            for server in (0..SERVERS).filter(|&server| state.task(server, 0) == Task::Idle) {
                actions.push(Action::SecondTabSubmits { server });
            }
        }
        for server in 0..SERVERS {
            let breaker_refuses = matches!(state.servers[server as usize].breaker, BreakerPhaseOf::Open { until: 1 });
            let mut busy = false;
            for worker in 0..=self.bounds.workers {
                let task = state.task(server, worker);
                busy |= task != Task::Idle;
                match task {
                    Task::Idle if worker > 0 => {
                        let limit = self.bounds.pass_limit();
                        if state.row.claimable() && !breaker_refuses && state.passes < limit {
                            actions.push(Action::Claim { server, worker, job: Job::Payment });
                        }
                        let refund_claimable = state.refund.as_ref().is_some_and(RefundRow::claimable);
                        if refund_claimable && !breaker_refuses && state.refund_passes < limit {
                            actions.push(Action::Claim { server, worker, job: Job::Refund });
                        }
                    }
                    Task::Idle => {
                        let paid = matches!(state.row.status, OrderStatus::Paid | OrderStatus::PartiallyRefunded);
                        if self.bounds.refunds && state.refund.is_none() && paid {
                            actions.push(Action::AskRefund { server });
                        }
                    }
                    Task::RefundStored(_) => actions.push(Action::SendCancel { server }),
                    Task::RefundClaimed(_) => actions.push(Action::BeginPass { server, worker }),
                    Task::ConfirmReceived => actions.push(Action::StoreAttempt { server }),
                    Task::ConfirmStored(_) => actions.push(Action::SendConfirm { server }),
                    Task::ConfirmAnswered(..) => actions.push(Action::SettleConfirm { server }),
                    Task::Claimed(_) => actions.push(Action::BeginPass { server, worker }),
                    Task::AtGate(..) => actions.push(Action::AskBreaker { server, worker }),
                    Task::Granted(_, call) => {
                        let lookup = matches!(call, Call::Lookup(_) | Call::RefundLookup | Call::RefusalLookup);
                        // Out, the PG answers no lookup.
                        let out = lookup && matches!(state.outage, Outage::Out { .. });
                        if !out {
                            actions.push(Action::RenewAndCall { server, worker, fails: false });
                        }
                        if lookup && (fault || out) {
                            actions.push(Action::RenewAndCall { server, worker, fails: true });
                        }
                    }
                    Task::LookedUp(..)
                    | Task::ResendAnswered(..)
                    | Task::CancelAnswered(..)
                    | Task::RefundLookedUp(..)
                    | Task::RefusalLookedUp(..) => {
                        actions.push(Action::Decide { server, worker });
                    }
                    Task::ConfirmAwaiting(_) | Task::ResendAwaiting(_) | Task::CancelAwaiting(_) => {
                        if fault {
                            actions.push(Action::GiveUp { server, worker });
                        }
                    }
                }
                if fault && task != Task::Idle {
                    actions.push(Action::TaskStops { server, worker });
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
            if !self.wire_faults {
                continue;
            }
            if fault {
                actions.push(Action::Process { request, processing: Processing::Unreadable });
                // A connection fails only while its caller is still waiting on it.
                let (server, worker) = request.to;
                let awaiting = matches!(state.task(server, worker),
                    Task::ConfirmAwaiting(holder) | Task::ResendAwaiting(holder) if holder == request.holder);
                if awaiting {
                    actions.push(Action::Process { request, processing: Processing::NotSent });
                }
            }
            // Toss answers 409 to a request whose key's first one is still
            // being processed: a way it behaves, not a fault.
            if !self.keyless_pg && state.pg.stored.is_none() && state.pg.inbox.iter().any(|other| *other != request) {
                actions.push(Action::Process { request, processing: Processing::KeyInUse });
            }
        }
        for &request in &state.pg.cancel_inbox {
            actions.push(Action::ProcessCancel { request, processing: CancelProcessing::AsDocumented });
            if self.keyless_pg {
                // KakaoPay may refuse to cancel the payment at any cancel, and
                // then refuses every one (-784): not a fault, a way it behaves.
                if !state.pg.cancels_refused {
                    actions.push(Action::ProcessCancel { request, processing: CancelProcessing::ProviderError });
                }
                if fault {
                    actions.push(Action::ProcessCancel { request, processing: CancelProcessing::TurnedAway });
                }
            } else if fault && state.pg.cancel_stored[usize::from(request.key)].is_none() {
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
        if self.outage && fault && state.outage == Outage::NotYet {
            actions.push(Action::OutageBegins);
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

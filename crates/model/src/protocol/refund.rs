//! The refund's steps: settling it and the order with it, releasing it, and a
//! refund worker's call.

use payonce_rules::settlement::{Next, RefundCall, RefundStore, Transition};

use super::spec::Protocol;
use crate::old_rules::OldRule;
use crate::pg::{self, AMOUNT, CancelRequest};
use crate::state::{Call, Holder, Job, RefundEnd, RefundRow, State, Task};

/// Settles the refund (`settle_refunded`, with what the PG showed refunded in
/// all, or a refusal, with its code) and the order with it, if it is still open.
pub(super) fn settle_refund(state: &mut State, end: RefundEnd, refunded_total: Option<u64>, code: &str) {
    let Some(refund) = state.refund.as_mut().filter(|refund| refund.is_open()) else { return };
    refund.settled = Some(end);
    let transition = match end {
        RefundEnd::Refunded => {
            let refunded_total = refunded_total.unwrap_or(state.row.refunded + refund.amount);
            Transition::RefundSettled { refunded_total }
        }
        RefundEnd::Refused => Transition::RefundRefused { back_to: refund.back_to, code: code.to_owned() },
    };
    if let Some(moved) = transition.from(state.row.status, AMOUNT, state.row.refunded) {
        let (from, refunded_before) = (state.row.status, state.row.refunded);
        state.row.status = moved.to;
        state.row.refunded = moved.refunded;
        state.told_shop(from, transition.code(), refunded_before);
    }
}

/// A worker's release of a refund it did not settle.
pub(super) fn release_refund(refund: &mut Option<RefundRow>, holder: Holder) {
    if let Some(refund) = refund.as_mut()
        && refund.owner == Some(holder)
        && refund.is_open()
    {
        refund.lapsed = true;
    }
}

impl Protocol {
    /// Does what the server's plan of a refund's pass (`RefundPass`) says
    /// next, with what the answer showed refunded in all and the code a
    /// refusal keeps; returns the task's next step.
    pub(super) fn take_refund_step(
        &self,
        state: &mut State,
        holder: Holder,
        next: Next<RefundCall, RefundStore>,
        (refunded_total, code): (Option<u64>, &str),
    ) -> Task {
        match next {
            Next::Store(RefundStore::Refunded) => settle_refund(state, RefundEnd::Refunded, refunded_total, code),
            Next::Store(RefundStore::Refused) => self.settle_refusal(state, holder, refunded_total, code),
            Next::Store(RefundStore::NewKey) => {
                // `replace_refund_key`: only the refund's lease holder.
                if let Some(refund) = state.refund.as_mut()
                    && refund.owner == Some(holder)
                    && refund.is_open()
                {
                    refund.key += 1;
                }
                release_refund(&mut state.refund, holder);
            }
            Next::Call(RefundCall::LookUp) => return Task::AtGate(holder, Call::RefundLookup),
            Next::Call(RefundCall::Cancel) => return Task::AtGate(holder, Call::Cancel),
            // A refusal of a send after the first: a lookup now decides, under the same lease.
            Next::Call(RefundCall::LookUpTheRefusal) => return Task::AtGate(holder, Call::RefusalLookup),
            Next::End => release_refund(&mut state.refund, holder),
        }
        Task::Idle
    }

    /// Settles the refund refused, as `db::settle_refund` does: only while
    /// `holder` holds its lease (a refusal read after a takeover may be of a
    /// cancel sent before one that went through), else it stays open.
    pub(super) fn settle_refusal(&self, state: &mut State, holder: Holder, refunded_total: Option<u64>, code: &str) {
        let held = state.refund.as_ref().is_some_and(|refund| refund.owner == Some(holder));
        if held || self.old(OldRule::RefusalSettledWithoutLease) {
            settle_refund(state, RefundEnd::Refused, refunded_total, code);
        } else {
            release_refund(&mut state.refund, holder);
        }
    }

    /// A refund worker renews the refund's lease and makes its call.
    pub(super) fn renew_and_call_for_refund(
        &self,
        mut state: State,
        (server, worker): (u8, u8),
        holder: Holder,
        call: Call,
        fails: bool,
    ) -> State {
        let Some(refund) = state.refund.as_mut().filter(|refund| refund.owner == Some(holder) && refund.is_open())
        else {
            state.set_task(server, worker, Task::Idle);
            return state;
        };
        refund.lapsed = false;
        let key = refund.key;
        if call == Call::Cancel {
            state.pg.cancel_inbox.push(CancelRequest { to: (server, worker), holder, key });
            state.pg.cancel_inbox.sort();
            state.set_task(server, worker, Task::CancelAwaiting(holder));
            return state;
        }
        let refund = refund.clone();
        if fails {
            self.lookup_fails(&mut state, Job::Refund);
        }
        let looked = if fails { pg::Looked::Unavailable } else { state.pg.look_up_by_order() };
        self.note_health(&mut state.servers[server as usize], self.read_refund_lookup(looked, &refund).unavailable);
        let task = match call {
            Call::RefusalLookup => Task::RefusalLookedUp(holder, looked),
            _ => Task::RefundLookedUp(holder, looked),
        };
        state.set_task(server, worker, task);
        state
    }
}

//! The refund's steps: what the refund expects the PG to show, settling it
//! and the order with it, releasing it, and a refund worker's call.

use payonce_rules::settlement::Transition;
use payonce_rules::toss::TossReply;
use payonce_rules::toss::classify::{ExpectedRefund, refunded_total, refusal_code};

use super::rows::note_health;
use super::spec::Protocol;
use crate::pg::{self, AMOUNT, CancelRequest};
use crate::state::{Call, Holder, RefundEnd, RefundRow, State, Task};

/// What the refund expects the PG to show once it is done.
pub(super) fn expected_refund(refund: &RefundRow) -> ExpectedRefund<'static> {
    ExpectedRefund {
        payment: pg::expected(false),
        balance_before: refund.balance_before,
        balance_after: refund.balance_before - refund.amount,
    }
}

/// Settles the refund (`settle_refunded`, or a refusal) and the order with it,
/// if it is still open.
pub(super) fn settle_refund(state: &mut State, end: RefundEnd, answer: &TossReply) {
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
        if fails {
            state.faults_left -= 1;
        }
        let looked = if fails { pg::Looked::Unavailable } else { state.pg.look_up_by_order() };
        note_health(&mut state.servers[server as usize], pg::lookup_answer(looked).shows_pg_unavailable());
        state.set_task(server, worker, Task::RefundLookedUp(holder, looked));
        state
    }
}

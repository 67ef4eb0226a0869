//! What a step does to the shop's rows and a server's breaker, as the
//! server's database and breaker would: the lifecycle's move under the lease
//! rule, releases, lapses, the breaker hearing an answer, what a page shows.

use payonce_api::{Failure, Order, OrderStatus};
use payonce_flow::{Check, Verdict, classify_check};
use payonce_rules::settlement::{AttemptAge, FailedBecause, Next, PaymentAnswer, PaymentCall, PaymentPass, Transition};
use payonce_rules::toss::classify::{order_status_answer, status_verdict};

use super::spec::Protocol;
use crate::old_rules::OldRule;
use crate::pg::{self, AMOUNT, Looked};
use crate::state::{Call, Holder, Job, Lookup, OUTAGE_LOOKUPS, Outage, Row, Said, Server, State, Task};

/// The breaker's phases, on the model's clock.
pub(super) type BreakerPhaseOf = payonce_rules::breaker::Phase<u8>;

pub(super) fn deadline_to_come(phase: BreakerPhaseOf) -> bool {
    matches!(phase, BreakerPhaseOf::Open { until: 1 } | BreakerPhaseOf::HalfOpen { probe_until: 1 })
}

impl Protocol {
    /// The breaker hears how the PG answered (`pass::note_health`), opening
    /// at the protocol's threshold (`breaker_threshold`).
    pub(super) fn note_health(&self, server: &mut Server, pg_unavailable: bool) {
        if pg_unavailable {
            server.breaker.record_failure(1, self.breaker_threshold());
        } else {
            server.breaker.record_answer();
        }
    }

    /// A lookup that gets no answer: a fault of the bound's, or one of the
    /// outage's. A pass the outage failed is not one of the bound's (the
    /// outage is bounded itself), as one the breaker held back is not.
    pub(super) fn lookup_fails(&self, state: &mut State, job: Job) {
        let Outage::Out { failed } = state.outage else {
            state.faults_left -= 1;
            return;
        };
        state.outage = if failed + 1 < OUTAGE_LOOKUPS { Outage::Out { failed: failed + 1 } } else { Outage::Over };
        let passes = match job {
            Job::Payment => &mut state.passes,
            Job::Refund => &mut state.refund_passes,
        };
        *passes = passes.saturating_sub(1);
    }
}

/// What the page says after a check of the order: the page's own reading of
/// the order it is given (`payonce_flow::classify_check`), a final verdict,
/// or what it said before.
pub(super) fn page_says(row: &Row, said: Said) -> Said {
    let order = Order {
        order_id: String::new(),
        status: row.status,
        amount: AMOUNT,
        order_name: String::new(),
        items: Vec::new(),
        created_at: String::new(),
        updated_at: String::new(),
        failure: None,
        refunded_amount: row.refunded,
        paid_at: None,
        refund_refusal: None,
        back: None,
    };
    match classify_check(&order) {
        Check::Settled(Verdict::Failed(_)) => Said::NotCharged,
        Check::Settled(Verdict::Paid { .. } | Verdict::Refunded { .. }) => Said::Paid,
        Check::Settled(Verdict::Elsewhere)
        | Check::InProgress
        | Check::NotReceived
        | Check::NothingLearned
        | Check::Throttled { .. } => said,
    }
}

/// The lease of `job` lapses.
pub(super) fn lapse(state: &mut State, job: Job) -> Option<()> {
    match job {
        Job::Payment => state.row.lapsed = true,
        Job::Refund => state.refund.as_mut()?.lapsed = true,
    }
    Some(())
}

/// A worker's release of a job it did not settle (`release_job`).
pub(super) fn release(row: &mut Row, holder: Holder) {
    if row.owner == Some(holder) && row.is_open() {
        row.lapsed = true;
    }
}

impl Protocol {
    /// A holder for a new lease: each claim its own, or, under the old rule,
    /// one per server. The serial is the smallest that no earlier holder of
    /// this worker still in the state has (the row's owner, a request at the
    /// PG), so that states differing only in spent names are one state.
    pub(super) fn new_holder(&self, state: &State, server: u8, worker: u8) -> Holder {
        if self.old(OldRule::OneLeaseNamePerServer) {
            return Holder { server, worker: 0, serial: 0 };
        }
        let in_use = |serial| {
            let holder = Holder { server, worker, serial };
            state.row.owner == Some(holder) || state.pg.inbox.iter().any(|request| request.holder == holder)
        };
        let serial = (0..).find(|&serial| !in_use(serial)).expect("a free serial");
        Holder { server, worker, serial }
    }

    /// The attempt's age as the server computes it when a lookup goes out.
    pub(super) fn age(&self, state: &State) -> AttemptAge {
        if state.pg.long_over && !self.old(OldRule::NoAgeRule) { AttemptAge::PastSession } else { AttemptAge::Young }
    }

    /// The server's plan of a pass (`PaymentPass`), for an attempt of `age`
    /// at this PG: its lookup by order only where the PG has one (and not
    /// under the old rule that looked up by key only).
    pub(super) fn pass_plan(&self, age: AttemptAge) -> PaymentPass {
        let lookup_by_order = !self.keyless_pg && !self.old(OldRule::LookupByKeyOnly);
        PaymentPass { age, resending: self.resending, lookup_by_order }
    }

    /// What a lookup's answer leads to, by the server's plan of the pass.
    pub(super) fn after_looking(
        &self,
        state: &State,
        by: Lookup,
        looked: Looked,
        age: AttemptAge,
    ) -> Next<PaymentCall, Transition> {
        let plan = self.pass_plan(age);
        match by {
            Lookup::ByKey => {
                let read = self.read_lookup(looked, state.names_other_order);
                let failure =
                    |why: FailedBecause| Failure { code: format!("{why:?}"), message: read.described.clone() };
                plan.next(PaymentAnswer::Looked(read.shown), failure)
            }
            // Toss's only: the plan never asks it at a PG without one.
            Lookup::ByOrder => {
                let answer = pg::lookup_answer(looked);
                let failure = |why: FailedBecause| Failure { code: format!("{why:?}"), message: pg::describe(&answer) };
                let verdict = status_verdict(order_status_answer(&answer, pg::ORDER_ID, AMOUNT));
                plan.next(PaymentAnswer::LookedByOrder(verdict), failure)
            }
        }
    }

    /// Does what the plan says next; returns the worker's next task.
    pub(super) fn take_step(&self, state: &mut State, holder: Holder, next: Next<PaymentCall, Transition>) -> Task {
        match next {
            Next::Store(transition) => {
                self.write(state, &transition, holder, true);
                Task::Idle
            }
            Next::Call(PaymentCall::Resend) => Task::AtGate(holder, Call::Resend),
            Next::Call(PaymentCall::LookUpByOrder) => Task::AtGate(holder, Call::Lookup(Lookup::ByOrder)),
            Next::Call(PaymentCall::LookUp) => Task::AtGate(holder, Call::Lookup(Lookup::ByKey)),
            Next::End => {
                release(&mut state.row, holder);
                Task::Idle
            }
        }
    }

    /// `settle::apply`: from PENDING or UNKNOWN, releasing the lease.
    pub(super) fn write(&self, state: &mut State, transition: &Transition, holder: Holder, guarded: bool) -> bool {
        let from = [OrderStatus::Pending, OrderStatus::Unknown];
        self.write_from(state, transition, &from, holder, guarded, true)
    }

    /// `Db::write_status`: the lifecycle's move, stored only by the lease's
    /// holder when the transition needs it (unless `guarded` is off).
    pub(super) fn write_from(
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
            let refunded_before = row.refunded;
            row.status = moved.to;
            row.refunded = match transition {
                Transition::PartiallyRefunded { .. } if self.old(OldRule::PartialRefundWithoutAmount) => row.refunded,
                _ => moved.refunded,
            };
            if release_lease {
                row.lapsed = true;
            }
            state.told_shop(status, transition.code(), refunded_before);
            return true;
        }
        false
    }
}

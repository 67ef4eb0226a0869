//! The settlement rules, without I/O: what a payment or a refund may become,
//! and why. The PG's adapters read its answers into `verdicts`; `payment` and
//! `refund` say what each leads to, `plan` how a pass of the job engine
//! sequences its calls by them, `reconcile` what a charge at the PG is to
//! the shop; `lifecycle` where a transition takes an order;
//! `schedule` (with `timings`) when a job not settled is looked at again and
//! when an operator is told; `told` what a shop is told of a change. `db` stores what these compute; `payment/` (the
//! module above) does the I/O.

mod lifecycle;
mod payment;
mod plan;
mod reconcile;
mod refund;
mod schedule;
mod timings;
mod told;
mod verdicts;

pub use lifecycle::{Moved, Transition, can_transition};
pub use payment::{
    AttemptAge, Deadlines, FailedBecause, PaymentStep, Resending, Shown, after_first_call, after_lookup,
    after_order_lookup, after_resend,
};
pub use plan::{Next, PaymentAnswer, PaymentCall, PaymentPass, RefundAnswer, RefundCall, RefundPass, RefundStore};
pub use reconcile::{
    Charge, ChargeStep, Disagreement, Finding, MismatchAction, OrphanAction, OrphanPolicy, ShopSide, charge_step,
    classify, orphan_action,
};
pub use refund::{
    OrphanCancel, RefundStep, after_cancel, after_cancel_of_orphan, after_refund_lookup, after_refund_lookup_of_refusal,
};
pub use schedule::{PASSES_BEFORE_ALERT, PassReport, Recovered, Release, alerts, pause, recovery_workers, release};
pub use timings::Timings;
pub use told::{Told, event_of};
pub use verdicts::{CancelVerdict, ConfirmVerdict, RefundLookupVerdict, Sent, StatusVerdict};

/// A duration in whole milliseconds, as the shell stores moments (saturating).
fn millis(duration: std::time::Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

//! The settlement rules, without I/O: what a payment or a refund may become,
//! and why. The PG's adapters read its answers into `verdicts`; `payment` says
//! what each leads to; `lifecycle` where a transition takes an order;
//! `schedule` (with `timings`) when a job not settled is looked at again and
//! when an operator is told. `db` stores what these compute; `payment/` (the
//! module above) does the I/O.

mod lifecycle;
mod payment;
mod schedule;
mod timings;
mod verdicts;

pub use lifecycle::{Moved, Transition, can_transition};
pub use payment::{PaymentStep, after_first_call, after_lookup, after_resend};
pub use schedule::{PASSES_BEFORE_ALERT, Recovered, Release, alerts, release};
pub use timings::Timings;
pub use verdicts::{CancelVerdict, ConfirmVerdict, RefundLookupVerdict, StatusVerdict};

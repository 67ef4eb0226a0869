//! The settlement rules, without I/O: what a payment or a refund may become,
//! and why. The PG's adapters read its answers into `verdicts`; `payment` says
//! what each leads to; `lifecycle` where a transition takes an order. `db`
//! stores what these compute; `payment/` (the module above) does the I/O.

mod lifecycle;
mod payment;
mod verdicts;

pub use lifecycle::{Moved, Transition, can_transition};
pub use payment::{PaymentStep, after_first_call, after_lookup, after_resend};
pub use verdicts::{CancelVerdict, ConfirmVerdict, RefundLookupVerdict, StatusVerdict};

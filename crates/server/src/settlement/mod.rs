//! The settlement rules, without I/O: what a payment or a refund may become,
//! and why. `db` stores what these compute; `payment` does the I/O around them.

mod lifecycle;

pub use lifecycle::{Moved, Transition, can_transition};

//! The payment lifecycle: confirming, settling outcomes, recovering the ones
//! the PG left unknown, and refunding charges.
//!
//! `CREATED -> PENDING -> PAID | FAILED | UNKNOWN`, then `UNKNOWN -> PAID |
//! FAILED | CANCELED | PARTIALLY_REFUNDED` by recovery (the last two when the
//! PG shows the charge cancelled since). `CREATED -> FAILED` when the order is
//! closed without a confirm. A charge is refunded through `PAID |
//! PARTIALLY_REFUNDED -> CANCEL_REQUESTED`, stored before the PG is called,
//! which the PG's answer ends: `CANCELED`, `PARTIALLY_REFUNDED`, or back to
//! where it was when the PG refuses. Every transition is committed before it
//! is reported.

pub mod abandon;
mod backoff;
mod breaker;
mod budget;
pub mod confirm;
mod lease;
pub mod reconcile;
pub mod recovery;
pub mod refund;
mod refund_recovery;
mod settle;

pub use breaker::CircuitBreaker;
pub use budget::RecoveryBudget;

use payonce_api::OrderStatus;

/// Whether an attempt may move from one status to another.
pub fn can_transition(from: OrderStatus, to: OrderStatus) -> bool {
    use OrderStatus::{CancelRequested, Canceled, Created, Failed, Paid, PartiallyRefunded, Pending, Unknown};
    match (from, to) {
        (Created, Pending | Failed) => true,
        (Pending, Paid | Failed | Unknown) => true,
        (Unknown, Paid | Failed | Canceled | PartiallyRefunded) => true,
        (Paid | PartiallyRefunded, CancelRequested) => true,
        (CancelRequested, Canceled | PartiallyRefunded | Paid) => true,
        (Created, Created | Paid | Unknown | Canceled | PartiallyRefunded | CancelRequested)
        | (Pending, Created | Pending | Canceled | PartiallyRefunded | CancelRequested)
        | (Unknown, Created | Pending | Unknown | CancelRequested)
        | (Paid | PartiallyRefunded, Created | Pending | Paid | Failed | Unknown | Canceled | PartiallyRefunded)
        | (CancelRequested, Created | Pending | Failed | Unknown | CancelRequested)
        | (Failed | Canceled, _) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::can_transition;
    use payonce_api::OrderStatus::{
        self, CancelRequested, Canceled, Created, Failed, Paid, PartiallyRefunded, Pending, Unknown,
    };

    const ALL: [OrderStatus; 8] = OrderStatus::ALL;

    #[test]
    fn a_settled_payment_never_becomes_unsettled_or_failed() {
        for from in ALL.into_iter().filter(|status| status.is_final()) {
            for to in [Created, Pending, Unknown, Failed] {
                assert!(!can_transition(from, to), "{from:?} -> {to:?}");
            }
        }
    }

    #[test]
    fn failed_and_fully_cancelled_never_change() {
        for to in ALL {
            assert!(!can_transition(Failed, to) && !can_transition(Canceled, to), "-> {to:?}");
        }
    }

    #[test]
    fn the_allowed_transitions_are_exactly_the_lifecycle() {
        let allowed: Vec<_> = ALL
            .iter()
            .flat_map(|&from| ALL.iter().map(move |&to| (from, to)))
            .filter(|&(from, to)| can_transition(from, to))
            .collect();
        assert_eq!(
            allowed,
            vec![
                (Created, Pending),
                (Created, Failed),
                (Pending, Paid),
                (Pending, Failed),
                (Pending, Unknown),
                (Paid, CancelRequested),
                (Unknown, Paid),
                (Unknown, Failed),
                (Unknown, Canceled),
                (Unknown, PartiallyRefunded),
                (PartiallyRefunded, CancelRequested),
                (CancelRequested, Paid),
                (CancelRequested, Canceled),
                (CancelRequested, PartiallyRefunded),
            ]
        );
    }
}

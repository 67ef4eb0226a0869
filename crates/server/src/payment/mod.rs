//! The payment lifecycle: confirming, settling outcomes, and recovering the
//! ones the PG left unknown.
//!
//! `CREATED -> PENDING -> PAID | FAILED | UNKNOWN`, then `UNKNOWN -> PAID |
//! FAILED | CANCELED | PARTIALLY_REFUNDED` by recovery (the last two when the
//! PG shows the charge cancelled since). `CREATED -> FAILED` when the order is
//! closed without a confirm. Every transition is committed before it is reported.

pub mod abandon;
mod backoff;
mod breaker;
mod budget;
pub mod confirm;
mod lease;
pub mod recovery;
mod settle;

pub use breaker::CircuitBreaker;
pub use budget::RecoveryBudget;

use payonce_api::OrderStatus;

/// Whether an attempt may move from one status to another.
pub fn can_transition(from: OrderStatus, to: OrderStatus) -> bool {
    use OrderStatus::{Canceled, Created, Failed, Paid, PartiallyRefunded, Pending, Unknown};
    match (from, to) {
        (Created, Pending | Failed) => true,
        (Pending, Paid | Failed | Unknown) => true,
        (Unknown, Paid | Failed | Canceled | PartiallyRefunded) => true,
        (Created, Created | Paid | Unknown | Canceled | PartiallyRefunded)
        | (Pending, Created | Pending | Canceled | PartiallyRefunded)
        | (Unknown, Created | Pending | Unknown)
        | (Paid | Failed | Canceled | PartiallyRefunded, _) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::can_transition;
    use payonce_api::OrderStatus::{self, Canceled, Created, Failed, Paid, PartiallyRefunded, Pending, Unknown};

    const ALL: [OrderStatus; 7] = OrderStatus::ALL;

    #[test]
    fn final_statuses_never_change() {
        for from in ALL.into_iter().filter(|status| status.is_final()) {
            for to in ALL {
                assert!(!can_transition(from, to), "{from:?} -> {to:?}");
            }
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
                (Unknown, Paid),
                (Unknown, Failed),
                (Unknown, Canceled),
                (Unknown, PartiallyRefunded),
            ]
        );
    }
}

//! The payment lifecycle: confirming, settling outcomes, and recovering the
//! ones the PG left unknown.
//!
//! `CREATED -> PENDING -> PAID | FAILED | UNKNOWN`, then `UNKNOWN -> PAID | FAILED`
//! by recovery. Every transition is committed before it is reported.

mod backoff;
mod breaker;
pub mod confirm;
pub mod recovery;
mod settle;

pub use breaker::CircuitBreaker;

use payonce_api::OrderStatus;

/// Whether an attempt may move from one status to another.
pub fn can_transition(from: OrderStatus, to: OrderStatus) -> bool {
    use OrderStatus::{Created, Failed, Paid, Pending, Unknown};
    match (from, to) {
        (Created, Pending | Failed) => true,
        (Pending, Paid | Failed | Unknown) => true,
        (Unknown, Paid | Failed) => true,
        (Created, Created | Paid | Unknown)
        | (Pending, Created | Pending)
        | (Unknown, Created | Pending | Unknown)
        | (Paid | Failed, _) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::can_transition;
    use payonce_api::OrderStatus::{self, Created, Failed, Paid, Pending, Unknown};

    const ALL: [OrderStatus; 5] = [Created, Pending, Paid, Failed, Unknown];

    #[test]
    fn final_statuses_never_change() {
        for to in ALL {
            assert!(!can_transition(Paid, to), "PAID -> {to:?}");
            assert!(!can_transition(Failed, to), "FAILED -> {to:?}");
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
            ]
        );
    }
}

//! The lifecycle of an order's payment, and the transitions that move it:
//! which moves are allowed at all, and where a transition, with its data,
//! takes an order from the status it is in. Pure: `db` stores what this
//! computes, with one statement guarded by the status the order leaves.
//!
//! `CREATED -> PENDING -> PAID | FAILED | UNKNOWN`, then `UNKNOWN -> PAID |
//! FAILED | CANCELED | PARTIALLY_REFUNDED` by recovery (the last two when the
//! PG shows the charge cancelled since). `CREATED -> FAILED` when the order is
//! closed without a confirm. A charge is refunded through `PAID |
//! PARTIALLY_REFUNDED -> CANCEL_REQUESTED`, stored before the PG is called,
//! which the PG's answer ends: `CANCELED`, `PARTIALLY_REFUNDED`, or back to
//! where it was when the PG refuses.

use payonce_api::{Failure, OrderStatus};

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

/// A change of an order's status, with what explains it. The data lives in
/// the variant (a paid transition cannot carry a failure), and where it leads
/// may depend on the order: see [`Transition::from`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transition {
    /// The customer was charged.
    Paid,
    /// Nothing was charged, for this reason.
    Failed(Failure),
    /// The outcome is not known; the reason is for operators.
    Unknown(String),
    /// A lookup shows the charge cancelled in full at the PG since.
    Canceled,
    /// A lookup shows the charge cancelled in part at the PG since, with
    /// `refunded_total` of it refunded.
    PartiallyRefunded { refunded_total: u64 },
    /// A refund is stored, of an order with `balance_before` left to refund.
    CancelRequested { balance_before: u64 },
    /// The PG refunded: `refunded_total` of the charge is refunded now.
    RefundSettled { refunded_total: u64 },
    /// The PG refused the refund for good (`code`): the order goes back to `back_to`.
    RefundRefused { back_to: OrderStatus, code: String },
}

/// Where a transition takes an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moved {
    pub from: OrderStatus,
    pub to: OrderStatus,
    /// How much of the charge is refunded afterwards.
    pub refunded: u64,
}

impl Transition {
    /// Where this takes an order of `amount` that is `from`, with `refunded`
    /// refunded so far; `None` when the lifecycle forbids the move or the
    /// order is not what the transition was decided on (a refund asked for
    /// another balance).
    pub fn from(&self, from: OrderStatus, amount: u64, refunded: u64) -> Option<Moved> {
        let (to, refunded) = match self {
            Transition::Paid => (OrderStatus::Paid, refunded),
            Transition::Failed(_) => (OrderStatus::Failed, refunded),
            Transition::Unknown(_) => (OrderStatus::Unknown, refunded),
            Transition::Canceled => (OrderStatus::Canceled, amount),
            Transition::PartiallyRefunded { refunded_total } => (OrderStatus::PartiallyRefunded, *refunded_total),
            Transition::CancelRequested { balance_before } => {
                if amount.checked_sub(refunded) != Some(*balance_before) {
                    return None;
                }
                (OrderStatus::CancelRequested, refunded)
            }
            Transition::RefundSettled { refunded_total } => {
                let to = if *refunded_total >= amount { OrderStatus::Canceled } else { OrderStatus::PartiallyRefunded };
                (to, *refunded_total)
            }
            Transition::RefundRefused { back_to, .. } => (*back_to, refunded),
        };
        can_transition(from, to).then_some(Moved { from, to, refunded })
    }

    /// Whether only the holder of the attempt's lease may store this: a
    /// failure, or an outcome made unknown. A worker whose lease lapsed may
    /// have been overtaken by one that resent the confirm, which the PG then
    /// charged: its "not charged" is no longer true. What the PG shows as
    /// charged (PAID, cancelled since) is true whoever stores it.
    pub fn needs_lease(&self) -> bool {
        matches!(self, Transition::Failed(_) | Transition::Unknown(_))
    }

    /// Why nothing was charged, for a failure.
    pub fn failure(&self) -> Option<&Failure> {
        match self {
            Transition::Failed(failure) => Some(failure),
            _ => None,
        }
    }

    /// Why the outcome is not known, for operators.
    pub fn unknown_reason(&self) -> Option<&str> {
        match self {
            Transition::Unknown(reason) => Some(reason),
            _ => None,
        }
    }

    /// The code the history keeps: a failure's, or a refused refund's.
    pub fn code(&self) -> Option<&str> {
        match self {
            Transition::Failed(failure) => Some(&failure.code),
            Transition::RefundRefused { code, .. } => Some(code),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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

    /// A transition, the status it is applied to, the refunded amount, and where it goes.
    type Row = (Transition, OrderStatus, u64, Option<(OrderStatus, u64)>);

    #[test]
    fn where_each_transition_takes_an_order_of_10_000() {
        let declined = Failure { code: "REJECT_CARD_PAYMENT".into(), message: "declined".into() };
        let refused = |back_to| Transition::RefundRefused { back_to, code: "NOT_CANCELABLE_AMOUNT".into() };
        #[rustfmt::skip]
        let table: [Row; 16] = [
            (Transition::Paid, Pending, 0, Some((Paid, 0))),
            (Transition::Paid, Unknown, 0, Some((Paid, 0))),
            (Transition::Paid, Failed, 0, None),
            (Transition::Failed(declined.clone()), Unknown, 0, Some((Failed, 0))),
            (Transition::Failed(declined), Paid, 0, None),
            (Transition::Unknown("timeout".into()), Pending, 0, Some((Unknown, 0))),
            (Transition::Canceled, Unknown, 0, Some((Canceled, 10_000))),
            (Transition::CancelRequested { balance_before: 10_000 }, Paid, 0, Some((CancelRequested, 0))),
            (Transition::CancelRequested { balance_before: 7_000 }, PartiallyRefunded, 3_000, Some((CancelRequested, 3_000))),
            // Refunded meanwhile by someone else: the balance it was asked on is gone.
            (Transition::CancelRequested { balance_before: 10_000 }, PartiallyRefunded, 3_000, None),
            (Transition::CancelRequested { balance_before: 10_000 }, Unknown, 0, None),
            (Transition::RefundSettled { refunded_total: 10_000 }, CancelRequested, 3_000, Some((Canceled, 10_000))),
            (Transition::RefundSettled { refunded_total: 3_000 }, CancelRequested, 0, Some((PartiallyRefunded, 3_000))),
            (Transition::RefundSettled { refunded_total: 3_000 }, Paid, 0, None),
            (refused(Paid), CancelRequested, 0, Some((Paid, 0))),
            (refused(Failed), CancelRequested, 0, None),
        ];
        for (transition, from, refunded, expected) in table {
            let moved = transition.from(from, 10_000, refunded).map(|moved| (moved.to, moved.refunded));
            assert_eq!(moved, expected, "{transition:?} from {from:?} with {refunded} refunded");
        }
    }

    #[test]
    fn only_a_failure_or_an_unknown_outcome_needs_the_attempts_lease() {
        let declined = Failure { code: "REJECT_CARD_PAYMENT".into(), message: "declined".into() };
        let needs: Vec<bool> = [
            Transition::Failed(declined),
            Transition::Unknown("timeout".into()),
            Transition::Paid,
            Transition::Canceled,
            Transition::PartiallyRefunded { refunded_total: 3_000 },
            Transition::CancelRequested { balance_before: 10_000 },
            Transition::RefundSettled { refunded_total: 10_000 },
            Transition::RefundRefused { back_to: Paid, code: "NOT_CANCELABLE_AMOUNT".into() },
        ]
        .iter()
        .map(Transition::needs_lease)
        .collect();
        assert_eq!(needs, [true, true, false, false, false, false, false, false]);
    }

    #[test]
    fn the_history_keeps_a_failures_code_a_refused_refunds_code_and_why_an_outcome_is_unknown() {
        let declined = Failure { code: "REJECT_CARD_PAYMENT".into(), message: "declined".into() };
        let failed = Transition::Failed(declined.clone());
        assert_eq!(
            (failed.failure(), failed.code(), failed.unknown_reason()),
            (Some(&declined), Some("REJECT_CARD_PAYMENT"), None)
        );
        let refused = Transition::RefundRefused { back_to: Paid, code: "NOT_CANCELABLE_AMOUNT".into() };
        assert_eq!(
            (refused.failure(), refused.code(), refused.unknown_reason()),
            (None, Some("NOT_CANCELABLE_AMOUNT"), None)
        );
        let unknown = Transition::Unknown("read timeout".into());
        assert_eq!((unknown.failure(), unknown.code(), unknown.unknown_reason()), (None, None, Some("read timeout")));
        let paid = Transition::Paid;
        assert_eq!((paid.failure(), paid.code(), paid.unknown_reason()), (None, None, None));
    }

    /// The lifecycle as ARCHITECTURE.md draws it, rendered from `can_transition`.
    fn drawn() -> String {
        let order = [Created, Pending, Unknown, Paid, PartiallyRefunded, CancelRequested, Failed, Canceled];
        let mut drawing = String::new();
        for from in order {
            let to: Vec<&str> =
                ALL.into_iter().filter(|&to| can_transition(from, to)).map(OrderStatus::as_str).collect();
            let to = if to.is_empty() { "(final)".to_owned() } else { to.join(" | ") };
            drawing.push_str(&format!("{:<18} -> {to}\n", from.as_str()));
        }
        drawing
    }

    #[test]
    fn the_architecture_draws_the_lifecycle_the_code_has() {
        let architecture = include_str!("../../../../ARCHITECTURE.md");
        assert!(architecture.contains(&format!("```\n{}```", drawn())), "ARCHITECTURE.md should draw:\n{}", drawn());
    }
}

//! What a shop is told of a change of its checkout: the event a committed
//! status change makes, if any. Only changes a shop acts on are told: a
//! verdict on the charge (paid, failed, expired) and what a refund came to.
//! PENDING, UNKNOWN and CANCEL_REQUESTED are steps on the way, not news; an
//! outcome unknown for long is told once, by the job engine's alert
//! (`EventType::Unresolved`), not here.

use payonce_api::{ErrorCode, EventType, OrderStatus};

/// One committed change, as the status writer saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Told<'a> {
    pub from: OrderStatus,
    pub to: OrderStatus,
    /// The failure's code (FAILED), or the refusal's (a refund refused).
    pub code: Option<&'a str>,
    /// How much of the charge was refunded before the change, and after it.
    pub refunded_before: u64,
    pub refunded_after: u64,
}

/// The event `change` makes, or `None` when the shop is not told of it.
pub fn event_of(change: Told<'_>) -> Option<EventType> {
    let refunded_more = change.refunded_after > change.refunded_before;
    match change.to {
        OrderStatus::Paid if change.from == OrderStatus::CancelRequested => Some(EventType::RefundFailed),
        OrderStatus::Paid => Some(EventType::Paid),
        // FAILED is written only where nothing was or will be charged.
        OrderStatus::Failed if change.code == Some(ErrorCode::CheckoutExpired.as_str()) => Some(EventType::Expired),
        OrderStatus::Failed => Some(EventType::Failed),
        OrderStatus::Canceled => Some(EventType::Refunded),
        OrderStatus::PartiallyRefunded if refunded_more => Some(EventType::PartiallyRefunded),
        // Back from CANCEL_REQUESTED with nothing more refunded: the PG refused it.
        OrderStatus::PartiallyRefunded => Some(EventType::RefundFailed),
        OrderStatus::Created | OrderStatus::Pending | OrderStatus::Unknown | OrderStatus::CancelRequested => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use OrderStatus::*;

    fn told(from: OrderStatus, to: OrderStatus, code: Option<&str>, before: u64, after: u64) -> Option<EventType> {
        event_of(Told { from, to, code, refunded_before: before, refunded_after: after })
    }

    #[test]
    fn a_charge_is_told_once_it_is_known_and_the_steps_before_it_are_not() {
        assert_eq!(told(Created, Pending, None, 0, 0), None);
        assert_eq!(told(Pending, Unknown, None, 0, 0), None);
        assert_eq!(told(Pending, Paid, None, 0, 0), Some(EventType::Paid));
        assert_eq!(told(Unknown, Paid, None, 0, 0), Some(EventType::Paid));
        assert_eq!(told(Unknown, Failed, Some("REJECT_CARD_COMPANY"), 0, 0), Some(EventType::Failed));
        assert_eq!(told(Created, Failed, Some("OUT_OF_STOCK"), 0, 0), Some(EventType::Failed));
    }

    #[test]
    fn an_expired_checkout_is_told_as_expired_not_as_failed() {
        assert_eq!(told(Created, Failed, Some("CHECKOUT_EXPIRED"), 0, 0), Some(EventType::Expired));
        assert_eq!(told(Created, Failed, Some("USER_CANCEL"), 0, 0), Some(EventType::Failed));
    }

    #[test]
    fn a_refund_is_told_by_what_it_came_to() {
        assert_eq!(told(Paid, CancelRequested, None, 0, 0), None);
        assert_eq!(told(CancelRequested, Canceled, None, 0, 1000), Some(EventType::Refunded));
        assert_eq!(told(CancelRequested, PartiallyRefunded, None, 0, 400), Some(EventType::PartiallyRefunded));
        assert_eq!(told(CancelRequested, PartiallyRefunded, None, 400, 700), Some(EventType::PartiallyRefunded));
        // A lookup that finds the charge refunded at the PG since.
        assert_eq!(told(Paid, PartiallyRefunded, None, 0, 300), Some(EventType::PartiallyRefunded));
        assert_eq!(told(Unknown, Canceled, None, 0, 1000), Some(EventType::Refunded));
    }

    #[test]
    fn a_refused_refund_is_told_as_failed_whichever_status_it_goes_back_to() {
        assert_eq!(told(CancelRequested, Paid, Some("NOT_CANCELABLE_AMOUNT"), 0, 0), Some(EventType::RefundFailed));
        assert_eq!(
            told(CancelRequested, PartiallyRefunded, Some("NOT_CANCELABLE_AMOUNT"), 400, 400),
            Some(EventType::RefundFailed)
        );
    }
}

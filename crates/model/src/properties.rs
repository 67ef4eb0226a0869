//! What must hold in every reachable state, and what must be reachable.

use payonce_api::OrderStatus;
use payonce_rules::breaker::Phase;
use payonce_rules::settlement::{Charge, Finding, ShopSide, classify};
use stateright::{Model, Property};

use crate::pg;
use crate::state::{RefundEnd, Said, State, Task};

pub const ONE_CHARGE: &str = "at most one charge per order";
pub const ONE_APPROVE_WITHOUT_KEYS: &str = "a PG without idempotency keys receives one confirm per order";
pub const PAID_ONLY_IF_CHARGED: &str = "PAID only with the PG's charge";
pub const FAILED_ONLY_IF_NOTHING_CHARGED: &str = "FAILED only when nothing was or can be charged";
pub const PAGE_TRUTHFUL: &str = "the page says not charged only when that is true";
pub const LEDGER_AGREES: &str = "what the shop records as refunded is what the PG refunded";
pub const REFUNDED_AS_ASKED: &str = "the PG refunds no more than the shop asked";
pub const RECONCILIATION_AGREES: &str = "a reconciliation pass finds nothing wrong";
pub const EVERY_PAYMENT_SETTLES: &str = "every payment and refund settles";
pub const ONCE_SETTLED_ALWAYS_SETTLED: &str = "a payment once settled never becomes unsettled again";
pub const SHOP_TOLD_TRUTHFULLY: &str = "the shop is told paid only of a charge, failed only when nothing was charged";
pub const SHOP_HEARS_THE_STATUS: &str = "a settled order's last event tells its status";
pub const CAN_BE_PAID: &str = "a payment can be paid";
pub const CAN_FAIL: &str = "a payment can fail";
pub const CAN_BE_RECOVERED_PARTLY_REFUNDED: &str = "a payment can be found partly refunded";
pub const CAN_BE_REFUNDED: &str = "a refund can go out";
pub const BREAKER_CAN_OPEN: &str = "recovery's breaker can open";

fn charged_statuses(status: OrderStatus) -> bool {
    matches!(
        status,
        OrderStatus::Paid | OrderStatus::PartiallyRefunded | OrderStatus::Canceled | OrderStatus::CancelRequested
    )
}

/// The payment's outcome is known for good: PAID, FAILED, or a refund's
/// status (CREATED, PENDING and UNKNOWN are not).
pub fn payment_settled(status: OrderStatus) -> bool {
    !matches!(status, OrderStatus::Created | OrderStatus::Pending | OrderStatus::Unknown)
}

/// The customer's payment is settled (final, or never stored: its confirm
/// task gone before it stored anything and no other tab's confirm to come, so
/// there is nothing to settle), and so is the operator's refund of it, where
/// one is to come. With two tabs, an order left CREATED by the first is not
/// settled while the second may still submit: "eventually" holds on a path
/// from the first state that satisfies it, and a payment the second tab's
/// confirm then left stuck would go unreported.
fn settled(state: &State) -> bool {
    let confirm_task_gone = state.servers.iter().all(|server| server.tasks[0] == Task::Idle);
    let refund_settled = state.refund.as_ref().map(|refund| !refund.is_open());
    state.submitted
        && match state.row.status {
            OrderStatus::Created => confirm_task_gone && !state.second_tab_to_come,
            OrderStatus::Failed => true,
            OrderStatus::Pending | OrderStatus::Unknown | OrderStatus::CancelRequested => false,
            OrderStatus::Paid | OrderStatus::PartiallyRefunded | OrderStatus::Canceled => {
                refund_settled.unwrap_or(!state.refund_expected)
            }
        }
}

/// What `settlement::classify` finds of the order's charge at the PG, if it
/// has one, set against the shop's order.
pub fn reconciliation_finds(state: &State) -> Option<Finding> {
    if !state.pg.charged {
        return None;
    }
    let charge = Charge {
        payment_key: pg::PAYMENT_KEY.to_owned(),
        order_id: pg::ORDER_ID.to_owned(),
        amount: pg::AMOUNT,
        refunded: state.pg.refunded,
    };
    let has_attempt = state.row.status != OrderStatus::Created;
    let shop = ShopSide {
        status: state.row.status,
        payment_key: has_attempt.then(|| pg::attempt_key(state.names_other_order)),
        amount: pg::AMOUNT,
        refunded: state.row.refunded,
    };
    Some(classify(&charge, Some(shop)))
}

/// Every property, for a model whose states are the protocol's.
pub fn all<M: Model<State = State>>() -> Vec<Property<M>> {
    vec![
        Property::always(ONE_CHARGE, |_, state: &State| state.pg.charges <= 1),
        // Without a key, a second confirm is a second request: whatever the PG
        // would do with it, it must never be sent.
        Property::always(ONE_APPROVE_WITHOUT_KEYS, |_, state: &State| {
            !state.pg.keyless || state.pg.confirms_received <= 1
        }),
        Property::always(PAID_ONLY_IF_CHARGED, |_, state: &State| {
            !charged_statuses(state.row.status) || state.pg.charged
        }),
        // The PG's charge is kept for good: a charge that comes after FAILED
        // was stored (something was still in flight) breaks this too.
        Property::always(FAILED_ONLY_IF_NOTHING_CHARGED, |_, state: &State| {
            state.row.status != OrderStatus::Failed || !state.pg.charged
        }),
        Property::always(PAGE_TRUTHFUL, |_, state: &State| state.said != Said::NotCharged || !state.pg.charged),
        Property::always(LEDGER_AGREES, |_, state: &State| {
            !matches!(state.row.status, OrderStatus::PartiallyRefunded | OrderStatus::Canceled)
                || state.row.refunded == state.pg.refunded
        }),
        Property::always(REFUNDED_AS_ASKED, |_, state: &State| {
            let asked = state.refund.as_ref().map_or(0, |refund| refund.amount);
            state.pg.refunded - state.pg.refunded_at_console <= asked
        }),
        // Reconciliation's own rule, as a pass reading both sides at this moment:
        // whatever is settled agrees, and nothing unsettled is acted on.
        Property::always(RECONCILIATION_AGREES, |_, state: &State| {
            !matches!(reconciliation_finds(state), Some(Finding::Disagrees(_)))
        }),
        // Checked where a run ends: nothing can move any more, every timer has
        // fired, the PG answers (the faults are spent or not taken), and
        // recovery had its passes since time last moved.
        Property::always(SHOP_TOLD_TRUTHFULLY, |_, state: &State| !state.shop.told_untrue),
        Property::always(SHOP_HEARS_THE_STATUS, |_, state: &State| match state.row.status {
            OrderStatus::Paid | OrderStatus::Failed | OrderStatus::Canceled | OrderStatus::PartiallyRefunded => {
                state.shop.last == Some(state.row.status)
            }
            _ => true,
        }),
        Property::eventually(EVERY_PAYMENT_SETTLES, |_, state: &State| settled(state)),
        // At every step, not only where a path ends.
        Property::always(ONCE_SETTLED_ALWAYS_SETTLED, |_, state: &State| {
            !state.settled_once || payment_settled(state.row.status)
        }),
        Property::sometimes(CAN_BE_PAID, |_, state: &State| state.row.status == OrderStatus::Paid),
        Property::sometimes(CAN_FAIL, |_, state: &State| state.row.status == OrderStatus::Failed),
        Property::sometimes(CAN_BE_RECOVERED_PARTLY_REFUNDED, |_, state: &State| {
            state.row.status == OrderStatus::PartiallyRefunded && state.refund.is_none()
        }),
        Property::sometimes(CAN_BE_REFUNDED, |_, state: &State| {
            state.refund.as_ref().is_some_and(|refund| refund.settled == Some(RefundEnd::Refunded))
        }),
        // Under an outage, at the server's threshold: its phases are explored.
        Property::sometimes(BREAKER_CAN_OPEN, |_, state: &State| {
            state.servers.iter().any(|server| matches!(server.breaker, Phase::Open { .. }))
        }),
    ]
}

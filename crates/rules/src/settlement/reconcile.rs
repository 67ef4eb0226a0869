//! Reconciliation's rule: what one charge at the PG is to the shop, set
//! against the order its orderId names. It never acts beside a payment whose
//! outcome recovery is still finding out, nor on a refund being sent.

use payonce_api::OrderStatus;

/// One payment at the PG, from its transactions in the listing's window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Charge {
    pub payment_key: String,
    pub order_id: String,
    pub amount: u64,
    /// Cancelled of it so far.
    pub refunded: u64,
}

/// The shop's side of the order a charge names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShopSide<'a> {
    /// CREATED while the order has no attempt.
    pub status: OrderStatus,
    /// The payment the order's attempt confirmed (or is confirming).
    pub payment_key: Option<&'a str>,
    pub amount: u64,
    pub refunded: u64,
}

/// How a charge and the shop disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disagreement {
    /// No order of the shop made it: no such order, an order paid by another
    /// payment, or one that never sent a confirm.
    ChargeWithoutOrder,
    /// The PG charged another amount than the order's.
    AmountMismatch,
    /// The order's own payment charged while the shop has it FAILED (or never sent).
    ChargeForUnpaidOrder,
    /// The PG cancelled another total of it than the shop refunded.
    RefundMismatch,
}

/// What one charge is to the shop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finding {
    /// Its order, charged for that amount, with the same refunds.
    Matches,
    /// Recovery's or refund recovery's: not looked at.
    Unsettled,
    /// No order made it, and the PG shows it refunded in full.
    OrphanRefunded,
    Disagrees(Disagreement),
}

/// Compares a charge with the order its orderId names (`None`: the shop has no such order).
pub fn classify(charge: &Charge, shop: Option<ShopSide<'_>>) -> Finding {
    let orphan = || {
        if charge.refunded >= charge.amount {
            Finding::OrphanRefunded
        } else {
            Finding::Disagrees(Disagreement::ChargeWithoutOrder)
        }
    };
    let Some(shop) = shop else { return orphan() };
    let unsettled = matches!(shop.status, OrderStatus::Pending | OrderStatus::Unknown);
    if shop.payment_key != Some(charge.payment_key.as_str()) {
        // Never act beside a payment whose outcome recovery is still finding out.
        return if unsettled { Finding::Unsettled } else { orphan() };
    }
    match shop.status {
        OrderStatus::Pending | OrderStatus::Unknown => Finding::Unsettled,
        OrderStatus::Created | OrderStatus::Failed => Finding::Disagrees(Disagreement::ChargeForUnpaidOrder),
        OrderStatus::Paid | OrderStatus::CancelRequested | OrderStatus::PartiallyRefunded | OrderStatus::Canceled => {
            if shop.amount != charge.amount {
                Finding::Disagrees(Disagreement::AmountMismatch)
            } else if shop.status == OrderStatus::CancelRequested {
                Finding::Unsettled
            } else if shop.refunded != charge.refunded {
                Finding::Disagrees(Disagreement::RefundMismatch)
            } else {
                Finding::Matches
            }
        }
    }
}

/// What the shop does with a charge no order of it made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OrphanPolicy {
    /// Refund it in full, if its orderId is the shop's.
    #[default]
    Refund,
    /// Only report it: an operator decides.
    Report,
}

/// What reconciliation does about one charge no order made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrphanAction {
    /// Refund it in full: its orderId is the shop's, and the shop refunds orphan charges.
    Refund,
    /// The shop's, but the shop only reports orphan charges.
    Report,
    /// Not the shop's: its orderId has neither the shop's prefix nor an order
    /// of the shop. Another user of the PG account charged it (another shop,
    /// a POS, a payment link, a staging deploy on the same keys): never touched.
    NotTheShops,
}

/// A charge's orderId is the shop's when it carries the shop's prefix, or
/// names an order the shop has (issued before a change of prefix).
pub fn orphan_action(order_id: &str, shop_prefix: &str, shop_has_order: bool, policy: OrphanPolicy) -> OrphanAction {
    if !shop_has_order && !order_id.starts_with(shop_prefix) {
        return OrphanAction::NotTheShops;
    }
    match policy {
        OrphanPolicy::Refund => OrphanAction::Refund,
        OrphanPolicy::Report => OrphanAction::Report,
    }
}

/// What reconciliation does about one charge the PG lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChargeStep {
    /// The shop's record agrees: counted.
    Matched,
    /// Recovery's or refund recovery's: listed as skipped, compared at a later pass.
    SkipUnsettled,
    /// Another user of the PG account charged it: listed, never touched.
    NotTheShops,
    /// A charge of no order that the PG shows refunded in full: listed, and
    /// (`record`, unless a dry run) its refund of ours stored DONE.
    OrphanRefunded { record: bool },
    /// A disagreement, and what is done about it.
    Mismatch(Disagreement, MismatchAction),
}

/// What is done about a disagreement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MismatchAction {
    /// A charge of no order of the shop's, which refunds orphans: refunded in full now.
    RefundInFull,
    /// The same in a dry run: said, not done.
    WouldRefundInFull,
    /// A charge of no order, where the shop only reports orphans.
    ReportOnly,
    /// Anything else: flagged for an operator.
    Flag,
}

/// The step for one charge: its `finding`, what the shop does with an
/// orphan of this orderId (`orphan`), and whether the pass acts or only says
/// what it would do (`dry_run`). Only a charge of no order of the shop's own
/// orderIds, in a pass that acts, is ever refunded.
pub fn charge_step(finding: Finding, orphan: OrphanAction, dry_run: bool) -> ChargeStep {
    let of_no_order = matches!(finding, Finding::OrphanRefunded | Finding::Disagrees(Disagreement::ChargeWithoutOrder));
    if of_no_order && orphan == OrphanAction::NotTheShops {
        return ChargeStep::NotTheShops;
    }
    match finding {
        Finding::Matches => ChargeStep::Matched,
        Finding::Unsettled => ChargeStep::SkipUnsettled,
        Finding::OrphanRefunded => ChargeStep::OrphanRefunded { record: !dry_run },
        Finding::Disagrees(disagreement) => {
            let action = match (disagreement, orphan, dry_run) {
                (Disagreement::ChargeWithoutOrder, OrphanAction::Refund, false) => MismatchAction::RefundInFull,
                (Disagreement::ChargeWithoutOrder, OrphanAction::Refund, true) => MismatchAction::WouldRefundInFull,
                (Disagreement::ChargeWithoutOrder, _, _) => MismatchAction::ReportOnly,
                _ => MismatchAction::Flag,
            };
            ChargeStep::Mismatch(disagreement, action)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_orphan_of_the_shops_own_order_ids_is_ever_refunded() {
        use OrphanAction::*;
        let policy = OrphanPolicy::Refund;
        assert_eq!(orphan_action("ord_1", "ord_", false, policy), Refund);
        assert_eq!(orphan_action("ord_1", "ord_", true, policy), Refund);
        assert_eq!(orphan_action("pos-terminal-7", "ord_", false, policy), NotTheShops);
        assert_eq!(orphan_action("xord_1", "ord_", false, policy), NotTheShops, "a prefix, not a substring");
        assert_eq!(orphan_action("old_1", "shop2_", true, policy), Refund, "an order issued before a new prefix");
        assert_eq!(orphan_action("ord_1", "ord_", false, OrphanPolicy::Report), Report);
        assert_eq!(orphan_action("ord_1", "ord_", true, OrphanPolicy::Report), Report);
        assert_eq!(orphan_action("pos-1", "ord_", false, OrphanPolicy::Report), NotTheShops);
        assert_eq!(OrphanPolicy::default(), OrphanPolicy::Refund, "as before: the shop's orphan charges are refunded");
    }

    fn charge(amount: u64, refunded: u64) -> Charge {
        Charge { payment_key: "pk".to_owned(), order_id: "ord".to_owned(), amount, refunded }
    }

    fn shop(status: OrderStatus, payment_key: Option<&str>, amount: u64, refunded: u64) -> ShopSide<'_> {
        ShopSide { status, payment_key, amount, refunded }
    }

    #[test]
    fn a_charge_matches_only_its_own_charged_order_with_the_same_amount_and_refunds() {
        use Disagreement::*;
        use Finding::{Disagrees as M, Matches, OrphanRefunded, Unsettled};
        let paid = |status| shop(status, Some("pk"), 1_000, 0);
        assert_eq!(classify(&charge(1_000, 0), Some(paid(OrderStatus::Paid))), Matches);
        assert_eq!(classify(&charge(1_000, 0), None), M(ChargeWithoutOrder));
        assert_eq!(classify(&charge(1_000, 1_000), None), OrphanRefunded, "already refunded");
        assert_eq!(classify(&charge(1_000, 400), None), M(ChargeWithoutOrder), "refunded in part only");
        let other = shop(OrderStatus::Paid, Some("another"), 1_000, 0);
        assert_eq!(classify(&charge(1_000, 0), Some(other)), M(ChargeWithoutOrder), "a second charge");
        let unsent = shop(OrderStatus::Created, None, 1_000, 0);
        assert_eq!(classify(&charge(1_000, 0), Some(unsent)), M(ChargeWithoutOrder), "no confirm was ever sent");
        for status in [OrderStatus::Pending, OrderStatus::Unknown] {
            assert_eq!(classify(&charge(1_000, 0), Some(paid(status))), Unsettled, "{status:?} is recovery's");
            let other = shop(status, Some("another"), 1_000, 0);
            assert_eq!(classify(&charge(1_000, 0), Some(other)), Unsettled, "nothing beside recovery");
        }
        assert_eq!(classify(&charge(1_000, 0), Some(paid(OrderStatus::Failed))), M(ChargeForUnpaidOrder));
        assert_eq!(classify(&charge(900, 0), Some(paid(OrderStatus::Paid))), M(AmountMismatch));
        assert_eq!(classify(&charge(1_000, 0), Some(paid(OrderStatus::CancelRequested))), Unsettled);
        let refunded = shop(OrderStatus::Canceled, Some("pk"), 1_000, 1_000);
        assert_eq!(classify(&charge(1_000, 1_000), Some(refunded)), Matches);
        assert_eq!(classify(&charge(1_000, 0), Some(refunded)), M(RefundMismatch));
        let part = shop(OrderStatus::PartiallyRefunded, Some("pk"), 1_000, 300);
        assert_eq!(classify(&charge(1_000, 300), Some(part)), Matches);
        assert_eq!(classify(&charge(1_000, 500), Some(part)), M(RefundMismatch));
    }

    #[test]
    fn only_a_pass_that_acts_refunds_and_only_the_shops_own_orphans() {
        use ChargeStep as S;
        use Disagreement as D;
        use MismatchAction as M;
        let orphan = Finding::Disagrees(D::ChargeWithoutOrder);
        assert_eq!(
            charge_step(orphan, OrphanAction::Refund, false),
            S::Mismatch(D::ChargeWithoutOrder, M::RefundInFull)
        );
        assert_eq!(
            charge_step(orphan, OrphanAction::Refund, true),
            S::Mismatch(D::ChargeWithoutOrder, M::WouldRefundInFull)
        );
        assert_eq!(charge_step(orphan, OrphanAction::Report, false), S::Mismatch(D::ChargeWithoutOrder, M::ReportOnly));
        assert_eq!(charge_step(orphan, OrphanAction::NotTheShops, false), S::NotTheShops);
        assert_eq!(charge_step(Finding::OrphanRefunded, OrphanAction::NotTheShops, false), S::NotTheShops);
        assert_eq!(
            charge_step(Finding::OrphanRefunded, OrphanAction::Refund, false),
            S::OrphanRefunded { record: true }
        );
        assert_eq!(
            charge_step(Finding::OrphanRefunded, OrphanAction::Report, true),
            S::OrphanRefunded { record: false }
        );
        // The shop's own orders are compared whatever the orphan policy says.
        for orphan in [OrphanAction::Refund, OrphanAction::Report, OrphanAction::NotTheShops] {
            assert_eq!(charge_step(Finding::Matches, orphan, false), S::Matched);
            assert_eq!(charge_step(Finding::Unsettled, orphan, false), S::SkipUnsettled);
            for disagreement in [D::AmountMismatch, D::ChargeForUnpaidOrder, D::RefundMismatch] {
                let step = charge_step(Finding::Disagrees(disagreement), orphan, false);
                assert_eq!(step, S::Mismatch(disagreement, M::Flag), "{disagreement:?}, {orphan:?}");
            }
        }
    }
}

//! Every order against the PG's ledger, Jepsen-style: what the customer was
//! told, what the server settled, and what the PG charged must agree. A shop's
//! checkout is an order like any other here; what only checkouts have (one per
//! key, the shop API's view) is `shop_check`'s.

use std::collections::BTreeMap;

use payonce_api::OrderStatus;
use serde::Serialize;

use crate::customer::{Told, Visit};
use crate::event_check::EventVerdicts;

/// What is true of one order once the campaign is over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truth {
    pub status: OrderStatus,
    /// Why it failed, if it did.
    pub failure_code: Option<String>,
    /// Charges the PG holds for the order.
    pub charges: u64,
    /// Whether its payment went through UNKNOWN on the way.
    pub went_through_unknown: bool,
    /// From the attempt's first record to its final one, if it settled.
    pub settle_ms: Option<i64>,
    /// When it settled (ms since the epoch), if it did.
    pub settled_at_ms: Option<i64>,
}

/// The anomalies, each with the orders that show it (the first few).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Verdicts {
    /// Charged by the PG, but the order is not paid.
    pub lost: Vec<String>,
    /// Paid, but the PG holds no charge.
    pub unexpected: Vec<String>,
    /// Charged more than once.
    pub duplicated: Vec<String>,
    /// Still PENDING or UNKNOWN when the campaign ended.
    pub stuck: Vec<String>,
    /// The customer was told paid or failed, and the truth is otherwise.
    pub contradicted: Vec<String>,
    /// Shop customers (by reference) whose one `Idempotency-Key` yielded more
    /// than one checkout: a retried create made another.
    pub checkouts_duplicated: Vec<String>,
    /// Checkouts the shop API shows otherwise than the order (status, amount
    /// refunded) as its customer sees it, the server settled it, or the PG's
    /// ledger holds it; or does not list as its reference's one checkout.
    pub checkouts_disagreeing: Vec<String>,
    /// The shop's events against what it received, the feed, payonce's
    /// database and its checkouts' histories (`event_check`).
    pub events: EventVerdicts,
    /// Went through UNKNOWN and settled in agreement with the ledger.
    pub recovered: usize,
}

impl Verdicts {
    /// Whether anything is wrong.
    pub fn failed(&self) -> bool {
        !(self.lost.is_empty()
            && self.unexpected.is_empty()
            && self.duplicated.is_empty()
            && self.stuck.is_empty()
            && self.contradicted.is_empty()
            && self.checkouts_duplicated.is_empty()
            && self.checkouts_disagreeing.is_empty()
            && !self.events.failed())
    }
}

/// Checks every visited order. `double_charges` is the PG's own list.
pub fn check(visits: &[Visit], truths: &BTreeMap<String, Truth>, double_charges: &[String]) -> Verdicts {
    let mut verdicts = Verdicts::default();
    for visit in visits {
        let Some(order_id) = &visit.order_id else { continue };
        let Some(truth) = truths.get(order_id) else { continue };
        let charged = truth.charges > 0;
        let kept_the_money =
            matches!(truth.status, OrderStatus::Paid | OrderStatus::PartiallyRefunded | OrderStatus::CancelRequested);
        let took_the_money = kept_the_money || truth.status == OrderStatus::Canceled;
        if charged && !took_the_money && !truth.status.is_in_progress() {
            verdicts.lost.push(order_id.clone());
        }
        if took_the_money && !charged {
            verdicts.unexpected.push(order_id.clone());
        }
        if truth.charges > 1 || double_charges.contains(order_id) {
            verdicts.duplicated.push(order_id.clone());
        }
        if truth.status.is_in_progress() {
            verdicts.stuck.push(order_id.clone());
        }
        let contradicted = match visit.told {
            Told::Paid => !(kept_the_money && charged),
            Told::Failed => charged || truth.status != OrderStatus::Failed,
            Told::Refunded => truth.status != OrderStatus::Canceled,
            // Nothing was sent to pay: nothing may be charged, nor the order paid.
            Told::TurnedAway => charged || took_the_money,
            Told::Unresolved | Told::NoOrder => false,
        };
        if contradicted {
            verdicts.contradicted.push(order_id.clone());
        }
        let agrees = took_the_money == charged && !truth.status.is_in_progress();
        if truth.went_through_unknown && agrees {
            verdicts.recovered += 1;
        }
    }
    verdicts
}

/// The `q` quantile (0 to 1) of `values`, by nearest rank; `None` if empty.
pub fn quantile(values: &[i64], q: f64) -> Option<i64> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visit(order_id: &str, told: Told) -> Visit {
        Visit { order_id: Some(order_id.to_owned()), pg: payonce_api::Pg::Toss, told, confirm_sent: true, shop: None }
    }

    fn truth(status: OrderStatus, charges: u64, went_through_unknown: bool) -> Truth {
        Truth { status, failure_code: None, charges, went_through_unknown, settle_ms: Some(10), settled_at_ms: Some(0) }
    }

    fn verdicts(cases: &[(&str, Told, Truth)], double_charges: &[&str]) -> Verdicts {
        let visits: Vec<_> = cases.iter().map(|(id, told, _)| visit(id, *told)).collect();
        let truths = cases.iter().map(|(id, _, truth)| ((*id).to_owned(), truth.clone())).collect();
        let doubles: Vec<String> = double_charges.iter().map(|id| (*id).to_owned()).collect();
        check(&visits, &truths, &doubles)
    }

    #[test]
    fn agreeing_orders_are_clean_and_recoveries_are_counted() {
        let clean = verdicts(
            &[
                ("paid", Told::Paid, truth(OrderStatus::Paid, 1, false)),
                ("failed", Told::Failed, truth(OrderStatus::Failed, 0, false)),
                ("recovered", Told::Unresolved, truth(OrderStatus::Paid, 1, true)),
                ("recovered-failed", Told::Unresolved, truth(OrderStatus::Failed, 0, true)),
                ("turned-away", Told::TurnedAway, truth(OrderStatus::Created, 0, false)),
            ],
            &[],
        );
        assert!(!clean.failed(), "{clean:?}");
        assert_eq!(clean.recovered, 2);
    }

    #[test]
    fn each_anomaly_is_caught() {
        let found = verdicts(
            &[
                ("lost", Told::Unresolved, truth(OrderStatus::Failed, 1, false)),
                ("unexpected", Told::Unresolved, truth(OrderStatus::Paid, 0, false)),
                ("duplicated", Told::Paid, truth(OrderStatus::Paid, 2, false)),
                ("stuck", Told::Unresolved, truth(OrderStatus::Unknown, 1, true)),
                ("told-paid", Told::Paid, truth(OrderStatus::Failed, 0, false)),
                ("told-failed", Told::Failed, truth(OrderStatus::Paid, 1, true)),
                ("turned-away-paid", Told::TurnedAway, truth(OrderStatus::Paid, 1, false)),
            ],
            &["duplicated"],
        );
        assert_eq!(found.lost, ["lost"]);
        assert_eq!(found.unexpected, ["unexpected"]);
        assert_eq!(found.duplicated, ["duplicated"]);
        assert_eq!(found.stuck, ["stuck"]);
        assert_eq!(found.contradicted, ["told-paid", "told-failed", "turned-away-paid"]);
        assert_eq!(found.recovered, 1, "told-failed recovered right, though the customer was misled");
        assert!(found.failed());
    }

    #[test]
    fn quantiles_take_the_nearest_rank() {
        let values: Vec<i64> = (1..=100).collect();
        assert_eq!(quantile(&values, 0.5), Some(50));
        assert_eq!(quantile(&values, 0.99), Some(99));
        assert_eq!(quantile(&values, 1.0), Some(100));
        assert_eq!(quantile(&[7], 0.99), Some(7));
        assert_eq!(quantile(&[], 0.5), None);
    }
}

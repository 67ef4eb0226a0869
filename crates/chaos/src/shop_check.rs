//! The shop customers' checkouts, once the campaign is over: each customer's
//! one `Idempotency-Key` yielded one checkout however often the shop sent its
//! create, and the shop API's view of it agrees with the order as its customer
//! sees it, as the server settled it, and with the PG's ledger.
//!
//! `look` reads the views (the shop's through its key, the customer's
//! through their own cookie); `check` is the verdict on them.

use std::collections::BTreeMap;
use std::time::Duration;

use payonce_api::{Checkout, CheckoutStatus, Order};

use crate::check::Truth;
use crate::customer::{Servers, Visit};
use crate::scripted_shop::{ScriptedShop, Unreadable};
use crate::shop_customer;

/// What a view shows of a checkout's money.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct View {
    pub status: CheckoutStatus,
    pub amount: u64,
    pub amount_refunded: u64,
}

impl View {
    /// The shop API's view (`GET /v1/checkouts/{id}`).
    pub fn of_checkout(checkout: &Checkout) -> Self {
        Self { status: checkout.status, amount: checkout.amount, amount_refunded: checkout.amount_refunded }
    }

    /// The customer's view (`GET /api/orders/{id}`), in the shop API's terms.
    pub fn of_order(order: &Order) -> Self {
        let failure_code = order.failure.as_ref().map(|failure| failure.code.as_str());
        Self {
            status: CheckoutStatus::of(order.status, failure_code),
            amount: order.amount,
            amount_refunded: order.refunded_amount,
        }
    }
}

/// What the campaign sees of one shop customer's checkout at its end.
#[derive(Debug, Clone)]
pub struct CheckoutSeen {
    /// The customer's reference, which was also the create's key.
    pub reference: String,
    /// The checkout the create was answered with, if any was.
    pub answered: Option<String>,
    /// Every checkout the shop API lists for the reference.
    pub listed: Vec<String>,
    /// The same checkouts as it lists them (their status and history).
    pub listed_checkouts: Vec<Checkout>,
    /// The answered checkout through the shop's key; `None` if the API says there is none.
    pub shop_view: Option<View>,
    /// Whether the customer's browser opened the link (and so may read the order).
    pub claimed: bool,
    /// The order through the customer's cookie, if they could read it.
    pub customer_view: Option<View>,
}

/// Reads every shop customer's checkout as the shop and as its customer see it.
pub async fn look(
    servers: &(impl Servers + ?Sized),
    shop: &ScriptedShop,
    visits: &[Visit],
    pause: Duration,
) -> Result<Vec<CheckoutSeen>, Unreadable> {
    let mut seen = Vec::new();
    for journey in visits.iter().filter_map(|visit| visit.shop.as_ref()) {
        let listed = shop.checkouts_of(servers, &journey.reference).await?;
        let mut shop_view = None;
        let mut customer_view = None;
        if let Some(id) = &journey.checkout_id {
            shop_view = shop.checkout(servers, id).await?.as_ref().map(View::of_checkout);
            if journey.claimed {
                let order = shop_customer::read_order(servers, &journey.browser, id, pause).await;
                customer_view = order.as_ref().map(View::of_order);
            }
        }
        seen.push(CheckoutSeen {
            reference: journey.reference.clone(),
            answered: journey.checkout_id.clone(),
            listed: listed.iter().map(|checkout| checkout.id.clone()).collect(),
            listed_checkouts: listed,
            shop_view,
            claimed: journey.claimed,
            customer_view,
        });
    }
    Ok(seen)
}

/// The shop half's anomalies: see `Verdicts::checkouts_duplicated` and
/// `Verdicts::checkouts_disagreeing`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShopVerdicts {
    pub duplicated: Vec<String>,
    pub disagreeing: Vec<String>,
}

/// Checks every shop customer's checkout; `truths` holds every answered
/// checkout's (the server's status, the PGs' charges).
pub fn check(seen: &[CheckoutSeen], truths: &BTreeMap<String, Truth>) -> ShopVerdicts {
    let mut verdicts = ShopVerdicts::default();
    for checkout in seen {
        if checkout.listed.len() > 1 {
            verdicts.duplicated.push(checkout.reference.clone());
        }
        // A create never answered may have made one checkout (its answer lost
        // every time) or none: either is right, and nobody was sent to pay it.
        let Some(id) = &checkout.answered else { continue };
        let listed_as_the_one = checkout.listed.len() <= 1 && checkout.listed.first() == Some(id);
        let agrees = checkout.shop_view.is_some_and(|shop| {
            let customer_agrees = !checkout.claimed || checkout.customer_view == Some(shop);
            customer_agrees && refunds_add_up(shop) && truths.get(id).is_some_and(|truth| agrees_with(shop, truth))
        });
        if checkout.listed.len() <= 1 && !(listed_as_the_one && agrees) {
            verdicts.disagreeing.push(id.clone());
        }
    }
    verdicts
}

/// Whether what was refunded fits the status.
fn refunds_add_up(view: View) -> bool {
    match view.status {
        CheckoutStatus::Canceled => view.amount_refunded == view.amount,
        CheckoutStatus::PartiallyRefunded => (1..view.amount).contains(&view.amount_refunded),
        // A refund is on its way: some of it may be back already.
        CheckoutStatus::CancelRequested => view.amount_refunded < view.amount,
        CheckoutStatus::Created
        | CheckoutStatus::Pending
        | CheckoutStatus::Unknown
        | CheckoutStatus::Paid
        | CheckoutStatus::Failed
        | CheckoutStatus::Expired => view.amount_refunded == 0,
    }
}

/// Whether the shop's view is the order the server settled, and the PG took
/// the money exactly when the view says it was taken.
fn agrees_with(view: View, truth: &Truth) -> bool {
    let settled_as = CheckoutStatus::of(truth.status, truth.failure_code.as_deref());
    let took_the_money = matches!(
        view.status,
        CheckoutStatus::Paid
            | CheckoutStatus::PartiallyRefunded
            | CheckoutStatus::CancelRequested
            | CheckoutStatus::Canceled
    );
    let unsettled = matches!(view.status, CheckoutStatus::Pending | CheckoutStatus::Unknown);
    settled_as == view.status && (unsettled || took_the_money == (truth.charges > 0))
}

#[cfg(test)]
mod tests {
    use payonce_api::OrderStatus;

    use super::*;

    fn view(status: CheckoutStatus, amount_refunded: u64) -> View {
        View { status, amount: 10_000, amount_refunded }
    }

    fn truth(status: OrderStatus, charges: u64) -> Truth {
        Truth { status, failure_code: None, charges, went_through_unknown: false, settle_ms: None, settled_at_ms: None }
    }

    /// A customer whose create was answered with `id`, listed as `listed`,
    /// the shop and the customer both seeing `shown`.
    fn seen(reference: &str, id: &str, listed: &[&str], shown: View) -> CheckoutSeen {
        CheckoutSeen {
            reference: reference.to_owned(),
            answered: Some(id.to_owned()),
            listed: listed.iter().map(|id| (*id).to_owned()).collect(),
            listed_checkouts: Vec::new(),
            shop_view: Some(shown),
            claimed: true,
            customer_view: Some(shown),
        }
    }

    fn truths(cases: &[(&str, Truth)]) -> BTreeMap<String, Truth> {
        cases.iter().map(|(id, truth)| ((*id).to_owned(), truth.clone())).collect()
    }

    #[test]
    fn one_checkout_per_key_seen_alike_everywhere_is_clean() {
        let paid = seen("ref-paid", "ord_shop_1", &["ord_shop_1"], view(CheckoutStatus::Paid, 0));
        let refunded = seen("ref-refunded", "ord_shop_2", &["ord_shop_2"], view(CheckoutStatus::Canceled, 10_000));
        let unpaid = CheckoutSeen {
            claimed: false,
            customer_view: None,
            ..seen("ref-unpaid", "ord_shop_3", &["ord_shop_3"], view(CheckoutStatus::Created, 0))
        };
        // Never answered: one checkout made (its answers lost) or none, both right.
        let unanswered = CheckoutSeen {
            answered: None,
            shop_view: None,
            ..seen("ref-lost", "-", &["ord_shop_4"], paid.shop_view.unwrap())
        };
        let found = check(
            &[paid, refunded, unpaid, unanswered],
            &truths(&[
                ("ord_shop_1", truth(OrderStatus::Paid, 1)),
                ("ord_shop_2", truth(OrderStatus::Canceled, 1)),
                ("ord_shop_3", truth(OrderStatus::Created, 0)),
            ]),
        );
        assert_eq!(found, ShopVerdicts::default());
    }

    #[test]
    fn a_key_that_yielded_two_checkouts_is_reported() {
        let twice = seen("ref-twice", "ord_shop_1", &["ord_shop_9", "ord_shop_1"], view(CheckoutStatus::Paid, 0));
        let unanswered_twice = CheckoutSeen {
            answered: None,
            shop_view: None,
            customer_view: None,
            ..seen("ref-lost-twice", "-", &["ord_shop_7", "ord_shop_8"], view(CheckoutStatus::Created, 0))
        };
        let found = check(&[twice, unanswered_twice], &truths(&[("ord_shop_1", truth(OrderStatus::Paid, 1))]));
        assert_eq!(found.duplicated, ["ref-twice", "ref-lost-twice"]);
        assert!(found.disagreeing.is_empty(), "a duplicate is reported once: {found:?}");
    }

    #[test]
    fn a_shop_view_unlike_the_customers_the_servers_or_the_ledgers_is_reported() {
        let paid = || view(CheckoutStatus::Paid, 0);
        let cases = [
            // The customer sees it failed, the shop paid.
            CheckoutSeen {
                customer_view: Some(view(CheckoutStatus::Failed, 0)),
                ..seen("a", "ord_shop_a", &["ord_shop_a"], paid())
            },
            // The customer opened it and cannot read it.
            CheckoutSeen { customer_view: None, ..seen("b", "ord_shop_b", &["ord_shop_b"], paid()) },
            // The server settled it failed.
            seen("c", "ord_shop_c", &["ord_shop_c"], paid()),
            // Paid, and the PG holds no charge.
            seen("d", "ord_shop_d", &["ord_shop_d"], paid()),
            // Refunded in full, by its status, and nothing refunded by its amount.
            seen("e", "ord_shop_e", &["ord_shop_e"], view(CheckoutStatus::Canceled, 0)),
            // Answered, and the shop lists nothing for its reference, nor finds it.
            CheckoutSeen { shop_view: None, ..seen("f", "ord_shop_f", &[], paid()) },
            // Answered one, listed another.
            seen("g", "ord_shop_g", &["ord_shop_h"], paid()),
        ];
        let found = check(
            &cases,
            &truths(&[
                ("ord_shop_a", truth(OrderStatus::Paid, 1)),
                ("ord_shop_b", truth(OrderStatus::Paid, 1)),
                ("ord_shop_c", truth(OrderStatus::Failed, 0)),
                ("ord_shop_d", truth(OrderStatus::Paid, 0)),
                ("ord_shop_e", truth(OrderStatus::Canceled, 1)),
                ("ord_shop_g", truth(OrderStatus::Paid, 1)),
            ]),
        );
        assert_eq!(
            found.disagreeing,
            ["ord_shop_a", "ord_shop_b", "ord_shop_c", "ord_shop_d", "ord_shop_e", "ord_shop_f", "ord_shop_g"]
        );
        assert!(found.duplicated.is_empty());
    }
}

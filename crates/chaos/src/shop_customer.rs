//! A customer the scripted shop sends to pay: the shop's backend creates a
//! checkout for them (`scripted_shop`), their browser opens its link (the
//! claim, with the token after the `#` of `next_url`, as the checkout page
//! sends it), reads the order, and pays for it as any customer does
//! (`customer::pay`): a checkout is an order.

use std::time::Duration;

use payonce_api::{ApiErrorBody, Checkout, ClaimRequest, CustomerCheckout, Order, Pg};
use reqwest::{Client, StatusCode};

use crate::customer::{self, ORDER_TRIES, PageTimings, Servers, ShopJourney, Told, Visit};
use crate::scripted_shop::{ScriptedShop, ShopOrder};

/// The shop creates the customer's checkout; the customer opens it and pays with `pg`.
pub async fn visit(
    stack: &(impl Servers + ?Sized),
    shop: &ScriptedShop,
    timings: PageTimings,
    pause: Duration,
    pg: Pg,
) -> Visit {
    let order = ShopOrder::new();
    let created = shop.create(stack, &order).await;
    let browser = customer::browser();
    let mut journey = ShopJourney {
        reference: order.reference,
        checkout_id: created.checkout.as_ref().map(|checkout| checkout.id.clone()),
        create_requests: created.requests,
        create_replayed: created.replayed,
        claimed: false,
        claim_refused: None,
        browser: browser.clone(),
    };
    let no_order =
        |journey| Visit { order_id: None, pg, told: Told::NoOrder, confirm_sent: false, shop: Some(journey) };
    let Some(checkout) = created.checkout else { return no_order(journey) };
    match claim(stack, &browser, &checkout, pause).await {
        Claim::Opened => journey.claimed = true,
        Claim::Refused(code) => {
            journey.claim_refused = Some(code);
            return no_order(journey);
        }
        Claim::NoAnswer => return no_order(journey),
    }
    let Some(order) = read_order(stack, &browser, &checkout.id, pause).await else { return no_order(journey) };
    Visit { shop: Some(journey), ..customer::pay(stack, &browser, order, timings, pause, pg).await }
}

/// The token of a checkout's link: after the `#` of its `next_url` (empty
/// without one, which no server opens).
fn link_token(checkout: &Checkout) -> &str {
    checkout.next_url.as_deref().and_then(|url| url.split_once('#')).map_or("", |(_, token)| token)
}

/// How opening a checkout's link ended.
enum Claim {
    /// This browser is the checkout's customer.
    Opened,
    /// The server's word that it is not (its code): `CHECKOUT_LINK_USED`, or
    /// `ORDER_NOT_FOUND` for a token it does not know.
    Refused(String),
    /// No server answered, however often the customer tried.
    NoAnswer,
}

/// Opens the checkout's link, again on an error, as a customer reloads the page.
async fn claim(stack: &(impl Servers + ?Sized), browser: &Client, checkout: &Checkout, pause: Duration) -> Claim {
    let body = ClaimRequest { token: link_token(checkout).to_owned() };
    for _ in 0..ORDER_TRIES {
        // A look first, as the page takes: a browser that is already the
        // checkout's customer needs no claim, and one that is not yet gets its
        // cookie from this answer, so that a claim whose answer was lost (a
        // server killed or frozen) goes again as the same customer.
        let look = browser.get(format!("{}/api/checkouts/{}", stack.server_url(), checkout.id)).send().await;
        if let Ok(response) = look
            && response.status() == StatusCode::OK
            && response.json::<CustomerCheckout>().await.is_ok()
        {
            return Claim::Opened;
        }
        let sent = browser
            .post(format!("{}/api/checkouts/{}/claim", stack.server_url(), checkout.id))
            .json(&body)
            .send()
            .await;
        match sent {
            Ok(response) if response.status() == StatusCode::OK => {
                if response.json::<CustomerCheckout>().await.is_ok() {
                    return Claim::Opened;
                }
            }
            Ok(refused) if matches!(refused.status(), StatusCode::NOT_FOUND | StatusCode::CONFLICT) => {
                let status = refused.status();
                let code = refused.json::<ApiErrorBody>().await.map_or_else(|_| status.to_string(), |error| error.code);
                return Claim::Refused(code);
            }
            Ok(_) | Err(_) => {}
        }
        tokio::time::sleep(pause).await;
    }
    Claim::NoAnswer
}

/// The order behind the checkout, as its customer reads it (`GET /api/orders/{id}`).
pub(crate) async fn read_order(
    stack: &(impl Servers + ?Sized),
    browser: &Client,
    order_id: &str,
    pause: Duration,
) -> Option<Order> {
    for _ in 0..ORDER_TRIES {
        let sent = browser.get(format!("{}/api/orders/{order_id}", stack.server_url())).send().await;
        if let Ok(response) = sent
            && response.status() == StatusCode::OK
            && let Ok(order) = response.json::<Order>().await
        {
            return Some(order);
        }
        tokio::time::sleep(pause).await;
    }
    None
}

//! A virtual customer: gets an order (through the cart here, or from the
//! scripted shop's checkout, `shop_customer`), pays in the PG's window, and is
//! sent back to the confirm page, which runs the page's own flow over HTTP
//! (`confirm_page`): one confirm POST with a fresh idempotency key, a hang-up at
//! the confirm wait, then only checks of the order; at the end of the window,
//! the server (never the customer) decides "not received". What the customer
//! was told is kept to be compared with the truth later.

use std::time::Duration;

use payonce_api::{ApiErrorBody, ErrorCode, Order, PageConfig, Pg, PgWindow, WindowRequest};
use payonce_flow::{State, SuccessParams};
use rand::Rng;
use reqwest::{Client, StatusCode};
use serde::Serialize;
use serde_json::json;

use crate::confirm_page;

/// Where a customer's (or the shop's) next request goes: one server, or any
/// of several behind a load balancer.
pub trait Servers: Sync {
    fn server_url(&self) -> &str;
}

/// One server, at one address.
impl Servers for str {
    fn server_url(&self) -> &str {
        self
    }
}

/// The page's timings at the campaign's time scale: what the page uses when it
/// cannot read the server's (`GET /api/config`), and its own check timeout.
#[derive(Debug, Clone, Copy)]
pub struct PageTimings {
    pub confirm_wait: Duration,
    pub check_interval: Duration,
    pub max_checks: u32,
    /// A check that takes longer, past what the server may hold it, learned
    /// nothing (the page's 5 s).
    pub check_timeout: Duration,
}

impl PageTimings {
    /// The page's configuration with these timings, as the page's compiled-in one.
    fn page_config(&self) -> PageConfig {
        confirm_page::page_config_of(self.confirm_wait, self.check_interval, self.max_checks)
    }
}

/// What the customer's screen said last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Told {
    Paid,
    /// Failed, not charged.
    Failed,
    /// Charged, then refunded.
    Refunded,
    /// "We could not confirm your payment yet."
    Unresolved,
    /// Turned away before paying: KakaoPay's window could not be prepared,
    /// the shop being at KakaoPay's limit (`PG_BUSY`); nothing was sent to pay.
    /// (A confirm turned away at the limit is a FAILED order: told failed.)
    TurnedAway,
    /// Nothing to pay: the cart could not take the order, the shop's create
    /// was never answered, or the checkout's link did not open for them.
    NoOrder,
}

/// How a customer came to pay: with an order of payonce's own cart, or sent
/// by a shop whose backend created a checkout for them through the shop API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    Cart,
    Shop,
}

impl Via {
    /// As the report names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Cart => "cart",
            Via::Shop => "shop",
        }
    }
}

/// One customer's story.
#[derive(Debug, Clone, Serialize)]
pub struct Visit {
    pub order_id: Option<String>,
    /// The PG they paid with.
    pub pg: Pg,
    pub told: Told,
    /// Whether the confirm POST left the customer's browser.
    pub confirm_sent: bool,
    /// For a customer the scripted shop sent: its side of the story.
    pub shop: Option<ShopJourney>,
}

impl Visit {
    /// How the customer came.
    pub fn via(&self) -> Via {
        if self.shop.is_some() { Via::Shop } else { Via::Cart }
    }
}

/// What became of a shop customer's checkout before they paid: what the
/// verdict needs to look at it again once the campaign is over.
#[derive(Debug, Clone, Serialize)]
pub struct ShopJourney {
    /// The shop's reference for the order, which is also its create's
    /// `Idempotency-Key`: one UUID, made once for the customer.
    pub reference: String,
    /// The checkout a create was answered with, if any was.
    pub checkout_id: Option<String>,
    /// How many times the shop sent the create.
    pub create_requests: u32,
    /// Whether the create's answer was the checkout an earlier send had made
    /// (that send's answer lost): its key kept the retry from making another.
    pub create_replayed: bool,
    /// Whether the customer's browser opened the checkout's link, and so is
    /// its customer: only then may it read the order.
    pub claimed: bool,
    /// The code a claim was refused with, when it was. `CHECKOUT_LINK_USED`
    /// would mean the link is another browser's: here, only a claim whose
    /// answer (and so its first cookie) a kill cut off, the browser coming
    /// back as someone new, can do that.
    pub claim_refused: Option<String>,
    /// The customer's browser (its cookie), to read the order as they see it.
    #[serde(skip)]
    pub browser: Client,
}

/// Creating an order is retried this often (a customer pressing Pay again on
/// an error), a second (scaled) apart.
pub(crate) const ORDER_TRIES: u32 = 10;

/// A customer's browser: it keeps the cookie that makes it the customer.
pub(crate) fn browser() -> Client {
    Client::builder().cookie_store(true).build().expect("the HTTP client builds")
}

/// Orders through the cart, and pays for the order with `pg`.
pub async fn visit(stack: &(impl Servers + ?Sized), timings: PageTimings, pause: Duration, pg: Pg) -> Visit {
    let client = browser();
    let Some(order) = create_order(stack, &client, pause).await else {
        return Visit { order_id: None, pg, told: Told::NoOrder, confirm_sent: false, shop: None };
    };
    pay(stack, &client, order, timings, pause, pg).await
}

/// Pays for `order` with `pg`: by card through Toss (any paymentKey, the
/// fake being lenient), or through KakaoPay's window (prepared by the shop,
/// approved in the window, confirmed with its `pg_token`).
pub(crate) async fn pay(
    stack: &(impl Servers + ?Sized),
    client: &Client,
    order: Order,
    timings: PageTimings,
    pause: Duration,
    pg: Pg,
) -> Visit {
    // What the PG's window sends the customer back with: Toss's paymentKey (any,
    // the fake being lenient), or the pg_token of KakaoPay's approval.
    let credential = match pg {
        Pg::Toss => format!("pk_{}", order.order_id),
        Pg::KakaoPay => match approved_in_window(stack, client, &order, pause).await {
            Window::Approved(pg_token) => pg_token,
            Window::TurnedAway => {
                let order_id = Some(order.order_id);
                return Visit { order_id, pg, told: Told::TurnedAway, confirm_sent: false, shop: None };
            }
            // The customer never got through KakaoPay's window: nothing was approved.
            Window::NeverThrough => {
                return Visit { order_id: None, pg, told: Told::NoOrder, confirm_sent: false, shop: None };
            }
        },
    };
    let server_url = stack.server_url();
    let page = confirm_page::page_config(client, server_url, timings.check_timeout, timings.page_config()).await;
    let params = SuccessParams { payment_key: credential, order_id: order.order_id.clone(), amount: order.amount };
    let shown = confirm_page::run(client, server_url, page, timings.check_timeout, pg, params).await;
    let told = told_by(&shown.state);
    Visit { order_id: Some(order.order_id), pg, told, confirm_sent: shown.confirm_sent, shop: None }
}

/// What a customer takes away from the page's last state.
fn told_by(state: &State) -> Told {
    match state {
        State::Paid { .. } => Told::Paid,
        // Refunded in part: the shop kept some of the money.
        State::Refunded { partial: true, .. } => Told::Paid,
        State::Refunded { partial: false, .. } => Told::Refunded,
        State::Failed { .. } => Told::Failed,
        // "This order was placed in another browser" says nothing of the payment:
        // as good as not knowing. (A customer here has one browser.)
        State::Unresolved { .. } | State::Elsewhere { .. } => Told::Unresolved,
        // The page could not read the link, or stopped before an outcome.
        State::Invalid { .. }
        | State::Starting
        | State::Verifying
        | State::Claiming
        | State::Submitting { .. }
        | State::Checking { .. }
        | State::Closing { .. } => Told::Unresolved,
    }
}

/// How a customer's visit to KakaoPay's window ended.
enum Window {
    /// Approved: the `pg_token` KakaoPay sent them back with.
    Approved(String),
    /// The shop was at KakaoPay's limit (`PG_BUSY`): turned away, as a confirm
    /// at Toss's limit is, and expected whenever the load is over the limit.
    TurnedAway,
    /// They never got through (servers killed, KakaoPay out, the window failing).
    NeverThrough,
}

/// KakaoPay's window for the order (the shop prepares its payment, asked again
/// on an error as a customer would), the customer's approval in it, and the
/// `pg_token` KakaoPay sends them back with.
async fn approved_in_window(
    stack: &(impl Servers + ?Sized),
    client: &Client,
    order: &Order,
    pause: Duration,
) -> Window {
    let Ok(window_client) = Client::builder().redirect(reqwest::redirect::Policy::none()).build() else {
        return Window::NeverThrough;
    };
    for _ in 0..ORDER_TRIES {
        let prepared = client
            .post(format!("{}/api/orders/{}/window", stack.server_url(), order.order_id))
            .json(&WindowRequest { pg: Pg::KakaoPay })
            .send()
            .await;
        let window = match prepared {
            Ok(response) if response.status() == StatusCode::OK => response.json::<PgWindow>().await.ok(),
            Ok(refused) => {
                if let Ok(error) = refused.json::<ApiErrorBody>().await
                    && error.code == ErrorCode::PgBusy.as_str()
                {
                    return Window::TurnedAway;
                }
                None
            }
            Err(_) => None,
        };
        if let Some(window) = window {
            let action = window.mobile_url.split('?').next().unwrap_or_default().to_owned();
            let pressed = window_client.post(action).form(&[("choice", "approve"), ("mode", "mobile")]).send().await;
            if let Ok(pressed) = pressed
                && let Some(location) = pressed.headers().get(reqwest::header::LOCATION)
                && let Ok(back) = reqwest::Url::parse(location.to_str().unwrap_or_default())
                && let Some((_, token)) = back.query_pairs().find(|(name, _)| name == "pg_token")
            {
                return Window::Approved(token.into_owned());
            }
        }
        tokio::time::sleep(pause).await;
    }
    Window::NeverThrough
}

async fn create_order(stack: &(impl Servers + ?Sized), client: &Client, pause: Duration) -> Option<Order> {
    for _ in 0..ORDER_TRIES {
        let sku = ["POUR-OVER-SET", "CERAMIC-MUG", "BEANS-200G", "TEA-TOWEL"][rand::rng().random_range(0..4)];
        let response = client
            .post(format!("{}/api/orders", stack.server_url()))
            .json(&json!({"items": [{"sku": sku, "quantity": 1}]}))
            .send()
            .await;
        if let Ok(response) = response
            && response.status() == StatusCode::CREATED
            && let Ok(order) = response.json::<Order>().await
        {
            return Some(order);
        }
        tokio::time::sleep(pause).await;
    }
    None
}

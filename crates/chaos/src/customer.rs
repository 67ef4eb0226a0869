//! A virtual customer: makes an order, pays in the PG's window, and is sent
//! back to the confirm page, which runs the page's own flow over HTTP
//! (`confirm_page`): one confirm POST with a fresh idempotency key, a hang-up at
//! the confirm wait, then only checks of the order; at the end of the window,
//! the server (never the customer) decides "not received". What the customer
//! was told is kept to be compared with the truth later.

use std::time::Duration;

use payonce_api::{ApiErrorBody, ErrorCode, KakaoPayWindow, Order, PageConfig, Pg};
use payonce_flow::{State, SuccessParams};
use rand::Rng;
use reqwest::{Client, StatusCode};
use serde::Serialize;
use serde_json::json;

use crate::confirm_page;

/// Where a customer's next request goes: one server, or any of several behind
/// a load balancer.
pub trait Shop: Sync {
    fn server_url(&self) -> &str;
}

/// A shop with one address.
impl Shop for str {
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
    /// The shop could not take the order at all.
    NoOrder,
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
}

/// Creating an order is retried this often (a customer pressing Pay again on
/// an error), a second (scaled) apart.
const ORDER_TRIES: u32 = 10;

/// Pays for one order with `pg`: by card through Toss (any paymentKey, the
/// fake being lenient), or through KakaoPay's window (prepared by the shop,
/// approved in the window, confirmed with its `pg_token`).
pub async fn visit(stack: &(impl Shop + ?Sized), timings: PageTimings, pause: Duration, pg: Pg) -> Visit {
    let client = Client::builder().cookie_store(true).build().expect("the HTTP client builds");
    let Some(order) = create_order(stack, &client, pause).await else {
        return Visit { order_id: None, pg, told: Told::NoOrder, confirm_sent: false };
    };
    // What the PG's window sends the customer back with: Toss's paymentKey (any,
    // the fake being lenient), or the pg_token of KakaoPay's approval.
    let credential = match pg {
        Pg::Toss => format!("pk_{}", order.order_id),
        Pg::KakaoPay => match approved_in_window(stack, &client, &order, pause).await {
            Window::Approved(pg_token) => pg_token,
            Window::TurnedAway => {
                return Visit { order_id: Some(order.order_id), pg, told: Told::TurnedAway, confirm_sent: false };
            }
            // The customer never got through KakaoPay's window: nothing was approved.
            Window::NeverThrough => return Visit { order_id: None, pg, told: Told::NoOrder, confirm_sent: false },
        },
    };
    let server_url = stack.server_url();
    let page = confirm_page::page_config(&client, server_url, timings.check_timeout, timings.page_config()).await;
    let params = SuccessParams { payment_key: credential, order_id: order.order_id.clone(), amount: order.amount };
    let shown = confirm_page::run(&client, server_url, page, timings.check_timeout, pg, params).await;
    Visit { order_id: Some(order.order_id), pg, told: told_by(&shown.state), confirm_sent: shown.confirm_sent }
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
async fn approved_in_window(stack: &(impl Shop + ?Sized), client: &Client, order: &Order, pause: Duration) -> Window {
    let Ok(window_client) = Client::builder().redirect(reqwest::redirect::Policy::none()).build() else {
        return Window::NeverThrough;
    };
    for _ in 0..ORDER_TRIES {
        let prepared =
            client.post(format!("{}/api/orders/{}/kakaopay", stack.server_url(), order.order_id)).send().await;
        let window = match prepared {
            Ok(response) if response.status() == StatusCode::OK => response.json::<KakaoPayWindow>().await.ok(),
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

async fn create_order(stack: &(impl Shop + ?Sized), client: &Client, pause: Duration) -> Option<Order> {
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

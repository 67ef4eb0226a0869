//! A virtual customer who behaves exactly like the checkout page: one order,
//! one confirm POST with a fresh idempotency key, a hang-up at the confirm wait,
//! then only checks of the order; at the end of the window, the server (never
//! the customer) decides "not received". What the customer was told is kept
//! to be compared with the truth later.

use std::time::Duration;

use payonce_api::{ApiErrorBody, ErrorCode, IDEMPOTENCY_KEY_HEADER, KakaoPayWindow, Order, OrderStatus, Pg};
use rand::Rng;
use reqwest::{Client, StatusCode};
use serde::Serialize;
use serde_json::json;

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

/// The page's timings at the campaign's time scale.
#[derive(Debug, Clone, Copy)]
pub struct PageTimings {
    pub confirm_wait: Duration,
    pub check_interval: Duration,
    pub max_checks: u32,
    /// A check that takes longer learned nothing (the page's 5 s).
    pub check_timeout: Duration,
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
    let body = match pg {
        Pg::Toss => json!({"payment_key": format!("pk_{}", order.order_id), "amount": order.amount}),
        Pg::KakaoPay => match approved_in_window(stack, &client, &order, pause).await {
            Window::Approved(pg_token) => json!({"pg_token": pg_token, "amount": order.amount}),
            Window::TurnedAway => {
                return Visit { order_id: Some(order.order_id), pg, told: Told::TurnedAway, confirm_sent: false };
            }
            // The customer never got through KakaoPay's window: nothing was approved.
            Window::NeverThrough => return Visit { order_id: None, pg, told: Told::NoOrder, confirm_sent: false },
        },
    };
    let idempotency_key = uuid::Uuid::new_v4().to_string();
    let confirm = client
        .post(format!("{}/api/orders/{}/confirm", stack.server_url(), order.order_id))
        .header(IDEMPOTENCY_KEY_HEADER, idempotency_key)
        .json(&body)
        .timeout(timings.confirm_wait)
        .send()
        .await;
    let answered = match confirm {
        Ok(response) => told_by_confirm(response).await,
        Err(_) => None,
    };
    let told = match answered {
        Some(told) => told,
        None => check_until_told(stack, &client, &order.order_id, timings).await,
    };
    Visit { order_id: Some(order.order_id), pg, told, confirm_sent: true }
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

/// What the confirm's answer settles for the page, as `flow::classify_confirm`
/// decides it: a final order in the body or in the error; a refusal.
async fn told_by_confirm(response: reqwest::Response) -> Option<Told> {
    let status = response.status();
    if status == StatusCode::OK {
        return response.json::<Order>().await.ok().and_then(|order| told_by_order(&order));
    }
    if !status.is_client_error() || status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::REQUEST_TIMEOUT {
        return None;
    }
    let error: ApiErrorBody = response.json().await.ok()?;
    match (&error.order, error.code.as_str()) {
        (Some(order), _) => told_by_order(order),
        (None, "PAYMENT_IN_PROGRESS" | "ORDER_NOT_FOUND") => None,
        (None, _) => Some(Told::Failed),
    }
}

fn told_by_order(order: &Order) -> Option<Told> {
    match order.status {
        // Charged; a refund under way has not given the money back yet.
        OrderStatus::Paid | OrderStatus::PartiallyRefunded | OrderStatus::CancelRequested => Some(Told::Paid),
        OrderStatus::Failed => Some(Told::Failed),
        OrderStatus::Canceled => Some(Told::Refunded),
        OrderStatus::Created | OrderStatus::Pending | OrderStatus::Unknown => None,
    }
}

/// The page's checking: a check every interval until the order is final or
/// the window closes; then, if the server never had the confirm, it asks the
/// server to close the order and shows what the server answers.
async fn check_until_told(stack: &(impl Shop + ?Sized), client: &Client, order_id: &str, timings: PageTimings) -> Told {
    let mut server_has_confirm = None;
    for _ in 0..timings.max_checks {
        tokio::time::sleep(timings.check_interval).await;
        let response = client
            .get(format!("{}/api/orders/{order_id}", stack.server_url()))
            .timeout(timings.check_timeout)
            .send()
            .await;
        let Ok(response) = response else { continue };
        let Ok(order) = response.json::<Order>().await else { continue };
        if let Some(told) = told_by_order(&order) {
            return told;
        }
        server_has_confirm = Some(order.status != OrderStatus::Created);
    }
    if server_has_confirm == Some(false) {
        let closed = client
            .post(format!("{}/api/orders/{order_id}/abandon", stack.server_url()))
            .timeout(timings.check_timeout)
            .send()
            .await;
        if let Ok(response) = closed
            && let Ok(order) = response.json::<Order>().await
            && let Some(told) = told_by_order(&order)
        {
            return told;
        }
    }
    Told::Unresolved
}

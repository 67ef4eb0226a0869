//! A flash-sale customer: an order, then the confirm page run by the page's own
//! flow (`payonce_chaos::confirm_page`): one confirm POST waited on for 15 s,
//! then checks that ask the server to wait up to 2 s for a change, one after
//! another every 2 s, at most 25 (more if the server can take longer), never a
//! second confirm. All customers share one HTTP client (one pool of
//! connections, as many as requests in flight) and carry their own cookie, so
//! a customer costs the load generator a task and a few hundred bytes, not a
//! client of its own. What the sale measures is watched as the page runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use payonce_api::{Order, PageConfig, Pg};
use payonce_chaos::confirm_page::{self, Customer, Watch};
use payonce_flow::{Check as Learned, ConfirmReply, State, SuccessParams, Verdict, classify_confirm};
use reqwest::{Client, StatusCode};
use serde_json::json;

/// How long a customer waits for their order to be made before giving up.
const CREATE_PATIENCE: Duration = Duration::from_secs(30);

/// The page's timings, at the run's time scale: what the page uses when it
/// cannot read the server's.
#[derive(Debug, Clone, Copy)]
pub struct PageTimings {
    pub confirm_wait: Duration,
    pub interval: Duration,
    pub attempts: u32,
    /// What a check asks the server to wait: the interval, at most 2 s.
    pub check_wait: Duration,
    /// A check unanswered this long past its wait is given up (the page's 5 s).
    pub check_timeout: Duration,
}

impl PageTimings {
    fn page_config(&self) -> PageConfig {
        confirm_page::page_config_of(self.confirm_wait, self.interval, self.attempts)
    }
}

/// How many customers are doing what, now: read by the sampler.
#[derive(Debug, Default)]
pub struct Live {
    /// Customers past their confirm's wait, checking (between checks too).
    pub checking: AtomicI64,
    /// Checks sent and not yet answered.
    pub waiting: AtomicI64,
}

/// What the customer's screen said in the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Told {
    Paid,
    Failed,
    /// Still not known after the last check.
    Unresolved,
    NoOrder,
}

/// One answered check.
#[derive(Debug, Clone, Copy)]
pub struct Check {
    pub ms: f64,
    /// It brought the final status.
    pub changed: bool,
}

/// One customer's visit, as measured from the customer's side.
#[derive(Debug, Clone)]
pub struct Visit {
    pub order_id: Option<String>,
    pub create_ms: Option<f64>,
    /// When the confirm left, from the arrival.
    pub confirm_sent_ms: Option<f64>,
    /// The confirm's answer time, when it brought the payment within the wait
    /// (a failure, such as a PG that could not be reached, says nothing of the PG's time).
    pub confirm_ms: Option<f64>,
    pub checks: Vec<Check>,
    pub told: Told,
    /// When a check brought the final status (ms since the epoch), to compare
    /// with the time the server committed it.
    pub told_by_check_at_ms: Option<i64>,
    /// How late each check left after it was due: the load generator's own lag.
    pub send_lag_ms: Vec<f64>,
    /// Every error, by kind.
    pub errors: Vec<String>,
}

/// Pays for one order and checks until the screen knows.
pub async fn visit(client: &Client, shop_url: &str, timings: PageTimings, live: &Arc<Live>) -> Visit {
    let mut visit = Visit {
        order_id: None,
        create_ms: None,
        confirm_sent_ms: None,
        confirm_ms: None,
        checks: Vec::new(),
        told: Told::NoOrder,
        told_by_check_at_ms: None,
        send_lag_ms: Vec::new(),
        errors: Vec::new(),
    };
    let started = Instant::now();
    let created = client
        .post(format!("{shop_url}/api/orders"))
        .json(&json!({"items": [{"sku": "CERAMIC-MUG", "quantity": 1}]}))
        // The page puts no limit on making an order: the customer waits on "creating your order".
        .timeout(CREATE_PATIENCE)
        .send()
        .await;
    let (order, cookie) = match created {
        Ok(response) if response.status() == StatusCode::CREATED => {
            let cookie = cookie_of(&response);
            match response.json::<Order>().await {
                Ok(order) => (order, cookie),
                Err(_) => return failed(visit, "create: unreadable answer"),
            }
        }
        Ok(response) => return failed(visit, &format!("create: {}", response.status().as_u16())),
        Err(error) => return failed(visit, &format!("create: {}", error_kind(&error))),
    };
    visit.create_ms = Some(ms_since(started));
    visit.order_id = Some(order.order_id.clone());

    visit.confirm_sent_ms = Some(ms_since(started));
    let page = confirm_page::page_config(client, shop_url, timings.check_timeout, timings.page_config()).await;
    let params = SuccessParams {
        payment_key: format!("pk_{}", order.order_id),
        order_id: order.order_id.clone(),
        amount: order.amount,
    };
    let mut measured = Measured { visit: &mut visit, live, checking: false, in_flight: 0 };
    let customer = Customer::Cookie(&cookie);
    let shown = confirm_page::run_watched(
        client,
        customer,
        shop_url,
        page,
        timings.check_timeout,
        Pg::Toss,
        params,
        &mut measured,
    )
    .await;
    measured.leave();
    visit.told = told_by(&shown.state);
    visit
}

/// What the sale measures of a customer's confirm page, and the sampler's
/// live counts it keeps.
struct Measured<'a> {
    visit: &'a mut Visit,
    live: &'a Arc<Live>,
    checking: bool,
    /// Checks sent and not answered, to take back from the live count when
    /// the page ends.
    in_flight: i64,
}

impl Measured<'_> {
    fn leave(&mut self) {
        if self.checking {
            self.live.checking.fetch_sub(1, Ordering::Relaxed);
        }
        self.live.waiting.fetch_sub(self.in_flight, Ordering::Relaxed);
    }
}

impl Watch for Measured<'_> {
    fn confirm_replied(&mut self, reply: &ConfirmReply, took: Duration) {
        match (reply, classify_confirm(reply)) {
            (_, Some(Verdict::Paid { .. })) => self.visit.confirm_ms = Some(took.as_secs_f64() * 1000.0),
            (_, Some(Verdict::Failed(failure))) => self.visit.errors.push(format!("confirm: failed {}", failure.code)),
            (ConfirmReply::Response { status, .. }, _) if *status >= 500 => {
                self.visit.errors.push(format!("confirm: {status}"));
            }
            (ConfirmReply::Response { status, .. }, _) => self.visit.errors.push(format!("confirm: refused {status}")),
            (ConfirmReply::NoResponse { .. }, _) => self.visit.errors.push("confirm: no answer".to_owned()),
        }
    }

    fn checking(&mut self) {
        self.checking = true;
        self.live.checking.fetch_add(1, Ordering::Relaxed);
    }

    fn check_sent(&mut self, late: Duration) {
        self.visit.send_lag_ms.push(late.as_secs_f64() * 1000.0);
        self.in_flight += 1;
        self.live.waiting.fetch_add(1, Ordering::Relaxed);
    }

    fn check_replied(&mut self, learned: &Learned, took: Duration) {
        self.in_flight -= 1;
        self.live.waiting.fetch_sub(1, Ordering::Relaxed);
        let ms = took.as_secs_f64() * 1000.0;
        match learned {
            Learned::Settled(_) => {
                self.visit.checks.push(Check { ms, changed: true });
                self.visit.told_by_check_at_ms = Some(epoch_ms());
            }
            Learned::InProgress | Learned::NotReceived => self.visit.checks.push(Check { ms, changed: false }),
            Learned::Throttled { .. } => self.visit.errors.push("check: 429".to_owned()),
            Learned::NothingLearned => self.visit.errors.push("check: nothing learned".to_owned()),
        }
    }
}

fn failed(mut visit: Visit, kind: &str) -> Visit {
    visit.errors.push(kind.to_owned());
    visit
}

/// What the customer takes away from the page's last state.
fn told_by(state: &State) -> Told {
    match state {
        State::Paid { .. } | State::Refunded { .. } => Told::Paid,
        State::Failed { .. } => Told::Failed,
        _ => Told::Unresolved,
    }
}

/// The cookies the server set, as a `Cookie` header sends them back.
fn cookie_of(response: &reqwest::Response) -> String {
    response
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok()?.split(';').next().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A transport error by kind, for the table.
fn error_kind(error: &reqwest::Error) -> &'static str {
    if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "cannot connect"
    } else if error.is_body() || error.is_decode() {
        "broken answer"
    } else {
        "connection lost"
    }
}

fn ms_since(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

pub fn epoch_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| i64::try_from(since.as_millis()).unwrap_or(i64::MAX))
}

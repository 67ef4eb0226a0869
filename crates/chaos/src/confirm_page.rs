//! The confirm page, run over HTTP: the page's own flow (`payonce_flow`), with
//! its effects carried out here by reqwest and tokio's timers where the page's
//! runner (`src/pages/confirm/runner.rs`) carries them out in the browser, and
//! their results fed back as the same events. So a virtual customer sends,
//! waits, checks and closes exactly as the page's rules say, and a campaign
//! tests the rules customers run, not a copy of them.
//!
//! What stays the browser's: the tab claim (a customer here has one tab, so
//! it always holds the claim) and storage (nothing is stored: no reload).

use std::collections::VecDeque;
use std::future::{Future, pending};
use std::pin::Pin;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use payonce_api::{ApiErrorBody, IDEMPOTENCY_KEY_HEADER, Order, PageConfig, Pg};
use payonce_flow::{
    Check, ConfirmReply, Effect, Event, Flow, Millis, State, SuccessParams, classify_check, classify_refused_check,
    retry_after_ms, returned,
};
use reqwest::{Client, RequestBuilder};
use tokio::time::{Instant, sleep_until};

/// How a confirm page ended: the state it showed last, and whether its
/// confirm POST left.
#[derive(Debug, Clone)]
pub struct Shown {
    pub state: State,
    pub confirm_sent: bool,
}

/// The page's configuration for these timings, as the page's compiled-in one:
/// each check may wait as long as the pause between checks, at most 2 s.
pub fn page_config_of(confirm_wait: Duration, check_interval: Duration, max_checks: u32) -> PageConfig {
    let millis = |duration: Duration| u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
    PageConfig {
        confirm_wait_ms: millis(confirm_wait),
        check_interval_ms: millis(check_interval),
        max_checks,
        check_wait_ms: millis(check_interval).min(payonce_api::MAX_CHECK_WAIT_MS),
        ..PageConfig::DEFAULT
    }
}

/// The page's timings as the server publishes them (`GET /api/config`), or
/// `fallback` when it cannot be read, as the page falls back to its own.
pub async fn page_config(client: &Client, server_url: &str, within: Duration, fallback: PageConfig) -> PageConfig {
    let answer = client.get(format!("{server_url}/api/config")).timeout(within).send().await;
    match answer {
        Ok(response) if response.status().is_success() => response.json().await.unwrap_or(fallback),
        _ => fallback,
    }
}

/// What a harness may watch of the page as it runs, to measure it; each does
/// nothing unless a harness says otherwise.
pub trait Watch {
    /// The confirm POST ended after `took`, with `reply` (not when the page
    /// stopped waiting for it).
    fn confirm_replied(&mut self, _reply: &ConfirmReply, _took: Duration) {}
    /// The page began checking (the confirm's wait ended without an outcome).
    fn checking(&mut self) {}
    /// A check left, `late` after the page meant it to.
    fn check_sent(&mut self, _late: Duration) {}
    /// A check ended after `took`, with what it learned.
    fn check_replied(&mut self, _check: &Check, _took: Duration) {}
}

/// Watches nothing.
impl Watch for () {}

/// Who the customer is to the server: the cookie store of their own HTTP
/// client, or (many customers sharing one client) the `Cookie` header it set.
#[derive(Debug, Clone, Copy)]
pub enum Customer<'a> {
    OwnClient,
    Cookie(&'a str),
}

/// Opens the confirm page for `params` (what `pg`'s window sent the customer
/// back with) and runs it until it shows an outcome. `check_timeout` is how
/// long a check may hang past its wait (the page's 5 s, at the harness's scale).
pub async fn run(
    client: &Client,
    server_url: &str,
    page: PageConfig,
    check_timeout: Duration,
    pg: Pg,
    params: SuccessParams,
) -> Shown {
    run_watched(client, Customer::OwnClient, server_url, page, check_timeout, pg, params, &mut ()).await
}

/// `run`, for a customer on a shared client, watched by `watch`.
#[allow(clippy::too_many_arguments)] // each is one thing the page is opened with
pub async fn run_watched(
    client: &Client,
    customer: Customer<'_>,
    server_url: &str,
    page: PageConfig,
    check_timeout: Duration,
    pg: Pg,
    params: SuccessParams,
    watch: &mut impl Watch,
) -> Shown {
    let io = Io { client, customer, server_url, check_timeout };
    let mut flow = Flow::new(page);
    let mut effects: VecDeque<Effect> =
        flow.handle(Event::Opened { params: Ok(params), stored: None, now: now_ms() }).into();
    let mut confirm: Option<Pending<ConfirmReply>> = None;
    let mut confirm_wait_ends: Option<Instant> = None;
    let mut check_due: Option<Instant> = None;
    // When the page meant its next check to leave: how late it left is the harness's lag.
    let mut check_meant_at: Option<Instant> = None;
    let mut requests: FuturesUnordered<Pending<Answered>> = FuturesUnordered::new();
    let mut confirm_sent = false;
    let mut confirm_left = Instant::now();
    let mut checking = false;
    loop {
        // In order; the effects of an event answered at once (the claim) go last.
        while let Some(effect) = effects.pop_front() {
            match effect {
                Effect::Verify { order_id } => requests.push(io.check(order_id, None, Kind::Verify)),
                // One tab: it holds the claim, and nothing is stored yet.
                Effect::Claim { .. } => effects.extend(flow.handle(Event::Claimed {
                    mine: true,
                    stored: None,
                    new_key: uuid::Uuid::new_v4().to_string(),
                    now: now_ms(),
                })),
                Effect::SendConfirm { order_id, idempotency_key, payment_key, amount } => {
                    confirm_sent = true;
                    confirm_left = Instant::now();
                    let body = returned::confirm_request(pg, payment_key, amount);
                    let request = io.post(&format!("/api/orders/{order_id}/confirm"));
                    confirm = Some(Box::pin(send_confirm(
                        request.header(IDEMPOTENCY_KEY_HEADER, idempotency_key).json(&body),
                    )));
                }
                Effect::StartConfirmTimer { after_ms } => confirm_wait_ends = Some(after(after_ms)),
                // Dropping the request aborts it, as the page's AbortController does.
                Effect::AbortConfirm => confirm = None,
                Effect::ScheduleCheck { after_ms } => {
                    check_due = Some(after(after_ms));
                    check_meant_at = check_due;
                }
                Effect::SendCheck { order_id, wait_ms } => {
                    watch.check_sent(check_meant_at.map_or(Duration::ZERO, |meant| meant.elapsed()));
                    requests.push(io.check(order_id, Some(wait_ms), Kind::Check));
                }
                Effect::Abandon { order_id } => requests.push(io.abandon(order_id)),
                // The browser's alone: storage, navigation, the console.
                Effect::PersistAttempt(_)
                | Effect::RecordOutcome { .. }
                | Effect::LockNavigation
                | Effect::UnlockNavigation
                | Effect::Log(_) => {}
            }
        }
        if !checking && matches!(flow.state(), State::Checking { .. }) {
            checking = true;
            watch.checking();
        }
        if flow.state().is_final() {
            break;
        }
        let nothing_pending =
            confirm.is_none() && confirm_wait_ends.is_none() && check_due.is_none() && requests.is_empty();
        if nothing_pending {
            // The flow waits on nothing it asked for: it would show this state for good.
            break;
        }
        let woke = tokio::select! {
            reply = answer_of(&mut confirm) => Woke::ConfirmReplied(reply),
            () = at(confirm_wait_ends) => Woke::ConfirmWaitElapsed,
            () = at(check_due) => Woke::CheckDue,
            event = next_of(&mut requests) => Woke::Answered(event),
        };
        let event = match woke {
            Woke::ConfirmReplied(reply) => {
                confirm = None;
                watch.confirm_replied(&reply, confirm_left.elapsed());
                Event::ConfirmReplied { reply, now: now_ms() }
            }
            Woke::ConfirmWaitElapsed => {
                confirm_wait_ends = None;
                Event::ConfirmWaitElapsed { now: now_ms() }
            }
            Woke::CheckDue => {
                check_due = None;
                Event::CheckDue { now: now_ms() }
            }
            Woke::Answered(Answered { event, check_took }) => {
                if let (Some(took), Event::CheckReplied { check, .. }) = (check_took, &event) {
                    watch.check_replied(check, took);
                }
                event
            }
        };
        effects.extend(flow.handle(event));
    }
    Shown { state: flow.state().clone(), confirm_sent }
}

type Pending<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// What woke the page up.
enum Woke {
    ConfirmReplied(ConfirmReply),
    ConfirmWaitElapsed,
    CheckDue,
    Answered(Answered),
}

/// An answer about the order, as the event it makes, and how long it took
/// when it was a check made while checking.
struct Answered {
    event: Event,
    check_took: Option<Duration>,
}

/// Which of the page's questions about the order a check answers.
#[derive(Clone, Copy)]
enum Kind {
    /// Asked before sending anything (no attempt stored).
    Verify,
    Check,
}

/// The page's requests, to one server, with the page's time limits.
struct Io<'a> {
    client: &'a Client,
    customer: Customer<'a>,
    server_url: &'a str,
    check_timeout: Duration,
}

impl Io<'_> {
    fn as_customer(&self, request: RequestBuilder) -> RequestBuilder {
        match self.customer {
            Customer::OwnClient => request,
            Customer::Cookie(cookie) => request.header(reqwest::header::COOKIE, cookie),
        }
    }

    fn post(&self, path: &str) -> RequestBuilder {
        self.as_customer(self.client.post(format!("{}{path}", self.server_url)))
    }

    fn get(&self, path: &str) -> RequestBuilder {
        self.as_customer(self.client.get(format!("{}{path}", self.server_url)))
    }

    /// A check of the order, held by the server up to `wait_ms` when given.
    fn check(&self, order_id: String, wait_ms: Option<u64>, kind: Kind) -> Pending<Answered> {
        let (path, within) = match wait_ms {
            Some(wait_ms) => (
                format!("/api/orders/{order_id}?wait={wait_ms}ms"),
                self.check_timeout + Duration::from_millis(wait_ms),
            ),
            None => (format!("/api/orders/{order_id}"), self.check_timeout),
        };
        let request = self.get(&path).timeout(within);
        Box::pin(async move {
            let sent = Instant::now();
            let check = check_of(request).await;
            match kind {
                Kind::Verify => Answered { event: Event::Verified { check, now: now_ms() }, check_took: None },
                Kind::Check => {
                    Answered { event: Event::CheckReplied { check, now: now_ms() }, check_took: Some(sent.elapsed()) }
                }
            }
        })
    }

    /// Asks the server to close an order that never got a confirm.
    fn abandon(&self, order_id: String) -> Pending<Answered> {
        // `{}` as JSON, as the page sends it.
        let request = self
            .post(&format!("/api/orders/{order_id}/abandon"))
            .json(&payonce_api::AbandonRequest::default())
            .timeout(self.check_timeout);
        Box::pin(async move {
            Answered {
                event: Event::AbandonReplied { check: check_of(request).await, now: now_ms() },
                check_took: None,
            }
        })
    }
}

/// What the server's answer about the order says, read as the page reads it.
async fn check_of(request: RequestBuilder) -> Check {
    let Ok(response) = request.send().await else { return Check::NothingLearned };
    let status = response.status();
    if status.is_success() {
        return match response.json::<Order>().await {
            Ok(order) => classify_check(&order),
            Err(_) => Check::NothingLearned,
        };
    }
    let retry_after =
        response.headers().get("retry-after").and_then(|value| value.to_str().ok()).and_then(retry_after_ms);
    let code = response.json::<ApiErrorBody>().await.ok().map(|error| error.code);
    classify_refused_check(status.as_u16(), code.as_deref(), retry_after)
}

/// The confirm POST's reply as the page's fetch reports it: a status and a
/// body, or no response at all.
async fn send_confirm(request: RequestBuilder) -> ConfirmReply {
    match request.send().await {
        Ok(response) => {
            let status = response.status().as_u16();
            match response.text().await {
                Ok(body) => ConfirmReply::Response { status, body },
                Err(error) => ConfirmReply::NoResponse { detail: format!("the response body was cut off: {error}") },
            }
        }
        Err(error) => ConfirmReply::NoResponse { detail: error.to_string() },
    }
}

async fn answer_of(confirm: &mut Option<Pending<ConfirmReply>>) -> ConfirmReply {
    match confirm {
        Some(reply) => reply.await,
        None => pending().await,
    }
}

async fn at(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => sleep_until(deadline).await,
        None => pending().await,
    }
}

async fn next_of(requests: &mut FuturesUnordered<Pending<Answered>>) -> Answered {
    match requests.next().await {
        Some(answered) => answered,
        None => pending().await,
    }
}

fn after(ms: u64) -> Instant {
    Instant::now() + Duration::from_millis(ms)
}

/// The time now as the page reads it: milliseconds since the epoch.
fn now_ms() -> Millis {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_millis() as Millis)
}

//! Chaos campaigns against payonce: virtual customers who run the page's own
//! payment flow, half of them ordering through payonce's cart and half sent by
//! a scripted shop whose backend creates their checkout through the shop API,
//! a fake PG with every fault at once, order servers killed and frozen
//! mid-payment, the shop's endpoint for events down, failing, hanging and
//! resetting connections, and a checker that compares every order with the
//! PG's ledger, every checkout with its order, and the events the shop
//! received with both.
//!
//! # Layout
//!
//! - `cli`: the campaign's flags.
//! - `schedule`: arrivals, each customer's PG and way in, and chaos (the endpoint's too), drawn from the seed.
//! - `processes`: the real binaries as child processes (start, SIGKILL, SIGSTOP).
//! - `database`: the servers' PostgreSQL, stopped and started again under `scripts/postgres.sh`.
//! - `stack`: the fake PG and the order servers of a campaign, with the shops file.
//! - `scripted_shop`: the shop's backend: its shops file entry, creates retried under one key, its feed.
//! - `shop_endpoint`: the shop's endpoint for events: verifies and keeps each delivery, fails as scheduled.
//! - `customer`: one customer's visit: the order, the PG's window, the confirm page.
//! - `shop_customer`: a visit the shop sends: its checkout, the link opened, then paid as any.
//! - `confirm_page`: the page's flow (`payonce_flow`), its effects carried out over HTTP.
//! - `check`: every order against the ledger.
//! - `shop_check`: one checkout per shop key, the shop API's view against the order and the ledger.
//! - `event_check`: the shop's events against its checkouts, the feed and payonce's database.
//! - `report`: the figures, as a table and as JSON.

pub mod check;
pub mod cli;
pub mod confirm_page;
pub mod customer;
pub mod database;
pub mod event_check;
pub mod processes;
pub mod report;
pub mod schedule;
pub mod scripted_shop;
pub mod shop_check;
pub mod shop_customer;
pub mod shop_endpoint;
pub mod stack;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use indicatif::{ProgressBar, ProgressStyle};
use payonce_api::{CheckoutStatus, ErrorCode, OrderStatus};

use crate::check::{Truth, quantile};
use crate::cli::Options;
use crate::customer::{PageTimings, Told, Via, Visit};
use crate::database::Postgres;
use crate::event_check::{CheckoutFacts, PayonceEvents};
use crate::report::{ChaosApplied, PgFigures, Quantiles, Report, Settings, ShopFigures, WindowFigures};
use crate::schedule::{Chaos, DatabaseWindow, EndpointWindow, Schedule};
use crate::scripted_shop::ScriptedShop;
use crate::shop_endpoint::Answered;
use crate::stack::Stack;

/// Why a campaign could not run to its report.
#[derive(Debug, thiserror::Error)]
pub enum ChaosError {
    #[error("{0}")]
    Options(String),
    #[error(transparent)]
    Process(#[from] processes::ProcessError),
    #[error("cannot read the PG's ledger: {0}")]
    Pg(#[from] reqwest::Error),
    #[error("cannot read the orders: {0}")]
    Database(String),
    #[error("cannot read the shop's checkouts: {0}")]
    Shop(#[from] scripted_shop::Unreadable),
    #[error("cannot make a work folder: {0}")]
    Io(#[from] std::io::Error),
}

/// Runs one campaign to its report.
pub async fn run(options: &Options) -> Result<Report, ChaosError> {
    options.validate().map_err(ChaosError::Options)?;
    let started = Instant::now();
    let temporary = tempfile::tempdir()?;
    let work_dir = options.work_dir.clone().unwrap_or_else(|| temporary.path().to_owned());
    std::fs::create_dir_all(&work_dir)?;
    let bin_dir = processes::bin_dir(options.bin_dir.as_deref());
    let stack = Arc::new(Stack::start(options, &bin_dir, &work_dir).await?);
    let schedule = Schedule::draw(options, stack.server_count());
    let progress = progress_bar(options);
    // A customer pressing Pay again, or a shop's backend sending again, waits this long.
    let pause = options.scaled(Duration::from_secs(1));
    // As long as a shop's backend waits for an answer before it sends again:
    // not scaled, since a server's answer takes no less time when the
    // campaign's clock runs faster. Scaled to a second, creates on a loaded
    // machine timed out on every send while the server made and replayed them.
    let shop = ScriptedShop::new(Duration::from_secs(10), pause);

    let chaos = tokio::spawn(apply_chaos(stack.clone(), schedule.chaos.clone(), options.scaled(options.freeze_for)));
    let endpoint_faults = tokio::spawn(apply_endpoint_faults(stack.clone(), schedule.endpoint.clone()));
    let postgres = options.postgres.as_deref().map(Postgres::named);
    let database_away = tokio::spawn(take_the_database_away(postgres, schedule.database));
    let visits = visit_all(&stack, &shop, options, &schedule, pause, &progress).await;
    let (mut applied, outage_ended_at_ms) = chaos.await.unwrap_or_default();
    // Back before anything is read from it, whatever happened to the task.
    (applied.database_away, applied.database_away_s) = database_away.await.unwrap_or(Ok((0, 0.0)))?;
    let endpoint_windows = endpoint_faults.await.unwrap_or_default();
    // Healthy from here on, whatever happened to the task.
    stack.endpoint.set_fault(None);
    progress.finish_and_clear();

    let db = stack.db().await.map_err(database)?;
    let deadline = Instant::now() + options.scaled(options.settle_within);
    while db.count_unsettled().await.map_err(database)? > 0 && Instant::now() < deadline {
        tokio::time::sleep(options.scaled(Duration::from_secs(1)).max(Duration::from_millis(50))).await;
    }

    let stats = stack.pg_stats().await?;
    let kakaopay = stack.kakaopay_stats().await?;
    // Charges at either PG: an order charged at both is charged twice.
    let charges_of = |order_id: &str| -> u64 {
        [&stats, &kakaopay].iter().map(|pg| pg.charges_by_order.get(order_id).copied().unwrap_or(0)).sum()
    };
    let mut truths = BTreeMap::new();
    for order_id in visits.iter().filter_map(|visit| visit.order_id.as_ref()) {
        truths.insert(order_id.clone(), truth_of(&db, order_id, charges_of(order_id)).await?);
    }
    let double_charges: Vec<String> = stats.double_charges.iter().chain(&kakaopay.double_charges).cloned().collect();
    let mut verdicts = check::check(&visits, &truths, &double_charges);

    // Every checkout a create was answered with, paid or not, against the same truths.
    let seen = shop_check::look(stack.as_ref(), &shop, &visits, pause).await?;
    let mut checkout_truths = BTreeMap::new();
    // Every checkout the shop lists, answered or not: each may have events.
    let listed = seen.iter().flat_map(|checkout| &checkout.listed);
    for order_id in seen.iter().filter_map(|checkout| checkout.answered.as_ref()).chain(listed) {
        let truth = match truths.get(order_id) {
            Some(truth) => truth.clone(),
            None => truth_of(&db, order_id, charges_of(order_id)).await?,
        };
        checkout_truths.insert(order_id.clone(), truth);
    }
    let shop_verdicts = shop_check::check(&seen, &checkout_truths);
    verdicts.checkouts_duplicated = shop_verdicts.duplicated;
    verdicts.checkouts_disagreeing = shop_verdicts.disagreeing;

    // The shop's events, once payonce has nothing left to send it.
    let drained_ms = drain_events(&db, options).await?;
    let feed = shop.feed(stack.as_ref()).await?;
    let deliveries = stack.endpoint.deliveries();
    let mut checkouts = BTreeMap::new();
    for checkout in seen.iter().flat_map(|seen| &seen.listed_checkouts) {
        let Some(truth) = checkout_truths.get(&checkout.id) else { continue };
        let facts = CheckoutFacts {
            history: checkout.history.iter().map(|change| change.status).collect(),
            status: CheckoutStatus::of(truth.status, truth.failure_code.as_deref()),
            amount_refunded: checkout.amount_refunded,
        };
        checkouts.insert(checkout.id.clone(), facts);
    }
    let payonce = payonce_events(&db, checkouts.keys()).await?;
    verdicts.events = event_check::check(&deliveries, &feed, &checkouts, &payonce);
    let events = event_check::figures(&deliveries, &feed, &payonce, endpoint_windows, drained_ms);
    Ok(Report {
        settings: Settings {
            customers: options.customers,
            servers: options.servers,
            kills: options.kills,
            freezes: options.freezes,
            pg_outage_s: options.scaled(options.pg_outage).as_secs_f64(),
            time_scale: options.time_scale,
            seed: options.seed,
            contract_limit: options.contract_limit,
            pg_limit: options.pg_limit,
            kakaopay_share: options.kakaopay_share,
            shop_share: options.shop_share,
            endpoint_down_s: options.scaled(options.endpoint_down).as_secs_f64(),
            endpoint_fault_windows: options.endpoint_faults,
            endpoint_fault_s: options.scaled(options.endpoint_fault_for).as_secs_f64(),
            event_timeout_ms: u64::try_from(stack::event_timeout(options).as_millis()).unwrap_or(u64::MAX),
            event_first_retry_ms: u64::try_from(stack::event_first_retry(options).as_millis()).unwrap_or(u64::MAX),
        },
        customers_by_pg: count_by_pg(visits.iter()),
        customers_by_via: count_by_via(visits.iter()),
        orders_by_via: count_by_via(visits.iter().filter(|visit| visit.order_id.is_some())),
        shop: ShopFigures::of(&visits, &seen),
        turned_away_by_pg: turned_away_by_pg(&visits, &truths),
        customers: visits.len(),
        orders: truths.len(),
        told: told_counts(&visits),
        final_statuses: truths.values().fold(BTreeMap::new(), |mut counts, truth| {
            *counts.entry(truth.status.as_str().to_owned()).or_insert(0) += 1;
            counts
        }),
        failures_by_code: truths.values().filter_map(|truth| truth.failure_code.clone()).fold(
            BTreeMap::new(),
            |mut counts, code| {
                *counts.entry(code).or_insert(0) += 1;
                counts
            },
        ),
        verdicts,
        settle_ms: quantiles(truths.values().filter_map(|truth| truth.settle_ms)),
        settle_unknown_ms: quantiles(
            truths.values().filter(|truth| truth.went_through_unknown).filter_map(|truth| truth.settle_ms),
        ),
        settle_after_outage_ms: quantiles(outage_ended_at_ms.into_iter().flat_map(|ended| {
            // Payments made before the outage ended and settled after it.
            truths.values().filter_map(move |truth| {
                let settled = truth.settled_at_ms?;
                let made = settled - truth.settle_ms?;
                (made < ended && settled > ended).then_some(settled - ended)
            })
        })),
        events,
        pg: PgFigures::of(&stats),
        kakaopay: PgFigures::of(&kakaopay),
        chaos: applied,
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

fn progress_bar(options: &Options) -> ProgressBar {
    if options.quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(u64::from(options.customers));
    let style = ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} customers  {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar
}

/// Every customer arrives at its time, with an order of the cart or sent by
/// the shop, and pays; returns their visits in arrival order.
async fn visit_all(
    stack: &Arc<Stack>,
    shop: &ScriptedShop,
    options: &Options,
    schedule: &Schedule,
    pause: Duration,
    progress: &ProgressBar,
) -> Vec<Visit> {
    let timings = PageTimings {
        confirm_wait: options.scaled(Duration::from_secs(15)),
        check_interval: options.scaled(Duration::from_secs(2)),
        max_checks: 25,
        check_timeout: options.scaled(Duration::from_secs(5)),
    };
    let start = tokio::time::Instant::now();
    let tasks: Vec<_> = schedule
        .arrivals
        .iter()
        .zip(&schedule.pgs)
        .zip(&schedule.vias)
        .map(|((&arrival, &pg), &via)| {
            let stack = stack.clone();
            let shop = shop.clone();
            let progress = progress.clone();
            tokio::spawn(async move {
                tokio::time::sleep_until(start + arrival).await;
                let visit = match via {
                    Via::Cart => customer::visit(stack.as_ref(), timings, pause, pg).await,
                    Via::Shop => shop_customer::visit(stack.as_ref(), &shop, timings, pause, pg).await,
                };
                progress.inc(1);
                visit
            })
        })
        .collect();
    let mut visits = Vec::with_capacity(tasks.len());
    for task in tasks {
        if let Ok(visit) = task.await {
            visits.push(visit);
        }
    }
    visits
}

/// Carries out the schedule's chaos; returns what was applied and when the outage ended.
async fn apply_chaos(
    stack: Arc<Stack>,
    chaos: Vec<(Duration, Chaos)>,
    freeze_for: Duration,
) -> (ChaosApplied, Option<i64>) {
    let start = tokio::time::Instant::now();
    let mut applied = ChaosApplied::default();
    let mut outage_ended_at_ms = None;
    let mut freezes = Vec::new();
    for (at, act) in chaos {
        tokio::time::sleep_until(start + at).await;
        match act {
            Chaos::Kill { server } => {
                if stack.kill_and_restart(server).await.is_ok() {
                    applied.kills += 1;
                }
            }
            Chaos::Freeze { server } => {
                let stack = stack.clone();
                freezes.push(tokio::spawn(async move { stack.freeze(server, freeze_for).await }));
                applied.freezes += 1;
            }
            Chaos::OutageStart => {
                if stack.pg_outage(true).await.is_ok() {
                    applied.outages += 1;
                }
            }
            Chaos::OutageEnd => {
                let _ = stack.pg_outage(false).await;
                outage_ended_at_ms = Some(epoch_ms());
            }
        }
    }
    for freeze in freezes {
        let _ = freeze.await;
    }
    (applied, outage_ended_at_ms)
}

/// Takes the database away for its window, then brings it back; answers how
/// many times it went away (0 or 1) and for how long. A database that did
/// not come back ends the campaign: nothing could be checked.
async fn take_the_database_away(
    postgres: Option<Postgres>,
    window: Option<DatabaseWindow>,
) -> Result<(u32, f64), ChaosError> {
    let (Some(postgres), Some(window)) = (postgres, window) else { return Ok((0, 0.0)) };
    tokio::time::sleep(window.at).await;
    let stopped = tokio::time::Instant::now();
    let away = postgres.stop().await;
    tokio::time::sleep_until(stopped + window.lasts).await;
    // Started again even if stopping failed half way.
    postgres.resume().await.map_err(|error| ChaosError::Database(error.to_string()))?;
    away.map_err(|error| ChaosError::Database(error.to_string()))?;
    Ok((1, stopped.elapsed().as_secs_f64()))
}

/// Deliveries a window of a fault other than an outage answers its way, at
/// least, before it ends: a shop resting after failing is sent nothing for a
/// while, and a window that met no delivery would have tested nothing.
const WINDOW_HITS: usize = 3;
/// A window waits for its deliveries up to this many times its length.
const WINDOW_STRETCH: u32 = 5;

/// Carries out the endpoint's faults, one window after another; returns
/// each window applied (its backlog is measured later). An outage lasts its
/// length; another fault lasts its length and until it has answered
/// `WINDOW_HITS` deliveries its way, up to `WINDOW_STRETCH` times its length.
async fn apply_endpoint_faults(stack: Arc<Stack>, windows: Vec<EndpointWindow>) -> Vec<WindowFigures> {
    let start = tokio::time::Instant::now();
    let mut applied = Vec::new();
    for window in windows {
        tokio::time::sleep_until(start + window.at).await;
        let began = tokio::time::Instant::now();
        let its_way = Answered::during(window.fault);
        let before = its_way.map_or(0, |answered| stack.endpoint.answered(answered));
        let hits = || its_way.map_or(0, |answered| stack.endpoint.answered(answered) - before);
        stack.endpoint.set_fault(Some(window.fault));
        tokio::time::sleep_until(began + window.lasts).await;
        while its_way.is_some() && hits() < WINDOW_HITS && began.elapsed() < window.lasts * WINDOW_STRETCH {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        stack.endpoint.set_fault(None);
        applied.push(WindowFigures {
            fault: window.fault,
            at_s: (began - start).as_secs_f64(),
            lasts_s: began.elapsed().as_secs_f64(),
            ended_at_ms: epoch_ms(),
            answered: its_way.map(|_| hits()),
            backlog: 0,
            backlog_taken_ms: None,
        });
    }
    applied
}

/// Waits, polling, until payonce has no event left PENDING (the shop's are
/// the only events of a campaign), or the settle deadline passes; answers
/// how long that took, or `None` at the deadline.
async fn drain_events(db: &payonce_server::db::Db, options: &Options) -> Result<Option<i64>, ChaosError> {
    let started = Instant::now();
    let deadline = started + options.scaled(options.settle_within);
    loop {
        if db.oldest_pending_event_ms().await.map_err(database)?.is_none() {
            return Ok(Some(i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX)));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// What payonce's database says of the shop's events: each of `checkouts`'
/// not delivered, and every send recorded; and any event of the shop failed
/// or still pending beyond them.
async fn payonce_events(
    db: &payonce_server::db::Db,
    checkouts: impl Iterator<Item = &String>,
) -> Result<PayonceEvents, ChaosError> {
    let mut payonce = PayonceEvents::default();
    let mut known = std::collections::BTreeSet::new();
    for order_id in checkouts {
        let (events, sends) = db.events_of_order(order_id).await.map_err(database)?;
        for event in events.iter().filter(|event| event.delivery != "DELIVERED") {
            known.insert(event.event_id.clone());
            payonce.left.push(format!(
                "{} ({} #{}): {} at payonce, last answer {:?}",
                event.event_id, event.order_id, event.sequence, event.delivery, event.last_pg_answer
            ));
        }
        for send in sends {
            let outcome = match send.outcome.split_once(':') {
                // "no answer: <the client's words>": a reset or a closed connection.
                Some((no_answer, _)) => no_answer.to_owned(),
                None => send.outcome,
            };
            *payonce.sends.entry(outcome).or_insert(0) += 1;
        }
    }
    let failed = db.failed_events(Some(scripted_shop::SHOP_ID), 500).await.map_err(database)?;
    for event in failed.iter().filter(|event| !known.contains(&event.event_id)) {
        payonce.left.push(format!("{} ({} #{}): FAILED at payonce", event.event_id, event.order_id, event.sequence));
    }
    if payonce.left.iter().all(|left| !left.contains("PENDING"))
        && let Some(oldest) = db.oldest_pending_event_ms().await.map_err(database)?
    {
        payonce.left.push(format!("an event written at {} still PENDING at payonce", db_time(oldest)));
    }
    Ok(payonce)
}

fn db_time(ms: i64) -> String {
    payonce_server::db::rfc3339(ms)
}

async fn truth_of(db: &payonce_server::db::Db, order_id: &str, charges: u64) -> Result<Truth, ChaosError> {
    let order = db.order(order_id).await.map_err(database)?;
    let failure_code = order.as_ref().and_then(|order| order.failure.as_ref()).map(|failure| failure.code.clone());
    let status = order.map_or(OrderStatus::Created, |order| order.status);
    let events = db.history(order_id).await.map_err(database)?;
    let went_through_unknown = events.iter().any(|event| event.to_status == OrderStatus::Unknown.as_str());
    let settled_at_ms = status.is_final().then(|| events.last().map(|event| event.at_ms)).flatten();
    // Only payments sent to the PG take time to settle; a refusal or a closed order is final at once.
    let sent = events.first().filter(|first| first.to_status == OrderStatus::Pending.as_str());
    let settle_ms = sent.zip(settled_at_ms).map(|(first, settled)| settled - first.at_ms);
    Ok(Truth { status, failure_code, charges, went_through_unknown, settle_ms, settled_at_ms })
}

fn database(error: impl std::fmt::Display) -> ChaosError {
    ChaosError::Database(error.to_string())
}

fn told_counts(visits: &[Visit]) -> report::Told {
    let mut told = report::Told::default();
    for visit in visits {
        match visit.told {
            Told::Paid => told.paid += 1,
            Told::Failed => told.failed += 1,
            Told::Refunded => told.refunded += 1,
            Told::Unresolved => told.unresolved += 1,
            Told::TurnedAway => told.turned_away += 1,
            Told::NoOrder => told.no_order += 1,
        }
    }
    told
}

/// Customers turned away at the limit, by PG: at KakaoPay's window, or by a
/// confirm the server failed `PG_BUSY` without sending it.
fn turned_away_by_pg(visits: &[Visit], truths: &BTreeMap<String, Truth>) -> BTreeMap<String, usize> {
    let busy = ErrorCode::PgBusy.as_str();
    count_by_pg(visits.iter().filter(|visit| {
        let truth = visit.order_id.as_ref().and_then(|order_id| truths.get(order_id));
        visit.told == Told::TurnedAway || truth.is_some_and(|truth| truth.failure_code.as_deref() == Some(busy))
    }))
}

/// How many of `visits` went to each PG, by its wire name.
fn count_by_pg<'a>(visits: impl Iterator<Item = &'a Visit>) -> BTreeMap<String, usize> {
    count_by(visits, |visit| visit.pg.as_str())
}

/// How many of `visits` came through the cart, and how many the shop sent.
fn count_by_via<'a>(visits: impl Iterator<Item = &'a Visit>) -> BTreeMap<String, usize> {
    count_by(visits, |visit| visit.via().as_str())
}

fn count_by<'a>(visits: impl Iterator<Item = &'a Visit>, key: fn(&Visit) -> &'static str) -> BTreeMap<String, usize> {
    visits.fold(BTreeMap::new(), |mut counts, visit| {
        *counts.entry(key(visit).to_owned()).or_insert(0) += 1;
        counts
    })
}

fn quantiles(values: impl Iterator<Item = i64>) -> Quantiles {
    let values: Vec<i64> = values.collect();
    Quantiles {
        count: values.len(),
        p50: quantile(&values, 0.5),
        p99: quantile(&values, 0.99),
        max: values.iter().max().copied(),
    }
}

pub(crate) fn epoch_ms() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

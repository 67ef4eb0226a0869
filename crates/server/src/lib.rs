//! The payonce order server: the backend the checkout page talks to. Its job is
//! that no payment is lost, charged twice, or reported with the wrong outcome,
//! whatever the PG does.
//!
//! # Layout
//!
//! Below everything, in a crate of their own so that nothing there can do I/O:
//! the rules (`payonce_rules`): the settlement core, what Toss's answers mean,
//! and the rules of the PG limit, the breaker, the retry budget and backoff.
//!
//! Then layered, lowest first (ARCHITECTURE.md; `crates/layers` checks it):
//!
//! - `metrics`, `serve` (the accept loop), `db` (storage: the only module
//!   with SQL), `error` (the one error type and the JSON extractor that uses it).
//! - `pg`: the PG's wire types, HTTP client, concurrency limit and classification.
//! - `operators` (who may use the operators' API, by token and role), then
//!   `config`: flags, and the refusal of a page window shorter than the PG timeout.
//! - `resilience`: breaker, retry budget, backoff, leases.
//! - `app`: the domain context every payment rule works with.
//! - `operators`, `shops` (who may use the shop API, by key) and `catalog`
//!   (the cart's products, from `--catalog`, and pricing) sit beside the flags.
//! - `customer` (the anonymous customer cookie).
//! - `payment`: confirm, settle, recovery, refunds, reconciliation; `orders`:
//!   creating orders from a cart and showing them to their customer;
//!   `checkouts`: shops' checkouts, their links and their expiry; `events`:
//!   telling shops of their checkouts (signed webhooks, the feed).
//! - `rate_limits`, `sign_in_failures` (wrong operators' tokens by address),
//!   `state` (what handlers share), then `routes`: the HTTP
//!   surface, one module per route group, the built page and the security
//!   headers; the public router and the operators' one.

pub mod app;
pub mod catalog;
pub mod checkouts;
pub mod client_address;
pub mod config;
pub mod connections;
pub mod customer;
pub mod db;
pub mod error;
pub mod events;
pub mod metrics;
pub mod operators;
pub mod orders;
pub mod payment;
pub mod pg;
pub mod rate_limits;
pub mod resilience;
pub mod routes;
pub mod serve;
pub mod shops;
pub mod sign_in_failures;
pub mod state;
pub mod waiting_places;

use std::future::Future;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use config::{ConfigError, ServerConfig};
use db::Db;
use state::AppState;

/// How long shutdown waits for in-flight requests and PG calls. What does not
/// finish stays PENDING in the database and is settled by recovery at next start.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("cannot open the database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("cannot apply the database migrations: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    #[error("the HTTP server failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Serves customers on `listener` and operators on `admin_listener` until
/// `shutdown` completes. Tests call this with port-0 listeners and their own
/// shutdown future; `main` calls it with Ctrl-C/SIGTERM.
pub async fn run(
    mut config: ServerConfig,
    listener: TcpListener,
    admin_listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    config.validate()?;
    if config.public_url.is_none() {
        // The listener may be on a port chosen by the OS (port 0).
        config.public_url = Some(format!("http://{}", listener.local_addr()?));
    }
    let db = Db::open(&config.db, config.db_max_connections).await?;
    if db.shared_by_servers() {
        // The cluster's places under each PG's limit are rows: as many as this
        // server's limit can use. Every PG's, whether this server takes it or
        // not: another server of the cluster may, under the same limit.
        for pg in payonce_api::Pg::ALL {
            db.provide_places(pg, config.pg_limit.most()).await?;
        }
    }
    let customer_cookies = customer::CustomerCookies::load(&config, &db).await?;
    let checkout_links = checkouts::CheckoutLinks::load(&config, &db).await?;
    let state = AppState::new(config, db, customer_cookies).with_checkout_links(checkout_links);
    let stopping = state.stopping.clone();
    let recovery = tokio::spawn(payment::jobs::run(state.app.clone(), stopping.clone()));
    let reconciliation = tokio::spawn(payment::reconcile::run_periodically(state.app.clone(), stopping.clone()));
    // Without shops no checkout is created; one left from before is closed when
    // it is read or paid (`checkouts::may_pay`), so no sweep need query every second.
    let (expiry, events) = match state.config.shops.is_empty() {
        true => (tokio::spawn(async {}), tokio::spawn(async {})),
        false => (
            tokio::spawn(checkouts::expiry::run(state.app.clone(), stopping.clone())),
            tokio::spawn(events::delivery::run(state.app.clone(), stopping.clone())),
        ),
    };
    tokio::spawn(forget_idle_rate_limits(state.limits.clone(), state.sign_in_failures.clone(), stopping.clone()));

    let signal = stopping.clone();
    tokio::spawn(async move {
        shutdown.await;
        signal.cancel();
    });
    let client_timeout = state.config.client_timeout;
    // Each listener has caps of its own: a flood of customers' connections
    // never keeps the operators out.
    let limits = || {
        connections::ConnectionLimits::new(
            state.config.max_connections,
            state.config.max_connections_per_client,
            state.config.trusted_proxies(),
            state.config.ipv6_client_prefix,
        )
    };
    let admin = tokio::spawn(serve::serve(
        routes::admin_router(state.clone()),
        admin_listener,
        limits(),
        client_timeout,
        stopping.clone().cancelled_owned(),
        SHUTDOWN_GRACE,
    ));
    let public = routes::router(state.clone());
    let serve = serve::serve(public, listener, limits(), client_timeout, stopping.cancelled(), SHUTDOWN_GRACE);
    tokio::select! {
        served = serve => served?,
        // A confirm can wait a minute for the PG; do not hold shutdown for it.
        () = async { stopping.cancelled().await; tokio::time::sleep(SHUTDOWN_GRACE).await } => {
            tracing::warn!("in-flight requests did not finish in time; recovery will settle their payments");
        }
    }
    stopping.cancel();
    state.pg_tasks.close();
    if tokio::time::timeout(SHUTDOWN_GRACE, state.pg_tasks.wait()).await.is_err() {
        tracing::warn!("PG calls still running at shutdown; their payments stay PENDING until recovery");
    }
    state.db.finish_writes().await;
    let _ = recovery.await;
    let _ = reconciliation.await;
    let _ = expiry.await;
    let _ = events.await;
    let _ = admin.await;
    Ok(())
}

/// Trims the rate limiters' memory to recent clients, every minute, until shutdown.
async fn forget_idle_rate_limits(
    limits: rate_limits::Limits,
    sign_in_failures: sign_in_failures::SignInFailures,
    stopping: CancellationToken,
) {
    loop {
        tokio::select! {
            () = stopping.cancelled() => return,
            () = tokio::time::sleep(Duration::from_secs(60)) => {
                limits.forget_idle();
                sign_in_failures.forget_idle();
            }
        }
    }
}

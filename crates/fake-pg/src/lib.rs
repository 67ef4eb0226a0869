//! A fake payment gateway shaped like the Toss Payments API (or, with
//! [`Api::KakaoPay`], KakaoPay's online single payment), for testing a
//! checkout against what real PGs do under load: answer slowly, keep
//! processing after the caller gave up, replay idempotent requests, refuse
//! bursts, and fail in the ways that leave an outcome unknown.
//!
//! Start it in-process on a free port and talk to it over HTTP only:
//!
//! ```no_run
//! # async fn example() -> std::io::Result<()> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let url = format!("http://{}", listener.local_addr()?);
//! tokio::spawn(fake_pg::serve(fake_pg::Config::default(), listener));
//! // POST {url}/v1/payments/confirm, PUT {url}/__admin/config, ...
//! # Ok(()) }
//! ```
//!
//! # Layout
//!
//! - `config`: startup [`Config`] and the runtime [`RuntimeConfig`] the admin API merges.
//! - `clock`: latencies scaled by `time_scale`, timestamps in Korean time.
//! - `auth`: the merchant's Basic authentication.
//! - `error`: one error enum, answered as Toss's `{code, message}` with its status.
//! - `payment`: the Toss Payment object.
//! - `scenario`: the payment window's test cards.
//! - `faults`: seeded random fault decisions, and the fixed plans of scenarios.
//! - `store`: payments, idempotency records, the transaction ledger and
//!   counters, and every confirm and cancel decision (`store/cancel.rs`).
//! - `processing`: a confirm's or cancel's detached processing task and its answer.
//! - `transactions`: the Transaction object and the ledger `GET /v1/transactions` pages.
//! - `stats`: the counters and the [`Stats`] body.
//! - `work`: what a processing does (approve or cancel), shared by the store and the counters.
//! - `html`: the payment window, error and receipt pages; `window_text`: their words
//!   in Korean and English.
//! - `routes`: the HTTP surface, one module per route group, the payment SDK
//!   (`sdk.js`, served at `/v2/standard`) among them.
//! - `kakaopay`: the KakaoPay face (`--api kakaopay`), a translation of KakaoPay's
//!   ready, approve, order and cancel and its window onto the same store.
//! - `state`: the state handlers share.
//! - `serve`: the accept loop, able to reset a connection with an RST.

mod auth;
mod calls;
mod clock;
pub mod config;
pub mod error;
mod faults;
mod html;
mod kakaopay;
pub mod payment;
mod processing;
mod routes;
pub mod scenario;
mod serve;
mod state;
pub mod stats;
mod store;
pub mod transactions;
mod webhooks;
mod window_text;
mod work;

use std::future::Future;
use std::io;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::watch;

pub use config::{
    Api, Config, DEFAULT_CLIENT_KEY, DEFAULT_HTTP2_MAX_STREAMS, DEFAULT_SECRET_KEY, ExpiredLookup, Faults, ReplayMode,
    RuntimeConfig, SlowTail,
};
pub use error::ErrorBody;
pub use payment::{Cancel, Payment, PaymentStatus};
pub use scenario::Scenario;
pub use stats::{FaultCounts, Stats};
pub use transactions::Transaction;

use crate::clock::Clock;
use crate::state::{AppState, Settings};
use crate::store::Store;

/// Serves the fake PG on `listener` until the process ends.
pub async fn serve(config: Config, listener: TcpListener) -> io::Result<()> {
    serve_with_shutdown(config, listener, std::future::pending()).await
}

/// Serves the fake PG on `listener` until `shutdown` completes, then stops
/// accepting, stops processings and drains open connections (for at most a
/// few seconds). An invalid `config` is an `InvalidInput` error.
pub async fn serve_with_shutdown(
    config: Config,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    config.validate().map_err(|error| io::Error::new(io::ErrorKind::InvalidInput, error))?;
    let base_url = match &config.public_url {
        Some(url) => url.trim_end_matches('/').to_owned(),
        None => format!("http://{}", listener.local_addr()?),
    };
    let (stopping_tx, stopping_rx) = watch::channel(false);
    let clock = Clock::new(config.time_scale);
    let state = AppState {
        store: Arc::new(Store::new(config.runtime, config.secret_key.clone(), config.strict_sessions, clock)),
        settings: Arc::new(Settings {
            secret_key: config.secret_key,
            client_key: config.client_key,
            clock,
            base_url,
            api: config.api,
        }),
        stopping: stopping_rx,
    };
    serve::run(routes::router(state), listener, config.http2_max_streams, shutdown, stopping_tx).await
}

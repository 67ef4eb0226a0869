//! The sample shop: how a shop with its own backend adopts payonce.
//!
//! A small bookshop that keeps its own catalog and its own orders (SQLite),
//! and takes payment through payonce's shop API: it creates a checkout for
//! each order (its id as the Idempotency-Key, so one order is never two
//! checkouts), sends the customer to the checkout's `next_url`, records
//! the outcome from payonce's signed events (`POST /payonce/events`), and
//! refunds from its back office. It depends on payonce's wire types only
//! (`payonce-api`), as any shop's backend could; see `README.md` beside
//! this crate.

mod catalog;
mod catch_up;
mod checkout_request;
mod events;
mod lang;
mod order_form;
mod pages;
mod payonce;
mod routes;
mod status;
mod store;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use reqwest::Url;
use tracing_subscriber::EnvFilter;

/// The sample shop: a bookshop that takes payment through payonce's shop API.
#[derive(Debug, Parser)]
#[command(name = "payonce-shop", version)]
struct Flags {
    /// Where the shop listens.
    #[arg(long, env = "PAYONCE_SHOP_LISTEN", default_value = "127.0.0.1:4000")]
    listen: SocketAddr,

    /// Where customers reach the shop: the start of the `return_url` payonce
    /// sends them back to (its origin must be one of the shop's
    /// `return_origins` in payonce's shops file).
    #[arg(long, env = "PAYONCE_SHOP_PUBLIC_URL", default_value = "http://127.0.0.1:4000")]
    public_url: String,

    /// Where payonce's `/v1` API is.
    #[arg(long, env = "PAYONCE_SHOP_PAYONCE_URL", default_value = "http://127.0.0.1:8080")]
    payonce_url: String,

    /// A file whose first line is the shop's API key (payonce keeps only its
    /// SHA-256). In a file, not a flag: a flag is visible to every user of the machine.
    #[arg(long, env = "PAYONCE_SHOP_API_KEY_FILE")]
    api_key_file: PathBuf,

    /// A file whose first line is the `whsec_…` secret payonce signs the
    /// shop's events with (the one in payonce's shops file for this shop).
    #[arg(long, env = "PAYONCE_SHOP_EVENTS_SECRET_FILE")]
    events_secret_file: PathBuf,

    /// The shop's SQLite database; created if missing.
    #[arg(long, env = "PAYONCE_SHOP_DATABASE", default_value = "shop.sqlite3")]
    database: PathBuf,
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .with_writer(std::io::stderr)
        .init();
    let flags = Flags::parse();
    match run(flags).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("payonce-shop: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(flags: Flags) -> Result<(), String> {
    let api_key = read_api_key(&flags.api_key_file)?;
    let events_verifier = Arc::new(events::read_secret_file(&flags.events_secret_file)?);
    let public_url = http_url("--public-url", &flags.public_url)?.as_str().trim_end_matches('/').to_owned();
    let payonce_url = http_url("--payonce-url", &flags.payonce_url)?;
    let store = store::Store::open(&flags.database)
        .await
        .map_err(|error| format!("cannot open the database {}: {error}", flags.database.display()))?;
    let payonce = payonce::Payonce::new(payonce_url.clone(), api_key)
        .map_err(|error| format!("cannot make payonce's client: {error}"))?;
    // In the background: payonce being down must not keep the shop from starting.
    let (feed_store, feed_payonce) = (store.clone(), payonce.clone());
    tokio::spawn(async move {
        match catch_up::catch_up(&feed_store, &feed_payonce).await {
            Ok(new) => tracing::info!("caught up with payonce's feed: {new} new events"),
            Err(error) => tracing::warn!("could not catch up with payonce's feed (deliveries still come): {error}"),
        }
    });
    let app = routes::router(routes::AppState { store, payonce, public_url: public_url.clone(), events_verifier });

    let listener = tokio::net::TcpListener::bind(flags.listen)
        .await
        .map_err(|error| format!("cannot listen on {}: {error}", flags.listen))?;
    let address = listener.local_addr().map_or_else(|_| flags.listen.to_string(), |address| address.to_string());
    println!(
        "payonce-shop listening on http://{address}  (public {public_url}, payonce {payonce_url}, database {})",
        flags.database.display()
    );
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await
        .map_err(|error| format!("serving failed: {error}"))
}

/// The key is the first line of the file, without the line's end or spaces
/// around it (what `echo` or an editor adds is not part of the key).
fn read_api_key(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read the API key file {} (--api-key-file): {error}", path.display()))?;
    let key = text.lines().next().unwrap_or_default().trim();
    if key.is_empty() {
        return Err(format!("the API key file {} (--api-key-file) has no key on its first line", path.display()));
    }
    Ok(key.to_owned())
}

/// An `http://` or `https://` URL, or an error that names the flag.
fn http_url(flag: &str, text: &str) -> Result<Url, String> {
    let url = Url::parse(text).map_err(|error| format!("{flag} {text:?} is not a URL: {error}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.cannot_be_a_base() {
        return Err(format!("{flag} {text:?} must be an http:// or https:// URL"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("{flag} {text:?} must have no query nor fragment"));
    }
    Ok(url)
}

/// Ctrl-C or SIGTERM: stop taking requests, finish those under way.
async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_the_first_line_trimmed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        std::fs::write(&path, "  k3y-of-the-shop-0123456789abcdef0123\r\nsecond line\n").unwrap();
        assert_eq!(read_api_key(&path).unwrap(), "k3y-of-the-shop-0123456789abcdef0123");
        std::fs::write(&path, "\nkey-on-line-two\n").unwrap();
        assert!(read_api_key(&path).unwrap_err().contains("no key on its first line"));
        assert!(read_api_key(&dir.path().join("missing")).unwrap_err().contains("--api-key-file"));
    }

    #[test]
    fn urls_are_http_with_no_query() {
        assert!(http_url("--payonce-url", "http://127.0.0.1:8080").is_ok());
        assert!(http_url("--public-url", "https://books.example/shop/").is_ok());
        assert!(http_url("--payonce-url", "127.0.0.1:8080").is_err());
        assert!(http_url("--payonce-url", "ftp://pay.example").is_err());
        assert!(http_url("--public-url", "https://books.example/?a=b").is_err());
    }

    #[test]
    fn the_flags_are_described_well_enough_for_clap() {
        use clap::CommandFactory;
        Flags::command().debug_assert();
    }
}

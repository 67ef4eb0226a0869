use std::process::ExitCode;

use clap::Parser;
use payonce_server::ServerConfig;
use tracing_subscriber::EnvFilter;

/// With thousands of customers checking at once, glibc's allocator spent a
/// seventh of the server's CPU and put its answers' p99 past half a second
/// (docs/measured-flash-sale.md); mimalloc answers them in tens of ms.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .with_writer(std::io::stderr)
        .init();
    if std::env::args().nth(1).as_deref() == Some(OPERATOR_LINE) {
        return operator_line();
    }
    if std::env::args().nth(1).as_deref() == Some(SHOP_KEY) {
        return shop_key();
    }
    if std::env::args().nth(1).as_deref() == Some(EVENTS_SECRET) {
        println!("{}", payonce_server::shops::new_events_secret());
        return ExitCode::SUCCESS;
    }
    let (args, old_names) =
        payonce_server::config::with_renamed_env(std::env::args_os().collect(), |name| std::env::var_os(name));
    for old_name in old_names {
        tracing::warn!("{old_name}");
    }
    let mut config = ServerConfig::parse_from(args);
    if let Err(error) = config.read_secret_files().and_then(|()| config.validate()) {
        eprintln!("payonce-server: refusing to start: {error}");
        return ExitCode::from(2);
    }
    let listener = match tokio::net::TcpListener::bind(config.listen).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("payonce-server: cannot listen on {}: {error}", config.listen);
            return ExitCode::FAILURE;
        }
    };
    let admin_listener = match tokio::net::TcpListener::bind(config.admin_listen).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("payonce-server: cannot listen on {} (--admin-listen): {error}", config.admin_listen);
            return ExitCode::FAILURE;
        }
    };
    let address = listener.local_addr().map_or_else(|_| config.listen.to_string(), |a| a.to_string());
    let admin = admin_listener.local_addr().map_or_else(|_| config.admin_listen.to_string(), |a| a.to_string());
    println!(
        "payonce-server listening on http://{address}  admin http://{admin}  (PG {}, database {})",
        config.pg_url, config.db
    );
    match payonce_server::run(config, listener, admin_listener, shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("payonce-server: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `payonce-server operator-line NAME ROLE`: reads a token from stdin and
/// prints the operators file's line for it, once the token is strong enough;
/// the token itself never appears on a command line.
const OPERATOR_LINE: &str = "operator-line";

fn operator_line() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(2).collect();
    let [name, role] = &args[..] else {
        eprintln!(
            "usage: printf %s \"$token\" | payonce-server {OPERATOR_LINE} NAME ROLE   (ROLE: read-only or refund)"
        );
        return ExitCode::from(2);
    };
    let mut token = String::new();
    if let Err(error) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut token) {
        eprintln!("payonce-server: cannot read the token from stdin: {error}");
        return ExitCode::FAILURE;
    }
    // What `echo` or a file adds at the end is not part of the token.
    match payonce_server::operators::file_line(name, role, token.trim_end_matches(['\r', '\n'])) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(reason) => {
            eprintln!("payonce-server: no line for {name:?}: {reason}");
            ExitCode::from(2)
        }
    }
}

/// `payonce-server shop-key`: makes a new API key for a shop (256 random
/// bits) and prints it with the digest its `key_digests` lists: the key goes
/// to the shop's backend, and only the digest into the shops file.
const SHOP_KEY: &str = "shop-key";

fn shop_key() -> ExitCode {
    let key = payonce_server::shops::new_key();
    println!("key (for the shop's backend only; payonce keeps its digest, never the key):\n  {key}");
    println!("its digest, for key_digests in --shops-file:\n  \"{}\"", payonce_server::shops::key_digest(&key));
    ExitCode::SUCCESS
}

/// `payonce-server events-secret`: prints a new secret for a shop's events
/// (`whsec_` and 256 random bits), alone on its line, to go into the file
/// `events_secret_file` names and into the shop's own configuration.
const EVENTS_SECRET: &str = "events-secret";

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler installs");
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}

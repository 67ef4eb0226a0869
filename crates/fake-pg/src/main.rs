//! `fake-pg`: parses flags, binds, says where it listens, and serves.

use std::time::Duration;

use clap::{ArgAction, Parser};
use fake_pg::{
    Api, Config, DEFAULT_CLIENT_KEY, DEFAULT_HTTP2_MAX_STREAMS, DEFAULT_SECRET_KEY, ExpiredLookup, Faults, ReplayMode,
    RuntimeConfig, SlowTail,
};
use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

/// A fake payment gateway shaped like the Toss Payments API.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Flags {
    /// Which PG's API to speak: `toss` (Toss Payments) or `kakaopay` (KakaoPay's online single payment).
    #[arg(long, env = "FAKE_PG_API", default_value = "toss")]
    api: Api,

    /// Address to listen on.
    #[arg(long, env = "FAKE_PG_LISTEN", default_value = "127.0.0.1:9090")]
    listen: String,

    /// The merchant's secret key. Confirms send `Authorization: Basic base64(key + ":")`.
    #[arg(long, env = "FAKE_PG_SECRET_KEY", default_value = DEFAULT_SECRET_KEY)]
    secret_key: String,

    /// The merchant's client key: the SDK at /v2/standard accepts only this one.
    #[arg(long, env = "FAKE_PG_CLIENT_KEY", default_value = DEFAULT_CLIENT_KEY)]
    client_key: String,

    /// How long processing a confirm or cancel takes (`300ms`, `40s`, `2m`).
    #[arg(long, env = "FAKE_PG_LATENCY", default_value = "300ms", value_parser = parse_duration)]
    latency: Duration,

    /// How long a lookup of a payment takes (`0s`, `200ms`).
    #[arg(long, env = "FAKE_PG_LOOKUP_LATENCY", default_value = "0s", value_parser = parse_duration)]
    lookup_latency: Duration,

    /// A share of approvals that are slow, as FRACTION:DURATION (`0.05:20s`).
    #[arg(long, env = "FAKE_PG_SLOW_TAIL", default_value = "0:20s", value_parser = parse_slow_tail)]
    slow_tail: SlowTail,

    /// At most N processings (confirms and cancels) at once, abandoned ones included; over it: 429.
    #[arg(long, env = "FAKE_PG_CONTRACT_LIMIT")]
    contract_limit: Option<u32>,

    /// Keep processing (and charge) when the caller hangs up, as a real PG does.
    #[arg(long, env = "FAKE_PG_CONTINUE_AFTER_DISCONNECT", default_value_t = true, action = ArgAction::Set)]
    continue_after_disconnect: bool,

    /// Share of processings declined with 403 REJECT_CARD_PAYMENT (0 to 1).
    #[arg(long, env = "FAKE_PG_DECLINE_RATE", default_value_t = 0.0, value_parser = parse_rate)]
    decline_rate: f64,

    /// Share of confirms and cancels answered 500 at once, nothing processed (0 to 1).
    #[arg(long, env = "FAKE_PG_ERROR_500_RATE", default_value_t = 0.0, value_parser = parse_rate)]
    error_500_rate: f64,

    /// Share of confirms and cancels answered 429 at once, nothing processed (0 to 1).
    #[arg(long, env = "FAKE_PG_RATE_LIMIT_429_RATE", default_value_t = 0.0, value_parser = parse_rate)]
    rate_limit_429_rate: f64,

    /// Share of confirms and cancels answered 403 FORBIDDEN_CONSECUTIVE_REQUEST, nothing processed (0 to 1).
    #[arg(long, env = "FAKE_PG_FORBIDDEN_CONSECUTIVE_RATE", default_value_t = 0.0, value_parser = parse_rate)]
    forbidden_consecutive_rate: f64,

    /// Share of charged processings whose connection is then reset (0 to 1).
    #[arg(long, env = "FAKE_PG_RESET_AFTER_CHARGE_RATE", default_value_t = 0.0, value_parser = parse_rate)]
    reset_after_charge_rate: f64,

    /// Share of charged processings answered 500 although charged (0 to 1).
    #[arg(long, env = "FAKE_PG_ERROR_500_AFTER_CHARGE_RATE", default_value_t = 0.0, value_parser = parse_rate)]
    error_500_after_charge_rate: f64,

    /// Share of confirms and cancels whose connection is reset at once, nothing processed (0 to 1).
    #[arg(long, env = "FAKE_PG_RESET_BEFORE_PROCESSING_RATE", default_value_t = 0.0, value_parser = parse_rate)]
    reset_before_processing_rate: f64,

    /// Share of confirms answered 429 only once a retry of their key has processed the payment (0 to 1).
    #[arg(long, env = "FAKE_PG_RATE_LIMIT_429_HELD_RATE", default_value_t = 0.0, value_parser = parse_rate)]
    rate_limit_429_held_rate: f64,

    /// Share of confirms that fail inside the PG with a 500 stored against their key, nothing charged (0 to 1).
    #[arg(long, env = "FAKE_PG_ERROR_500_STORED_RATE", default_value_t = 0.0, value_parser = parse_rate)]
    error_500_stored_rate: f64,

    /// What a repeated Idempotency-Key gets: `toss` (the first response, as Toss
    /// documents) or `outcome` (the payment's outcome; kinder than Toss).
    #[arg(long, env = "FAKE_PG_REPLAY", default_value = "toss")]
    replay: ReplayMode,

    /// Seed of the random fault and slow-tail draws.
    #[arg(long, env = "FAKE_PG_SEED", default_value_t = 1)]
    seed: u64,

    /// Multiplies every latency: 0.1 runs ten times faster.
    #[arg(long, env = "FAKE_PG_TIME_SCALE", default_value_t = 1.0, value_parser = parse_time_scale)]
    time_scale: f64,

    /// Most calls in flight at once on one HTTP/2 connection (served to clients
    /// that speak it, h2c); a client waits for a stream past it.
    #[arg(long, env = "FAKE_PG_HTTP2_MAX_STREAMS", default_value_t = DEFAULT_HTTP2_MAX_STREAMS,
          value_parser = clap::value_parser!(u32).range(1..))]
    http2_max_streams: u32,

    /// Refuse confirms of paymentKeys that no payment window issued (404 NOT_FOUND_PAYMENT_SESSION).
    #[arg(long, env = "FAKE_PG_STRICT_SESSIONS")]
    strict_sessions: bool,

    /// The URL clients reach this server at, for receipt and checkout links.
    #[arg(long, env = "FAKE_PG_PUBLIC_URL")]
    public_url: Option<String>,

    /// Where to send Toss's webhook events (`PAYMENT_STATUS_CHANGED`), such as
    /// `http://127.0.0.1:3000/api/webhooks/toss`; none without it.
    #[arg(long, env = "FAKE_PG_WEBHOOK_URL")]
    webhook_url: Option<String>,
}

impl Flags {
    fn into_config(self) -> Config {
        Config {
            secret_key: self.secret_key,
            client_key: self.client_key,
            strict_sessions: self.strict_sessions,
            time_scale: self.time_scale,
            public_url: self.public_url,
            api: self.api,
            http2_max_streams: self.http2_max_streams,
            runtime: RuntimeConfig {
                latency_ms: millis(self.latency),
                slow_tail: self.slow_tail,
                lookup_latency_ms: millis(self.lookup_latency),
                // Set at run time only (`PUT /__admin/config`), as the tests do.
                lookup_answer_delay_ms: 0,
                continue_after_disconnect: self.continue_after_disconnect,
                contract_limit: self.contract_limit,
                seed: self.seed,
                replay: self.replay,
                expired_lookup: ExpiredLookup::Shown,
                outage: false,
                hold: false,
                webhook_url: self.webhook_url,
                window_mode: fake_pg::config::WindowMode::Redirect,
                faults: Faults {
                    decline: self.decline_rate,
                    error_500: self.error_500_rate,
                    rate_limit_429: self.rate_limit_429_rate,
                    forbidden_consecutive: self.forbidden_consecutive_rate,
                    reset_after_charge: self.reset_after_charge_rate,
                    error_500_after_charge: self.error_500_after_charge_rate,
                    reset_before_processing: self.reset_before_processing_rate,
                    error_500_stored: self.error_500_stored_rate,
                    rate_limit_429_held: self.rate_limit_429_held_rate,
                },
            },
        }
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .init();
    let flags = Flags::parse();
    let listen = flags.listen.clone();
    let config = flags.into_config();
    if let Err(error) = config.validate() {
        eprintln!("fake-pg: {error}");
        std::process::exit(2);
    }
    let listener = TcpListener::bind(&listen).await?;
    let url = match &config.public_url {
        Some(url) => url.clone(),
        None => format!("http://{}", listener.local_addr()?),
    };
    match config.api {
        Api::Toss => println!(
            "fake-pg listening on {url}  secret key: {}  client key: {}  SDK: {url}/v2/standard",
            config.secret_key, config.client_key
        ),
        Api::KakaoPay => println!(
            "fake-pg (KakaoPay) listening on {url}  Authorization: SECRET_KEY {}  ready: {url}/online/v1/payment/ready",
            config.secret_key
        ),
    }
    println!("{}", describe(&config));
    fake_pg::serve_with_shutdown(config, listener, shutdown_signal()).await
}

/// One line with the settings that shape every confirm and cancel.
fn describe(config: &Config) -> String {
    let runtime = &config.runtime;
    let duration = |ms| humantime::format_duration(Duration::from_millis(ms));
    let limit = runtime.contract_limit.map_or_else(|| "none".to_owned(), |limit| limit.to_string());
    let faults = &runtime.faults;
    format!(
        "latency {}, slow tail {} at {}, contract limit {limit}, continue after disconnect {}, \
         time scale {}, seed {}, replay {:?}, faults: decline {} error_500 {} rate_limit_429 {} \
         forbidden_consecutive {} reset_after_charge {} error_500_after_charge {} reset_before_processing {} \
         error_500_stored {} rate_limit_429_held {}",
        duration(runtime.latency_ms),
        runtime.slow_tail.fraction,
        duration(runtime.slow_tail.latency_ms),
        runtime.continue_after_disconnect,
        config.time_scale,
        runtime.seed,
        runtime.replay,
        faults.decline,
        faults.error_500,
        faults.rate_limit_429,
        faults.forbidden_consecutive,
        faults.reset_after_charge,
        faults.error_500_after_charge,
        faults.reset_before_processing,
        faults.error_500_stored,
        faults.rate_limit_429_held,
    )
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(signal) => signal,
            Err(_) => {
                let _ = interrupt.await;
                return;
            }
        };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}

fn millis(duration: Duration) -> u64 {
    duration.as_millis().try_into().unwrap_or(u64::MAX)
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text).map_err(|error| format!("{error}; write a duration such as 300ms, 40s or 2m"))
}

fn parse_rate(text: &str) -> Result<f64, String> {
    let rate: f64 = text.parse().map_err(|_| format!("{text:?} is not a number; write a rate from 0 to 1"))?;
    if rate.is_finite() && (0.0..=1.0).contains(&rate) {
        Ok(rate)
    } else {
        Err(format!("{rate} is out of range; a rate is from 0 to 1"))
    }
}

fn parse_slow_tail(text: &str) -> Result<SlowTail, String> {
    let (fraction, latency) =
        text.split_once(':').ok_or_else(|| format!("{text:?} is not FRACTION:DURATION, e.g. 0.05:20s"))?;
    Ok(SlowTail { fraction: parse_rate(fraction)?, latency_ms: millis(parse_duration(latency)?) })
}

fn parse_time_scale(text: &str) -> Result<f64, String> {
    let scale: f64 =
        text.parse().map_err(|_| format!("{text:?} is not a number; 1 is real time, 0.1 ten times faster"))?;
    if scale.is_finite() && scale > 0.0 {
        Ok(scale)
    } else {
        Err(format!("{scale} must be above 0; 1 is real time, 0.1 ten times faster"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse_durations_rates_and_slow_tails() {
        let flags = Flags::try_parse_from([
            "fake-pg",
            "--latency",
            "40s",
            "--slow-tail",
            "0.05:2m",
            "--decline-rate",
            "0.25",
            "--continue-after-disconnect",
            "false",
            "--contract-limit",
            "40",
            "--replay",
            "outcome",
            "--api",
            "kakaopay",
        ])
        .unwrap();
        let config = flags.into_config();
        assert_eq!(config.runtime.latency_ms, 40_000);
        assert_eq!(config.runtime.slow_tail, SlowTail { fraction: 0.05, latency_ms: 120_000 });
        assert_eq!(config.runtime.faults.decline, 0.25);
        assert!(!config.runtime.continue_after_disconnect);
        assert_eq!(config.runtime.contract_limit, Some(40));
        assert_eq!(config.runtime.replay, ReplayMode::Outcome);
        assert_eq!(config.api, Api::KakaoPay);
    }

    #[test]
    fn defaults_match_the_library_defaults() {
        let config = Flags::try_parse_from(["fake-pg"]).unwrap().into_config();
        assert_eq!(config.runtime, RuntimeConfig::default());
        assert_eq!(config.secret_key, DEFAULT_SECRET_KEY);
        assert_eq!(config.api, Api::Toss);
        assert_eq!(config.http2_max_streams, DEFAULT_HTTP2_MAX_STREAMS);
    }

    #[test]
    fn bad_values_are_refused_with_a_reason() {
        for args in [
            ["fake-pg", "--decline-rate", "1.5"],
            ["fake-pg", "--error-500-rate", "x"],
            ["fake-pg", "--slow-tail", "0.5"],
            ["fake-pg", "--latency", "fast"],
            ["fake-pg", "--time-scale", "0"],
            ["fake-pg", "--replay", "kind"],
            ["fake-pg", "--api", "paypal"],
            ["fake-pg", "--http2-max-streams", "0"],
        ] {
            assert!(Flags::try_parse_from(args).is_err(), "{args:?} accepted");
        }
    }
}

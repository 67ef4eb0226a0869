//! Server settings: command-line flags with `PAYONCE_*` environment equivalents.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use payonce_api::{PageConfig, PaymentSdk};
use secrecy::{ExposeSecret, SecretString};

use crate::db::DbLocation;
use crate::operators::{AdminTokenClash, Operators, OperatorsFileError};
use payonce_rules::settlement::StrayPolicy;

/// The payonce order server.
#[derive(Debug, Clone, Parser)]
#[command(name = "payonce-server", version, about)]
pub struct ServerConfig {
    /// Address to listen on.
    #[arg(long, env = "PAYONCE_LISTEN", default_value = "127.0.0.1:3000")]
    pub listen: SocketAddr,

    /// How long a client may take to send a request's head, and then its body;
    /// a slower one is cut off rather than holding a connection open.
    #[arg(long, env = "PAYONCE_CLIENT_TIMEOUT", default_value = "10s", value_parser = parse_duration)]
    pub client_timeout: Duration,

    /// POSTs (orders, confirms) a customer may make per minute; 0 turns the limit off.
    #[arg(long, env = "PAYONCE_RATE_LIMIT_CUSTOMER", default_value_t = 30)]
    pub rate_limit_customer: u32,

    /// POSTs one client address may make per minute, all its customers together; 0 turns it off.
    #[arg(long, env = "PAYONCE_RATE_LIMIT_ADDRESS", default_value_t = 600)]
    pub rate_limit_address: u32,

    /// Reads (GETs of the API: checks, orders, the catalog) a customer may make
    /// per minute. The page checks an order every 2 s, 30 a minute; over it,
    /// 429 with `Retry-After`, and the page checks again then. 0 turns it off.
    #[arg(long, env = "PAYONCE_RATE_LIMIT_CUSTOMER_READS", default_value_t = 240)]
    pub rate_limit_customer_reads: u32,

    /// Reads one client address may make per minute, all its customers
    /// together (a hundred customers checking from one office at the page's
    /// rhythm); 0 turns it off.
    #[arg(long, env = "PAYONCE_RATE_LIMIT_ADDRESS_READS", default_value_t = 6_000)]
    pub rate_limit_address_reads: u32,

    /// The shop's own proxies (load balancers), as addresses or networks,
    /// comma-separated: a request from one of them is from the client its
    /// `X-Forwarded-For` names (read from the right, past these proxies). From
    /// any other peer the header is ignored, and without this flag it always is.
    #[arg(long, env = "PAYONCE_TRUSTED_PROXIES", value_delimiter = ',', value_parser = crate::client_address::parse_network)]
    pub trusted_proxies: Vec<ipnet::IpNet>,

    /// PG webhook events the shop takes per minute, all senders together (Toss
    /// sends every shop's events from a few addresses, so they are kept apart
    /// from customers' limits); over it, 429 and the PG sends the event again
    /// later. 0 turns the limit off.
    #[arg(long, env = "PAYONCE_RATE_LIMIT_WEBHOOKS", default_value_t = 12_000)]
    pub rate_limit_webhooks: u32,

    /// A file holding the key that signs customers' cookies (one line, at least
    /// 32 characters of randomness), the same for every server of the shop.
    /// Without it, a key made once and kept in the database signs them.
    #[arg(long, env = "PAYONCE_CUSTOMER_KEY_FILE")]
    pub customer_key_file: Option<PathBuf>,

    /// A file holding the key that signed customers' cookies before the
    /// current one: cookies it signed are still their customers', and are
    /// signed again with the current key. Drop it once they have come back.
    #[arg(long, env = "PAYONCE_CUSTOMER_KEY_PREVIOUS_FILE", requires = "customer_key_file")]
    pub customer_key_previous_file: Option<PathBuf>,

    /// The keys read from `--customer-key-file` and `--customer-key-previous-file`.
    #[arg(skip)]
    pub customer_keys: Option<CustomerKeyFiles>,

    /// Address of the operators' listener (metrics, health): keep it off the internet.
    #[arg(long, env = "PAYONCE_ADMIN_LISTEN", default_value = "127.0.0.1:3001")]
    pub admin_listen: SocketAddr,

    /// The database: a SQLite file path (created if missing) or `sqlite:` URL for
    /// one server, or a `postgres://` URL for several servers sharing it.
    #[arg(long, env = "PAYONCE_DB", default_value = "payonce.db", hide_env_values = true)]
    pub db: DbLocation,

    /// Most database connections open at once. A confirm never holds one while
    /// it waits for the PG, so a small pool serves many payments in flight.
    #[arg(long, env = "PAYONCE_DB_MAX_CONNECTIONS", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1_000))]
    pub db_max_connections: u32,

    /// Directory of the built page (`trunk build` output); unset serves the API only.
    #[arg(long, env = "PAYONCE_STATIC_DIR")]
    pub static_dir: Option<PathBuf>,

    /// Where customers reach the page; the PG window sends them back to it.
    /// Defaults to `http://<listen>`.
    #[arg(long, env = "PAYONCE_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// Base URL of the PG API (and of its payment window).
    #[arg(long, env = "PAYONCE_PG_URL", default_value = "http://127.0.0.1:9090")]
    pub pg_url: String,

    /// The merchant's PG secret key. The fake PG's by default, which only a PG
    /// on this machine accepts; a live key (`live_sk_…`) only goes to Toss, over https.
    /// Prefer `--pg-secret-key-file`: a flag's value shows in `ps`.
    #[arg(long, env = "PAYONCE_PG_SECRET_KEY", default_value = FAKE_PG_SECRET_KEY, hide_env_values = true, hide_default_value = true)]
    pub pg_secret_key: SecretString,

    /// A file holding the merchant's PG secret key (one line), read at start-up.
    #[arg(long, env = "PAYONCE_PG_SECRET_KEY_FILE", conflicts_with = "pg_secret_key")]
    pub pg_secret_key_file: Option<PathBuf>,

    /// Base URL of KakaoPay's online payment API (`https://open-api.kakaopay.com`),
    /// or of a fake PG serving it (`fake-pg --api kakaopay`). Without it the shop
    /// takes cards through Toss only.
    #[arg(long, env = "PAYONCE_KAKAOPAY_URL")]
    pub kakaopay_url: Option<String>,

    /// The merchant's KakaoPay secret key (`Authorization: SECRET_KEY …`). The fake
    /// PG's by default, which only a KakaoPay on this machine accepts. Prefer
    /// `--kakaopay-secret-key-file`.
    #[arg(long, env = "PAYONCE_KAKAOPAY_SECRET_KEY", default_value = FAKE_PG_SECRET_KEY, hide_env_values = true, hide_default_value = true)]
    pub kakaopay_secret_key: SecretString,

    /// A file holding the merchant's KakaoPay secret key (one line), read at start-up.
    #[arg(long, env = "PAYONCE_KAKAOPAY_SECRET_KEY_FILE", conflicts_with = "kakaopay_secret_key")]
    pub kakaopay_secret_key_file: Option<PathBuf>,

    /// The merchant's KakaoPay code (`cid`); `TC0ONETIME` is KakaoPay's test code.
    #[arg(long, env = "PAYONCE_KAKAOPAY_CID", default_value = "TC0ONETIME")]
    pub kakaopay_cid: String,

    /// How long KakaoPay keeps a prepared payment (15 minutes): what it has not
    /// approved by then it never will. As `--pg-session-lifetime` is for Toss.
    #[arg(long, env = "PAYONCE_KAKAOPAY_SESSION_LIFETIME", default_value = "15m", value_parser = parse_duration)]
    pub kakaopay_session_lifetime: Duration,

    /// The merchant's PG client key, given to the page for the PG's SDK (public).
    #[arg(long, env = "PAYONCE_PG_CLIENT_KEY", default_value = "test_ck_payonce_fake_pg_0000")]
    pub pg_client_key: String,

    /// The PG's JavaScript SDK, loaded by the page; its origin is the only other
    /// one the page's Content-Security-Policy lets scripts come from.
    /// Defaults to `<pg-url>/v2/standard`, where the fake PG serves its own.
    #[arg(long, env = "PAYONCE_PG_SDK_URL")]
    pub pg_sdk_url: Option<String>,

    /// Origins the PG's SDK may frame its payment window from, beside the SDK's
    /// own (Toss's SDK opens its window in an iframe on a PC), comma-separated,
    /// such as `https://pay.toss.im`: the page's `frame-src`.
    #[arg(long, env = "PAYONCE_PG_WINDOW_ORIGINS", value_delimiter = ',')]
    pub pg_window_origins: Vec<String>,

    /// Origins the PG's SDK may connect to from the page (fetch, XHR, WebSocket),
    /// comma-separated: the page's `connect-src`, beside the shop's own.
    #[arg(long, env = "PAYONCE_PG_CONNECT_ORIGINS", value_delimiter = ',')]
    pub pg_connect_origins: Vec<String>,

    /// Origins the PG's SDK may load images from on the page, comma-separated:
    /// the page's `img-src`, beside the shop's own and `data:`.
    #[arg(long, env = "PAYONCE_PG_IMG_ORIGINS", value_delimiter = ',')]
    pub pg_img_origins: Vec<String>,

    /// Origins the PG's SDK may load style sheets from on the page,
    /// comma-separated: the page's `style-src`, beside the shop's own.
    #[arg(long, env = "PAYONCE_PG_STYLE_ORIGINS", value_delimiter = ',')]
    pub pg_style_origins: Vec<String>,

    /// The PG sends this shop its webhooks (registered for
    /// `<public-url>/api/webhooks/toss`): each change of a payment is announced
    /// and looked up at once, so recovery polls a payment the PG has not
    /// settled yet four times less often. Without it, webhooks that come are
    /// still taken.
    #[arg(long, env = "PAYONCE_PG_WEBHOOKS")]
    pub pg_webhooks: bool,

    /// How long to wait for a TCP connection to the PG. A connect failure means the
    /// request never left, so it is safe to call it a failure.
    #[arg(long, env = "PAYONCE_PG_CONNECT_TIMEOUT", default_value = "3s", value_parser = parse_duration)]
    pub pg_connect_timeout: Duration,

    /// How long to wait for the PG's answer once the request is sent. Past it the
    /// outcome is unknown, never failed.
    #[arg(long, env = "PAYONCE_PG_READ_TIMEOUT", default_value = "60s", value_parser = parse_duration)]
    pub pg_read_timeout: Duration,

    /// Speak HTTP/2 to the PGs: every call in flight shares one connection
    /// instead of holding one each, so thousands of customers waiting on a slow
    /// PG hold one socket and its buffers, not thousands. Over https it is
    /// negotiated (HTTP/1.1 if the PG does not offer it); over http the PG, or
    /// the proxy before it, must speak it (h2c), as the fake PG does. Calls past
    /// the PG's own limit of streams on a connection wait in this server for a
    /// stream, within their timeouts.
    #[arg(long, env = "PAYONCE_PG_HTTP2")]
    pub pg_http2: bool,

    /// Most PG calls in flight at once (confirms and recovery together): `auto`
    /// learns the PG's limit from its answers, starting at 40; a number fixes it.
    #[arg(long, env = "PAYONCE_PG_MAX_CONCURRENCY", default_value = "auto", value_parser = parse_concurrency)]
    pub pg_max_concurrency: Concurrency,

    /// With `--pg-max-concurrency auto`: the limit changes at most once per window.
    #[arg(long, env = "PAYONCE_PG_LIMIT_WINDOW", default_value = "5s", value_parser = parse_duration)]
    pub pg_limit_window: Duration,

    /// Pause between recovery passes over unsettled payments.
    #[arg(long, env = "PAYONCE_RECOVERY_INTERVAL", default_value = "60s", value_parser = parse_duration)]
    pub recovery_interval: Duration,

    /// How long the PG keeps a payment window's session: what it has not
    /// confirmed by then it never will (Toss: 10 minutes). Past this, plus the
    /// longest processing and a margin, recovery settles a payment the PG shows
    /// unconfirmed as FAILED instead of sending its confirm again.
    #[arg(long, env = "PAYONCE_PG_SESSION_LIFETIME", default_value = "10m", value_parser = parse_duration)]
    pub pg_session_lifetime: Duration,

    /// Most checks that may wait for their order to change at once, server-wide
    /// (each holds an open request, no database connection). Beyond it a check is
    /// answered at once, as if it had not asked to wait.
    #[arg(long, env = "PAYONCE_MAX_WAITING_CHECKS", default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub max_waiting_checks: u32,

    /// Most checks one client address may have waiting at once; beyond it its
    /// checks are answered at once (the page asks again 2 s later), so one
    /// client cannot take the server's waiting places from everyone else.
    #[arg(long, env = "PAYONCE_MAX_WAITING_CHECKS_PER_CLIENT", default_value_t = 200, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub max_waiting_checks_per_client: u32,

    /// Most checks one customer may have waiting at once (a tab or two per order).
    #[arg(long, env = "PAYONCE_MAX_WAITING_CHECKS_PER_CUSTOMER", default_value_t = 4, value_parser = clap::value_parser!(u32).range(0..=1_000))]
    pub max_waiting_checks_per_customer: u32,

    /// Pause between reconciliation passes (the PG's transactions of the last
    /// day compared with the orders); `0s` runs none but those operators ask for.
    #[arg(long, env = "PAYONCE_RECONCILE_INTERVAL", default_value = "10m", value_parser = parse_duration)]
    pub reconcile_interval: Duration,

    /// What reconciliation does with a charge no order made whose orderId is
    /// the shop's (see --order-id-prefix): `refund` it in full, or only
    /// `report` it. A charge of any other orderId is only ever reported.
    #[arg(long, env = "PAYONCE_RECONCILE_STRAYS", default_value = "refund", value_parser = parse_stray_policy)]
    pub reconcile_strays: StrayPolicy,

    /// How the shop's order ids begin (1 to 32 of A-Z, a-z, 0-9, `_`, `-`).
    /// Reconciliation refunds a stray charge only when its orderId has it: give
    /// each shop (and each staging deploy) sharing a PG account its own.
    #[arg(long, env = "PAYONCE_ORDER_ID_PREFIX", default_value = "ord_")]
    pub order_id_prefix: String,

    /// How long after paying a customer may cancel an order themselves.
    /// Operators may refund at any time.
    #[arg(long, env = "PAYONCE_CANCEL_WINDOW", default_value = "30m", value_parser = parse_duration)]
    pub cancel_window: Duration,

    /// One bearer token for the operators' API on the admin listener (at least
    /// 32 characters): it signs in as the operator `operator`, who may refund.
    /// Without it or --operators-file, that API answers 503 OPERATOR_API_OFF:
    /// it is never open.
    #[arg(long, env = "PAYONCE_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<SecretString>,

    /// A file holding the admin token (one line), read at start-up.
    #[arg(long, env = "PAYONCE_ADMIN_TOKEN_FILE", conflicts_with = "admin_token")]
    pub admin_token_file: Option<PathBuf>,

    /// A file naming each operator, one a line: `NAME ROLE SHA256-HEX-OF-TOKEN`
    /// (ROLE `read-only` or `refund`; `#` comments). Read at start-up; a bad line
    /// refuses to start. `payonce-server operator-line NAME ROLE` makes a line
    /// from a token on stdin. With --admin-token too, that token is one more
    /// operator, `operator`.
    #[arg(long, env = "PAYONCE_OPERATORS_FILE")]
    pub operators_file: Option<PathBuf>,

    /// The operators read from `--operators-file`.
    #[arg(skip)]
    pub operators: Operators,

    /// Host names the admin listener answers to besides IP addresses and
    /// `localhost`, comma-separated (such as `ops.shop.internal`); a request
    /// for any other (a DNS-rebinding page in an operator's browser) is refused.
    #[arg(long, env = "PAYONCE_ADMIN_HOSTS", value_delimiter = ',')]
    pub admin_hosts: Vec<String>,

    /// How long the page waits for the confirm POST before checking instead.
    #[arg(long, env = "PAYONCE_CONFIRM_WAIT", default_value = "15s", value_parser = parse_duration)]
    pub confirm_wait: Duration,

    /// Pause between the page's checks of the order.
    #[arg(long, env = "PAYONCE_POLL_INTERVAL", default_value = "2s", value_parser = parse_duration)]
    pub poll_interval: Duration,

    /// How many checks the page makes before it says it could not confirm yet.
    #[arg(long, env = "PAYONCE_POLL_ATTEMPTS", default_value_t = 25, value_parser = clap::value_parser!(u32).range(1..=1_000))]
    pub poll_attempts: u32,
}

/// The fake PG's secret key, the default: no real PG accepts it.
pub const FAKE_PG_SECRET_KEY: &str = "test_sk_payonce_fake_pg_0000";
/// Where a live key may go: Toss's API.
const TOSS_API_HOST: &str = "api.tosspayments.com";

/// How many PG calls may be out at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Concurrency {
    Fixed(u32),
    /// Learned from the PG's answers.
    Auto,
}

impl Concurrency {
    /// The most calls there can ever be at once under this setting.
    pub fn most(self) -> u32 {
        match self {
            Concurrency::Fixed(cap) => cap,
            Concurrency::Auto => crate::pg::limit::learning::CEILING,
        }
    }
}

/// The highest fixed PG concurrency limit.
pub const MAX_FIXED_CONCURRENCY: u32 = 100_000;

fn parse_concurrency(value: &str) -> Result<Concurrency, String> {
    if value == "auto" {
        return Ok(Concurrency::Auto);
    }
    // A contract's own number: the flash-sale experiment holds tens of
    // thousands of confirms at a PG that allows them.
    match value.parse::<u32>() {
        Ok(cap) if (1..=MAX_FIXED_CONCURRENCY).contains(&cap) => Ok(Concurrency::Fixed(cap)),
        _ => Err(format!("{value:?} is neither a number from 1 to {MAX_FIXED_CONCURRENCY} nor auto")),
    }
}

/// Why the server refuses a configuration.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error(
        "the page stops checking before the server can finish a payment: confirm-wait {} \
         + poll-interval {} x poll-attempts {poll_attempts} = {}, but \
         pg-connect-timeout {} + pg-read-timeout {} = {}. \
         Raise --poll-attempts or --confirm-wait, or lower --pg-read-timeout",
        human(*confirm_wait), human(*poll_interval), human(*window), human(*connect), human(*read), human(*connect + *read)
    )]
    CheckingWindowTooShort {
        confirm_wait: Duration,
        poll_interval: Duration,
        poll_attempts: u32,
        window: Duration,
        connect: Duration,
        read: Duration,
    },
    #[error("--{flag} must be positive")]
    ZeroDuration { flag: &'static str },
    #[error("--{flag} {value:?} is not an http(s) origin (scheme://host[:port], with nothing after it)")]
    InvalidOrigin { flag: &'static str, value: String },
    #[error("--{flag} {value:?} is not an http(s) URL")]
    InvalidUrl { flag: &'static str, value: String },
    #[error(
        "--{flag} {url:?} is plain http off this machine: the secret key would cross the network in the clear; use https"
    )]
    PlainHttpPg { flag: &'static str, url: String },
    #[error(
        "no --{key_flag} (or --{key_flag}-file) for the PG at {url:?}: the default is the fake PG's, which only a PG on this machine accepts"
    )]
    NoSecretKey { key_flag: &'static str, url: String },
    #[error(
        "--kakaopay-cid must be 1 to {KAKAOPAY_CID_MAX} letters and digits (KakaoPay's test code is TC0ONETIME), got {0:?}"
    )]
    InvalidKakaoPayCid(String),
    #[error("a live secret key (live_sk_...) goes only to https://{TOSS_API_HOST}, not to {0:?}")]
    LiveKeyOffToss(String),
    #[error("cannot read --{flag} {path:?}: {reason}")]
    SecretFile { flag: &'static str, path: PathBuf, reason: String },
    #[error(
        "--order-id-prefix {0:?} must be 1 to {ORDER_ID_PREFIX_MAX} of A-Z, a-z, 0-9, `_` and `-` (the PG's orderId is at most 64)"
    )]
    InvalidOrderIdPrefix(String),
    #[error("--operators-file {path:?}: {error}")]
    OperatorsFile { path: PathBuf, error: OperatorsFileError },
    #[error("the operators' token of --{flag} is too weak: {reason}")]
    WeakAdminToken { flag: &'static str, reason: String },
    #[error("--admin-token with --operators-file: {0}")]
    AdminTokenClash(AdminTokenClash),
    #[error("--admin-hosts {0:?} is not a host name (letters, digits, `-` and `.`, no port)")]
    InvalidAdminHost(String),
}

/// The longest order-id prefix: the rest of the PG's 64 characters is the id's 32.
pub const ORDER_ID_PREFIX_MAX: usize = 32;

/// Whether `text` is an http(s) origin and nothing more (no path, query or trailing slash).
fn is_origin(text: &str) -> bool {
    reqwest::Url::parse(text)
        .is_ok_and(|url| matches!(url.scheme(), "http" | "https") && url.origin().ascii_serialization() == text)
}

/// A DNS name for `--admin-hosts`: labels of letters, digits and `-`.
fn is_host_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 253
        && text.split('.').all(|label| {
            (1..=63).contains(&label.len()) && label.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-')
        })
}

/// `refund` or `report`, for `--reconcile-strays`.
fn parse_stray_policy(text: &str) -> Result<StrayPolicy, String> {
    match text {
        "refund" => Ok(StrayPolicy::Refund),
        "report" => Ok(StrayPolicy::Report),
        other => Err(format!("{other:?} is neither `refund` nor `report`")),
    }
}

impl ServerConfig {
    /// Defaults for everything, as if started with no flags. Tests start from this.
    pub fn defaults() -> Self {
        Self::parse_from(["payonce-server"])
    }

    /// Reads the secrets given as files (`--pg-secret-key-file`,
    /// `--admin-token-file`) into their settings.
    pub fn read_secret_files(&mut self) -> Result<(), ConfigError> {
        if let Some(path) = &self.pg_secret_key_file {
            self.pg_secret_key = read_secret("pg-secret-key-file", path)?;
        }
        if let Some(path) = &self.kakaopay_secret_key_file {
            self.kakaopay_secret_key = read_secret("kakaopay-secret-key-file", path)?;
        }
        if let Some(path) = &self.admin_token_file {
            self.admin_token = Some(read_secret("admin-token-file", path)?);
        }
        if let Some(path) = &self.operators_file {
            let failed =
                |reason: String| ConfigError::SecretFile { flag: "operators-file", path: path.clone(), reason };
            let text = std::fs::read_to_string(path).map_err(|error| failed(error.to_string()))?;
            self.operators =
                Operators::parse(&text).map_err(|error| ConfigError::OperatorsFile { path: path.clone(), error })?;
        }
        if let Some(path) = &self.customer_key_file {
            let previous = match &self.customer_key_previous_file {
                Some(path) => Some(read_key("customer-key-previous-file", path)?),
                None => None,
            };
            self.customer_keys = Some(CustomerKeyFiles { current: read_key("customer-key-file", path)?, previous });
        }
        Ok(())
    }

    /// How every PG client reaches its PG: the timeouts, and the HTTP version.
    pub fn pg_transport(&self) -> crate::pg::PgTransport {
        crate::pg::PgTransport {
            connect_timeout: self.pg_connect_timeout,
            read_timeout: self.pg_read_timeout,
            http2: self.pg_http2,
        }
    }

    /// The longest a confirm can keep the PG busy: connecting plus waiting for the answer.
    pub fn max_processing(&self) -> Duration {
        self.pg_connect_timeout + self.pg_read_timeout
    }

    /// How the PG concurrency limit is set.
    pub fn pg_limit_policy(&self) -> crate::pg::limit::Policy {
        match self.pg_max_concurrency {
            Concurrency::Fixed(cap) => crate::pg::limit::Policy::Fixed(cap),
            Concurrency::Auto => crate::pg::limit::Policy::Adaptive { window: self.pg_limit_window },
        }
    }

    /// The PG's SDK as the page loads it.
    pub fn payment_sdk(&self) -> PaymentSdk {
        let url = match &self.pg_sdk_url {
            Some(url) => url.clone(),
            None => format!("{}/v2/standard", self.pg_url.trim_end_matches('/')),
        };
        PaymentSdk { url, client_key: self.pg_client_key.clone() }
    }

    /// What the page's CSP lets the PG's SDK do beside running its script:
    /// frame its window (from the SDK's origin and the configured ones), and
    /// connect to, load images and style sheets from the configured origins.
    pub fn payment_sdk_origins(&self) -> SdkOrigins {
        let script = self.payment_sdk_origin();
        let mut frames: Vec<String> = script.iter().cloned().collect();
        for origin in &self.pg_window_origins {
            if !frames.contains(origin) {
                frames.push(origin.clone());
            }
        }
        SdkOrigins {
            script,
            frames,
            connections: self.pg_connect_origins.clone(),
            images: self.pg_img_origins.clone(),
            styles: self.pg_style_origins.clone(),
        }
    }

    /// The scheme, host and port of the SDK's URL: what the page's CSP allows scripts from.
    pub fn payment_sdk_origin(&self) -> Option<String> {
        let url = reqwest::Url::parse(&self.payment_sdk().url).ok()?;
        Some(url.origin().ascii_serialization()).filter(|origin| origin != "null")
    }

    /// The timings the page uses, served at `GET /api/config`.
    pub fn page_config(&self) -> PageConfig {
        PageConfig {
            confirm_wait_ms: millis(self.confirm_wait),
            poll_interval_ms: millis(self.poll_interval),
            poll_attempts: self.poll_attempts,
            server_max_processing_ms: millis(self.max_processing()),
            check_wait_ms: millis(self.poll_interval).min(payonce_api::MAX_CHECK_WAIT_MS),
            cancel_window_ms: millis(self.cancel_window),
        }
    }

    /// Public base URL without a trailing slash.
    pub fn public_base_url(&self) -> String {
        match &self.public_url {
            Some(url) => url.trim_end_matches('/').to_owned(),
            None => format!("http://{}", self.listen),
        }
    }

    /// Refuses settings under which a payment could be reported wrongly.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (flag, value) in [
            ("pg-connect-timeout", self.pg_connect_timeout),
            ("pg-read-timeout", self.pg_read_timeout),
            ("recovery-interval", self.recovery_interval),
            ("pg-session-lifetime", self.pg_session_lifetime),
            ("kakaopay-session-lifetime", self.kakaopay_session_lifetime),
            ("confirm-wait", self.confirm_wait),
            ("poll-interval", self.poll_interval),
            ("client-timeout", self.client_timeout),
            ("pg-limit-window", self.pg_limit_window),
        ] {
            if value.is_zero() {
                return Err(ConfigError::ZeroDuration { flag });
            }
        }
        for (flag, value) in [
            ("pg-url", Some(&self.pg_url)),
            ("kakaopay-url", self.kakaopay_url.as_ref()),
            ("public-url", self.public_url.as_ref()),
            ("pg-sdk-url", self.pg_sdk_url.as_ref()),
        ] {
            if let Some(value) = value {
                let parsed = reqwest::Url::parse(value).ok();
                if !parsed.is_some_and(|url| matches!(url.scheme(), "http" | "https")) {
                    return Err(ConfigError::InvalidUrl { flag, value: value.clone() });
                }
            }
        }
        // A CSP source list takes origins: a path or a trailing slash would mean something else there.
        for (flag, origins) in [
            ("pg-window-origins", &self.pg_window_origins),
            ("pg-connect-origins", &self.pg_connect_origins),
            ("pg-img-origins", &self.pg_img_origins),
            ("pg-style-origins", &self.pg_style_origins),
        ] {
            if let Some(origin) = origins.iter().find(|origin| !is_origin(origin)) {
                return Err(ConfigError::InvalidOrigin { flag, value: origin.clone() });
            }
        }
        self.validate_pg_credentials()?;
        self.operators()?;
        if let Some(host) = self.admin_hosts.iter().find(|host| !is_host_name(host)) {
            return Err(ConfigError::InvalidAdminHost(host.clone()));
        }
        let prefix = &self.order_id_prefix;
        if !(1..=ORDER_ID_PREFIX_MAX).contains(&prefix.len()) || !payonce_api::is_order_id_text(prefix) {
            return Err(ConfigError::InvalidOrderIdPrefix(prefix.clone()));
        }
        let page = self.page_config();
        if !page.covers_server_processing() {
            return Err(ConfigError::CheckingWindowTooShort {
                confirm_wait: self.confirm_wait,
                poll_interval: self.poll_interval,
                poll_attempts: self.poll_attempts,
                window: Duration::from_millis(page.checking_window_ms()),
                connect: self.pg_connect_timeout,
                read: self.pg_read_timeout,
            });
        }
        Ok(())
    }
}

impl ServerConfig {
    /// Everyone who may use the operators' API: the operators file's, and the
    /// admin token as the operator `operator` (a token the server sees must be
    /// strong enough; an empty one is none).
    pub fn operators(&self) -> Result<Operators, ConfigError> {
        let token = self.admin_token.as_ref().map(ExposeSecret::expose_secret).filter(|token| !token.is_empty());
        let Some(token) = token else {
            return Ok(self.operators.clone());
        };
        let flag = if self.admin_token_file.is_some() { "admin-token-file" } else { "admin-token" };
        crate::operators::check_strength(token).map_err(|reason| ConfigError::WeakAdminToken { flag, reason })?;
        self.operators.clone().with_admin_token(token).map_err(ConfigError::AdminTokenClash)
    }

    /// The secret keys go only where they belong: in the clear only to a PG on
    /// this machine, the fake PG's only to this machine, a live Toss key only to Toss.
    fn validate_pg_credentials(&self) -> Result<(), ConfigError> {
        let url = credentials_go_to(("pg-url", "pg-secret-key"), &self.pg_url, &self.pg_secret_key)?;
        let key = self.pg_secret_key.expose_secret();
        if key.starts_with("live_sk_") && !(url.scheme() == "https" && url.host_str() == Some(TOSS_API_HOST)) {
            return Err(ConfigError::LiveKeyOffToss(self.pg_url.clone()));
        }
        if let Some(kakaopay_url) = &self.kakaopay_url {
            credentials_go_to(("kakaopay-url", "kakaopay-secret-key"), kakaopay_url, &self.kakaopay_secret_key)?;
            let cid = &self.kakaopay_cid;
            if cid.is_empty() || cid.len() > KAKAOPAY_CID_MAX || !cid.bytes().all(|byte| byte.is_ascii_alphanumeric()) {
                return Err(ConfigError::InvalidKakaoPayCid(cid.clone()));
            }
        }
        Ok(())
    }
}

/// Where a PG's secret key may go: over https anywhere, in the clear only to
/// this machine, and the fake PG's only to this machine. The URL, parsed.
fn credentials_go_to(
    (flag, key_flag): (&'static str, &'static str),
    value: &str,
    key: &SecretString,
) -> Result<reqwest::Url, ConfigError> {
    let url = reqwest::Url::parse(value).map_err(|_| ConfigError::InvalidUrl { flag, value: value.to_owned() })?;
    let on_this_machine = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name == "localhost",
        None => false,
    };
    if url.scheme() == "http" && !on_this_machine {
        return Err(ConfigError::PlainHttpPg { flag, url: value.to_owned() });
    }
    if key.expose_secret() == FAKE_PG_SECRET_KEY && !on_this_machine {
        return Err(ConfigError::NoSecretKey { key_flag, url: value.to_owned() });
    }
    Ok(url)
}

/// KakaoPay's merchant codes are ten letters and digits.
const KAKAOPAY_CID_MAX: usize = 10;

/// A secret from a file: its first line, without the line's end.
fn read_secret(flag: &'static str, path: &std::path::Path) -> Result<SecretString, ConfigError> {
    let failed = |reason: String| ConfigError::SecretFile { flag, path: path.to_owned(), reason };
    let text = std::fs::read_to_string(path).map_err(|error| failed(error.to_string()))?;
    let secret = text.lines().next().unwrap_or_default().trim();
    if secret.is_empty() {
        return Err(failed("it is empty".to_owned()));
    }
    Ok(SecretString::from(secret.to_owned()))
}

/// The shortest key that signs customers' cookies: what HMAC-SHA256's key
/// derivation takes as 256 bits.
pub const CUSTOMER_KEY_MIN: usize = 32;

/// A signing key from a file: its first line, at least `CUSTOMER_KEY_MIN` bytes.
fn read_key(flag: &'static str, path: &std::path::Path) -> Result<SecretString, ConfigError> {
    let key = read_secret(flag, path)?;
    if key.expose_secret().len() < CUSTOMER_KEY_MIN {
        let reason = format!("it is shorter than {CUSTOMER_KEY_MIN} characters (try `openssl rand -hex 32`)");
        return Err(ConfigError::SecretFile { flag, path: path.to_owned(), reason });
    }
    Ok(key)
}

fn human(duration: Duration) -> humantime::FormattedDuration {
    humantime::format_duration(duration)
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Parses `500ms`, `15s`, `2m`, `1h 30m`.
pub fn parse_duration(value: &str) -> Result<Duration, String> {
    humantime::parse_duration(value).map_err(|error| format!("{error} (examples: 500ms, 15s, 2m)"))
}

/// The keys of customers' cookies, as read from their files.
#[derive(Debug, Clone)]
pub struct CustomerKeyFiles {
    /// Signs every cookie issued, and verifies.
    pub current: SecretString,
    /// Only verifies: the key before the current one, while its cookies are about.
    pub previous: Option<SecretString>,
}

/// The origins the page's Content-Security-Policy allows the PG's SDK, by
/// what it may do from each; all from configuration, none written in code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SdkOrigins {
    /// Where the SDK's script comes from (`script-src`).
    pub script: Option<String>,
    /// Where its payment window may be framed from (`frame-src`).
    pub frames: Vec<String>,
    /// What it may connect to (`connect-src`).
    pub connections: Vec<String>,
    /// Where it may load images from (`img-src`).
    pub images: Vec<String>,
    /// Where it may load style sheets from (`style-src`).
    pub styles: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_match_the_design_and_pass() {
        let config = ServerConfig::defaults();
        assert_eq!(config.pg_connect_timeout, Duration::from_secs(3));
        assert_eq!(config.pg_read_timeout, Duration::from_secs(60));
        assert_eq!(config.pg_max_concurrency, Concurrency::Auto);
        assert_eq!(config.page_config(), PageConfig::DEFAULT);
        assert_eq!(config.validate(), Ok(()));
    }

    #[test]
    fn an_order_id_prefix_fits_the_pgs_order_id_and_strays_are_refunded_or_reported() {
        let with = |prefix: &str| ServerConfig::parse_from(["payonce-server", "--order-id-prefix", prefix]).validate();
        assert_eq!(with("shop-2_"), Ok(()));
        assert_eq!(with(&"p".repeat(32)), Ok(()));
        for bad in ["", "shop 2", "ord/", "가게_", &"p".repeat(33)] {
            assert_eq!(with(bad), Err(ConfigError::InvalidOrderIdPrefix(bad.to_owned())), "{bad:?}");
        }
        assert_eq!(ServerConfig::defaults().order_id_prefix, "ord_");
        assert_eq!(ServerConfig::defaults().reconcile_strays, StrayPolicy::Refund);
        let report = ServerConfig::parse_from(["payonce-server", "--reconcile-strays", "report"]);
        assert_eq!(report.reconcile_strays, StrayPolicy::Report);
        assert!(ServerConfig::try_parse_from(["payonce-server", "--reconcile-strays", "ignore"]).is_err());
    }

    #[test]
    fn the_sdks_origins_are_origins() {
        for flag in ["pg-window-origins", "pg-connect-origins", "pg-img-origins", "pg-style-origins"] {
            let with = |origins: &str| ServerConfig::parse_from(["payonce-server", &format!("--{flag}"), origins]);
            assert_eq!(with("https://pay.toss.im,http://127.0.0.1:9090").validate(), Ok(()), "{flag}");
            for bad in ["https://pay.toss.im/", "https://pay.toss.im/window", "pay.toss.im", "ftp://pay.toss.im"] {
                let error = ConfigError::InvalidOrigin { flag, value: bad.to_owned() };
                assert_eq!(with(bad).validate(), Err(error), "{flag} {bad}");
            }
        }
    }

    #[test]
    fn the_sdk_frames_from_its_own_origin_and_the_window_origins_and_nothing_more_unless_told() {
        let config = ServerConfig::parse_from([
            "payonce-server",
            "--pg-sdk-url",
            "https://js.tosspayments.com/v2/standard",
            "--pg-window-origins",
            "https://pay.toss.im,https://js.tosspayments.com",
            "--pg-connect-origins",
            "https://log.tosspayments.com",
        ]);
        let origins = config.payment_sdk_origins();
        assert_eq!(origins.script.as_deref(), Some("https://js.tosspayments.com"));
        assert_eq!(origins.frames, ["https://js.tosspayments.com", "https://pay.toss.im"], "each once");
        assert_eq!(origins.connections, ["https://log.tosspayments.com"]);
        assert!(origins.images.is_empty() && origins.styles.is_empty());
    }

    #[test]
    fn durations_read_the_way_people_write_them() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("15s"), Ok(Duration::from_secs(15)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("15").is_err());
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn a_checking_window_shorter_than_the_pg_timeout_is_refused_with_the_numbers() {
        let config = ServerConfig::parse_from(["payonce-server", "--poll-attempts", "10", "--pg-read-timeout", "60s"]);
        let error = config.validate().unwrap_err();
        let message = error.to_string();
        assert!(matches!(error, ConfigError::CheckingWindowTooShort { .. }));
        assert!(message.contains("= 35s"), "{message}");
        assert!(message.contains("= 1m 3s"), "{message}");
    }

    #[test]
    fn a_longer_read_timeout_needs_a_longer_window() {
        let config = ServerConfig::parse_from(["payonce-server", "--pg-read-timeout", "90s"]);
        assert!(config.validate().is_err());
        let config = ServerConfig::parse_from(["payonce-server", "--pg-read-timeout", "90s", "--poll-attempts", "40"]);
        assert_eq!(config.validate(), Ok(()));
    }

    #[test]
    fn the_concurrency_is_a_number_or_auto() {
        let auto = ServerConfig::parse_from(["payonce-server", "--pg-max-concurrency", "auto"]);
        assert_eq!(auto.pg_max_concurrency, Concurrency::Auto);
        assert!(ServerConfig::try_parse_from(["payonce-server", "--pg-max-concurrency", "0"]).is_err());
        assert!(ServerConfig::try_parse_from(["payonce-server", "--pg-max-concurrency", "lots"]).is_err());
    }

    #[test]
    fn zero_durations_and_bad_urls_are_refused() {
        let config = ServerConfig::parse_from(["payonce-server", "--poll-interval", "0s"]);
        assert_eq!(config.validate(), Err(ConfigError::ZeroDuration { flag: "poll-interval" }));
        let config = ServerConfig::parse_from(["payonce-server", "--pg-url", "localhost:9090"]);
        assert!(matches!(config.validate(), Err(ConfigError::InvalidUrl { flag: "pg-url", .. })));
        let config = ServerConfig::parse_from(["payonce-server", "--pg-sdk-url", "/v2/standard"]);
        assert!(matches!(config.validate(), Err(ConfigError::InvalidUrl { flag: "pg-sdk-url", .. })));
    }

    #[test]
    fn the_sdk_comes_from_the_pg_unless_told_otherwise_and_its_origin_is_what_the_csp_allows() {
        let config = ServerConfig::parse_from(["payonce-server", "--pg-url", "http://127.0.0.1:9090/"]);
        assert_eq!(config.payment_sdk().url, "http://127.0.0.1:9090/v2/standard");
        assert_eq!(config.payment_sdk_origin().as_deref(), Some("http://127.0.0.1:9090"));
        let live = ServerConfig::parse_from([
            "payonce-server",
            "--pg-url",
            "https://api.tosspayments.com",
            "--pg-sdk-url",
            "https://js.tosspayments.com/v2/standard",
            "--pg-client-key",
            "live_ck_abc",
        ]);
        assert_eq!(live.payment_sdk().client_key, "live_ck_abc");
        assert_eq!(live.payment_sdk_origin().as_deref(), Some("https://js.tosspayments.com"));
    }

    fn credentials(args: &[&str]) -> Result<(), ConfigError> {
        ServerConfig::parse_from(std::iter::once("payonce-server").chain(args.iter().copied())).validate()
    }

    #[test]
    fn the_secret_key_goes_in_the_clear_only_to_a_pg_on_this_machine() {
        assert_eq!(credentials(&["--pg-url", "http://127.0.0.1:9090"]), Ok(()));
        assert_eq!(credentials(&["--pg-url", "http://localhost:9090"]), Ok(()));
        assert_eq!(credentials(&["--pg-url", "http://[::1]:9090"]), Ok(()));
        let plain = ["--pg-url", "http://pg.example.invalid", "--pg-secret-key", "test_sk_shop"];
        assert_eq!(
            credentials(&plain),
            Err(ConfigError::PlainHttpPg { flag: "pg-url", url: "http://pg.example.invalid".into() })
        );
        assert_eq!(credentials(&["--pg-url", "https://pg.example.invalid", "--pg-secret-key", "test_sk_shop"]), Ok(()));
    }

    #[test]
    fn a_forgotten_key_is_refused_instead_of_becoming_the_fake_pgs() {
        let error = credentials(&["--pg-url", "https://api.tosspayments.com"]).unwrap_err();
        assert_eq!(
            error,
            ConfigError::NoSecretKey { key_flag: "pg-secret-key", url: "https://api.tosspayments.com".into() }
        );
        assert!(error.to_string().contains("--pg-secret-key-file"), "{error}");
    }

    #[test]
    fn the_kakaopay_key_goes_where_tosss_does_and_its_cid_is_checked() {
        assert_eq!(credentials(&["--kakaopay-url", "http://127.0.0.1:9091"]), Ok(()));
        assert_eq!(
            credentials(&["--kakaopay-url", "https://open-api.kakaopay.com"]),
            Err(ConfigError::NoSecretKey {
                key_flag: "kakaopay-secret-key",
                url: "https://open-api.kakaopay.com".into()
            })
        );
        let live = ["--kakaopay-url", "https://open-api.kakaopay.com", "--kakaopay-secret-key", "DEVKEY0123"];
        assert_eq!(credentials(&live), Ok(()));
        assert_eq!(
            credentials(&["--kakaopay-url", "http://kakaopay.example.invalid", "--kakaopay-secret-key", "DEVKEY0123"]),
            Err(ConfigError::PlainHttpPg { flag: "kakaopay-url", url: "http://kakaopay.example.invalid".into() })
        );
        for cid in ["", "TC0ONETIME1", "TC0 ONETIM"] {
            let args = ["--kakaopay-url", "http://127.0.0.1:9091", "--kakaopay-cid", cid];
            assert_eq!(credentials(&args), Err(ConfigError::InvalidKakaoPayCid(cid.into())), "{cid:?}");
        }
        assert!(matches!(
            credentials(&["--kakaopay-url", "ftp://x"]),
            Err(ConfigError::InvalidUrl { flag: "kakaopay-url", .. })
        ));
    }

    #[test]
    fn a_live_key_goes_only_to_toss_over_https() {
        let live = |url| credentials(&["--pg-url", url, "--pg-secret-key", "live_sk_shop"]);
        assert_eq!(live("https://api.tosspayments.com"), Ok(()));
        assert_eq!(
            live("https://api.tosspayments.com.example"),
            Err(ConfigError::LiveKeyOffToss("https://api.tosspayments.com.example".into()))
        );
        assert_eq!(live("http://127.0.0.1:9090"), Err(ConfigError::LiveKeyOffToss("http://127.0.0.1:9090".into())));
        assert_eq!(
            live("http://api.tosspayments.com"),
            Err(ConfigError::PlainHttpPg { flag: "pg-url", url: "http://api.tosspayments.com".into() })
        );
    }

    #[test]
    fn secrets_never_show_in_debug_output() {
        let config = ServerConfig::parse_from([
            "payonce-server",
            "--pg-url",
            "https://api.tosspayments.com",
            "--pg-secret-key",
            "live_sk_never_printed",
            "--admin-token",
            "token-never-printed",
            "--db",
            "postgres://shop:password-never-printed@db.internal/shop",
        ]);
        let printed = format!("{config:?}");
        for secret in ["live_sk_never_printed", "token-never-printed", "password-never-printed"] {
            assert!(!printed.contains(secret), "{secret} in {printed}");
        }
        let client = crate::pg::PgClient::new(&config.pg_url, &config.pg_secret_key, config.pg_transport());
        let printed = format!("{client:?}");
        assert!(!printed.contains("Basic"), "the Basic header in {printed}");
    }

    #[test]
    fn secrets_are_read_from_their_files_first_line() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("pg-secret-key");
        let token = dir.path().join("admin-token");
        std::fs::write(&key, "live_sk_from_file\n").unwrap();
        std::fs::write(&token, "token-from-file-of-32-characters-or-more\r\n").unwrap();
        let mut config = ServerConfig::parse_from([
            "payonce-server",
            "--pg-url",
            "https://api.tosspayments.com",
            "--pg-secret-key-file",
            key.to_str().unwrap(),
            "--admin-token-file",
            token.to_str().unwrap(),
        ]);
        config.read_secret_files().unwrap();
        assert_eq!(config.pg_secret_key.expose_secret(), "live_sk_from_file");
        assert_eq!(
            config.admin_token.as_ref().map(ExposeSecret::expose_secret),
            Some("token-from-file-of-32-characters-or-more")
        );
        assert_eq!(config.validate(), Ok(()));
    }

    #[test]
    fn customer_cookie_keys_come_from_files_of_at_least_32_characters() {
        let dir = tempfile::tempdir().unwrap();
        let (current, previous, short) =
            (dir.path().join("current"), dir.path().join("previous"), dir.path().join("short"));
        std::fs::write(&current, format!("{}\n", "c".repeat(64))).unwrap();
        std::fs::write(&previous, "p".repeat(32)).unwrap();
        std::fs::write(&short, "p".repeat(31)).unwrap();
        let with = |files: &[&std::path::PathBuf]| {
            let mut args = vec!["payonce-server".to_owned()];
            for (flag, file) in ["--customer-key-file", "--customer-key-previous-file"].iter().zip(files) {
                args.extend([(*flag).to_owned(), file.display().to_string()]);
            }
            let mut config = ServerConfig::try_parse_from(args)?;
            Ok::<_, clap::Error>(config.read_secret_files().map(|()| config.customer_keys))
        };

        let keys = with(&[&current, &previous]).unwrap().unwrap().expect("keys from files");
        assert_eq!(keys.current.expose_secret(), "c".repeat(64));
        assert_eq!(keys.previous.as_ref().map(|key| key.expose_secret().to_owned()), Some("p".repeat(32)));
        assert!(with(&[]).unwrap().unwrap().is_none(), "no file: the database's key");
        let Err(ConfigError::SecretFile { flag, reason, .. }) = with(&[&current, &short]).unwrap() else {
            panic!("a short previous key is refused")
        };
        assert_eq!(flag, "customer-key-previous-file");
        assert!(reason.contains("shorter than 32"), "{reason}");
        let previous_alone = ServerConfig::try_parse_from([
            "payonce-server",
            "--customer-key-previous-file",
            previous.to_str().unwrap(),
        ]);
        assert!(previous_alone.is_err(), "a previous key without a current one");
    }

    #[test]
    fn a_missing_or_empty_secret_file_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "\n").unwrap();
        let mut config = ServerConfig::parse_from(["payonce-server", "--admin-token-file", empty.to_str().unwrap()]);
        let error = config.read_secret_files().unwrap_err();
        assert!(
            matches!(&error, ConfigError::SecretFile { flag: "admin-token-file", reason, .. } if reason == "it is empty"),
            "{error}"
        );
        let missing = dir.path().join("missing");
        let mut config =
            ServerConfig::parse_from(["payonce-server", "--pg-secret-key-file", missing.to_str().unwrap()]);
        let error = config.read_secret_files().unwrap_err();
        assert!(error.to_string().starts_with("cannot read --pg-secret-key-file"), "{error}");
        assert!(
            ServerConfig::try_parse_from(["payonce-server", "--admin-token", "t", "--admin-token-file", "f"]).is_err()
        );
    }

    #[test]
    fn a_weak_admin_token_refuses_to_start() {
        assert_eq!(credentials(&["--admin-token", "0123456789abcdef0123456789abcdef"]), Ok(()));
        assert_eq!(credentials(&["--admin-token", ""]), Ok(()), "empty is none: the operators' API is off");
        let Err(ConfigError::WeakAdminToken { flag: "admin-token", reason }) =
            credentials(&["--admin-token", "test-admin-token"])
        else {
            panic!("a short token is refused")
        };
        assert!(reason.contains("shorter than 32"), "{reason}");
        let Err(ConfigError::WeakAdminToken { reason, .. }) = credentials(&["--admin-token", &"xy".repeat(20)]) else {
            panic!("a token of two characters is refused")
        };
        assert!(reason.contains("different characters"), "{reason}");
        let dir = tempfile::tempdir().unwrap();
        let token = dir.path().join("admin-token");
        std::fs::write(&token, "short\n").unwrap();
        let mut config = ServerConfig::parse_from(["payonce-server", "--admin-token-file", token.to_str().unwrap()]);
        config.read_secret_files().unwrap();
        let error = config.validate().unwrap_err();
        assert!(matches!(error, ConfigError::WeakAdminToken { flag: "admin-token-file", .. }), "{error}");
        assert!(error.to_string().contains("--admin-token-file"), "{error}");
    }

    #[test]
    fn operators_come_from_their_file_with_the_admin_token_as_one_more() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("operators");
        let minseo = "minseo-token-0123456789abcdefghijklmnop";
        let line = crate::operators::file_line("minseo", "read-only", minseo).unwrap();
        std::fs::write(&file, format!("# operators\n{line}\n")).unwrap();
        let admin = "admin-token-0123456789abcdefghijklmnop";
        let mut config = ServerConfig::parse_from([
            "payonce-server",
            "--operators-file",
            file.to_str().unwrap(),
            "--admin-token",
            admin,
        ]);
        config.read_secret_files().unwrap();
        assert_eq!(config.validate(), Ok(()));
        let operators = config.operators().unwrap();
        assert_eq!(operators.signed_in(minseo).map(|operator| operator.name.as_str()), Some("minseo"));
        assert_eq!(operators.signed_in(admin).map(|operator| operator.name.as_str()), Some("operator"));
        config.admin_token = Some(minseo.into());
        let error = config.validate().unwrap_err();
        assert!(matches!(error, ConfigError::AdminTokenClash(_)), "{error}");
    }

    #[test]
    fn a_bad_operators_file_refuses_to_start_naming_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("operators");
        let digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        std::fs::write(&file, format!("# operators\njiwoo refund {digest}\nminseo admin {digest}\n")).unwrap();
        let mut config = ServerConfig::parse_from(["payonce-server", "--operators-file", file.to_str().unwrap()]);
        let error = config.read_secret_files().unwrap_err();
        assert_eq!(
            error,
            ConfigError::OperatorsFile {
                path: file.clone(),
                error: crate::operators::OperatorsFileError::UnknownRole { line: 3, role: "admin".to_owned() }
            }
        );
        assert!(error.to_string().contains("line 3: unknown role \"admin\""), "{error}");
        std::fs::write(&file, "\n# nobody\n").unwrap();
        let error = config.read_secret_files().unwrap_err();
        assert!(error.to_string().ends_with("it names no operator"), "{error}");
        let mut missing =
            ServerConfig::parse_from(["payonce-server", "--operators-file", dir.path().join("nope").to_str().unwrap()]);
        assert!(missing.read_secret_files().unwrap_err().to_string().starts_with("cannot read --operators-file"));
    }

    #[test]
    fn admin_hosts_are_host_names() {
        assert_eq!(credentials(&["--admin-hosts", "ops.shop.internal,payonce-admin"]), Ok(()));
        for bad in ["ops.shop.internal:3001", "http://ops", "ops..internal", "*.shop"] {
            assert_eq!(
                credentials(&["--admin-hosts", bad]),
                Err(ConfigError::InvalidAdminHost(bad.to_owned())),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_public_url_defaults_to_the_listen_address() {
        let config = ServerConfig::parse_from(["payonce-server", "--listen", "127.0.0.1:4000"]);
        assert_eq!(config.public_base_url(), "http://127.0.0.1:4000");
        let config = ServerConfig::parse_from(["payonce-server", "--public-url", "https://shop.example/"]);
        assert_eq!(config.public_base_url(), "https://shop.example");
    }
}

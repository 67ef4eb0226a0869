//! The flags, with their `PAYONCE_*` environment equivalents and their parsers:
//! what the server is told, before any check or anything derived from it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use clap::Parser;
use payonce_rules::settlement::OrphanPolicy;
use secrecy::SecretString;

use crate::catalog::Catalog;
use crate::db::DbLocation;
use crate::operators::Operators;
use crate::shops::Shops;

/// The payonce order server.
#[derive(Debug, Clone, Parser)]
#[command(name = "payonce-server", version, about)]
pub struct ServerConfig {
    /// Address to listen on.
    #[arg(long, env = "PAYONCE_LISTEN", default_value = "127.0.0.1:3000")]
    pub listen: SocketAddr,

    /// How long a client may take to send a request's head, and then its body;
    /// a slower one is cut off rather than holding a connection open. A new
    /// connection must bring its first request within it too.
    #[arg(long, env = "PAYONCE_CLIENT_TIMEOUT", default_value = "10s", value_parser = parse_duration)]
    pub client_timeout: Duration,

    /// Most connections each listener holds open; past it, a new one is
    /// answered 429 and closed. Keep it under the process's open-files limit
    /// (`ulimit -n`), less the database pool's and the PG client's.
    #[arg(long, env = "PAYONCE_MAX_CONNECTIONS", default_value_t = 800, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub max_connections: usize,

    /// Most connections one client (an address; an IPv6 client's network) holds
    /// open; past it, 429 and closed. The shop's trusted proxies count only in
    /// `--max-connections`. A browser opens six at most to one shop.
    #[arg(long, env = "PAYONCE_MAX_CONNECTIONS_PER_CLIENT", default_value_t = 32, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub max_connections_per_client: usize,

    /// POSTs (orders, confirms) a customer may make per minute; 0 turns the limit off.
    #[arg(long, env = "PAYONCE_RATE_LIMIT_CUSTOMER", default_value_t = 30)]
    pub rate_limit_customer: u32,

    /// POSTs one client address may make per minute, all its customers together; 0 turns it off.
    #[arg(long, env = "PAYONCE_RATE_LIMIT_ADDRESS", default_value_t = 600)]
    pub rate_limit_address: u32,

    /// Customers one client address may be made per minute: each request
    /// without the shop's cookie makes one. A browser keeps the cookie its
    /// first answer sets, so a visitor is one; a client that never keeps it is
    /// a new customer each time, and this bounds what it can create (orders,
    /// checks) however it spreads them. Over it, 429 with `Retry-After`. 0
    /// turns it off.
    #[arg(long, env = "PAYONCE_RATE_LIMIT_NEW_CUSTOMERS", default_value_t = 60)]
    pub rate_limit_new_customers: u32,

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

    /// How much of an IPv6 address is one client, for every per-client limit:
    /// a host is routinely given a whole /64 (a site a /56 or a /48), and
    /// counted address by address it would have a bucket for each.
    #[arg(long, env = "PAYONCE_IPV6_CLIENT_PREFIX", default_value_t = 64, value_parser = clap::value_parser!(u8).range(32..=128))]
    pub ipv6_client_prefix: u8,

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
    /// current one: until `--customer-key-previous-until`, cookies it signed
    /// are still their customers', and are signed again with the current key
    /// as they come back. Drop it after that.
    #[arg(
        long,
        env = "PAYONCE_CUSTOMER_KEY_PREVIOUS_FILE",
        requires_all = ["customer_key_file", "customer_key_previous_until"]
    )]
    pub customer_key_previous_file: Option<PathBuf>,

    /// Until when the previous key's cookies are their customers' (RFC 3339,
    /// `2027-01-31T00:00:00Z`). After it they name nobody and are never signed
    /// again: a cookie forged with a leaked previous key stops there, instead
    /// of being signed with the new key and outliving the rotation.
    #[arg(
        long,
        env = "PAYONCE_CUSTOMER_KEY_PREVIOUS_UNTIL",
        requires = "customer_key_previous_file",
        value_parser = parse_time
    )]
    pub customer_key_previous_until: Option<SystemTime>,

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

    /// A file holding `--db` (one line), read at start-up: a `postgres://` URL's
    /// password in a flag shows in `ps`, one in a file does not.
    #[arg(long, env = "PAYONCE_DB_URL_FILE", conflicts_with = "db")]
    pub db_url_file: Option<PathBuf>,

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

    /// The merchant's PG client key, given to the page for the PG's SDK
    /// (public). Toss's test and live keys come in pairs: `test_ck_` with
    /// `test_sk_`, `live_ck_` with `live_sk_`; a mixed pair is refused.
    #[arg(long, env = "PAYONCE_PG_CLIENT_KEY", default_value = "test_ck_payonce_fake_pg_0000")]
    pub pg_client_key: String,

    /// Takes payments with test keys (Toss's `test_…`, KakaoPay's cid
    /// `TC0ONETIME`, the fake PG's) at an https `--public-url`, as a staging
    /// shop does. Without it such a server refuses to start: its orders would
    /// be PAID while no money moves. With it, every page and `/api/config` say
    /// that payments here are tests.
    #[arg(long, env = "PAYONCE_ALLOW_TEST_KEYS")]
    pub allow_test_keys: bool,

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
    /// and looked up at once, so recovery looks up a payment the PG has not
    /// settled yet four times less often. Without it, webhooks that come are
    /// still taken.
    #[arg(long, env = "PAYONCE_PG_WEBHOOKS")]
    pub pg_webhooks: bool,

    /// A file whose first line is the secret in the PG's webhook URL, at least
    /// 32 characters of randomness (`openssl rand -hex 32`): events are then
    /// taken at `<public-url>/api/webhooks/toss/<secret>` only (register that
    /// URL with the PG), and anyone else's sends find 404 under a small limit
    /// of their own, never the PG's. A shop at an https address takes no
    /// webhooks without it, and `--pg-webhooks` there needs it.
    #[arg(long, env = "PAYONCE_PG_WEBHOOK_SECRET_FILE")]
    pub pg_webhook_secret_file: Option<PathBuf>,

    /// The secret read from `--pg-webhook-secret-file`.
    #[arg(skip)]
    pub pg_webhook_secret: Option<SecretString>,

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
    #[arg(long, alias = "pg-max-concurrency", env = "PAYONCE_PG_LIMIT", default_value = "auto", value_parser = parse_concurrency)]
    pub pg_limit: Concurrency,

    /// With `--pg-limit auto`: the limit changes at most once per window.
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
    #[arg(long, alias = "reconcile-strays", env = "PAYONCE_RECONCILE_ORPHANS", default_value = "refund", value_parser = parse_orphan_policy)]
    pub reconcile_orphans: OrphanPolicy,

    /// How the shop's order ids begin (1 to 32 of A-Z, a-z, 0-9, `_`, `-`).
    /// Reconciliation refunds an orphan charge only when its orderId has it: give
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

    /// The shops whose own backends create checkouts through the shop API
    /// (`/v1/checkouts`): a TOML file of `[[shop]]` tables, each with its
    /// name, the SHA-256 digests of its API keys, the origins its return URLs
    /// may use, its order-id prefix and the PGs it takes (docs/shops.md).
    /// Without it the shop API is off.
    #[arg(long, env = "PAYONCE_SHOPS_FILE")]
    pub shops_file: Option<PathBuf>,

    /// The shops read from `--shops-file`.
    #[arg(skip)]
    pub shops: Shops,

    /// The built-in cart's products: a TOML or JSON file of `[[product]]`
    /// entries (docs/shops.md). Without it, the demo shop's `catalog.toml`.
    #[arg(long = "catalog", env = "PAYONCE_CATALOG")]
    pub catalog_file: Option<PathBuf>,

    /// The least time a shop may keep a checkout open (`expires_in`). Lower
    /// it only to test expiry quickly.
    #[arg(long, env = "PAYONCE_CHECKOUT_SHORTEST_OPEN", default_value = "60s", value_parser = parse_duration)]
    pub checkout_shortest_open: Duration,

    /// The products read from `--catalog`.
    #[arg(skip)]
    pub catalog: Catalog,

    /// How long an event is sent again to a shop whose endpoint does not
    /// take it, before it is marked failed and operators are alerted.
    #[arg(long, env = "PAYONCE_EVENT_RETRY_WINDOW", default_value = "72h", value_parser = parse_duration)]
    pub event_retry_window: Duration,

    /// The wait after an event's first failed send; each next one doubles,
    /// up to an hour.
    #[arg(long, env = "PAYONCE_EVENT_FIRST_RETRY", default_value = "5s", value_parser = parse_duration)]
    pub event_first_retry: Duration,

    /// How long one send of an event may take, connecting included.
    #[arg(long, env = "PAYONCE_EVENT_TIMEOUT", default_value = "10s", value_parser = parse_duration)]
    pub event_timeout: Duration,

    /// Events sent to one shop at once: a slow shop holds this many sends,
    /// and the others' events go on.
    #[arg(long, env = "PAYONCE_EVENT_SENDS_PER_SHOP", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub event_sends_per_shop: u32,

    /// Host names the admin listener answers to besides IP addresses and
    /// `localhost`, comma-separated (such as `ops.shop.internal`); a request
    /// for any other (a DNS-rebinding page in an operator's browser) is refused.
    #[arg(long, env = "PAYONCE_ADMIN_HOSTS", value_delimiter = ',')]
    pub admin_hosts: Vec<String>,

    /// How long the page waits for the confirm POST before checking instead.
    #[arg(long, env = "PAYONCE_CONFIRM_WAIT", default_value = "15s", value_parser = parse_duration)]
    pub confirm_wait: Duration,

    /// Pause between the page's checks of the order.
    #[arg(long, alias = "poll-interval", env = "PAYONCE_CHECK_INTERVAL", default_value = "2s", value_parser = parse_duration)]
    pub check_interval: Duration,

    /// How many checks the page makes before it says it could not confirm yet.
    #[arg(long, alias = "poll-attempts", env = "PAYONCE_MAX_CHECKS", default_value_t = 25, value_parser = clap::value_parser!(u32).range(1..=1_000))]
    pub max_checks: u32,
}

/// The fake PG's secret key, the default: no real PG accepts it.
pub const FAKE_PG_SECRET_KEY: &str = "test_sk_payonce_fake_pg_0000";

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
            Concurrency::Fixed(limit) => limit,
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
        Ok(limit) if (1..=MAX_FIXED_CONCURRENCY).contains(&limit) => Ok(Concurrency::Fixed(limit)),
        _ => Err(format!("{value:?} is neither a number from 1 to {MAX_FIXED_CONCURRENCY} nor auto")),
    }
}

/// `refund` or `report`, for `--reconcile-orphans`.
fn parse_orphan_policy(text: &str) -> Result<OrphanPolicy, String> {
    match text {
        "refund" => Ok(OrphanPolicy::Refund),
        "report" => Ok(OrphanPolicy::Report),
        other => Err(format!("{other:?} is neither `refund` nor `report`")),
    }
}

impl ServerConfig {
    /// Defaults for everything, as if started with no flags. Tests start from this.
    pub fn defaults() -> Self {
        Self::parse_from(["payonce-server"])
    }
}

/// Parses an RFC 3339 time: `2027-01-31T00:00:00Z`.
pub fn parse_time(value: &str) -> Result<SystemTime, String> {
    humantime::parse_rfc3339_weak(value).map_err(|error| format!("{error} (example: 2027-01-31T00:00:00Z)"))
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
    /// Only verifies: the key before the current one, while its cookies are
    /// about, and until when.
    pub previous: Option<(SecretString, SystemTime)>,
}

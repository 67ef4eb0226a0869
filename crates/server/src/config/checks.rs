//! The checks of the flags: settings under which a payment could be reported
//! wrongly, or a secret go where it does not belong, are refused at start.

use std::path::PathBuf;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};

use super::derived::WebhookDoor;
use super::flags::{FAKE_PG_SECRET_KEY, ServerConfig};
use crate::db::Engine;
use crate::operators::{AdminTokenClash, Operators, OperatorsFileError};

/// Where a live key may go: Toss's API.
const TOSS_API_HOST: &str = "api.tosspayments.com";

/// Why the server refuses a configuration.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error(
        "the page stops checking before the server can finish a payment: confirm-wait {} \
         + check-interval {} x max-checks {max_checks} = {}, but \
         pg-connect-timeout {} + pg-read-timeout {} = {}. \
         Raise --max-checks or --confirm-wait, or lower --pg-read-timeout",
        human(*confirm_wait), human(*check_interval), human(*window), human(*connect), human(*read), human(*connect + *read)
    )]
    CheckingWindowTooShort {
        confirm_wait: Duration,
        check_interval: Duration,
        max_checks: u32,
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
    #[error(
        "--pg-client-key is a {client} key and the secret key a {secret} one: Toss's keys go in pairs, \
         test_ck_ with test_sk_ and live_ck_ with live_sk_ (the client key's default is the fake PG's test key)"
    )]
    KeyPairMismatch { client: KeyKind, secret: KeyKind },
    #[error(
        "{which} takes no money, yet --public-url {public_url:?} is https: customers would be told their orders \
         are paid while nothing is charged. Give live keys, or --allow-test-keys for a staging shop (every page \
         then says that payments are tests)"
    )]
    TestKeysInPublic { which: &'static str, public_url: String },
    #[error("cannot read --{flag} {path:?}: {reason}")]
    SecretFile { flag: &'static str, path: PathBuf, reason: String },
    #[error(
        "--order-id-prefix {0:?} must be 1 to {ORDER_ID_PREFIX_MAX} of A-Z, a-z, 0-9, `_` and `-` (the PG's orderId is at most 64)"
    )]
    InvalidOrderIdPrefix(String),
    #[error("--operators-file {path:?}: {error}")]
    OperatorsFile { path: PathBuf, error: OperatorsFileError },
    #[error("--shops-file {path:?}: {error}")]
    ShopsFile { path: PathBuf, error: crate::shops::ShopsFileError },
    #[error("--catalog {path:?}: {error}")]
    CatalogFile { path: PathBuf, error: crate::catalog::CatalogError },
    #[error("the operators' token of --{flag} is too weak: {reason}")]
    WeakAdminToken { flag: &'static str, reason: String },
    #[error("--admin-token with --operators-file: {0}")]
    AdminTokenClash(AdminTokenClash),
    #[error("--admin-hosts {0:?} is not a host name (letters, digits, `-` and `.`, no port)")]
    InvalidAdminHost(String),
    #[error(
        "--pg-webhooks at an https address needs --pg-webhook-secret-file: at a path anyone can guess, anyone \
         could spend the budget the PG's own events need"
    )]
    WebhooksWithoutSecret,
    #[error(
        "--db names PostgreSQL and --public-url is https, but no --customer-key-file is given: the key that signs \
         customers' cookies would be kept in the database, in the clear beside every customer's id, and anyone who \
         reads it (a backup, a replica) could sign in as any customer. Give every server one key file \
         (`openssl rand -hex 32`)"
    )]
    ClusterWithoutCustomerKey,
}

/// Whether a PG key moves money, by Toss's prefixes: `test_` (`test_ck_`,
/// `test_sk_`, and the payment widget's `test_gck_`, `test_gsk_`) or `live_`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    Test,
    Live,
}

impl std::fmt::Display for KeyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            KeyKind::Test => "test",
            KeyKind::Live => "live",
        })
    }
}

impl KeyKind {
    /// The kind of a Toss key; none for a key of another form (another PG's).
    pub fn of_toss_key(key: &str) -> Option<KeyKind> {
        if key.starts_with("test_") {
            Some(KeyKind::Test)
        } else if key.starts_with("live_") {
            Some(KeyKind::Live)
        } else {
            None
        }
    }
}

/// KakaoPay's merchant code for test payments (its developer guide's).
const KAKAOPAY_TEST_CID: &str = "TC0ONETIME";

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

impl ServerConfig {
    /// Refuses settings under which a payment could be reported wrongly.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (flag, value) in [
            ("pg-connect-timeout", self.pg_connect_timeout),
            ("pg-read-timeout", self.pg_read_timeout),
            ("recovery-interval", self.recovery_interval),
            ("pg-session-lifetime", self.pg_session_lifetime),
            ("kakaopay-session-lifetime", self.kakaopay_session_lifetime),
            ("confirm-wait", self.confirm_wait),
            ("check-interval", self.check_interval),
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
                check_interval: self.check_interval,
                max_checks: self.max_checks,
                window: Duration::from_millis(page.checking_window_ms()),
                connect: self.pg_connect_timeout,
                read: self.pg_read_timeout,
            });
        }
        Ok(())
    }

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
        let (client, secret) = (KeyKind::of_toss_key(&self.pg_client_key), KeyKind::of_toss_key(key));
        if let (Some(client), Some(secret)) = (client, secret)
            && client != secret
        {
            return Err(ConfigError::KeyPairMismatch { client, secret });
        }
        if let Some(kakaopay_url) = &self.kakaopay_url {
            credentials_go_to(("kakaopay-url", "kakaopay-secret-key"), kakaopay_url, &self.kakaopay_secret_key)?;
            let cid = &self.kakaopay_cid;
            if cid.is_empty() || cid.len() > KAKAOPAY_CID_MAX || !cid.bytes().all(|byte| byte.is_ascii_alphanumeric()) {
                return Err(ConfigError::InvalidKakaoPayCid(cid.clone()));
            }
        }
        // Closed only at an https address: there, webhooks need their secret.
        if self.pg_webhooks && matches!(self.webhook_door(), WebhookDoor::Closed) {
            return Err(ConfigError::WebhooksWithoutSecret);
        }
        if let Some(which) = self.test_keys()
            && self.served_over_https()
            && !self.allow_test_keys
        {
            return Err(ConfigError::TestKeysInPublic { which, public_url: self.public_base_url() });
        }
        if self.db.engine() == Engine::Postgres && self.served_over_https() && self.customer_key_file.is_none() {
            return Err(ConfigError::ClusterWithoutCustomerKey);
        }
        Ok(())
    }

    /// Which of the PGs' keys take no money, if any: Toss's (or the fake PG's)
    /// test keys, or KakaoPay's test merchant code.
    pub fn test_keys(&self) -> Option<&'static str> {
        let toss = [self.pg_secret_key.expose_secret(), self.pg_client_key.as_str()];
        if toss.iter().any(|key| KeyKind::of_toss_key(key) == Some(KeyKind::Test)) {
            return Some("a Toss test key (test_...)");
        }
        (self.kakaopay_url.is_some() && self.kakaopay_cid == KAKAOPAY_TEST_CID)
            .then_some("KakaoPay's test cid TC0ONETIME")
    }

    /// Whether this server takes test payments in public (`--allow-test-keys`
    /// at an https address): every page and `/api/config` then say so.
    pub fn test_payments_in_public(&self) -> bool {
        self.allow_test_keys && self.test_keys().is_some() && self.served_over_https()
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

fn human(duration: Duration) -> humantime::FormattedDuration {
    humantime::format_duration(duration)
}

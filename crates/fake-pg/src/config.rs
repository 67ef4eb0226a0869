//! Startup configuration (fixed for the life of the server) and the runtime
//! configuration that `PUT /__admin/config` changes while it runs.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The secret key accepted when none is configured. It has Toss's `test_sk_`
/// prefix so client code that checks the prefix treats it as a test key.
pub const DEFAULT_SECRET_KEY: &str = "test_sk_payonce_fake_pg_0000";

/// The client key the SDK accepts when none is configured, with Toss's `test_ck_` prefix.
pub const DEFAULT_CLIENT_KEY: &str = "test_ck_payonce_fake_pg_0000";

/// Longest latency accepted. A typo such as `300000000` should fail loudly
/// rather than leave a payment in progress for days.
pub const MAX_LATENCY_MS: u64 = 3_600_000;

/// Bounds of `time_scale`: below the lower one timers stop meaning anything,
/// above the upper one an hour of latency would overflow a `Duration` computation.
const TIME_SCALE_RANGE: (f64, f64) = (1e-6, 100.0);

/// Toss does not document its HTTP/2 settings; this is hyper's default, and
/// near the 100 to 128 of common fronts (nginx's is 128).
pub const DEFAULT_HTTP2_MAX_STREAMS: u32 = 200;

/// Everything the server needs to start.
#[derive(Clone, Debug)]
pub struct Config {
    /// The merchant's secret key; confirms authenticate with
    /// `Authorization: Basic base64(secret_key + ":")`.
    pub secret_key: String,
    /// The merchant's client key, public: the page initialises the SDK with it.
    pub client_key: String,
    /// Refuse confirms of paymentKeys that no payment window issued.
    pub strict_sessions: bool,
    /// Multiplies every latency: 1.0 is real time, 0.1 runs ten times faster.
    pub time_scale: f64,
    /// The address clients reach this server at, used in the URLs a Payment
    /// carries (`receipt.url`, `checkout.url`). Defaults to the bound address.
    pub public_url: Option<String>,
    /// Which PG's API this fake speaks: Toss Payments (the default) or KakaoPay.
    pub api: Api,
    /// Most calls one HTTP/2 connection may have in flight at once (its
    /// `SETTINGS_MAX_CONCURRENT_STREAMS`); a client waits for a stream past it.
    pub http2_max_streams: u32,
    /// The part that can change at run time.
    pub runtime: RuntimeConfig,
}

/// Which PG's API the fake speaks. One process speaks one: the other's routes
/// are not served, so a client pointed at the wrong face fails at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Api {
    /// Toss Payments: `/v1/payments/...`, its window, SDK, transactions and webhooks.
    #[default]
    Toss,
    /// KakaoPay's online single payment: `/online/v1/payment/...` and its window.
    KakaoPay,
}

impl std::str::FromStr for Api {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "toss" => Ok(Api::Toss),
            "kakaopay" => Ok(Api::KakaoPay),
            other => Err(format!("{other:?} is not an API this fake speaks; use toss or kakaopay")),
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            secret_key: DEFAULT_SECRET_KEY.to_owned(),
            client_key: DEFAULT_CLIENT_KEY.to_owned(),
            strict_sessions: false,
            time_scale: 1.0,
            public_url: None,
            api: Api::Toss,
            http2_max_streams: DEFAULT_HTTP2_MAX_STREAMS,
            runtime: RuntimeConfig::default(),
        }
    }
}

impl Config {
    /// Checks every field, naming the first one that is out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.secret_key.is_empty() {
            return Err(ConfigError::new("secret_key must not be empty"));
        }
        if self.client_key.is_empty() || !self.client_key.is_ascii() {
            return Err(ConfigError::new("client_key must be non-empty ASCII"));
        }
        if self.secret_key.contains(':') {
            // Basic auth splits on the first colon, so such a key could never match.
            return Err(ConfigError::new("secret_key must not contain ':'"));
        }
        if self.http2_max_streams == 0 {
            return Err(ConfigError::new("http2_max_streams must be at least 1"));
        }
        let (low, high) = TIME_SCALE_RANGE;
        if !(self.time_scale.is_finite() && self.time_scale >= low && self.time_scale <= high) {
            return Err(ConfigError::new(format!(
                "time_scale must be between {low} and {high}, got {}",
                self.time_scale
            )));
        }
        self.runtime.validate()
    }
}

/// The runtime configuration, exactly the JSON of `GET /__admin/config`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RuntimeConfig {
    /// How long a confirm or cancel takes to process, before `time_scale`.
    pub latency_ms: u64,
    /// A share of approvals that take longer.
    pub slow_tail: SlowTail,
    /// How long a lookup (`GET /v1/payments/...`) or a page of the ledger
    /// (`GET /v1/transactions`) takes, before `time_scale`.
    pub lookup_latency_ms: u64,
    /// How long a lookup's answer takes to come back once the payment was
    /// read (a slow reply on the wire), before `time_scale`: it shows the
    /// payment as it was when read, which may have changed by its arrival.
    #[serde(default)]
    pub lookup_answer_delay_ms: u64,
    /// Whether processing goes on when the caller hangs up (as at a real PG).
    pub continue_after_disconnect: bool,
    /// At most this many processings (confirms and cancels) at once for the merchant,
    /// abandoned ones included. `null`: no limit.
    pub contract_limit: Option<u32>,
    /// Seed of the random draws (faults, slow tail), for repeatable runs.
    pub seed: u64,
    /// What a repeated Idempotency-Key is answered with.
    pub replay: ReplayMode,
    /// How a lookup shows a payment whose session expired unconfirmed.
    #[serde(default)]
    pub expired_lookup: ExpiredLookup,
    /// A simulated outage: every API call (confirms, cancels, lookups, listings) is answered 503
    /// at once and nothing is processed. Processings already running go on.
    pub outage: bool,
    /// Processings that have taken their latency wait here while it is on, and
    /// finish when it is turned off: a payment stays "processing" for exactly as
    /// long as a test or a demo needs, however slow the machine.
    #[serde(default)]
    pub hold: bool,
    /// Where the PG sends Toss's webhook events (`PAYMENT_STATUS_CHANGED`) when a
    /// processing changes a payment's status, resent on anything but 200 after
    /// 1, 4, 16, 64, 256, 1024 and 4096 minutes (× `time_scale`). `null`: none.
    #[serde(default)]
    pub webhook_url: Option<String>,
    /// How the SDK opens the payment window.
    #[serde(default)]
    pub window_mode: WindowMode,
    /// Fault rates, each from 0 to 1.
    pub faults: Faults,
}

/// How the SDK opens the payment window.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum WindowMode {
    /// The page leaves for the window, on every device.
    #[default]
    Redirect,
    /// As Toss's SDK: an iframe over the page on a PC (a fine pointer), whose ✕
    /// rejects the promise with `USER_CANCEL`; the page leaves for it on a phone.
    Toss,
}

/// What a repeated Idempotency-Key gets once its first request is complete.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ReplayMode {
    /// As Toss documents: the status and body of the first complete response,
    /// a 500 included, for 15 days.
    #[default]
    Toss,
    /// The payment's outcome: the DONE payment after a charge, even if the first
    /// caller got a 500 or a reset. Kinder than Toss; for experiments only.
    Outcome,
}

/// How a lookup shows a payment whose session expired before any confirm.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ExpiredLookup {
    /// `status: EXPIRED`, as Toss documents.
    #[default]
    Shown,
    /// 404 `NOT_FOUND_PAYMENT`, as a PG that no longer keeps an expired
    /// session would answer: the order server must settle it all the same.
    NotFound,
}

impl std::str::FromStr for ReplayMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "toss" => Ok(ReplayMode::Toss),
            "outcome" => Ok(ReplayMode::Outcome),
            other => Err(format!("{other:?} is not a replay mode; use toss or outcome")),
        }
    }
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        Self {
            latency_ms: 300,
            slow_tail: SlowTail::default(),
            lookup_latency_ms: 0,
            lookup_answer_delay_ms: 0,
            continue_after_disconnect: true,
            contract_limit: None,
            seed: 1,
            replay: ReplayMode::Toss,
            expired_lookup: ExpiredLookup::Shown,
            outage: false,
            hold: false,
            webhook_url: None,
            window_mode: WindowMode::Redirect,
            faults: Faults::default(),
        }
    }
}

/// A share of approvals that take `latency_ms` instead of the usual latency.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SlowTail {
    /// Share of approvals, 0 to 1.
    pub fraction: f64,
    pub latency_ms: u64,
}

impl Default for SlowTail {
    fn default() -> Self {
        Self { fraction: 0.0, latency_ms: 20_000 }
    }
}

/// Fault rates, each the probability (0 to 1) that a request meets the fault.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Faults {
    /// Processing ends in 403 `REJECT_CARD_PAYMENT` (a cancel: 400
    /// `PROVIDER_ERROR`); nothing is charged or refunded.
    pub decline: f64,
    /// 500 `FAILED_INTERNAL_SYSTEM_PROCESSING` at once; nothing is processed.
    pub error_500: f64,
    /// 429 `TOO_MANY_REQUESTS` at once; nothing is processed.
    pub rate_limit_429: f64,
    /// 429 `TOO_MANY_REQUESTS`, nothing processed, answered to a confirm only
    /// once another request of its key has processed the payment (at most a
    /// minute): a slow refusal that a retry overtook.
    #[serde(default)]
    pub rate_limit_429_held: f64,
    /// 403 `FORBIDDEN_CONSECUTIVE_REQUEST` at once; nothing is processed.
    pub forbidden_consecutive: f64,
    /// Processing completes and charges (or refunds), then the connection is reset.
    pub reset_after_charge: f64,
    /// Processing completes and charges (or refunds), then the answer is 500
    /// `FAILED_INTERNAL_SYSTEM_PROCESSING`.
    pub error_500_after_charge: f64,
    /// The connection is reset at once; nothing is processed.
    pub reset_before_processing: f64,
    /// A confirm fails inside the PG: 500 `FAILED_INTERNAL_SYSTEM_PROCESSING`,
    /// nothing charged, the payment still open, and the answer stored against
    /// the key as Toss stores a first response: every repeat gets it again.
    #[serde(default)]
    pub error_500_stored: f64,
}

impl Faults {
    fn rates(&self) -> [(&'static str, f64); 9] {
        [
            ("faults.decline", self.decline),
            ("faults.error_500", self.error_500),
            ("faults.rate_limit_429", self.rate_limit_429),
            ("faults.forbidden_consecutive", self.forbidden_consecutive),
            ("faults.reset_after_charge", self.reset_after_charge),
            ("faults.error_500_after_charge", self.error_500_after_charge),
            ("faults.reset_before_processing", self.reset_before_processing),
            ("faults.error_500_stored", self.error_500_stored),
            ("faults.rate_limit_429_held", self.rate_limit_429_held),
        ]
    }
}

impl RuntimeConfig {
    /// Checks every field, naming the first one that is out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_rate("slow_tail.fraction", self.slow_tail.fraction)?;
        for (name, rate) in self.faults.rates() {
            check_rate(name, rate)?;
        }
        if let Some(url) = &self.webhook_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(ConfigError::new(format!("webhook_url must be an http(s) URL, got {url:?}")));
        }
        for (name, latency) in [
            ("latency_ms", self.latency_ms),
            ("slow_tail.latency_ms", self.slow_tail.latency_ms),
            ("lookup_latency_ms", self.lookup_latency_ms),
            ("lookup_answer_delay_ms", self.lookup_answer_delay_ms),
        ] {
            if latency > MAX_LATENCY_MS {
                return Err(ConfigError::new(format!(
                    "{name} must be at most {MAX_LATENCY_MS} (one hour), got {latency}"
                )));
            }
        }
        Ok(())
    }

    /// This configuration with the fields of `patch` laid over it. Nested
    /// objects merge field by field, so `{"faults":{"decline":1}}` changes one
    /// rate; `null` clears `contract_limit`. The result is validated.
    pub fn merged(&self, patch: &Value) -> Result<RuntimeConfig, ConfigError> {
        if !patch.is_object() {
            return Err(ConfigError::new("the body must be a JSON object with the fields to change"));
        }
        let mut merged = serde_json::to_value(self)
            .map_err(|err| ConfigError::new(format!("cannot encode the configuration: {err}")))?;
        merge_into(&mut merged, patch);
        let config: RuntimeConfig = serde_path_to_error::deserialize(merged).map_err(|err| {
            let path = err.path().to_string();
            ConfigError::new(format!("{path}: {}", err.into_inner()))
        })?;
        config.validate()?;
        Ok(config)
    }
}

fn merge_into(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                match target.get_mut(key) {
                    Some(existing) if existing.is_object() && value.is_object() => merge_into(existing, value),
                    _ => {
                        target.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (target, patch) => *target = patch.clone(),
    }
}

fn check_rate(name: &str, rate: f64) -> Result<(), ConfigError> {
    if rate.is_finite() && (0.0..=1.0).contains(&rate) {
        Ok(())
    } else {
        Err(ConfigError::new(format!("{name} must be between 0 and 1, got {rate}")))
    }
}

/// A configuration value out of range, or a field that does not exist.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(String);

impl ConfigError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_serialize_to_the_documented_admin_json() {
        let expected = json!({
            "latency_ms": 300,
            "slow_tail": {"fraction": 0.0, "latency_ms": 20000},
            "lookup_latency_ms": 0,
            "lookup_answer_delay_ms": 0,
            "continue_after_disconnect": true,
            "contract_limit": null,
            "seed": 1,
            "replay": "toss",
            "outage": false,
            "hold": false,
            "webhook_url": null,
            "window_mode": "redirect",
            "faults": {"decline": 0.0, "error_500": 0.0, "rate_limit_429": 0.0,
                       "forbidden_consecutive": 0.0, "reset_after_charge": 0.0,
                       "error_500_after_charge": 0.0, "reset_before_processing": 0.0,
                       "error_500_stored": 0.0, "rate_limit_429_held": 0.0},
            "expired_lookup": "shown"
        });
        assert_eq!(serde_json::to_value(RuntimeConfig::default()).unwrap(), expected);
    }

    #[test]
    fn merge_changes_only_the_nested_field_given() {
        let merged = RuntimeConfig::default().merged(&json!({"faults": {"decline": 1}})).unwrap();
        let mut expected = RuntimeConfig::default();
        expected.faults.decline = 1.0;
        assert_eq!(merged, expected);
    }

    #[test]
    fn merge_sets_and_clears_the_contract_limit() {
        let limited = RuntimeConfig::default().merged(&json!({"contract_limit": 3, "latency_ms": 10})).unwrap();
        assert_eq!(limited.contract_limit, Some(3));
        assert_eq!(limited.latency_ms, 10);
        let cleared = limited.merged(&json!({"contract_limit": null})).unwrap();
        assert_eq!(cleared.contract_limit, None);
        assert_eq!(cleared.latency_ms, 10);
    }

    #[test]
    fn merge_rejects_rates_outside_zero_to_one() {
        let err = RuntimeConfig::default().merged(&json!({"faults": {"error_500": 1.5}})).unwrap_err();
        assert!(err.to_string().contains("faults.error_500"), "{err}");
        let err = RuntimeConfig::default().merged(&json!({"slow_tail": {"fraction": -0.1}})).unwrap_err();
        assert!(err.to_string().contains("slow_tail.fraction"), "{err}");
    }

    #[test]
    fn merge_names_unknown_and_mistyped_fields() {
        let err = RuntimeConfig::default().merged(&json!({"faults": {"declines": 0.5}})).unwrap_err();
        assert!(err.to_string().contains("declines"), "{err}");
        let err = RuntimeConfig::default().merged(&json!({"latency_ms": "fast"})).unwrap_err();
        assert!(err.to_string().contains("latency_ms"), "{err}");
        let err = RuntimeConfig::default().merged(&json!([1])).unwrap_err();
        assert!(err.to_string().contains("object"), "{err}");
    }

    #[test]
    fn merge_switches_the_replay_mode_and_refuses_unknown_ones() {
        let outcome = RuntimeConfig::default().merged(&json!({"replay": "outcome"})).unwrap();
        assert_eq!(outcome.replay, ReplayMode::Outcome);
        let err = RuntimeConfig::default().merged(&json!({"replay": "kind"})).unwrap_err();
        assert!(err.to_string().contains("replay"), "{err}");
    }

    #[test]
    fn merge_rejects_latencies_over_an_hour() {
        let err = RuntimeConfig::default().merged(&json!({"latency_ms": MAX_LATENCY_MS + 1})).unwrap_err();
        assert!(err.to_string().contains("latency_ms"), "{err}");
    }

    #[test]
    fn startup_config_checks_time_scale_and_key() {
        assert!(Config::default().validate().is_ok());
        for scale in [0.0, -1.0, f64::NAN, 1000.0] {
            let config = Config { time_scale: scale, ..Config::default() };
            assert!(config.validate().is_err(), "time_scale {scale} accepted");
        }
        let config = Config { secret_key: "a:b".into(), ..Config::default() };
        assert!(config.validate().is_err());
    }
}

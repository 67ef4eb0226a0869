//! The settings derived from the flags: how the server reaches each PG and
//! bounds its calls, what the page is told, and what its CSP allows.

use std::time::Duration;

use payonce_api::{PageConfig, PaymentSdk};
use secrecy::SecretString;

use super::flags::{Concurrency, ServerConfig};

impl ServerConfig {
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
        match self.pg_limit {
            Concurrency::Fixed(limit) => crate::pg::limit::Policy::Fixed(limit),
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
            check_interval_ms: millis(self.check_interval),
            max_checks: self.max_checks,
            server_max_processing_ms: millis(self.max_processing()),
            check_wait_ms: millis(self.check_interval).min(payonce_api::MAX_CHECK_WAIT_MS),
            cancel_window_ms: millis(self.cancel_window),
        }
    }

    /// Where the PG's webhook events are taken.
    pub fn webhook_door(&self) -> WebhookDoor {
        match &self.pg_webhook_secret {
            Some(secret) => WebhookDoor::Secret(secret.clone()),
            None if self.served_over_https() => WebhookDoor::Closed,
            None => WebhookDoor::Open,
        }
    }

    /// Whether customers reach the shop over https: a shop in public, not a
    /// developer's machine.
    pub fn served_over_https(&self) -> bool {
        self.public_base_url().starts_with("https://")
    }

    /// The shop's own proxies, whose `X-Forwarded-For` is believed.
    pub fn trusted_proxies(&self) -> crate::client_address::TrustedProxies {
        crate::client_address::TrustedProxies::new(self.trusted_proxies.iter().copied())
    }

    /// Public base URL without a trailing slash.
    pub fn public_base_url(&self) -> String {
        match &self.public_url {
            Some(url) => url.trim_end_matches('/').to_owned(),
            None => format!("http://{}", self.listen),
        }
    }
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

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Where the PG's webhook events are taken.
#[derive(Debug, Clone)]
pub enum WebhookDoor {
    /// At `/api/webhooks/toss`, from anyone: a shop on this machine or plain
    /// http, where the fake PG sends them.
    Open,
    /// At `/api/webhooks/toss/<secret>` only.
    Secret(SecretString),
    /// Nowhere: a shop at an https address without a secret.
    Closed,
}

use serde::{Deserialize, Serialize};

/// How long the page waits and checks, published by the server at
/// `GET /api/config` because only the server knows how long it can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PageConfig {
    /// How long the page waits for the confirm POST before it aborts it and checks instead.
    pub confirm_wait_ms: u64,
    /// Pause between two checks of the order. (Read under its old name too,
    /// so a page and a server a release apart still agree.)
    #[serde(alias = "poll_interval_ms")]
    pub check_interval_ms: u64,
    /// How many checks before the page says it could not confirm yet.
    #[serde(alias = "poll_attempts")]
    pub max_checks: u32,
    /// The longest the server can take to settle a confirm (PG connect + read timeout).
    pub server_max_processing_ms: u64,
    /// How long one check may wait on the server for the order to change
    /// (`GET /api/orders/:id?wait=`): at most [`MAX_CHECK_WAIT_MS`] and the pause
    /// between checks. 0: checks answer at once.
    #[serde(default)]
    pub check_wait_ms: u64,
    /// How long after paying a customer may cancel an order themselves.
    #[serde(default)]
    pub cancel_window_ms: u64,
}

/// What the page loads and calls to open the PG's payment window, as a Toss
/// merchant's page does: `TossPayments(client_key)` from the script at `url`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PaymentSdk {
    /// The PG's JavaScript SDK (Toss: `https://js.tosspayments.com/v2/standard`).
    pub url: String,
    /// The merchant's client key: public, unlike the secret key.
    pub client_key: String,
}

/// `GET /api/config`: the page's timings, the PG's SDK, and whether the shop
/// also takes KakaoPay (the cart offers it only then).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ShopConfig {
    #[serde(flatten)]
    pub timings: PageConfig,
    pub payment_sdk: PaymentSdk,
    #[serde(default)]
    pub kakaopay: bool,
    /// The server takes payments with test keys at a public https address
    /// (`--allow-test-keys`, a staging shop): no money moves, and every page
    /// says so.
    #[serde(default)]
    pub test_payments: bool,
}

/// The longest a check may wait on the server for its order to change.
pub const MAX_CHECK_WAIT_MS: u64 = 2_000;

impl PageConfig {
    /// The timings the page uses when `/api/config` cannot be read.
    pub const DEFAULT: PageConfig = PageConfig {
        confirm_wait_ms: 15_000,
        check_interval_ms: 2_000,
        max_checks: 25,
        server_max_processing_ms: 63_000,
        check_wait_ms: MAX_CHECK_WAIT_MS,
        cancel_window_ms: 30 * 60 * 1_000,
    };

    /// From sending the POST to the last check: how long the page can wait for an outcome.
    pub fn checking_window_ms(&self) -> u64 {
        self.confirm_wait_ms + self.check_interval_ms * u64::from(self.max_checks)
    }

    /// Whether the page keeps checking at least as long as the server may still be working.
    pub fn covers_server_processing(&self) -> bool {
        self.checking_window_ms() >= self.server_max_processing_ms
    }
}

impl Default for PageConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_window_covers_a_sixty_second_pg_timeout() {
        assert_eq!(PageConfig::DEFAULT.checking_window_ms(), 65_000);
        assert!(PageConfig::DEFAULT.covers_server_processing());
    }

    #[test]
    fn a_window_shorter_than_the_server_is_reported() {
        let short = PageConfig { max_checks: 10, ..PageConfig::DEFAULT };
        assert_eq!(short.checking_window_ms(), 35_000);
        assert!(!short.covers_server_processing());
    }
}

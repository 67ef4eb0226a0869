//! The state every handler shares: cheap to clone.

use std::sync::Arc;

use tokio::sync::watch;

use crate::clock::Clock;
use crate::config::Api;
use crate::store::Store;

#[derive(Clone)]
pub(crate) struct AppState {
    pub(crate) store: Arc<Store>,
    pub(crate) settings: Arc<Settings>,
    /// Turns true when the server shuts down, so processings stop with it.
    pub(crate) stopping: watch::Receiver<bool>,
}

/// What is fixed at startup.
pub(crate) struct Settings {
    pub(crate) secret_key: String,
    /// What the SDK must be initialised with (`TossPayments(clientKey)`).
    pub(crate) client_key: String,
    pub(crate) clock: Clock,
    /// Where clients reach this server, without a trailing slash.
    pub(crate) base_url: String,
    /// The API this process speaks.
    pub(crate) api: Api,
}

impl Settings {
    pub(crate) fn receipt_url(&self, payment_key: &str) -> String {
        format!("{}/v1/receipt/{payment_key}", self.base_url)
    }
}

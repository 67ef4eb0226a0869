//! What every handler shares: the domain context, and what only HTTP needs
//! (the rate limits, the metrics' renderer). Cheap to clone: all handles.

use std::ops::Deref;
use std::sync::Arc;

use metrics_exporter_prometheus::PrometheusHandle;

use crate::app::App;
use crate::config::ServerConfig;
use crate::customer::CustomerCookies;
use crate::db::Db;
use crate::operators::Operators;
use crate::rate_limits::{Limits, Rate, Rates};
use crate::sign_in_failures::SignInFailures;

#[derive(Debug, Clone)]
pub struct AppState {
    pub app: App,
    pub metrics: PrometheusHandle,
    pub limits: Limits,
    /// How customers' cookies are signed and verified.
    pub customer_cookies: Arc<CustomerCookies>,
    /// Who may use the operators' API, by their tokens.
    pub operators: Arc<Operators>,
    /// Wrong tokens sent to the operators' API, by client address.
    pub sign_in_failures: SignInFailures,
}

impl AppState {
    pub fn new(config: ServerConfig, db: Db, customer_cookies: CustomerCookies) -> Self {
        let limits = Limits::new(Rates {
            customer: Rate::per_minute(config.rate_limit_customer),
            address: Rate::per_minute(config.rate_limit_address),
            customer_reads: Rate::per_minute(config.rate_limit_customer_reads),
            address_reads: Rate::per_minute(config.rate_limit_address_reads),
            webhooks: Rate::per_minute(config.rate_limit_webhooks),
        });
        // The recorder first: what the app records as it starts (the PG limit's
        // starting value, say) would otherwise go nowhere.
        let metrics = crate::metrics::handle();
        // `run` refused a configuration whose operators are wrong; were one to get
        // here, nobody could sign in: the operators' API stays closed, never open.
        let operators = Arc::new(config.operators().unwrap_or_default());
        Self {
            app: App::new(config, db),
            metrics,
            limits,
            customer_cookies: Arc::new(customer_cookies),
            operators,
            sign_in_failures: SignInFailures::default(),
        }
    }
}

/// Handlers reach the domain's handles (`state.db`, `state.config`) and pass
/// `&state` where a domain function takes `&App`.
impl Deref for AppState {
    type Target = App;

    fn deref(&self) -> &App {
        &self.app
    }
}

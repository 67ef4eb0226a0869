//! What every handler shares: the domain context, and what only HTTP needs
//! (the rate limits, the metrics' renderer). Cheap to clone: all handles.

use std::ops::Deref;
use std::sync::Arc;

use metrics_exporter_prometheus::PrometheusHandle;

use crate::app::App;
use crate::checkouts::CheckoutLinks;
use crate::config::ServerConfig;
use crate::customer::CustomerCookies;
use crate::db::Db;
use crate::operators::Operators;
use crate::rate_limits::{Limits, Rate, Rates, ShopLimits};
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
    /// Wrong keys sent to the shop API, by client address.
    pub shop_key_failures: SignInFailures,
    /// Each shop's own limit on the shop API.
    pub shop_limits: ShopLimits,
    /// The key of checkouts' one-time links.
    pub checkout_links: Arc<CheckoutLinks>,
}

impl AppState {
    pub fn new(config: ServerConfig, db: Db, customer_cookies: CustomerCookies) -> Self {
        let limits = Limits::new(Rates {
            customer: Rate::per_minute(config.rate_limit_customer),
            address: Rate::per_minute(config.rate_limit_address),
            customer_reads: Rate::per_minute(config.rate_limit_customer_reads),
            address_reads: Rate::per_minute(config.rate_limit_address_reads),
            webhooks: Rate::per_minute(config.rate_limit_webhooks),
            new_customers: Rate::per_minute(config.rate_limit_new_customers),
        });
        // The recorder first: what the app records as it starts (the PG limit's
        // starting value, say) would otherwise go nowhere.
        let metrics = crate::metrics::handle();
        // `run` refused a configuration whose operators are wrong; were one to get
        // here, nobody could sign in: the operators' API stays closed, never open.
        let operators = Arc::new(config.operators().unwrap_or_default());
        let shop_limits = ShopLimits::new(&config.shops);
        Self {
            shop_limits,
            shop_key_failures: SignInFailures::default(),
            checkout_links: Arc::new(CheckoutLinks::random()),
            app: App::new(config, db),
            metrics,
            limits,
            customer_cookies: Arc::new(customer_cookies),
            operators,
            sign_in_failures: SignInFailures::default(),
        }
    }
}

impl AppState {
    /// With checkout links signed by `links` (the shop's, kept across restarts and servers).
    pub fn with_checkout_links(mut self, links: CheckoutLinks) -> Self {
        self.checkout_links = Arc::new(links);
        self
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

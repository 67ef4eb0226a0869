//! Rate limits on what costs the shop and the PG something: creating orders,
//! confirming and closing them (every POST of the API). Two buckets, each
//! refilled steadily with a burst allowance: one per customer (their cookie),
//! one per client address (customers behind one address share it, and a
//! client with no cookie gets a new customer each time). The PG's webhook
//! events have a bucket of their own, shared by every sender: they come from
//! the PG's few addresses for every customer at once, so they must neither eat
//! customers' buckets nor be refused by them. A refusal is 429 `RATE_LIMITED`
//! with `Retry-After`; nothing was done.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Method, Request, Response};
use axum::response::IntoResponse;
use governor::middleware::NoOpMiddleware;
use tower_governor::governor::{GovernorConfig, GovernorConfigBuilder};
use tower_governor::key_extractor::{GlobalKeyExtractor, KeyExtractor};
use tower_governor::{GovernorError, GovernorLayer};

use crate::customer::Customer;
use crate::error::AppError;

/// Requests a minute, and how many may come at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub per_minute: u32,
    pub burst: u32,
}

impl Rate {
    /// `per_minute` with a burst of a quarter of it (at least five).
    pub fn per_minute(per_minute: u32) -> Self {
        Self { per_minute, burst: (per_minute / 4).max(5) }
    }

    fn config<K: KeyExtractor>(self, key: K) -> Option<GovernorConfig<K, NoOpMiddleware>> {
        if self.per_minute == 0 {
            return None;
        }
        let refill = Duration::from_secs(60) / self.per_minute;
        GovernorConfigBuilder::default()
            .key_extractor(key)
            .period(refill.max(Duration::from_nanos(1)))
            .burst_size(self.burst.max(1))
            .methods(vec![Method::POST])
            .finish()
    }
}

/// The customer the request is from, as the cookie middleware found or made it.
#[derive(Debug, Clone, Copy)]
pub struct CustomerKey;

impl KeyExtractor for CustomerKey {
    type Key = String;

    fn extract<T>(&self, request: &Request<T>) -> Result<Self::Key, GovernorError> {
        Ok(request.extensions().get::<Customer>().map(|customer| customer.0.clone()).unwrap_or_default())
    }
}

/// The client's address; requests served without one (in-process tests) share one bucket.
#[derive(Debug, Clone, Copy)]
pub struct ClientAddress;

impl KeyExtractor for ClientAddress {
    type Key = IpAddr;

    fn extract<T>(&self, request: &Request<T>) -> Result<Self::Key, GovernorError> {
        let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(peer)| peer.ip());
        Ok(peer.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED)))
    }
}

/// The two limits' configurations, kept so their memory can be trimmed.
#[derive(Clone)]
pub struct Limits {
    customer: Option<Arc<GovernorConfig<CustomerKey, NoOpMiddleware>>>,
    address: Option<Arc<GovernorConfig<ClientAddress, NoOpMiddleware>>>,
    webhooks: Option<Arc<GovernorConfig<GlobalKeyExtractor, NoOpMiddleware>>>,
}

impl std::fmt::Debug for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limits")
            .field("customer", &self.customer.is_some())
            .field("address", &self.address.is_some())
            .field("webhooks", &self.webhooks.is_some())
            .finish()
    }
}

impl Limits {
    pub fn new(per_customer: Rate, per_address: Rate, webhooks: Rate) -> Self {
        Self {
            customer: per_customer.config(CustomerKey).map(Arc::new),
            address: per_address.config(ClientAddress).map(Arc::new),
            webhooks: webhooks.config(GlobalKeyExtractor).map(Arc::new),
        }
    }

    /// The layer for the per-customer limit; it must run inside the cookie middleware.
    pub fn per_customer(&self) -> Option<GovernorLayer<CustomerKey, NoOpMiddleware, Body>> {
        self.customer.clone().map(|config| GovernorLayer::new(config).error_handler(refusal))
    }

    pub fn per_address(&self) -> Option<GovernorLayer<ClientAddress, NoOpMiddleware, Body>> {
        self.address.clone().map(|config| GovernorLayer::new(config).error_handler(refusal))
    }

    /// The layer for the PG's webhook events: one bucket for all of them.
    pub fn webhooks(&self) -> Option<GovernorLayer<GlobalKeyExtractor, NoOpMiddleware, Body>> {
        self.webhooks.clone().map(|config| GovernorLayer::new(config).error_handler(refusal))
    }

    /// Forgets buckets that are full again, so memory follows recent clients only.
    pub fn forget_idle(&self) {
        if let Some(config) = &self.customer {
            config.limiter().retain_recent();
        }
        if let Some(config) = &self.address {
            config.limiter().retain_recent();
        }
    }
}

/// A refusal in the API's shape, with the governor's `Retry-After`.
fn refusal(error: GovernorError) -> Response<Body> {
    match error {
        GovernorError::TooManyRequests { wait_time, headers } => {
            let mut response = AppError::RateLimited { retry_after_s: wait_time.max(1) }.into_response();
            if let Some(headers) = headers {
                response.headers_mut().extend(headers);
            }
            response
        }
        GovernorError::UnableToExtractKey | GovernorError::Other { .. } => {
            AppError::Internal("the rate limiter could not key the request".to_owned()).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Rate;

    #[test]
    fn a_rate_allows_a_quarter_of_a_minute_at_once_and_never_less_than_five() {
        assert_eq!(Rate::per_minute(600), Rate { per_minute: 600, burst: 150 });
        assert_eq!(Rate::per_minute(8), Rate { per_minute: 8, burst: 5 });
        assert!(Rate::per_minute(0).config(super::CustomerKey).is_none(), "0 turns a limit off");
    }
}

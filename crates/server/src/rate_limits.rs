//! Rate limits. Writes (every POST of the API: creating orders, confirming and
//! closing them) cost the shop and the PG something; reads (checks, lists)
//! cost the server, and one client checking without pause would slow every
//! other customer's checks. Each has two buckets, refilled steadily with a
//! burst allowance: one per customer (their signed cookie), one per client
//! address (the real client behind the shop's proxies, `client_address`:
//! customers behind one address share it, and a client with no cookie gets a
//! new customer each time). The PG's webhook
//! events have a bucket of their own, shared by every sender: they come from
//! the PG's few addresses for every customer at once, so they must neither eat
//! customers' buckets nor be refused by them. A refusal is 429 `RATE_LIMITED`
//! with `Retry-After`; nothing was done.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, Method, Request, Response};
use axum::response::IntoResponse;
use governor::middleware::NoOpMiddleware;
use tower_governor::governor::{GovernorConfig, GovernorConfigBuilder};
use tower_governor::key_extractor::{GlobalKeyExtractor, KeyExtractor};
use tower_governor::{GovernorError, GovernorLayer};

use crate::client_address::ClientIp;
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

    /// The rate as governor's quota, for a limiter of its own (0 is read as 1 a minute).
    fn quota(self) -> governor::Quota {
        let burst = std::num::NonZeroU32::new(self.burst).unwrap_or(std::num::NonZeroU32::MIN);
        governor::Quota::with_period(Duration::from_secs(60) / self.per_minute.max(1))
            .unwrap_or_else(|| governor::Quota::per_minute(std::num::NonZeroU32::MIN))
            .allow_burst(burst)
    }

    fn config<K: KeyExtractor>(self, key: K, methods: &[Method]) -> Option<GovernorConfig<K, NoOpMiddleware>> {
        if self.per_minute == 0 {
            return None;
        }
        let refill = Duration::from_secs(60) / self.per_minute;
        GovernorConfigBuilder::default()
            .key_extractor(key)
            .period(refill.max(Duration::from_nanos(1)))
            .burst_size(self.burst.max(1))
            .methods(methods.to_vec())
            .finish()
    }
}

/// What costs the shop and the PG something.
const WRITES: &[Method] = &[Method::POST];
/// What costs only the server: checks, lists, the catalog.
const READS: &[Method] = &[Method::GET, Method::HEAD];

/// The customer the request is from, as the cookie middleware found or made it.
#[derive(Debug, Clone, Copy)]
pub struct CustomerKey;

impl KeyExtractor for CustomerKey {
    type Key = String;

    fn extract<T>(&self, request: &Request<T>) -> Result<Self::Key, GovernorError> {
        Ok(request.extensions().get::<Customer>().map(|customer| customer.0.clone()).unwrap_or_default())
    }
}

/// The client's address, as `client_address::identify` found it (behind the
/// shop's proxies, the client they served); requests served without one
/// (in-process tests) share one bucket.
#[derive(Debug, Clone, Copy)]
pub struct ClientAddress;

impl KeyExtractor for ClientAddress {
    type Key = IpAddr;

    fn extract<T>(&self, request: &Request<T>) -> Result<Self::Key, GovernorError> {
        Ok(ClientIp::of(request).0)
    }
}

type Config<K> = Option<Arc<GovernorConfig<K, NoOpMiddleware>>>;
type Layer<K> = Option<GovernorLayer<K, NoOpMiddleware, Body>>;

/// The limits' configurations, kept so their memory can be trimmed.
#[derive(Clone)]
pub struct Limits {
    customer: Config<CustomerKey>,
    address: Config<ClientAddress>,
    customer_reads: Config<CustomerKey>,
    address_reads: Config<ClientAddress>,
    webhooks: Config<GlobalKeyExtractor>,
    new_customers: NewCustomers,
}

impl std::fmt::Debug for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limits")
            .field("customer", &self.customer.is_some())
            .field("address", &self.address.is_some())
            .field("customer_reads", &self.customer_reads.is_some())
            .field("address_reads", &self.address_reads.is_some())
            .field("webhooks", &self.webhooks.is_some())
            .field("new_customers", &self.new_customers.0.is_some())
            .finish()
    }
}

/// The rates of [`Limits`], each `per_minute(0)` to turn it off.
#[derive(Debug, Clone, Copy)]
pub struct Rates {
    pub customer: Rate,
    pub address: Rate,
    pub customer_reads: Rate,
    pub address_reads: Rate,
    pub webhooks: Rate,
    pub new_customers: Rate,
}

impl Limits {
    pub fn new(rates: Rates) -> Self {
        Self {
            customer: rates.customer.config(CustomerKey, WRITES).map(Arc::new),
            address: rates.address.config(ClientAddress, WRITES).map(Arc::new),
            customer_reads: rates.customer_reads.config(CustomerKey, READS).map(Arc::new),
            address_reads: rates.address_reads.config(ClientAddress, READS).map(Arc::new),
            webhooks: rates.webhooks.config(GlobalKeyExtractor, WRITES).map(Arc::new),
            new_customers: NewCustomers::new(rates.new_customers),
        }
    }

    /// The limit on customers made per client address.
    pub fn new_customers(&self) -> NewCustomers {
        self.new_customers.clone()
    }

    /// The layers of the per-customer limits, writes then reads; they must run
    /// inside the cookie middleware.
    pub fn per_customer(&self) -> [Layer<CustomerKey>; 2] {
        [layer(&self.customer), layer(&self.customer_reads)]
    }

    /// The layers of the per-address limits, writes then reads.
    pub fn per_address(&self) -> [Layer<ClientAddress>; 2] {
        [layer(&self.address), layer(&self.address_reads)]
    }

    /// The layer for the PG's webhook events: one bucket for all of them.
    pub fn webhooks(&self) -> Layer<GlobalKeyExtractor> {
        layer(&self.webhooks)
    }

    /// Forgets buckets that are full again, so memory follows recent clients only.
    pub fn forget_idle(&self) {
        for config in [&self.customer, &self.customer_reads].into_iter().flatten() {
            config.limiter().retain_recent();
        }
        for config in [&self.address, &self.address_reads].into_iter().flatten() {
            config.limiter().retain_recent();
        }
        if let Some(limiter) = &self.new_customers.0 {
            limiter.retain_recent();
        }
    }
}

/// Customers made per client address: each request without a cookie the
/// shop signed makes one (`customer::NewCustomer`). A client that never keeps
/// its cookie is a new customer every time, so no customer's bucket ever fills
/// for it; this one does, per address, whatever it asks for.
#[derive(Clone, Default)]
pub struct NewCustomers(Option<Arc<governor::DefaultKeyedRateLimiter<IpAddr>>>);

impl NewCustomers {
    pub fn new(rate: Rate) -> Self {
        if rate.per_minute == 0 {
            return Self(None);
        }
        Self(Some(Arc::new(governor::RateLimiter::keyed(rate.quota()))))
    }

    /// Spends one of the address's new customers, or says how long until it has one.
    fn spend(&self, address: IpAddr) -> Result<(), Duration> {
        let Some(limiter) = &self.0 else { return Ok(()) };
        limiter
            .check_key(&address)
            .map_err(|not_until| not_until.wait_time_from(governor::clock::Clock::now(limiter.clock())))
    }
}

/// Refuses a request that would make one customer too many for its address;
/// must run inside the cookie middleware, which marks the customers it makes.
pub async fn limit_new_customers(
    limits: NewCustomers,
    request: Request<Body>,
    next: axum::middleware::Next,
) -> Response<Body> {
    if request.extensions().get::<crate::customer::NewCustomer>().is_some()
        && let Err(wait) = limits.spend(ClientIp::of(&request).0)
    {
        return refusal(GovernorError::TooManyRequests { wait_time: wait.as_secs() + 1, headers: None });
    }
    next.run(request).await
}

/// Each shop's own limit on the shop API, by the shop its key signs in as:
/// one shop's burst never spends another's allowance.
#[derive(Clone, Default)]
pub struct ShopLimits {
    by_shop: Arc<std::collections::HashMap<String, governor::DefaultDirectRateLimiter>>,
}

impl std::fmt::Debug for ShopLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShopLimits").field("shops", &self.by_shop.len()).finish()
    }
}

impl ShopLimits {
    pub fn new(shops: &crate::shops::Shops) -> Self {
        let by_shop = shops
            .iter()
            .map(|shop| {
                let quota = Rate::per_minute(shop.requests_per_minute).quota();
                (shop.id.clone(), governor::RateLimiter::direct(quota))
            })
            .collect();
        Self { by_shop: Arc::new(by_shop) }
    }

    /// Spends one of `shop`'s requests, or says how long until it has one.
    pub fn spend(&self, shop: &str) -> Result<(), Duration> {
        let Some(limiter) = self.by_shop.get(shop) else { return Ok(()) };
        limiter.check().map_err(|not_until| not_until.wait_time_from(governor::clock::Clock::now(limiter.clock())))
    }
}

fn layer<K: KeyExtractor>(config: &Config<K>) -> Layer<K> {
    config.clone().map(|config| GovernorLayer::new(config).error_handler(refusal))
}

/// A refusal in the API's shape, with the governor's `Retry-After`.
fn refusal(error: GovernorError) -> Response<Body> {
    match error {
        GovernorError::TooManyRequests { wait_time, headers } => {
            let retry_after_s = wait_time.max(1);
            let mut response = AppError::RateLimited { retry_after_s }.into_response();
            if let Some(headers) = headers {
                response.headers_mut().extend(headers);
            }
            // The governor rounds a wait under a second down to `Retry-After: 0`,
            // which tells a client to come back at once: never less than a second.
            response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(retry_after_s));
            response
        }
        GovernorError::UnableToExtractKey | GovernorError::Other { .. } => {
            AppError::Internal("the rate limiter could not key the request".to_owned()).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderMap;

    #[test]
    fn a_refusal_never_says_to_come_back_sooner_than_a_second() {
        let mut governor_headers = HeaderMap::new();
        governor_headers.insert(RETRY_AFTER, HeaderValue::from(0));
        governor_headers.insert("x-ratelimit-after", HeaderValue::from(0));
        let refused = refusal(GovernorError::TooManyRequests { wait_time: 0, headers: Some(governor_headers) });
        assert_eq!(refused.status(), 429);
        assert_eq!(refused.headers()[RETRY_AFTER], "1");
        let later = refusal(GovernorError::TooManyRequests { wait_time: 4, headers: None });
        assert_eq!(later.headers()[RETRY_AFTER], "4");
    }

    #[test]
    fn a_rate_allows_a_quarter_of_a_minute_at_once_and_never_less_than_five() {
        assert_eq!(Rate::per_minute(600), Rate { per_minute: 600, burst: 150 });
        assert_eq!(Rate::per_minute(8), Rate { per_minute: 8, burst: 5 });
        assert!(Rate::per_minute(0).config(super::CustomerKey, super::WRITES).is_none(), "0 turns a limit off");
    }
}

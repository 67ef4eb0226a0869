//! The scripted shop: a shop's own backend, as the campaign plays it against
//! the shop API (`/v1/checkouts`, docs/shops.md). It is listed in the shops
//! file the campaign's servers start with, creates one checkout per customer
//! it sends to pay, and reads its checkouts back once the campaign is over.
//!
//! Its events go to its endpoint (`shop_endpoint`), and it reads its feed
//! (`GET /v1/events`) once the campaign is over.
//!
//! It creates as a careful backend does: one `Idempotency-Key` per customer,
//! made once, and any error or timeout answered by sending the same request
//! again, with the same key and the same body, to whichever server the load
//! balancer picks. Servers are killed and frozen meanwhile, so a create may
//! land and lose its answer; the verdict checks that a key still made one
//! checkout (`shop_check`).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use payonce_api::{
    Checkout, CheckoutLine, CheckoutList, CreateCheckoutRequest, Event, EventList, IDEMPOTENCY_KEY_HEADER, Names,
};
use rand::Rng;
use reqwest::{Client, StatusCode};

use crate::customer::Servers;

/// The shop's id in the shops file.
pub const SHOP_ID: &str = "chaos-shop";
/// Its checkouts' order ids begin so: inside the servers' own `ord_`, so
/// reconciliation knows them as the shop's, and apart from the cart's
/// (theirs go on with hex digits, which `shop_` is not).
pub const ORDER_ID_PREFIX: &str = "ord_shop_";
/// The shop's API key: a fixed test key, the shops file holding its digest.
const KEY: &str = "sk_chaos_shop_0123456789abcdefghijklmnopqrstuvwxyz";
/// Where its customers would go back to; nobody follows it in a campaign.
const RETURN_ORIGIN: &str = "https://chaos-shop.example";
/// Its own rate limit on the shop API, far above what it sends: a campaign
/// compresses time tenfold and more, and the shop's limit is not what it tests.
const REQUESTS_PER_MINUTE: u32 = 1_000_000;
/// Sends of one create, or of one read, before the shop gives up: with the
/// pauses between them doubling to ten times the first, about 65 of the
/// first pause in all (6.5 s at the campaigns' scale), longer than a killed
/// server takes to come back on a loaded machine. Ten sends a pause apart
/// (a second at that scale) were not, and left customers without an order.
const TRIES: u32 = 10;
/// The longest pause between two sends, in first pauses.
const LONGEST_PAUSE: u32 = 10;
/// Events on a page of the feed the shop reads (the most the feed gives).
const FEED_PAGE: u32 = 500;

/// What the shop sells: a name and a unit price each (won).
const PRODUCTS: [(&str, u64); 4] =
    [("Field notebook", 7_500), ("Fountain pen", 32_000), ("Ink, 50 ml", 11_000), ("Paper, 100 sheets", 4_900)];

/// The file beside the shops file holding the shop's secret for events.
pub const EVENTS_SECRET_FILE: &str = "chaos-shop-events.secret";

/// The shops file naming the scripted shop, as the servers read it
/// (`--shops-file`): its events go to `events_url`, signed with the secret in
/// [`EVENTS_SECRET_FILE`] beside the file.
pub fn shops_file(events_url: &str) -> String {
    format!(
        "[[shop]]\n\
         id = \"{SHOP_ID}\"\n\
         name = \"Chaos Stationery\"\n\
         name_ko = \"카오스 문구\"\n\
         order_id_prefix = \"{ORDER_ID_PREFIX}\"\n\
         return_origins = [\"{RETURN_ORIGIN}\"]\n\
         pay_with = [\"toss\", \"kakaopay\"]\n\
         key_digests = [\"{}\"]\n\
         requests_per_minute = {REQUESTS_PER_MINUTE}\n\
         events_url = \"{events_url}\"\n\
         events_secret_file = \"{EVENTS_SECRET_FILE}\"\n",
        payonce_server::shops::key_digest(KEY)
    )
}

/// Writes the shops file, and the shop's secret for events beside it, into
/// the campaign's work folder; returns the shops file's path.
pub fn write_shops_file(work_dir: &Path, events_url: &str, events_secret: &str) -> std::io::Result<PathBuf> {
    std::fs::write(work_dir.join(EVENTS_SECRET_FILE), format!("{events_secret}\n"))?;
    let path = work_dir.join("shops.toml");
    std::fs::write(&path, shops_file(events_url))?;
    Ok(path)
}

/// One customer's order at the shop: its reference, which is also the
/// create's `Idempotency-Key` (one UUID, made once), and the body, kept so
/// every retry sends the same.
#[derive(Debug, Clone)]
pub struct ShopOrder {
    pub reference: String,
    pub request: CreateCheckoutRequest,
}

impl ShopOrder {
    /// A new order of one to three of a product.
    pub fn new() -> Self {
        let reference = uuid::Uuid::new_v4().to_string();
        let mut rng = rand::rng();
        let (name, unit_amount) = PRODUCTS[rng.random_range(0..PRODUCTS.len())];
        let quantity = rng.random_range(1..=3);
        let request = CreateCheckoutRequest {
            reference: reference.clone(),
            name: Names { en: Some(format!("{quantity} × {name}")), ko: None },
            lines: vec![CheckoutLine { name: name.to_owned(), quantity, unit_amount }],
            amount: unit_amount * u64::from(quantity),
            return_url: format!("{RETURN_ORIGIN}/orders/{reference}/back"),
            metadata: Default::default(),
            pay_with: None,
            expires_in: None,
        };
        Self { reference, request }
    }

    /// The create's `Idempotency-Key`: the reference, one per customer.
    pub fn idempotency_key(&self) -> &str {
        &self.reference
    }
}

impl Default for ShopOrder {
    fn default() -> Self {
        Self::new()
    }
}

/// What the shop's create came to.
#[derive(Debug, Clone)]
pub struct Created {
    /// The checkout, if some send of the create was answered.
    pub checkout: Option<Checkout>,
    /// How many times the create was sent.
    pub requests: u32,
    /// Whether the checkout answered was surely made by an earlier send than
    /// the one answered (its answer lost to a kill or a timeout): the key kept
    /// the retry from making a second. See `made_before` for what it misses.
    pub replayed: bool,
}

/// Why the shop could not read its checkouts after the campaign.
#[derive(Debug, thiserror::Error)]
#[error("the shop API did not answer {what} after {TRIES} tries: {last}")]
pub struct Unreadable {
    what: String,
    last: String,
}

/// The shop's backend: its key, no cookies, its own time limit per request.
#[derive(Debug, Clone)]
pub struct ScriptedShop {
    http: Client,
    /// Between the first two sends of one request (a second, at the campaign's
    /// scale); it doubles after each send.
    pause: Duration,
}

impl ScriptedShop {
    /// `timeout` bounds each request: past it the shop sends it again, as
    /// a backend's HTTP client gives up on a server that froze.
    pub fn new(timeout: Duration, pause: Duration) -> Self {
        let http = Client::builder().timeout(timeout).build().expect("the HTTP client builds");
        Self { http, pause }
    }

    /// The pause after the `sends`th send of one request: doubled after each, up to a longest.
    fn pause_after(&self, sends: u32) -> Duration {
        self.pause.saturating_mul(2u32.saturating_pow(sends.saturating_sub(1)).min(LONGEST_PAUSE))
    }

    /// Creates the order's checkout, sending the same request again on any
    /// error or timeout. A 4xx other than 429 is the shop's own mistake and
    /// changed nothing (docs/shops.md): sending it again would not help.
    pub async fn create(&self, servers: &(impl Servers + ?Sized), order: &ShopOrder) -> Created {
        let mut requests = 0;
        while requests < TRIES {
            requests += 1;
            let sent_at = SystemTime::now();
            let sent = self
                .http
                .post(format!("{}/v1/checkouts", servers.server_url()))
                .bearer_auth(KEY)
                .header(IDEMPOTENCY_KEY_HEADER, order.idempotency_key())
                .json(&order.request)
                .send()
                .await;
            match sent {
                Ok(response) if response.status() == StatusCode::CREATED => {
                    // A body cut off by a kill is no answer: ask again.
                    if let Ok(checkout) = response.json::<Checkout>().await {
                        let replayed = made_before(&checkout, sent_at);
                        return Created { checkout: Some(checkout), requests, replayed };
                    }
                }
                Ok(refused)
                    if refused.status().is_client_error() && refused.status() != StatusCode::TOO_MANY_REQUESTS =>
                {
                    break;
                }
                Ok(_) | Err(_) => {}
            }
            tokio::time::sleep(self.pause_after(requests)).await;
        }
        Created { checkout: None, requests, replayed: false }
    }

    /// Every checkout of `reference`, as the shop lists them.
    pub async fn checkouts_of(
        &self,
        servers: &(impl Servers + ?Sized),
        reference: &str,
    ) -> Result<Vec<Checkout>, Unreadable> {
        let what = format!("the checkouts of reference {reference}");
        // The references are UUIDs: nothing in them needs escaping in a query.
        let list: CheckoutList = self
            .read(servers, &format!("checkouts?reference={reference}"), &what)
            .await?
            .ok_or(Unreadable { what, last: "404".to_owned() })?;
        Ok(list.checkouts)
    }

    /// The shop's whole feed (`GET /v1/events`), from its first event, page by page.
    pub async fn feed(&self, servers: &(impl Servers + ?Sized)) -> Result<Vec<Event>, Unreadable> {
        let mut events = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let path = match &after {
                None => format!("events?limit={FEED_PAGE}"),
                Some(cursor) => format!("events?after={cursor}&limit={FEED_PAGE}"),
            };
            let what = format!("the feed after {}", after.as_deref().unwrap_or("its start"));
            let page: EventList =
                self.read(servers, &path, &what).await?.ok_or(Unreadable { what, last: "404".to_owned() })?;
            if page.events.is_empty() {
                return Ok(events);
            }
            events.extend(page.events);
            after = Some(page.next_cursor);
        }
    }

    /// The checkout `id` as the shop sees it; `None` if the shop API says there is none.
    pub async fn checkout(&self, servers: &(impl Servers + ?Sized), id: &str) -> Result<Option<Checkout>, Unreadable> {
        self.read(servers, &format!("checkouts/{id}"), &format!("checkout {id}")).await
    }

    /// A `GET /v1/{path}`, sent again until a server answers it.
    async fn read<T: serde::de::DeserializeOwned>(
        &self,
        servers: &(impl Servers + ?Sized),
        path: &str,
        what: &str,
    ) -> Result<Option<T>, Unreadable> {
        let mut last = String::new();
        for sends in 1..=TRIES {
            let sent = self.http.get(format!("{}/v1/{path}", servers.server_url())).bearer_auth(KEY).send().await;
            match sent {
                Ok(response) if response.status() == StatusCode::NOT_FOUND => return Ok(None),
                Ok(response) if response.status().is_success() => match response.json::<T>().await {
                    Ok(answer) => return Ok(Some(answer)),
                    Err(error) => last = error.to_string(),
                },
                Ok(response) => last = response.status().to_string(),
                Err(error) => last = error.to_string(),
            }
            tokio::time::sleep(self.pause_after(sends)).await;
        }
        Err(Unreadable { what: what.to_owned(), last })
    }
}

/// Whether `checkout` was made before `sent_at`, so by an earlier send: the
/// servers run on this machine, on its clock, and stamp a checkout when they
/// begin to create it (in whole milliseconds, hence the one to spare). An
/// earlier send a server only took up after `sent_at` (held by a frozen
/// server) is stamped later, and not told apart from this send's own: a lower bound.
fn made_before(checkout: &Checkout, sent_at: SystemTime) -> bool {
    humantime::parse_rfc3339(&checkout.created_at)
        .is_ok_and(|created_at| created_at + Duration::from_millis(1) < sent_at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_accept_the_shops_file() {
        let dir = tempfile::tempdir().unwrap();
        let secret = payonce_server::shops::new_events_secret();
        let path = write_shops_file(dir.path(), "http://127.0.0.1:4321/chaos-shop/events", &secret).unwrap();
        let shops = payonce_server::shops::Shops::read(&path, "ord_").expect("a valid shops file");
        let shop = shops.signed_in(KEY).expect("the key signs in as the shop");
        assert_eq!((shop.id.as_str(), shop.order_id_prefix.as_str()), (SHOP_ID, ORDER_ID_PREFIX));
        assert_eq!(shop.pay_with, payonce_api::Pg::ALL.to_vec(), "customers pay through either PG");
        assert!(shops.of_order("ord_0193f1c2a7b47d9e8c51d3f0a2b4c6e8").is_none(), "a cart order is no shop's");
        let endpoint = shop.events.as_ref().expect("its events are sent");
        assert_eq!(endpoint.url.as_str(), "http://127.0.0.1:4321/chaos-shop/events");
        assert_eq!(endpoint.secrets, [secret], "signed with the secret beside the file");
    }

    #[test]
    fn a_checkout_made_before_the_send_answered_was_made_by_an_earlier_one() {
        let created_at = humantime::parse_rfc3339("2026-12-05T08:00:00.120Z").unwrap();
        let checkout: Checkout = serde_json::from_value(serde_json::json!({
            "id": "ord_shop_1", "reference": "r", "status": "CREATED", "amount": 7500, "amount_refunded": 0,
            "name": {"en": "Notebook"}, "lines": [], "return_url": "https://chaos-shop.example/back",
            "metadata": {}, "pay_with": ["toss"], "created_at": "2026-12-05T08:00:00.120Z",
            "expires_at": "2026-12-05T09:30:00.120Z", "history": []
        }))
        .unwrap();
        assert!(made_before(&checkout, created_at + Duration::from_secs(1)), "a second later: an earlier send");
        assert!(!made_before(&checkout, created_at), "sent as it was made: this send made it");
        assert!(!made_before(&checkout, created_at + Duration::from_micros(900)), "within the stamp's millisecond");
    }

    #[test]
    fn an_order_keeps_one_key_and_one_body_and_adds_up() {
        let order = ShopOrder::new();
        assert_eq!(order.idempotency_key(), order.request.reference);
        let line = &order.request.lines[0];
        assert_eq!(order.request.amount, line.unit_amount * u64::from(line.quantity));
        assert!(order.request.return_url.starts_with(RETURN_ORIGIN));
        assert_ne!(ShopOrder::new().reference, order.reference, "one key per customer");
    }

    #[test]
    fn the_shop_keeps_sending_for_longer_than_a_server_takes_to_come_back() {
        let shop = ScriptedShop::new(Duration::from_secs(1), Duration::from_millis(100));
        let pauses: Vec<u128> = (1..=TRIES).map(|sends| shop.pause_after(sends).as_millis()).collect();
        assert_eq!(pauses, [100, 200, 400, 800, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000]);
        let before_the_last: u128 = pauses[..pauses.len() - 1].iter().sum();
        assert_eq!(before_the_last, 6_500, "ten sends span 6.5 s at the campaigns' scale, not one");
    }
}

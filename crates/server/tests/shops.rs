//! The shop API against a real order server and fake PG: a shop creates a
//! checkout, its customer's browser opens the link and pays, the shop reads
//! and refunds it; keys, idempotency, expiry and the one-time link hold.

use crate::support;

use std::time::Duration;

use payonce_api::{Checkout, CheckoutList, CustomerCheckout, Order, OrderStatus};
use payonce_server::shops::{Shops, key_digest};
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::{FakePg, Server, assert_charges_agree, eventually, payment_key_for};

const BOOKS_KEY: &str = "sk_books_0123456789abcdefghijklmnopqrstuvwxyz";
const TEA_KEY: &str = "sk_tea_0123456789abcdefghijklmnopqrstuvwxyzAB";

fn shops() -> Shops {
    let text = format!(
        "[[shop]]\nid = \"books\"\nname = \"Seoul Books\"\nname_ko = \"서울 책방\"\norder_id_prefix = \"ord_books_\"\n\
         return_origins = [\"https://books.example\"]\npay_with = [\"toss\"]\nkey_digests = [\"{}\"]\n\
         [[shop]]\nid = \"tea\"\nname = \"Tea House\"\norder_id_prefix = \"ord_tea_\"\n\
         return_origins = [\"https://tea.example\"]\npay_with = [\"toss\", \"kakaopay\"]\nkey_digests = [\"{}\"]\n",
        key_digest(BOOKS_KEY),
        key_digest(TEA_KEY)
    );
    Shops::parse(&text, "ord_").unwrap()
}

/// A fake PG, and a server with two shops that serves the page too, as in
/// production (the shop API lives beside the page's routes), from a folder
/// kept as long as the test holds it.
async fn start() -> (FakePg, Server, tempfile::TempDir) {
    let pg = FakePg::start().await;
    let page = tempfile::tempdir().unwrap();
    std::fs::write(page.path().join("index.html"), "<!doctype html><title>payonce</title>").unwrap();
    let server = Server::start_with(&pg.url, |config| {
        config.shops = shops();
        config.checkout_shortest_open = Duration::from_secs(1);
        config.static_dir = Some(page.path().to_owned());
    })
    .await;
    (pg, server, page)
}

fn body(reference: &str) -> Value {
    json!({
        "reference": reference,
        "name": {"en": "Two novels", "ko": "소설 두 권"},
        "lines": [{"name": "The Vegetarian", "quantity": 1, "unit_amount": 13_500},
                  {"name": "Human Acts", "quantity": 2, "unit_amount": 14_000}],
        "amount": 41_500,
        "return_url": "https://books.example/orders/1/back",
        "metadata": {"customer": "c-77"}
    })
}

/// The shop's backend: its key, and no cookies.
struct ShopClient<'a> {
    server: &'a Server,
    key: &'a str,
    http: reqwest::Client,
}

impl<'a> ShopClient<'a> {
    fn new(server: &'a Server, key: &'a str) -> Self {
        Self { server, key, http: reqwest::Client::new() }
    }

    async fn create_with_key(&self, idempotency_key: &str, body: &Value) -> (StatusCode, Value) {
        let response = self
            .http
            .post(format!("{}/v1/checkouts", self.server.url))
            .bearer_auth(self.key)
            .header("Idempotency-Key", idempotency_key)
            .json(body)
            .send()
            .await
            .unwrap();
        (response.status(), response.json().await.unwrap())
    }

    async fn create(&self, body: &Value) -> Checkout {
        let (status, answer) = self.create_with_key(&uuid::Uuid::new_v4().to_string(), body).await;
        assert_eq!(status, StatusCode::CREATED, "{answer}");
        serde_json::from_value(answer).unwrap()
    }

    async fn get(&self, path: &str) -> (StatusCode, Value) {
        let response =
            self.http.get(format!("{}/v1/{path}", self.server.url)).bearer_auth(self.key).send().await.unwrap();
        (response.status(), response.json().await.unwrap())
    }

    async fn checkout(&self, id: &str) -> Checkout {
        let (status, answer) = self.get(&format!("checkouts/{id}")).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        serde_json::from_value(answer).unwrap()
    }

    async fn refund(&self, id: &str, key: &str, body: Value) -> (StatusCode, Value) {
        let response = self
            .http
            .post(format!("{}/v1/checkouts/{id}/refunds", self.server.url))
            .bearer_auth(self.key)
            .header("Idempotency-Key", key)
            .json(&body)
            .send()
            .await
            .unwrap();
        (response.status(), response.json().await.unwrap())
    }
}

/// The token of a `next_url`: after the `#`.
fn token_of(checkout: &Checkout) -> String {
    let next_url = checkout.next_url.as_deref().expect("an open checkout has a next_url");
    next_url.split_once('#').expect("the token is in the fragment").1.to_owned()
}

/// A browser opening the checkout's link.
async fn claim(server: &Server, browser: &reqwest::Client, id: &str, token: &str) -> (StatusCode, Value) {
    let response = browser
        .post(format!("{}/api/checkouts/{id}/claim", server.url))
        .json(&json!({"token": token}))
        .send()
        .await
        .unwrap();
    (response.status(), response.json().await.unwrap())
}

fn order_of(checkout: &CustomerCheckout) -> Order {
    Order {
        order_id: checkout.order_id.clone(),
        status: checkout.status,
        amount: checkout.amount,
        order_name: checkout.order_name.clone(),
        items: vec![],
        created_at: String::new(),
        updated_at: String::new(),
        failure: None,
        refunded_amount: 0,
        paid_at: None,
        refund_refusal: None,
        back: None,
    }
}

#[tokio::test]
async fn a_shops_checkout_is_paid_by_the_browser_that_opened_it_and_refunded_by_the_shop() {
    let (pg, server, _page) = start().await;
    let shop = ShopClient::new(&server, BOOKS_KEY);
    let checkout = shop.create(&body("ORDER-1042")).await;
    assert!(checkout.id.starts_with("ord_books_"), "{}", checkout.id);
    assert_eq!(shop.checkout(&checkout.id).await, checkout, "the create's answer is the checkout as stored");
    assert_eq!((checkout.status, checkout.amount), (payonce_api::CheckoutStatus::Created, 41_500));
    assert!(checkout.next_url.as_deref().unwrap().starts_with(&format!("{}/checkout/{}#", server.url, checkout.id)));

    // The first browser becomes the customer; it may come back, with or without the token.
    let (status, answer) = claim(&server, &server.http, &checkout.id, &token_of(&checkout)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let opened: CustomerCheckout = serde_json::from_value(answer).unwrap();
    assert_eq!(opened.back.shop.korean_first(), "서울 책방");
    assert_eq!(opened.back.url, "https://books.example/orders/1/back");
    assert_eq!(opened.lines.len(), 2);
    assert_eq!(claim(&server, &server.http, &checkout.id, "").await.0, StatusCode::OK);

    // Any other browser is told the link was used, and sees nothing.
    let other = server.other_customer();
    let (status, answer) = claim(&server, &other, &checkout.id, &token_of(&checkout)).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::CONFLICT, Some("CHECKOUT_LINK_USED")));
    assert!(answer.get("order_id").is_none() && answer.get("lines").is_none(), "{answer}");
    let seen = other.get(format!("{}/api/orders/{}", server.url, checkout.id)).send().await.unwrap();
    assert_eq!(seen.status(), StatusCode::NOT_FOUND);

    // The customer pays as for any order; the order carries the way back.
    let order = order_of(&opened);
    let (status, paid) = server.confirm(&order, &uuid::Uuid::new_v4().to_string()).await;
    assert_eq!((status, paid["status"].as_str()), (StatusCode::OK, Some("PAID")), "{paid}");
    assert_eq!(paid["back"]["url"], "https://books.example/orders/1/back");

    let seen = shop.checkout(&checkout.id).await;
    assert_eq!(seen.status, payonce_api::CheckoutStatus::Paid);
    assert!(seen.next_url.is_none(), "a paid checkout has no link to pay");
    let payment = seen.payment.expect("the payment the PG made");
    assert_eq!((payment.pg, payment.payment_id.as_str()), (payonce_api::Pg::Toss, payment_key_for(&order).as_str()));
    let history: Vec<_> = seen.history.iter().map(|change| change.status).collect();
    use payonce_api::CheckoutStatus::{Created, Paid, PartiallyRefunded, Pending};
    assert_eq!(history, [Created, Pending, Paid]);
    assert_eq!(seen.metadata["customer"], "c-77");

    // A partial refund through the API; the same key is the same refund.
    let (status, refunded) = shop.refund(&checkout.id, "refund-1", json!({"amount": 13_500})).await;
    assert_eq!(status, StatusCode::OK, "{refunded}");
    assert_eq!(
        (refunded["status"].as_str(), refunded["amount_refunded"].as_u64()),
        (Some("PARTIALLY_REFUNDED"), Some(13_500))
    );
    let (status, again) = shop.refund(&checkout.id, "refund-1", json!({"amount": 13_500})).await;
    assert_eq!((status, again["amount_refunded"].as_u64()), (StatusCode::OK, Some(13_500)));
    let (status, other_amount) = shop.refund(&checkout.id, "refund-1", json!({"amount": 100})).await;
    assert_eq!(
        (status, other_amount["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("IDEMPOTENCY_KEY_REUSED"))
    );
    let seen = shop.checkout(&checkout.id).await;
    assert_eq!(seen.history.last().map(|change| change.status), Some(PartiallyRefunded));
    assert_eq!(pg.payment(&payment.payment_id).await.unwrap().balance_amount, 41_500 - 13_500);
    assert_charges_agree(&pg, &server, &[&checkout.id]).await;
}

#[tokio::test]
async fn the_same_key_is_the_same_checkout_and_another_body_is_refused() {
    let (_pg, server, _page) = start().await;
    let shop = ShopClient::new(&server, BOOKS_KEY);
    let (first_status, first) = shop.create_with_key("order-7", &body("ORDER-7")).await;
    let (again_status, again) = shop.create_with_key("order-7", &body("ORDER-7")).await;
    assert_eq!((first_status, again_status), (StatusCode::CREATED, StatusCode::CREATED));
    assert_eq!(first["id"], again["id"]);
    assert_eq!(
        first["next_url"], again["next_url"],
        "the same link, so a retried create sends the customer to one place"
    );
    let (status, refused) = shop.create_with_key("order-7", &body("ORDER-8")).await;
    assert_eq!((status, refused["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("IDEMPOTENCY_KEY_REUSED")));
    let (status, missing) = shop.create_with_key("", &body("ORDER-9")).await;
    assert_eq!((status, missing["code"].as_str()), (StatusCode::BAD_REQUEST, Some("INVALID_IDEMPOTENCY_KEY")));
    let (_, list) = shop.get("checkouts").await;
    let list: CheckoutList = serde_json::from_value(list).unwrap();
    assert_eq!(list.checkouts.len(), 1, "one checkout, whatever was retried or refused");
}

#[tokio::test]
async fn a_key_sees_its_own_shops_checkouts_only() {
    let (_pg, server, _page) = start().await;
    let books = ShopClient::new(&server, BOOKS_KEY);
    let tea = ShopClient::new(&server, TEA_KEY);
    let checkout = books.create(&body("ORDER-1")).await;
    let (status, answer) = tea.get(&format!("checkouts/{}", checkout.id)).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::NOT_FOUND, Some("ORDER_NOT_FOUND")));
    let (status, refused) = tea.refund(&checkout.id, "k", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{refused}");
    let (_, list) = tea.get("checkouts?reference=ORDER-1").await;
    assert_eq!(list["checkouts"].as_array().map(Vec::len), Some(0));
    // Tea's return origin is not Books'.
    let (status, refused) = tea.create_with_key("k1", &body("ORDER-1")).await;
    assert_eq!((status, refused["code"].as_str()), (StatusCode::BAD_REQUEST, Some("INVALID_CHECKOUT")));

    for key in ["", "sk_books_0123456789abcdefghijklmnopqrstuvwxyZ"] {
        let response =
            reqwest::Client::new().get(format!("{}/v1/checkouts", server.url)).bearer_auth(key).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        let answer: Value = response.json().await.unwrap();
        assert_eq!(answer["code"], "UNAUTHORIZED");
    }
}

#[tokio::test]
async fn wrong_keys_are_refused_past_their_allowance_without_looking_at_the_key() {
    let (_pg, server, _page) = start().await;
    let wrong = ShopClient::new(&server, "sk_nobody_0123456789abcdefghijklmnopqrstuv");
    for _ in 0..payonce_server::sign_in_failures::FAILURES_ALLOWED {
        assert_eq!(wrong.get("checkouts").await.0, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(wrong.get("checkouts").await.0, StatusCode::TOO_MANY_REQUESTS);
    // The same address with the right key is refused too: a guesser learns nothing.
    assert_eq!(ShopClient::new(&server, BOOKS_KEY).get("checkouts").await.0, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn a_checkout_left_unpaid_expires_and_cannot_be_paid_afterwards() {
    let (pg, server, _page) = start().await;
    let shop = ShopClient::new(&server, BOOKS_KEY);
    let mut request = body("ORDER-2");
    request["expires_in"] = json!(1);
    let checkout = shop.create(&request).await;
    let (status, answer) = claim(&server, &server.http, &checkout.id, &token_of(&checkout)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let opened: CustomerCheckout = serde_json::from_value(answer).unwrap();

    let expired = eventually("the checkout expires", Duration::from_secs(10), || async {
        let seen = shop.checkout(&checkout.id).await;
        (seen.status == payonce_api::CheckoutStatus::Expired).then_some(seen)
    })
    .await;
    assert_eq!(expired.failure.map(|failure| failure.code).as_deref(), Some("CHECKOUT_EXPIRED"));
    assert!(expired.next_url.is_none());

    let (status, refused) = server.confirm(&order_of(&opened), &uuid::Uuid::new_v4().to_string()).await;
    assert_eq!((status, refused["code"].as_str()), (StatusCode::CONFLICT, Some("CHECKOUT_EXPIRED")), "{refused}");
    assert_eq!(pg.charges(&checkout.id).await, 0, "nothing reached the PG");
    assert_eq!(server.order(&checkout.id).await.status, OrderStatus::Failed);
}

#[tokio::test]
async fn a_checkout_is_paid_only_through_the_pgs_it_allows() {
    let (_pg, server, _page) = start().await;
    let checkout = ShopClient::new(&server, BOOKS_KEY).create(&body("ORDER-3")).await;
    claim(&server, &server.http, &checkout.id, &token_of(&checkout)).await;
    let response = server
        .http
        .post(format!("{}/api/orders/{}/window", server.url, checkout.id))
        .json(&json!({"pg": "kakaopay"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["code"], "PG_NOT_OFFERED");
}

#[tokio::test]
async fn checkouts_are_listed_newest_first_a_page_at_a_time() {
    let (_pg, server, _page) = start().await;
    let shop = ShopClient::new(&server, BOOKS_KEY);
    let mut made = Vec::new();
    for n in 0..5 {
        made.push(shop.create(&body(if n == 2 { "TWICE" } else { "ONCE" })).await.id);
    }
    made.push(shop.create(&body("TWICE")).await.id);
    let mut seen = Vec::new();
    let mut path = "checkouts?limit=2".to_owned();
    loop {
        let (status, page) = shop.get(&path).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let page: CheckoutList = serde_json::from_value(page).unwrap();
        assert!(page.checkouts.len() <= 2);
        seen.extend(page.checkouts.into_iter().map(|checkout| checkout.id));
        match page.next_cursor {
            Some(cursor) => path = format!("checkouts?limit=2&after={cursor}"),
            None => break,
        }
    }
    made.reverse();
    assert_eq!(seen, made);
    let (_, twice) = shop.get("checkouts?reference=TWICE").await;
    let twice: CheckoutList = serde_json::from_value(twice).unwrap();
    assert_eq!(twice.checkouts.iter().map(|c| c.id.clone()).collect::<Vec<_>>(), [made[0].clone(), made[3].clone()]);
    for bad in ["checkouts?limit=0", "checkouts?limit=101", "checkouts?after=nonsense", "checkouts?colour=red"] {
        let (status, answer) = shop.get(bad).await;
        assert_eq!((status, answer["code"].as_str()), (StatusCode::BAD_REQUEST, Some("INVALID_REQUEST")), "{bad}");
    }
    // Not the page's HTML: an API client is told there is no such route.
    let (status, answer) = shop.get("nothing").await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")));
}

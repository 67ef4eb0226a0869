//! The API's everyday surface: bad input, customers, the page's files, config and metrics.

use crate::support;

use payonce_api::{OrderStatus, Product, ShopConfig};
use reqwest::StatusCode;
use reqwest::header::{CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE};
use serde_json::{Value, json};
use support::{FakePg, Server, assert_charges_agree, customer_cookie};

async fn error_of(response: reqwest::Response) -> (StatusCode, String, String) {
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    let code = body["code"].as_str().unwrap_or_default().to_owned();
    let message = body["message"].as_str().unwrap_or_default().to_owned();
    assert!(!message.is_empty(), "every error explains itself: {body}");
    (status, code, message)
}

#[tokio::test]
async fn bad_orders_are_refused_with_a_code_and_nothing_is_stored() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let orders = format!("{}/api/orders", server.url);
    let cases = [
        (json!({"items": [{"sku": "NO-SUCH", "quantity": 1}]}), "UNKNOWN_SKU"),
        (json!({"items": [{"sku": "CERAMIC-MUG", "quantity": 0}]}), "INVALID_QUANTITY"),
        (json!({"items": [{"sku": "CERAMIC-MUG", "quantity": 100000}]}), "INVALID_QUANTITY"),
        (json!({"items": [{"sku": "CERAMIC-MUG", "quantity": -1}]}), "INVALID_REQUEST"),
        (json!({"items": []}), "INVALID_CART"),
        (json!({"basket": []}), "INVALID_REQUEST"),
    ];
    for (body, expected) in cases {
        let (status, code, message) = error_of(server.http.post(&orders).json(&body).send().await.unwrap()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(code, expected, "{body}: {message}");
    }
    let malformed = server.http.post(&orders).header(CONTENT_TYPE, "application/json").body("{\"items\": [").send();
    let (status, code, _) = error_of(malformed.await.unwrap()).await;
    assert_eq!((status, code.as_str()), (StatusCode::BAD_REQUEST, "INVALID_REQUEST"));

    let orders_list: Vec<Value> = server.http.get(&orders).send().await.unwrap().json().await.unwrap();
    assert!(orders_list.is_empty(), "nothing was stored");
}

#[tokio::test]
async fn oversized_bodies_are_refused_with_413() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let huge = json!({"items": [{"sku": "x".repeat(20_000), "quantity": 1}]});

    let response = server.http.post(format!("{}/api/orders", server.url)).json(&huge).send().await.unwrap();

    let (status, code, _) = error_of(response).await;
    assert_eq!((status, code.as_str()), (StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE"));
}

#[tokio::test]
async fn bad_confirms_are_refused_before_the_pg_is_called() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;
    let confirm_url = format!("{}/api/orders/{}/confirm", server.url, created.order.order_id);
    let good_body = json!({"payment_key": "pk_1", "amount": created.order.amount});

    let missing_key = server.http.post(&confirm_url).json(&good_body).send().await.unwrap();
    assert_eq!(error_of(missing_key).await.1, "INVALID_IDEMPOTENCY_KEY");
    let long_key = server.http.post(&confirm_url).header("Idempotency-Key", "k".repeat(301)).json(&good_body);
    assert_eq!(error_of(long_key.send().await.unwrap()).await.1, "INVALID_IDEMPOTENCY_KEY");
    let malformed = server
        .http
        .post(&confirm_url)
        .header("Idempotency-Key", "key-1")
        .header(CONTENT_TYPE, "application/json")
        .body("not json");
    assert_eq!(error_of(malformed.send().await.unwrap()).await.1, "INVALID_REQUEST");
    let missing_field = server.http.post(&confirm_url).header("Idempotency-Key", "key-1").json(&json!({"amount": 1}));
    let (_, code, message) = error_of(missing_field.send().await.unwrap()).await;
    assert_eq!(code, "INVALID_REQUEST");
    assert!(message.contains("payment_key"), "{message}");
    let empty_payment_key = server
        .http
        .post(&confirm_url)
        .header("Idempotency-Key", "key-1")
        .json(&json!({"payment_key": "", "amount": created.order.amount}));
    assert_eq!(error_of(empty_payment_key.send().await.unwrap()).await.1, "INVALID_REQUEST");
    let unknown_order = server
        .http
        .post(format!("{}/api/orders/ord_nope/confirm", server.url))
        .header("Idempotency-Key", "key-1")
        .json(&good_body);
    let (status, code, _) = error_of(unknown_order.send().await.unwrap()).await;
    assert_eq!((status, code.as_str()), (StatusCode::NOT_FOUND, "ORDER_NOT_FOUND"));
    let huge = json!({"payment_key": "p".repeat(20_000), "amount": created.order.amount});
    let too_large = server.http.post(&confirm_url).header("Idempotency-Key", "key-1").json(&huge);
    let (status, code, _) = error_of(too_large.send().await.unwrap()).await;
    assert_eq!((status, code.as_str()), (StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE"));
    let long_payment_key = json!({"payment_key": "p".repeat(201), "amount": created.order.amount});
    let long_payment_key = server.http.post(&confirm_url).header("Idempotency-Key", "key-1").json(&long_payment_key);
    assert_eq!(error_of(long_payment_key.send().await.unwrap()).await.1, "INVALID_REQUEST");
    let wrong_amount = json!({"payment_key": "pk_1", "amount": created.order.amount + 1});
    let wrong_amount = server.http.post(&confirm_url).header("Idempotency-Key", "key-1").json(&wrong_amount);
    assert_eq!(error_of(wrong_amount.send().await.unwrap()).await.1, "AMOUNT_MISMATCH");

    assert_eq!(pg.stats().await.confirm_requests, 0);
    assert_eq!(server.order(&created.order.order_id).await.status, OrderStatus::Created);
    // None of the refusals above stored key-1: with a good body it goes through.
    let good = server.http.post(&confirm_url).header("Idempotency-Key", "key-1").json(&good_body);
    let paid: Value = good.send().await.unwrap().json().await.unwrap();
    assert_eq!(paid["status"], "PAID");
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

#[tokio::test]
async fn another_customers_order_is_not_found() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;
    let stranger = server.other_customer();

    let look = stranger.get(format!("{}/api/orders/{}", server.url, created.order.order_id)).send().await.unwrap();
    assert_eq!(look.status(), StatusCode::NOT_FOUND);
    let pay = stranger
        .post(format!("{}/api/orders/{}/confirm", server.url, created.order.order_id))
        .header("Idempotency-Key", "key-stranger")
        .json(&json!({"payment_key": "pk", "amount": created.order.amount}))
        .send()
        .await
        .unwrap();
    assert_eq!(pay.status(), StatusCode::NOT_FOUND);
    let list: Vec<Value> =
        stranger.get(format!("{}/api/orders", server.url)).send().await.unwrap().json().await.unwrap();
    assert!(list.is_empty());
    assert_eq!(pg.stats().await.confirm_requests, 0);
}

#[tokio::test]
async fn the_customer_cookie_is_http_only_and_lax() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;

    let response = reqwest::get(format!("{}/api/catalog", server.url)).await.unwrap();

    let cookie = response.headers().get("set-cookie").unwrap().to_str().unwrap().to_owned();
    assert!(cookie.starts_with("payonce_customer="), "{cookie}");
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax") && cookie.contains("Path=/"), "{cookie}");
}

/// What `cookie`'s customer sees of their orders, and the cookie the answer
/// sets, if any.
async fn orders_seen_with(server: &Server, cookie: &str) -> (Vec<Value>, Option<String>) {
    let response =
        reqwest::Client::new().get(format!("{}/api/orders", server.url)).header("cookie", cookie).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let set_cookie = response.headers().get("set-cookie").map(|value| value.to_str().unwrap().to_owned());
    (response.json().await.unwrap(), set_cookie)
}

#[tokio::test]
async fn only_a_cookie_the_shop_signed_reads_its_customers_orders() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let cookie = customer_cookie(server.other_customer().get(format!("{}/api/catalog", server.url)))
        .await
        .expect("a new customer gets a cookie");
    let created = reqwest::Client::new()
        .post(format!("{}/api/orders", server.url))
        .header("cookie", &cookie)
        .json(&json!({"items": [{"sku": "CERAMIC-MUG", "quantity": 1}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);

    let (orders, reissued) = orders_seen_with(&server, &cookie).await;
    assert_eq!(orders.len(), 1, "the customer sees their order");
    assert_eq!(reissued, None, "and keeps their cookie");

    // The customer's id is the 36 characters after the signature, before the time it was signed.
    let signed = cookie.rsplit_once('.').expect("the cookie carries when it was signed").0;
    let id = &signed[signed.len() - 36..];
    uuid::Uuid::parse_str(id).expect("the cookie names its customer");
    let signature_flipped = {
        let (name, value) = cookie.split_once('=').unwrap();
        let first = if value.starts_with('A') { 'B' } else { 'A' };
        format!("{name}={first}{}", &value[1..])
    };
    for forged in [format!("payonce_customer={id}"), signature_flipped, format!("payonce_customer=x{id}")] {
        let (orders, reissued) = orders_seen_with(&server, &forged).await;
        assert!(orders.is_empty(), "{forged}: a cookie the shop did not sign reads nothing");
        let reissued = reissued.expect("a new customer, with a cookie of its own");
        assert!(!reissued.contains(id), "{forged}: the new customer is not the one named: {reissued}");
    }
}

#[tokio::test]
async fn orders_are_listed_newest_first_and_the_recent_payment_is_found() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let recent_url = format!("{}/api/orders/recent", server.url);
    let nothing: Value = server.http.get(&recent_url).send().await.unwrap().json().await.unwrap();
    assert_eq!(nothing, Value::Null);

    let first = server.create_order().await;
    let second = server.create_order().await;
    let unpaid: Value = server.http.get(&recent_url).send().await.unwrap().json().await.unwrap();
    assert_eq!(unpaid, Value::Null, "an unpaid order is not a recent payment");
    server.confirm(&first.order, "key-recent").await;

    let recent: Value = server.http.get(&recent_url).send().await.unwrap().json().await.unwrap();
    assert_eq!(recent["order_id"], first.order.order_id.as_str());
    assert_eq!(recent["status"], "PAID");
    let list: Vec<Value> =
        server.http.get(format!("{}/api/orders", server.url)).send().await.unwrap().json().await.unwrap();
    let ids: Vec<_> = list.iter().map(|order| order["order_id"].as_str().unwrap()).collect();
    assert_eq!(ids, [second.order.order_id.as_str(), first.order.order_id.as_str()]);
    assert_charges_agree(&pg, &server, &[&first.order.order_id, &second.order.order_id]).await;
}

#[tokio::test]
async fn orders_are_priced_by_the_server_and_say_where_the_pg_window_returns() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let catalog: Vec<Product> =
        server.http.get(format!("{}/api/catalog", server.url)).send().await.unwrap().json().await.unwrap();
    let mug = catalog.iter().find(|product| product.sku == "CERAMIC-MUG").unwrap();

    let created = server.create_order().await;

    assert_eq!(created.order.amount, mug.price * 2);
    assert_eq!(created.order.status, OrderStatus::Created);
    assert_eq!(created.success_url, format!("{}/pay/success", server.url));
    assert_eq!(created.fail_url, format!("{}/pay/fail", server.url));
    let page = reqwest::get(pg.window_url(&created)).await.unwrap();
    assert_eq!(page.status(), StatusCode::OK, "the fake PG opens a window for the order");
}

#[tokio::test]
async fn config_publishes_the_page_timings_the_servers_limit_and_the_pgs_sdk() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;

    let shop: ShopConfig =
        server.http.get(format!("{}/api/config", server.url)).send().await.unwrap().json().await.unwrap();

    let config = shop.timings;
    assert_eq!(config.confirm_wait_ms, 15_000);
    assert_eq!(config.check_interval_ms, 2_000);
    assert_eq!(config.max_checks, 25);
    assert_eq!(config.server_max_processing_ms, 2_500, "connect 500ms + read 2s in the test config");
    assert_eq!(config.check_wait_ms, 2_000);
    assert_eq!(shop.payment_sdk.url, format!("{}/v2/standard", pg.url));
    assert_eq!(shop.payment_sdk.client_key, fake_pg::DEFAULT_CLIENT_KEY);
    assert!(!shop.kakaopay, "a shop without KakaoPay's URL takes cards only");
    let sdk = reqwest::get(&shop.payment_sdk.url).await.unwrap();
    assert_eq!(sdk.status(), StatusCode::OK, "the fake PG serves the SDK where the page is told to load it");
}

#[tokio::test]
async fn unknown_api_routes_are_json_404s_and_health_and_metrics_answer() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    server.create_order().await;

    let (status, code, _) = error_of(server.http.get(format!("{}/api/nope", server.url)).send().await.unwrap()).await;
    assert_eq!((status, code.as_str()), (StatusCode::NOT_FOUND, "NOT_FOUND"));
    let health = server.http.get(format!("{}/healthz", server.url)).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    let metrics = server.metrics().await;
    assert!(metrics.contains("http_requests_total{route=\"/api/orders\",status=\"201\"}"), "{metrics}");
}

#[tokio::test]
async fn the_page_is_served_with_an_spa_fallback_and_the_right_caching() {
    let pg = FakePg::start().await;
    let page = tempfile::tempdir().unwrap();
    let index = format!("<!doctype html><title>payonce</title>{}", "<p>checkout</p>".repeat(100));
    std::fs::write(page.path().join("index.html"), &index).unwrap();
    std::fs::write(page.path().join("payonce-page-0123456789abcdef_bg.wasm"), vec![0u8; 4096]).unwrap();
    std::fs::write(page.path().join("payonce-page-0123456789abcdef_bg.wasm.br"), b"precompressed").unwrap();
    let static_dir = page.path().to_path_buf();
    let server = Server::start_with(&pg.url, move |config| config.static_dir = Some(static_dir)).await;
    let get = |path: &str| server.http.get(format!("{}{path}", server.url)).header("Accept-Encoding", "gzip").send();

    let root = get("/").await.unwrap();
    assert_eq!(root.headers()[CACHE_CONTROL], "no-cache");
    assert_eq!(root.headers()[CONTENT_ENCODING], "gzip");
    let root = server.http.get(format!("{}/", server.url)).send().await.unwrap().text().await.unwrap();
    assert_eq!(root, index, "without cart.html, / is the whole app");
    let deep_link = server.http.get(format!("{}/pay/success?paymentKey=pk&orderId=o&amount=1", server.url));
    let deep_link = deep_link.send().await.unwrap();
    assert_eq!(deep_link.status(), StatusCode::OK);
    assert_eq!(deep_link.headers()[CACHE_CONTROL], "no-cache");
    assert!(deep_link.text().await.unwrap().contains("<title>payonce</title>"));
    let wasm = get("/payonce-page-0123456789abcdef_bg.wasm").await.unwrap();
    assert_eq!(wasm.headers()[CONTENT_TYPE], "application/wasm");
    assert_eq!(wasm.headers()[CACHE_CONTROL], "public, max-age=31536000, immutable");
    let precompressed = server
        .http
        .get(format!("{}/payonce-page-0123456789abcdef_bg.wasm", server.url))
        .header("Accept-Encoding", "br")
        .send()
        .await
        .unwrap();
    assert_eq!(precompressed.headers()[CONTENT_ENCODING], "br");
    assert_eq!(precompressed.bytes().await.unwrap().as_ref(), b"precompressed", "the .br file is sent as it is");
    let api_miss = get("/api/orders/nope").await.unwrap();
    assert_eq!(api_miss.headers()[CONTENT_TYPE], "application/json");
}

#[tokio::test]
async fn the_cart_bundle_is_served_at_the_root_and_the_whole_app_everywhere_else() {
    let pg = FakePg::start().await;
    let page = tempfile::tempdir().unwrap();
    std::fs::write(page.path().join("index.html"), "<title>whole app</title>").unwrap();
    std::fs::write(page.path().join("cart.html"), "<title>cart alone</title>").unwrap();
    let static_dir = page.path().to_path_buf();
    let server = Server::start_with(&pg.url, move |config| config.static_dir = Some(static_dir)).await;
    let body = |path: &'static str| {
        let request = server.http.get(format!("{}{path}", server.url)).send();
        async move {
            let response = request.await.unwrap();
            assert_eq!(response.headers()[CACHE_CONTROL], "no-cache", "{path}");
            response.text().await.unwrap()
        }
    };

    assert_eq!(body("/").await, "<title>cart alone</title>");
    assert_eq!(body("/?from=ad").await, "<title>cart alone</title>");
    assert_eq!(body("/orders").await, "<title>whole app</title>");
    assert_eq!(body("/pay/success?paymentKey=pk&orderId=o&amount=1").await, "<title>whole app</title>");
}

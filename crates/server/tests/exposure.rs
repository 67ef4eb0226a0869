//! What the server shows to the internet, and what it refuses there: the
//! operators' routes live on their own listener, every public response carries
//! the security headers, slow and oversized requests are cut off, and rate
//! limits answer in the API's own shape.

use crate::support;

use std::time::Duration;

use base64::Engine;
use reqwest::StatusCode;
use reqwest::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, REFERRER_POLICY, RETRY_AFTER, SET_COOKIE, STRICT_TRANSPORT_SECURITY,
    X_CONTENT_TYPE_OPTIONS,
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use support::{FakePg, Server, eventually};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[tokio::test]
async fn metrics_are_served_to_operators_only() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;

    let public = server.http.get(format!("{}/metrics", server.url)).send().await.unwrap();
    assert_eq!(public.status(), StatusCode::NOT_FOUND);
    let admin = server.http.get(format!("{}/metrics", server.admin_url)).send().await.unwrap();
    assert_eq!(admin.status(), StatusCode::OK);
    assert!(admin.text().await.unwrap().contains("# TYPE"), "Prometheus text");
    let api_on_admin = server.http.get(format!("{}/api/catalog", server.admin_url)).send().await.unwrap();
    assert_eq!(api_on_admin.status(), StatusCode::NOT_FOUND, "the admin listener serves no API");
    for url in [&server.url, &server.admin_url] {
        let health = server.http.get(format!("{url}/healthz")).send().await.unwrap();
        assert_eq!(health.status(), StatusCode::OK, "load balancers and operators both check health");
    }
}

#[tokio::test]
async fn the_page_and_the_api_carry_the_security_headers_and_the_policy_allows_exactly_the_inline_scripts_and_the_sdk()
{
    let pg = FakePg::start().await;
    let page = tempfile::tempdir().unwrap();
    let script = "\nimport init from '/payonce-page-0123456789abcdef.js';\nawait init();\n";
    let index = format!("<!doctype html><script type=\"module\">{script}</script><script src=\"/x.js\"></script>");
    std::fs::write(page.path().join("index.html"), index).unwrap();
    let static_dir = page.path().to_path_buf();
    let server = Server::start_with(&pg.url, move |config| config.static_dir = Some(static_dir)).await;

    let expected_hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(script.as_bytes()));
    for path in ["/", "/pay/success", "/api/catalog", "/api/nope"] {
        let response = server.http.get(format!("{}{path}", server.url)).send().await.unwrap();
        let headers = response.headers();
        let policy = headers[CONTENT_SECURITY_POLICY].to_str().unwrap();
        let sdk_origin = &pg.url; // the fake PG serves the SDK at /v2/standard
        assert!(
            policy.contains(&format!("script-src 'self' 'wasm-unsafe-eval' {sdk_origin} 'sha256-")),
            "{path}: {policy}"
        );
        assert!(policy.contains(&format!("frame-src {sdk_origin};")), "its window may be framed: {policy}");
        assert_eq!(
            policy.matches(sdk_origin.as_str()).count(),
            2,
            "the SDK's origin, for scripts and frames only: {policy}"
        );
        assert!(policy.contains(&format!("'sha256-{expected_hash}'")), "{path}: the inline script's hash: {policy}");
        assert!(policy.contains("frame-ancestors 'none'") && !policy.contains("unsafe-inline"), "{path}");
        assert_eq!(headers[X_CONTENT_TYPE_OPTIONS], "nosniff", "{path}");
        assert_eq!(headers[REFERRER_POLICY], "strict-origin-when-cross-origin", "{path}");
        assert_eq!(headers["x-frame-options"], "DENY", "{path}");
    }
}

/// A staging shop: an https address, and the fake PG's test keys allowed there.
fn https_with_test_keys(config: &mut payonce_server::ServerConfig) {
    config.public_url = Some("https://shop.example".to_owned());
    config.allow_test_keys = true;
}

#[tokio::test]
async fn a_staging_shop_on_test_keys_says_on_every_page_and_in_its_config_that_payments_are_tests() {
    let pg = FakePg::start().await;
    let page = tempfile::tempdir().unwrap();
    for name in ["index.html", "cart.html", "checkout.html"] {
        std::fs::write(page.path().join(name), format!("<!doctype html><html><body>{name}</body></html>")).unwrap();
    }
    let staging = Server::start_with(&pg.url, |config| {
        https_with_test_keys(config);
        config.static_dir = Some(page.path().to_owned());
    })
    .await;
    let demo = Server::start_with(&pg.url, |config| config.static_dir = Some(page.path().to_owned())).await;

    let config_of = |server: &Server| {
        let (http, url) = (server.http.clone(), format!("{}/api/config", server.url));
        async move { http.get(url).send().await.unwrap().json::<Value>().await.unwrap() }
    };
    assert_eq!(config_of(&staging).await["test_payments"], true);
    assert_eq!(config_of(&demo).await["test_payments"], false, "on its own machine, test keys are the demo's");
    for path in ["/", "/checkout/ord_books_0193f1c2", "/orders/ord_1"] {
        let text = staging.http.get(format!("{}{path}", staging.url)).send().await.unwrap().text().await.unwrap();
        assert!(text.contains("Test payments: no money moves at this shop."), "{path}: {text}");
        assert!(text.contains("테스트 결제"), "{path}: in Korean too");
        let text = demo.http.get(format!("{}{path}", demo.url)).send().await.unwrap().text().await.unwrap();
        assert!(!text.contains("Test payments"), "{path}");
    }
}

#[tokio::test]
async fn the_customer_cookie_is_secure_when_the_shop_is_served_over_https() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, https_with_test_keys).await;

    let response = server.http.get(format!("{}/api/orders", server.url)).send().await.unwrap();

    let cookie = response.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    assert!(cookie.contains("Secure") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"), "{cookie}");
}

#[tokio::test]
async fn a_shop_served_over_https_tells_browsers_to_keep_to_https_and_one_over_http_does_not() {
    let pg = FakePg::start().await;
    let https = Server::start_with(&pg.url, https_with_test_keys).await;
    let plain = Server::start(&pg.url).await;

    for path in ["/api/catalog", "/healthz"] {
        let response = https.http.get(format!("{}{path}", https.url)).send().await.unwrap();
        assert_eq!(response.headers()[STRICT_TRANSPORT_SECURITY], "max-age=63072000", "{path}");
        let response = plain.http.get(format!("{}{path}", plain.url)).send().await.unwrap();
        assert!(response.headers().get(STRICT_TRANSPORT_SECURITY).is_none(), "{path} over plain http");
    }
}

#[tokio::test]
async fn no_cache_keeps_a_customers_orders_or_anything_the_operators_listener_says() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| {
        config.admin_token = Some("operators-token-of-32-characters-or-more".into())
    })
    .await;
    let created = server.create_order().await;

    for path in [format!("/api/orders/{}", created.order.order_id), "/api/orders".to_owned(), "/api/nope".to_owned()] {
        let response = server.http.get(format!("{}{path}", server.url)).send().await.unwrap();
        assert_eq!(response.headers()[CACHE_CONTROL], "no-store", "{path}");
    }
    for path in ["/admin/orders", "/admin/nope", "/metrics", "/healthz", "/admin/"] {
        let response = server
            .http
            .get(format!("{}{path}", server.admin_url))
            .bearer_auth("operators-token-of-32-characters-or-more")
            .send()
            .await
            .unwrap();
        let headers = response.headers();
        assert_eq!(headers[CACHE_CONTROL], "no-store", "{path}");
        assert_eq!(headers[REFERRER_POLICY], "no-referrer", "{path}");
        assert_eq!(headers[X_CONTENT_TYPE_OPTIONS], "nosniff", "{path}");
    }
}

#[tokio::test]
async fn once_there_is_an_admin_token_the_metrics_and_the_operators_api_description_need_it() {
    let pg = FakePg::start().await;
    let open = Server::start(&pg.url).await;
    let guarded = Server::start_with(&pg.url, |config| {
        config.admin_token = Some("operators-token-of-32-characters-or-more".into())
    })
    .await;

    for path in ["/metrics", "/admin/openapi.json"] {
        let without_token = open.http.get(format!("{}{path}", open.admin_url)).send().await.unwrap();
        assert_eq!(without_token.status(), StatusCode::OK, "{path} with the operators' API off");

        let anyone = guarded.http.get(format!("{}{path}", guarded.admin_url)).send().await.unwrap();
        assert_eq!(anyone.status(), StatusCode::UNAUTHORIZED, "{path} without the token");
        let body: Value = anyone.json().await.unwrap();
        assert_eq!(body["code"], "UNAUTHORIZED", "{path}: {body}");
        let wrong = guarded.http.get(format!("{}{path}", guarded.admin_url)).bearer_auth("guess").send().await.unwrap();
        assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED, "{path} with a wrong token");
        let operator = guarded
            .http
            .get(format!("{}{path}", guarded.admin_url))
            .bearer_auth("operators-token-of-32-characters-or-more")
            .send()
            .await
            .unwrap();
        assert_eq!(operator.status(), StatusCode::OK, "{path} with the token");
    }
    let health = guarded.http.get(format!("{}/healthz", guarded.admin_url)).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK, "health needs no token");
}

/// Connects to the server's public port.
async fn connect(server: &Server) -> TcpStream {
    TcpStream::connect(server.url.trim_start_matches("http://")).await.unwrap()
}

/// Reads what the server sends until it closes the connection (or `within` passes).
async fn read_until_closed(stream: &mut TcpStream, within: Duration) -> Option<String> {
    let mut received = Vec::new();
    let read = tokio::time::timeout(within, stream.read_to_end(&mut received)).await;
    read.ok().map(|_| String::from_utf8_lossy(&received).into_owned())
}

/// A connection to `server` from `from`, one of this machine's loopback
/// addresses: each is a client of its own to the server's per-client caps.
async fn connect_from(server: &Server, from: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    socket.connect(server.url.trim_start_matches("http://").parse().unwrap()).await.unwrap()
}

/// What a client that never brings a request sends: nothing, half of HTTP/2's
/// preface, or the preface (and its SETTINGS frame) and then nothing.
const SILENT_OPENINGS: [&[u8]; 3] =
    [b"", b"PRI * HTTP/2.0\r\n", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"];

#[tokio::test]
async fn connections_that_never_bring_a_request_are_closed_within_the_client_timeout_on_both_listeners() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| {
        config.client_timeout = Duration::from_millis(500);
        config.admin_token = Some("operators-token-of-32-characters-or-more".into());
    })
    .await;
    let mut held = Vec::new();
    for url in [&server.url, &server.admin_url] {
        for opening in SILENT_OPENINGS {
            for _ in 0..10 {
                let mut stream = TcpStream::connect(url.trim_start_matches("http://")).await.unwrap();
                stream.write_all(opening).await.unwrap();
                held.push((url.clone(), opening, stream));
            }
        }
    }

    for (url, opening, stream) in &mut held {
        let closed = read_until_closed(stream, Duration::from_secs(10)).await;
        assert!(closed.is_some(), "{url}: a connection that sent {opening:?} is still open");
    }
    let catalog = server.http.get(format!("{}/api/catalog", server.url)).send().await.unwrap();
    assert_eq!(catalog.status(), StatusCode::OK, "a client that sends its request is served");
}

/// Sends a health check on `stream`, keeping the connection open, and reads
/// the answer: the server's whole answer to it (a turned-away connection's
/// 429, sent before anything is read, included).
async fn health_on(stream: &mut TcpStream) -> String {
    let _ = stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: shop\r\n\r\n").await;
    let mut received = Vec::new();
    let mut chunk = [0; 4096];
    loop {
        let text = String::from_utf8_lossy(&received).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|line| line.to_ascii_lowercase().strip_prefix("content-length: ").map(str::to_owned))
                .and_then(|length| length.trim().parse::<usize>().ok());
            if length.is_some_and(|length| body.len() >= length) {
                return text;
            }
        }
        match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk)).await {
            Ok(Ok(read)) if read > 0 => received.extend_from_slice(&chunk[..read]),
            _ => return String::from_utf8_lossy(&received).into_owned(),
        }
    }
}

/// Whether a new connection from `from` is served.
async fn served_from(server: &Server, from: &str) -> Option<()> {
    let mut stream = connect_from(server, from).await;
    health_on(&mut stream).await.starts_with("HTTP/1.1 200").then_some(())
}

fn turned_away(answer: &str) -> bool {
    let Some((head, body)) = answer.split_once("\r\n\r\n") else {
        return false;
    };
    head.starts_with("HTTP/1.1 429 ")
        && head.contains("retry-after: 1")
        && serde_json::from_str::<Value>(body).is_ok_and(|body| body["code"] == "RATE_LIMITED")
}

#[tokio::test]
async fn a_client_holding_its_share_of_connections_is_answered_429_and_another_client_is_served() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| {
        config.max_connections_per_client = 4;
        // Long enough that no held connection is closed for idling during the test.
        config.client_timeout = Duration::from_secs(60);
    })
    .await;
    // One client holds its four connections, each served once and kept open.
    let mut flood = Vec::new();
    for _ in 0..4 {
        let mut stream = connect_from(&server, "127.0.0.2").await;
        let answer = health_on(&mut stream).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        flood.push(stream);
    }

    let mut fifth = connect_from(&server, "127.0.0.2").await;
    let answer = health_on(&mut fifth).await;
    assert!(turned_away(&answer), "the fifth: {answer}");
    assert!(read_until_closed(&mut fifth, Duration::from_secs(10)).await.is_some(), "and closed");
    let catalog = server.http.get(format!("{}/api/catalog", server.url)).send().await.unwrap();
    assert_eq!(catalog.status(), StatusCode::OK, "another client (127.0.0.1) is served");

    drop(flood.pop());
    eventually("a closed connection's place is the client's again", Duration::from_secs(10), || {
        served_from(&server, "127.0.0.2")
    })
    .await;
}

#[tokio::test]
async fn past_its_total_of_connections_the_server_answers_429_until_one_closes() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| {
        config.max_connections = 3;
        config.client_timeout = Duration::from_secs(60);
    })
    .await;
    // Clients of their own, served and kept open, until the server turns one
    // away (the test's own client may hold one of the three).
    let mut held = Vec::new();
    let mut answer = String::new();
    for from in ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"] {
        let mut stream = connect_from(&server, from).await;
        answer = health_on(&mut stream).await;
        if !answer.starts_with("HTTP/1.1 200") {
            break;
        }
        held.push(stream);
    }
    assert!(turned_away(&answer), "{} held, then: {answer}", held.len());
    assert!((2..=3).contains(&held.len()), "{} held", held.len());

    drop(held.pop());
    eventually("a closed connection's place is free again", Duration::from_secs(10), || {
        served_from(&server, "127.0.0.6")
    })
    .await;
}

#[tokio::test]
async fn a_client_that_sends_its_request_head_too_slowly_is_cut_off_and_others_are_served() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| config.client_timeout = Duration::from_millis(500)).await;
    let mut slow = connect(&server).await;
    slow.write_all(b"GET /api/catalog HTTP/1.1\r\nHost: shop\r\n").await.unwrap(); // and never the blank line

    let answer = read_until_closed(&mut slow, Duration::from_secs(5)).await;

    let answer = answer.expect("the server closed the connection of the slow client");
    assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 408"), "{answer:?}");
    let catalog = server.http.get(format!("{}/api/catalog", server.url)).send().await.unwrap();
    assert_eq!(catalog.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_body_sent_too_slowly_is_refused_with_a_code_and_nothing_is_stored() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| config.client_timeout = Duration::from_millis(500)).await;
    let mut slow = connect(&server).await;
    let head =
        "POST /api/orders HTTP/1.1\r\nHost: shop\r\nContent-Type: application/json\r\nContent-Length: 60\r\n\r\n";
    slow.write_all(head.as_bytes()).await.unwrap();
    slow.write_all(b"{\"items\":[").await.unwrap(); // and the rest never comes

    let answer = read_until_closed(&mut slow, Duration::from_secs(5)).await.expect("an answer in time");

    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"code\":\"REQUEST_TIMEOUT\""), "{answer}");
    let db = server.db().await;
    assert_eq!(db.count_unsettled().await.unwrap(), 0);
}

#[tokio::test]
async fn a_body_sent_too_slowly_to_the_operators_listener_is_refused_with_a_code_and_nothing_is_refunded() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| {
        config.client_timeout = Duration::from_millis(500);
        config.admin_token = Some("a-long-enough-operators-token-for-the-server".into());
    })
    .await;
    let paid = server.paid_order().await;
    let mut slow = TcpStream::connect(server.admin_url.trim_start_matches("http://")).await.unwrap();
    let head = format!(
        "POST /admin/orders/{}/cancel HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer a-long-enough-operators-token-for-the-server\r\n\
         Idempotency-Key: slow-refund\r\nContent-Type: application/json\r\nContent-Length: 60\r\n\r\n",
        paid.order_id
    );
    slow.write_all(head.as_bytes()).await.unwrap();
    slow.write_all(b"{\"amount\":").await.unwrap(); // and the rest never comes

    let answer = read_until_closed(&mut slow, Duration::from_secs(5)).await.expect("an answer in time");

    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"code\":\"REQUEST_TIMEOUT\""), "{answer}");
    assert_eq!(server.order(&paid.order_id).await.status, payonce_api::OrderStatus::Paid, "nothing refunded");
}

#[tokio::test]
async fn an_oversized_request_head_is_refused() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;

    let response =
        server.http.get(format!("{}/api/catalog", server.url)).header("X-Padding", "x".repeat(40 * 1024)).send().await;

    match response {
        Ok(response) => assert_eq!(response.status(), StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE),
        Err(error) => assert!(error.is_request() || error.is_connect() || error.is_body(), "{error}"),
    }
    let catalog = server.http.get(format!("{}/api/catalog", server.url)).send().await.unwrap();
    assert_eq!(catalog.status(), StatusCode::OK, "the server still serves");
}

#[tokio::test]
async fn a_customer_over_the_rate_limit_gets_429_with_retry_after_and_others_are_not_slowed() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| config.rate_limit_customer = 20).await; // a burst of 5
    let cart = json!({"items": [{"sku": "CERAMIC-MUG", "quantity": 1}]});
    let orders = format!("{}/api/orders", server.url);
    let mut statuses = Vec::new();
    for _ in 0..8 {
        statuses.push(server.http.post(&orders).json(&cart).send().await.unwrap());
    }

    let created = statuses.iter().filter(|response| response.status() == StatusCode::CREATED).count();
    assert_eq!(created, 5, "the burst, then refusals");
    let refused = statuses.pop().unwrap();
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = refused.headers()[RETRY_AFTER].to_str().unwrap().parse().unwrap();
    assert!((1..=3).contains(&retry_after), "{retry_after}");
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["code"], "RATE_LIMITED");
    assert!(body["message"].as_str().unwrap().contains("try again"));
    let listed = server.http.get(&orders).send().await.unwrap();
    assert_eq!(listed.status(), StatusCode::OK, "reading has a limit of its own");
    let other = server.other_customer().post(&orders).json(&cart).send().await.unwrap();
    assert_eq!(other.status(), StatusCode::CREATED, "another customer is not limited by this one");
}

#[tokio::test]
async fn one_address_over_its_limit_is_refused_whatever_its_cookies() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| config.rate_limit_address = 20).await;
    let cart = json!({"items": [{"sku": "CERAMIC-MUG", "quantity": 1}]});
    let mut codes = Vec::new();
    for _ in 0..8 {
        // A new customer each time, as a client that drops its cookies would be.
        let response =
            reqwest::Client::new().post(format!("{}/api/orders", server.url)).json(&cart).send().await.unwrap();
        codes.push(response.status());
    }
    assert_eq!(codes.iter().filter(|status| **status == StatusCode::CREATED).count(), 5);
    assert_eq!(codes.last(), Some(&StatusCode::TOO_MANY_REQUESTS));
}

#[tokio::test]
async fn a_customer_checking_without_pause_gets_429_with_retry_after_and_others_still_read() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| config.rate_limit_customer_reads = 20).await; // a burst of 5
    let order = server.create_order().await.order;
    let check = format!("{}/api/orders/{}", server.url, order.order_id);
    let mut answers = Vec::new();
    for _ in 0..8 {
        answers.push(server.http.get(&check).send().await.unwrap());
    }

    assert_eq!(
        answers.iter().filter(|answer| answer.status() == StatusCode::OK).count(),
        5,
        "the burst, then refusals"
    );
    let refused = answers.pop().unwrap();
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = refused.headers()[RETRY_AFTER].to_str().unwrap().parse().unwrap();
    assert!((1..=3).contains(&retry_after), "{retry_after}");
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["code"], "RATE_LIMITED");
    let other = server.other_customer().get(format!("{}/api/catalog", server.url)).send().await.unwrap();
    assert_eq!(other.status(), StatusCode::OK, "another customer still reads");
    let confirm = server.confirm_request(&order, "key-after-reads").send().await.unwrap();
    assert_eq!(confirm.status(), StatusCode::OK, "reads do not spend the customer's writes");
}

#[tokio::test]
async fn one_address_reading_without_pause_is_refused_whatever_its_cookies() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| config.rate_limit_address_reads = 20).await;
    let mut codes = Vec::new();
    for _ in 0..8 {
        let response = reqwest::Client::new().get(format!("{}/api/catalog", server.url)).send().await.unwrap();
        codes.push(response.status());
    }
    assert_eq!(codes.iter().filter(|status| **status == StatusCode::OK).count(), 5);
    assert_eq!(codes.last(), Some(&StatusCode::TOO_MANY_REQUESTS));
}

#[tokio::test]
async fn a_client_that_never_keeps_its_cookie_is_bounded_per_address_and_customers_it_made_earlier_go_on() {
    let pg = FakePg::start().await;
    // One new customer a minute, five at once: a refill never comes within the test.
    let server = Server::start_with(&pg.url, |config| config.rate_limit_new_customers = 1).await;
    let orders = format!("{}/api/orders", server.url);
    let cart = json!({"items": [{"sku": "CERAMIC-MUG", "quantity": 1}]});
    // A browser that came earlier, and keeps its cookie.
    let browser = server.other_customer();
    assert_eq!(browser.get(format!("{}/api/catalog", server.url)).send().await.unwrap().status(), StatusCode::OK);

    // A client that keeps no cookie: each request a new customer, each order one more row.
    let mut created = 0;
    let mut refused = None;
    for _ in 0..8 {
        let response = reqwest::Client::new().post(&orders).json(&cart).send().await.unwrap();
        match response.status() {
            StatusCode::CREATED => created += 1,
            StatusCode::TOO_MANY_REQUESTS => refused = Some(response),
            other => panic!("{other}"),
        }
    }

    assert_eq!(created, 4, "the burst of five, less the browser's own first visit");
    let refused = refused.expect("the rest refused");
    assert!(refused.headers().contains_key("retry-after"));
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["code"], "RATE_LIMITED", "{body}");
    let ordered = browser.post(&orders).json(&cart).send().await.unwrap();
    assert_eq!(ordered.status(), StatusCode::CREATED, "a customer that keeps its cookie spends none of it");
}

#[tokio::test]
async fn the_api_is_published_as_openapi_and_every_operation_in_it_is_served() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;

    let spec: Value =
        server.http.get(format!("{}/api/openapi.json", server.url)).send().await.unwrap().json().await.unwrap();

    assert!(spec["openapi"].as_str().unwrap().starts_with("3."), "{spec}");
    let paths = spec["paths"].as_object().unwrap();
    let mut operations: Vec<(String, String)> = paths
        .iter()
        .flat_map(|(path, item)| item.as_object().unwrap().keys().map(move |method| (method.clone(), path.clone())))
        .filter(|(key, _)| key != "servers")
        .collect();
    for (path, item) in paths {
        let server = item["servers"][0]["url"].as_str();
        assert_eq!(
            server,
            path.starts_with("/v1/").then_some("/"),
            "{path}: the shop API is at the root, the rest under /api"
        );
    }
    operations.sort();
    let expected = [
        ("get", "/catalog"),
        ("get", "/checkouts/{order_id}"),
        ("get", "/config"),
        ("get", "/orders"),
        ("get", "/orders/recent"),
        ("get", "/orders/{order_id}"),
        ("post", "/orders"),
        ("post", "/orders/{order_id}/abandon"),
        ("post", "/orders/{order_id}/cancel"),
        ("post", "/orders/{order_id}/confirm"),
        ("post", "/orders/{order_id}/window"),
        ("post", "/checkouts/{order_id}/claim"),
        ("post", "/webhooks/toss"),
        // The shop API, at the root (each of its paths names `/` as its server).
        ("get", "/v1/checkouts"),
        ("get", "/v1/checkouts/{checkout_id}"),
        ("post", "/v1/checkouts"),
        ("post", "/v1/checkouts/{checkout_id}/refunds"),
        ("get", "/v1/events"),
    ];
    let mut expected: Vec<(String, String)> =
        expected.iter().map(|(m, p)| ((*m).to_owned(), (*p).to_owned())).collect();
    expected.sort();
    assert_eq!(operations, expected);
    for (method, path) in &operations {
        let path =
            path.replace("{order_id}", &created.order.order_id).replace("{checkout_id}", &created.order.order_id);
        let url = match path.starts_with("/v1/") {
            true => format!("{}{path}", server.url),
            false => format!("{}/api{path}", server.url),
        };
        let request = match method.as_str() {
            "get" => server.http.get(&url),
            _ => server.http.post(&url).header("Idempotency-Key", "key-spec").json(&json!({})),
        };
        let response = request.send().await.unwrap();
        let status = response.status();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        assert!(
            status != StatusCode::METHOD_NOT_ALLOWED && body["code"] != "NOT_FOUND",
            "{method} {path}: {status} {body}"
        );
    }
    let schemas = [
        "Order",
        "OrderStatus",
        "CreatedOrder",
        "ConfirmRequest",
        "WindowRequest",
        "PgWindow",
        "ApiErrorBody",
        "PageConfig",
    ];
    for schema in schemas.into_iter().chain(["Product", "Checkout", "CustomerCheckout", "CreateCheckoutRequest"]) {
        assert!(spec["components"]["schemas"].get(schema).is_some(), "schema {schema}");
    }
}

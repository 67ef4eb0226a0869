//! Operators by name, over real HTTP to the admin listener: each operator's
//! own token from the operators file, the audit log naming the token's
//! operator whatever the request claims, read-only operators refused every
//! POST with nothing changed, wrong tokens throttled per client address, and
//! the listener answering only to its own host names.

use crate::support;

use std::net::{IpAddr, Ipv4Addr};

use payonce_api::OrderStatus;
use payonce_server::operators::{Operators, file_line};
use payonce_server::sign_in_failures::FAILURES_ALLOWED;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use support::{FakePg, Server, assert_charges_agree};

const JIWOO: &str = "jiwoo-refunds-0123456789abcdefghijklmnop";
const MINSEO: &str = "minseo-reads-0123456789abcdefghijklmnop";

/// A shop whose operators file names jiwoo (refund) and minseo (read-only).
async fn shop(pg: &FakePg) -> Server {
    let file = format!(
        "# the shop's operators\n{}\n{}\n",
        file_line("jiwoo", "refund", JIWOO).unwrap(),
        file_line("minseo", "read-only", MINSEO).unwrap()
    );
    Server::start_with(&pg.url, |config| {
        config.operators = Operators::parse(&file).unwrap();
        config.admin_hosts = vec!["ops.shop.internal".to_owned()];
    })
    .await
}

/// Sends `request` from `client` (whose address it comes from).
async fn send(
    client: &reqwest::Client,
    request: reqwest::RequestBuilder,
) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    let response = client.execute(request.build().unwrap()).await.unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    (status, headers, response.json().await.unwrap_or(Value::Null))
}

fn admin(server: &Server, method: Method, path: &str, token: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new().request(method, format!("{}{path}", server.admin_url)).bearer_auth(token)
}

fn refund(server: &Server, order_id: &str, token: &str) -> reqwest::RequestBuilder {
    admin(server, Method::POST, &format!("/admin/orders/{order_id}/cancel"), token)
        .header("Idempotency-Key", uuid::Uuid::new_v4().to_string())
        .header("X-Operator", "someone-else")
        .json(&json!({"reason": "the customer asked"}))
}

#[tokio::test]
async fn a_read_only_operator_reads_but_every_post_is_refused_and_changes_nothing() {
    let pg = FakePg::start().await;
    let server = shop(&pg).await;
    let order = server.paid_order().await;
    let client = reqwest::Client::new();

    let (status, _, me) = send(&client, admin(&server, Method::GET, "/admin/operator", MINSEO)).await;
    assert_eq!((status, &me), (StatusCode::OK, &json!({"name": "minseo", "role": "read-only"})));
    let (status, _, list) = send(&client, admin(&server, Method::GET, "/admin/orders", MINSEO)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(list["orders"].as_array().unwrap().iter().any(|row| row["order_id"] == order.order_id.as_str()), "{list}");

    let before = server.db().await.digest().await.unwrap();
    let recover = admin(&server, Method::POST, &format!("/admin/orders/{}/recover", order.order_id), MINSEO);
    let reconcile = admin(&server, Method::POST, "/admin/reconcile", MINSEO);
    for request in [refund(&server, &order.order_id, MINSEO), recover, reconcile] {
        let (status, _, body) = send(&client, request).await;
        assert_eq!((status, body["code"].as_str()), (StatusCode::FORBIDDEN, Some("OPERATOR_NOT_ALLOWED")), "{body}");
        assert!(body["message"].as_str().unwrap().contains("minseo is a read-only operator"), "{body}");
    }
    assert_eq!(server.db().await.digest().await.unwrap(), before, "nothing stored");
    assert_eq!(server.order(&order.order_id).await.status, OrderStatus::Paid);
    let stats = pg.stats().await;
    assert_eq!(stats.charges_by_order.get(&order.order_id), Some(&1));
    assert_eq!(stats.cancel_requests, 0, "nothing sent to the PG");
    assert!(!stats.refunds_by_order.contains_key(&order.order_id));
}

#[tokio::test]
async fn a_refund_is_audited_under_the_tokens_operator_whatever_x_operator_says() {
    let pg = FakePg::start().await;
    let server = shop(&pg).await;
    let order = server.paid_order().await;
    let client = reqwest::Client::new();

    let (status, _, refunded) = send(&client, refund(&server, &order.order_id, JIWOO)).await;
    assert_eq!((status, refunded["status"].as_str()), (StatusCode::OK, Some("CANCELED")), "{refunded}");
    let detail = admin(&server, Method::GET, &format!("/admin/orders/{}", order.order_id), MINSEO);
    let (status, _, story) = send(&client, detail).await;
    assert_eq!(status, StatusCode::OK);
    let audit: Vec<(&str, &str)> = story["audit"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| (line["operator"].as_str().unwrap(), line["action"].as_str().unwrap()))
        .collect();
    assert_eq!(audit, [("jiwoo", "cancel")], "{story}");
    assert_eq!(pg.stats().await.refunds_by_order.get(&order.order_id), Some(&order.amount));
    assert_charges_agree(&pg, &server, &[&order.order_id]).await;
}

#[tokio::test]
async fn wrong_tokens_from_one_address_are_throttled_and_a_good_token_from_another_still_works() {
    let pg = FakePg::start().await;
    let server = shop(&pg).await;
    let guesser = reqwest::Client::new();
    let guess = || reqwest::Client::new().get(format!("{}/admin/orders", server.admin_url));

    let (status, _, body) = send(&guesser, guess()).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("UNAUTHORIZED")), "no token");
    for attempt in 1..=FAILURES_ALLOWED {
        let (status, _, _) = send(&guesser, guess().bearer_auth(format!("guess-{attempt}"))).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "attempt {attempt}");
    }
    let (status, headers, body) = send(&guesser, guess().bearer_auth("one-guess-too-many")).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::TOO_MANY_REQUESTS, Some("RATE_LIMITED")), "{body}");
    let retry_after: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    // From that address, even the right token is not looked at now.
    let (status, _, _) = send(&guesser, guess().bearer_auth(JIWOO)).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);

    let elsewhere = reqwest::Client::builder().local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2))).build().unwrap();
    let (status, _, _) = send(&elsewhere, guess().bearer_auth(JIWOO)).await;
    assert_eq!(status, StatusCode::OK, "another address signs in");
    // Signing in spends nothing: many good requests from that address, then its own allowance is whole.
    for _ in 0..FAILURES_ALLOWED * 2 {
        assert_eq!(send(&elsewhere, guess().bearer_auth(MINSEO)).await.0, StatusCode::OK);
    }
    assert_eq!(send(&elsewhere, guess().bearer_auth("a-wrong-one")).await.0, StatusCode::UNAUTHORIZED);

    let text = reqwest::Client::builder()
        .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3)))
        .build()
        .unwrap()
        .get(format!("{}/metrics", server.admin_url))
        .bearer_auth(MINSEO)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(text.contains("operator_sign_in_failures_total{outcome=\"throttled\"}"), "{text}");
    assert!(text.contains("operator_sign_in_failures_total{outcome=\"unauthorized\"}"), "{text}");
}

#[tokio::test]
async fn requests_without_a_token_never_lock_an_operator_out_of_their_own_address() {
    let pg = FakePg::start().await;
    let server = shop(&pg).await;
    // What any web page the operator visits can make their browser send to the
    // admin listener: requests without an Authorization header, many of them.
    let browser = reqwest::Client::new();
    for attempt in 1..=FAILURES_ALLOWED * 3 {
        let (status, _, body) = send(&browser, browser.get(format!("{}/admin/orders", server.admin_url))).await;
        assert_eq!((status, body["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("UNAUTHORIZED")), "{attempt}");
    }
    let (status, _, body) = send(&browser, admin(&server, Method::GET, "/admin/orders", JIWOO)).await;
    assert_eq!(status, StatusCode::OK, "the operator's own token still signs in: {body}");
    // Wrong tokens from that address are still counted, from the first.
    for attempt in 1..=FAILURES_ALLOWED {
        let request = admin(&server, Method::GET, "/admin/orders", &format!("guess-{attempt}"));
        assert_eq!(send(&browser, request).await.0, StatusCode::UNAUTHORIZED, "guess {attempt}");
    }
    let request = admin(&server, Method::GET, "/admin/orders", "one-guess-too-many");
    assert_eq!(send(&browser, request).await.0, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn the_admin_listener_answers_only_to_its_own_host_names() {
    let pg = FakePg::start().await;
    let server = shop(&pg).await;
    let client = reqwest::Client::new();
    let port = server.admin_url.rsplit(':').next().unwrap().to_owned();

    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}"), "ops.shop.internal".to_owned()] {
        let request = admin(&server, Method::GET, "/admin/orders", JIWOO).header("Host", &host);
        assert_eq!(send(&client, request).await.0, StatusCode::OK, "{host}");
    }
    // What a page on a rebinding name sends once its name points at the listener.
    for host in [format!("rebind.attacker.example:{port}"), "localhost.attacker.example".to_owned()] {
        for path in ["/admin/orders", "/admin/", "/metrics"] {
            let request = admin(&server, Method::GET, path, JIWOO).header("Host", &host);
            let (status, _, body) = send(&client, request).await;
            assert_eq!(
                (status, body["code"].as_str()),
                (StatusCode::MISDIRECTED_REQUEST, Some("UNKNOWN_ADMIN_HOST")),
                "{host}{path}: {body}"
            );
            assert!(body["message"].as_str().unwrap().contains("--admin-hosts"), "{body}");
        }
    }
}

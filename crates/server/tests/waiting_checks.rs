//! `GET /api/orders/:id?wait=`: a check that answers the moment its order's
//! status changes, or when its wait is over, and refuses waits it cannot honour.

use crate::support;

use std::time::{Duration, Instant};

use payonce_api::{Order, OrderStatus};
use reqwest::StatusCode;
use serde_json::Value;
use support::{FakePg, Server};

/// A check of the order with `wait`, and how long its answer took.
async fn check(server: &Server, order_id: &str, wait: &str) -> (StatusCode, Value, Duration) {
    let started = Instant::now();
    let response = server.http.get(format!("{}/api/orders/{order_id}?wait={wait}", server.url)).send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap(), started.elapsed())
}

async fn close(server: &Server, order_id: &str) {
    let response = server.close_request(&server.http, order_id).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_waiting_check_answers_when_the_order_changes_not_when_its_wait_ends() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let order = server.create_order().await.order;

    let waiting = check(&server, &order.order_id, "2s");
    let closing = async {
        close(&server, &order.order_id).await;
        Instant::now()
    };
    let ((status, body, _), closed_at) = tokio::join!(waiting, closing);
    let answered_after_change = closed_at.elapsed();

    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "FAILED", "the check tells the new status: {body}");
    // Whether the close landed before or during the wait, the answer did not wait out the 2 s.
    assert!(answered_after_change < Duration::from_secs(1), "answered {answered_after_change:?} after the change");
}

#[tokio::test]
async fn a_waiting_check_is_answered_the_moment_the_pg_charges() {
    let pg = FakePg::start().await;
    pg.configure(serde_json::json!({"latency_ms": 800})).await;
    let server = Server::start(&pg.url).await;
    let order = server.create_order().await.order;

    let confirm = server.confirm_request(&order, "key-paid-at-once").send();
    let watch = async {
        // Check after check, as the page does, until one says PAID.
        loop {
            let (status, body, took) = check(&server, &order.order_id, "2s").await;
            assert_eq!(status, StatusCode::OK);
            if body["status"] == "PAID" {
                return (body, took);
            }
        }
    };
    let (confirmed, (paid, took)) = tokio::join!(confirm, watch);
    assert_eq!(confirmed.unwrap().status(), StatusCode::OK);
    assert_eq!(paid["status"], "PAID");
    assert!(took < Duration::from_secs(2), "the last check waited out its wait: {took:?}");
}

#[tokio::test]
async fn a_check_whose_order_does_not_change_answers_after_its_wait() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let order = server.create_order().await.order;

    let (status, body, took) = check(&server, &order.order_id, "500ms").await;

    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "CREATED");
    assert!(took >= Duration::from_millis(500), "answered before its wait ended: {took:?}");
}

#[tokio::test]
async fn a_final_order_is_answered_without_waiting() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let order = server.create_order().await.order;
    close(&server, &order.order_id).await;

    let (status, body, took) = check(&server, &order.order_id, "2s").await;

    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("FAILED")));
    assert!(took < Duration::from_secs(1), "a final order waited {took:?}");
}

#[tokio::test]
async fn over_the_servers_limit_a_check_is_answered_at_once() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| config.max_waiting_checks = 0).await;
    let order = server.create_order().await.order;

    let (status, body, took) = check(&server, &order.order_id, "2s").await;

    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("CREATED")));
    assert!(took < Duration::from_secs(1), "a check over the limit waited {took:?}");
}

/// Three checks of one order sent together by `customer`, and whether each was
/// held (it waited out its 2 s: nothing changes the order) or answered at once.
async fn three_checks_at_once(server: &Server, customer: &reqwest::Client, order_id: &str) -> Vec<bool> {
    let url = format!("{}/api/orders/{order_id}?wait=2s", server.url);
    let checks = (0..3).map(|_| async {
        let started = Instant::now();
        let response = customer.get(&url).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "a check over a limit is answered, never refused");
        started.elapsed() >= Duration::from_millis(1_500)
    });
    futures::future::join_all(checks).await
}

#[tokio::test]
async fn one_customer_holds_only_its_own_few_waiting_checks_and_another_still_waits() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| config.max_waiting_checks_per_customer = 1).await;
    let order = server.create_order().await.order;
    let other = server.other_customer();
    let other_order = server.create_order_for(&other).await.order;

    let (held, other_held) = tokio::join!(
        three_checks_at_once(&server, &server.http, &order.order_id),
        three_checks_at_once(&server, &other, &other_order.order_id),
    );

    // Whichever check took the customer's place was held; the others sent with it were answered at once.
    assert!(held.iter().any(|held| !held), "{held:?}");
    assert!(held.iter().any(|held| *held), "the customer's one place: {held:?}");
    assert!(other_held.iter().any(|held| *held), "another customer has a place of its own: {other_held:?}");
}

#[tokio::test]
async fn one_client_address_holds_only_its_share_of_the_servers_waiting_checks() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| config.max_waiting_checks_per_client = 1).await;
    let order = server.create_order().await.order;

    let held = three_checks_at_once(&server, &server.http, &order.order_id).await;

    assert!(held.iter().any(|held| !held), "{held:?}");
    assert!(held.iter().any(|held| *held), "the address's one place: {held:?}");
}

#[tokio::test]
async fn waits_longer_than_two_seconds_or_unreadable_are_refused_with_a_code() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let order = server.create_order().await.order;

    for wait in ["3s", "2001ms", "2", "soon", "", "-1s", "1s&wait=1s"] {
        let (status, body, _) = check(&server, &order.order_id, wait).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "wait={wait}: {body}");
        assert_eq!(body["code"], "INVALID_WAIT", "wait={wait}: {body}");
        assert!(body["message"].as_str().is_some_and(|message| message.contains("wait")), "{body}");
    }
    let after: Order = server.order(&order.order_id).await;
    assert_eq!(after.status, OrderStatus::Created, "a refused check changed nothing");
}

#[tokio::test]
async fn another_customers_order_is_not_found_with_or_without_a_wait() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let order = server.create_order().await.order;

    let stranger = server.other_customer();
    let response = stranger.get(format!("{}/api/orders/{}?wait=2s", server.url, order.order_id)).send().await.unwrap();

    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "ORDER_NOT_FOUND");
}

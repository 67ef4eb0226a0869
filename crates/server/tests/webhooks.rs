//! Toss's webhooks against the fake PG, which sends them as Toss does: an
//! event is a hint that brings the lookup of an open payment forward, never
//! the truth. Recovery here would first look after five minutes, so what
//! settles these payments within the test's wait is the webhook's lookup.

use crate::support;

use std::time::Duration;

use payonce_api::OrderStatus;
use payonce_server::db::{JobKind, now_ms};
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::{FakePg, Server, assert_charges_agree};

const SETTLE: Duration = Duration::from_secs(15);

/// A server whose recovery would first look at an unknown payment after five
/// minutes, and whose confirm gives up after one second.
async fn server_without_early_recovery(pg: &FakePg) -> Server {
    let server = Server::start_with(&pg.url, |config| {
        config.recovery_interval = Duration::from_secs(3_600);
        config.pg_read_timeout = Duration::from_secs(1);
    })
    .await;
    pg.configure(json!({"webhook_url": format!("{}/api/webhooks/toss", server.url)})).await;
    server
}

async fn post_event(server: &Server, event: &Value) -> (StatusCode, Value) {
    let response = server.http.post(format!("{}/api/webhooks/toss", server.url)).json(event).send().await.unwrap();
    (response.status(), response.json().await.unwrap())
}

fn status_changed(order_id: &str, status: &str) -> Value {
    json!({"eventType": "PAYMENT_STATUS_CHANGED", "createdAt": "2026-12-02T10:00:00.000000",
           "data": {"orderId": order_id, "paymentKey": "pk_forged", "status": status}})
}

#[tokio::test]
async fn an_unknown_payment_is_settled_by_the_webhook_when_the_pg_finishes_with_one_lookup() {
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 2_000})).await;
    let server = server_without_early_recovery(&pg).await;
    let created = server.create_order().await;

    let (status, body) = server.confirm(&created.order, "key-webhook").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::ACCEPTED, Some("UNKNOWN")), "{body}");

    server.wait_for(&created.order.order_id, OrderStatus::Paid, SETTLE).await;
    let stats = pg.stats().await;
    assert_eq!((stats.webhooks_delivered, stats.lookups), (1, 1), "one event, one lookup");
    assert_eq!(server.history(&created.order.order_id).await, ["CREATED>PENDING", "PENDING>UNKNOWN", "UNKNOWN>PAID"]);
    assert!(server.metrics().await.contains("payment_webhooks_total{outcome=\"looking_up\"}"));
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

#[tokio::test]
async fn a_webhook_before_the_confirms_own_answer_leaves_the_answer_to_settle_it() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    pg.configure(json!({"webhook_url": format!("{}/api/webhooks/toss", server.url), "latency_ms": 200})).await;
    let created = server.create_order().await;

    let (status, body) = server.confirm(&created.order, "key-answered").await;

    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("PAID")), "{body}");
    support::eventually("the event delivered", SETTLE, || async {
        (pg.stats().await.webhooks_delivered == 1).then_some(())
    })
    .await;
    assert_eq!(pg.stats().await.lookups, 0, "the confirm task held the attempt: no lookup beside it");
    assert_eq!(server.history(&created.order.order_id).await, ["CREATED>PENDING", "PENDING>PAID"]);
}

#[tokio::test]
async fn forged_repeated_and_unknown_events_change_nothing() {
    let pg = FakePg::start().await;
    let server = server_without_early_recovery(&pg).await;
    let paid = server.paid_order().await;
    let lookups = pg.stats().await.lookups;

    // A forged "canceled" for a paid order, an order that does not exist, another
    // kind of event, and the same event again: each is read and changes nothing.
    for event in [
        status_changed(&paid.order_id, "CANCELED"),
        status_changed(&paid.order_id, "CANCELED"),
        status_changed("ord_nobody", "DONE"),
        json!({"eventType": "DEPOSIT_CALLBACK", "orderId": paid.order_id, "status": "DONE"}),
        json!({"eventType": "PAYMENT_STATUS_CHANGED"}),
    ] {
        let (status, body) = post_event(&server, &event).await;
        assert_eq!((status, body["looking_up"].as_bool()), (StatusCode::OK, Some(false)), "{event}");
    }
    for (bad, why) in [("not json", "not JSON"), (r#"{"data": {}}"#, "no eventType")] {
        let response = server.http.post(format!("{}/api/webhooks/toss", server.url)).body(bad).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{why}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["code"], "INVALID_REQUEST", "{why}: {body}");
    }
    assert_eq!(server.order(&paid.order_id).await.status, OrderStatus::Paid);
    assert_eq!(server.history(&paid.order_id).await, ["CREATED>PENDING", "PENDING>PAID"]);
    assert_eq!(pg.stats().await.lookups, lookups, "nothing looked up for a settled order");
}

#[tokio::test]
async fn a_forged_event_for_an_unknown_payment_only_brings_its_lookup_forward() {
    // The PG has not finished: the forged "DONE" makes the server ask, and the
    // PG's answer (still processing) is what counts.
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 60_000})).await;
    let server = server_without_early_recovery(&pg).await;
    let created = server.create_order().await;
    let (status, _) = server.confirm(&created.order, "key-forged").await;
    assert_eq!(status, StatusCode::ACCEPTED);

    let (status, body) = post_event(&server, &status_changed(&created.order.order_id, "DONE")).await;

    assert_eq!((status, body["looking_up"].as_bool()), (StatusCode::OK, Some(true)), "{body}");
    support::eventually("the lookup made", SETTLE, || async { (pg.stats().await.lookups >= 1).then_some(()) }).await;
    let order = server.order(&created.order.order_id).await;
    assert_eq!(order.status, OrderStatus::Unknown, "the event's DONE is not believed");
}

#[tokio::test]
async fn a_hint_that_comes_while_the_confirm_waits_is_kept_for_when_its_answer_is_lost() {
    // The event arrives while the confirm task holds the attempt; then the PG
    // charges and resets the connection. The attempt is UNKNOWN, and the hint
    // makes it due at once instead of after recovery's first look, minutes away.
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| config.recovery_interval = Duration::from_secs(3_600)).await;
    pg.configure(json!({"latency_ms": 1_500, "faults": {"reset_after_charge": 1.0}})).await;
    let created = server.create_order().await;
    let order_id = created.order.order_id.clone();
    let confirm = {
        let request = server.confirm_request(&created.order, "key-hinted");
        tokio::spawn(async move { request.send().await.unwrap().status() })
    };
    support::eventually("the PG is processing", SETTLE, || async { (pg.stats().await.in_flight == 1).then_some(()) })
        .await;

    let (status, body) = post_event(&server, &status_changed(&order_id, "DONE")).await;
    assert_eq!((status, body["looking_up"].as_bool()), (StatusCode::OK, Some(true)), "{body}");

    assert_eq!(confirm.await.unwrap(), StatusCode::ACCEPTED, "the reset left it unknown");
    server.wait_for(&order_id, OrderStatus::Paid, SETTLE).await;
    assert_eq!(server.history(&order_id).await, ["CREATED>PENDING", "PENDING>UNKNOWN", "UNKNOWN>PAID"]);
    assert_charges_agree(&pg, &server, &[&order_id]).await;
}

#[tokio::test]
async fn a_flood_of_events_is_answered_without_touching_customers_limits_or_the_payment() {
    // Toss sends every shop's events from a few addresses: a flood of them (or
    // of forged ones) must be answered 200, must not spend the address's
    // bucket that customers behind it share, and may bring the open payment's
    // lookup forward, under the retry budget, but never settle it on its word.
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 60_000})).await;
    let server = Server::start_with(&pg.url, |config| {
        config.recovery_interval = Duration::from_secs(3_600);
        config.pg_read_timeout = Duration::from_secs(1);
        config.rate_limit_address = 600;
    })
    .await;
    let created = server.create_order().await;
    let order_id = created.order.order_id.clone();
    let (status, _) = server.confirm(&created.order, "key-flooded").await;
    assert_eq!(status, StatusCode::ACCEPTED, "unknown: the PG is still processing");

    const EVENTS: usize = 2_000;
    let flood_began = std::time::Instant::now();
    let mut answers = tokio::task::JoinSet::new();
    let gate = std::sync::Arc::new(tokio::sync::Semaphore::new(64));
    for n in 0..EVENTS {
        let target = if n % 2 == 0 { order_id.clone() } else { format!("ord_nobody_{n}") };
        let (http, url, gate) = (server.http.clone(), format!("{}/api/webhooks/toss", server.url), gate.clone());
        answers.spawn(async move {
            let _turn = gate.acquire().await.unwrap();
            http.post(url).json(&status_changed(&target, "DONE")).send().await.unwrap().status()
        });
    }
    let mut statuses = Vec::new();
    while let Some(status) = answers.join_next().await {
        statuses.push(status.unwrap());
    }

    assert!(statuses.iter().all(|status| *status == StatusCode::OK), "every event answered 200");
    let cart = json!({"items": [{"sku": "CERAMIC-MUG", "quantity": 1}]});
    let response = server.http.post(format!("{}/api/orders", server.url)).json(&cart).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED, "the customers' address bucket is untouched");
    let lookups = pg.stats().await.lookups;
    assert!(lookups >= 1, "the hint brought a lookup forward");
    // The hinted allowance (a burst of 100, and what comes back of it at 100 a
    // minute while the flood lasts), then the retry budget (60 a window).
    let refilled = (flood_began.elapsed().as_secs_f64() * 100.0 / 60.0).ceil() as u64;
    let bound = 100 + refilled + 60;
    assert!(
        lookups <= bound,
        "{lookups} lookups for {EVENTS} events: the allowance and the budget bound them at {bound}"
    );
    assert_eq!(server.order(&order_id).await.status, OrderStatus::Unknown, "no event is believed");
}

#[tokio::test]
async fn events_past_their_own_limit_are_refused_for_later_and_customers_are_not() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| config.rate_limit_webhooks = 20).await;

    let mut statuses = Vec::new();
    for n in 0..8 {
        statuses.push(post_event(&server, &status_changed(&format!("ord_nobody_{n}"), "DONE")).await.0);
    }

    assert_eq!(statuses.iter().filter(|status| **status == StatusCode::OK).count(), 5, "a burst of five: {statuses:?}");
    assert_eq!(statuses.last(), Some(&StatusCode::TOO_MANY_REQUESTS), "the PG sends it again later");
    let created = server.create_order().await;
    assert_eq!(server.confirm(&created.order, "key-after-flood").await.0, StatusCode::OK, "customers go on");
}

#[tokio::test]
async fn a_hint_while_a_pass_holds_the_job_is_still_a_hint_when_the_pass_lets_it_go() {
    // The next pass must know a webhook asked for it: its lookup draws on the
    // hinted allowance instead of waiting for the retry budget.
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 60_000})).await;
    let server = server_without_early_recovery(&pg).await;
    let created = server.create_order().await;
    let order_id = created.order.order_id.clone();
    assert_eq!(server.confirm(&created.order, "key-held").await.0, StatusCode::ACCEPTED);
    let db = server.db().await;
    let claim = |holder: &'static str| {
        let (db, order_id, now) = (db.clone(), order_id.clone(), now_ms());
        async move { db.claim_job(JobKind::Payment, &order_id, holder, now, now + 60_000).await.unwrap() }
    };
    assert_eq!(claim("a-pass").await, Some(false), "a pass holds it, no hint waiting");

    assert!(db.due_now_for_order(&order_id).await.unwrap(), "the webhook's hint");
    db.release_job(JobKind::Payment, &order_id, "a-pass", Some(now_ms() + 300_000), true, None).await.unwrap();

    assert_eq!(
        db.due_jobs(JobKind::Payment, now_ms(), 10).await.unwrap(),
        std::slice::from_ref(&order_id),
        "due at once"
    );
    assert_eq!(claim("the-next-pass").await, Some(true), "and the next pass takes the hint");
    db.release_job(JobKind::Payment, &order_id, "the-next-pass", Some(now_ms() + 300_000), true, None).await.unwrap();
    assert!(db.due_jobs(JobKind::Payment, now_ms(), 10).await.unwrap().is_empty(), "a hint taken is answered");
}

#[tokio::test]
async fn a_hint_for_a_job_already_hinted_costs_nothing_until_a_pass_of_its_own() {
    // Events sent again and again for one unsettled payment (the PG's
    // repeats, or a stranger's) would each bring a lookup forward and draw on
    // the hinted allowance other customers' payments need: only the first does.
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 60_000})).await;
    let server = server_without_early_recovery(&pg).await;
    let created = server.create_order().await;
    let order_id = created.order.order_id.clone();
    assert_eq!(server.confirm(&created.order, "key-hinted-twice").await.0, StatusCode::ACCEPTED);
    let db = server.db().await;
    let pass = |holder: &'static str, at: i64| {
        let (db, order_id) = (db.clone(), order_id.clone());
        async move { db.claim_job(JobKind::Payment, &order_id, holder, at, at + 60_000).await.unwrap() }
    };
    let let_go = |holder: &'static str, next_at: i64| {
        let (db, order_id) = (db.clone(), order_id.clone());
        async move { db.release_job(JobKind::Payment, &order_id, holder, Some(next_at), true, None).await.unwrap() }
    };

    assert!(db.due_now_for_order(&order_id).await.unwrap(), "the first hint");
    assert_eq!(pass("the-hinted-pass", now_ms()).await, Some(true), "its pass takes the hint");
    assert!(!db.due_now_for_order(&order_id).await.unwrap(), "a hint while that pass is out costs nothing");
    let backoff_ends = now_ms() + 300_000;
    let_go("the-hinted-pass", backoff_ends).await;
    assert!(!db.due_now_for_order(&order_id).await.unwrap(), "nor one after it");
    assert!(db.due_jobs(JobKind::Payment, now_ms(), 10).await.unwrap().is_empty(), "its backoff stands");

    // A pass of its own, at its backoff's end: a hint after that counts again.
    assert_eq!(pass("its-own-pass", backoff_ends).await, Some(false));
    let_go("its-own-pass", backoff_ends + 600_000).await;
    assert!(db.due_now_for_order(&order_id).await.unwrap(), "a hint after a pass of its own brings the next forward");
}

const WEBHOOK_SECRET: &str = "whk-0123456789abcdef0123456789abcdef";

#[tokio::test]
async fn behind_a_secret_path_the_pgs_events_settle_and_strangers_find_404_without_spending_the_pgs_limit() {
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 2_000})).await;
    let server = Server::start_with(&pg.url, |config| {
        config.recovery_interval = Duration::from_secs(3_600);
        config.pg_read_timeout = Duration::from_secs(1);
        config.pg_webhook_secret = Some(WEBHOOK_SECRET.to_owned().into());
        // The PG's own limit: five events a minute, so a stranger's sends
        // counted there would leave nothing for the PG's.
        config.rate_limit_webhooks = 5;
    })
    .await;
    pg.configure(json!({"webhook_url": format!("{}/api/webhooks/toss/{WEBHOOK_SECRET}", server.url)})).await;
    let created = server.create_order().await;
    let order_id = created.order.order_id.clone();

    // Strangers: the bare path, a wrong secret, the secret cut short.
    let event = status_changed(&order_id, "DONE");
    for path in [
        "/api/webhooks/toss".to_owned(),
        "/api/webhooks/toss/whk-guess".to_owned(),
        format!("/api/webhooks/toss/{}", &WEBHOOK_SECRET[..20]),
    ] {
        for _ in 0..5 {
            let response = server.http.post(format!("{}{path}", server.url)).json(&event).send().await.unwrap();
            assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["code"], "NOT_FOUND", "{path}");
        }
    }

    // The PG's own event still finds its limit whole and settles the payment.
    let (status, body) = server.confirm(&created.order, "key-secret-path").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::ACCEPTED, Some("UNKNOWN")), "{body}");
    server.wait_for(&order_id, OrderStatus::Paid, SETTLE).await;
    assert_eq!(pg.stats().await.webhooks_delivered, 1);
    assert_charges_agree(&pg, &server, &[&order_id]).await;
}

#[tokio::test]
async fn a_shop_at_an_https_address_without_a_secret_takes_no_webhooks() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| {
        config.public_url = Some("https://shop.example".to_owned());
        config.allow_test_keys = true;
    })
    .await;
    let paid = server.paid_order().await;

    let (status, body) = post_event(&server, &status_changed(&paid.order_id, "DONE")).await;

    assert_eq!((status, body["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")), "{body}");
}

//! The calls to the PG an order's payment made, as operators read them in
//! `GET /admin/orders/{id}`: against the fake PG over HTTP, one row per call,
//! oldest first, with who made it, the key it carried and what came back.

use crate::support;

use std::time::Duration;

use payonce_api::OrderStatus;
use payonce_server::db::{KEPT_PER_ORDER, NewPgCall, PgCallKind, PgCaller};
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::{FakePg, Server};

const SETTLE: Duration = Duration::from_secs(15);
const TOKEN: &str = "test-admin-token-of-32-characters-or-more";

async fn server_with(pg: &FakePg, tweak: impl FnOnce(&mut payonce_server::config::ServerConfig)) -> Server {
    Server::start_with(&pg.url, |config| {
        config.admin_token = Some(TOKEN.into());
        tweak(config);
    })
    .await
}

/// The order's `pg_calls` as the operators' API shows them.
async fn pg_calls(server: &Server, order_id: &str) -> Vec<Value> {
    let response = reqwest::Client::new()
        .get(format!("{}/admin/orders/{order_id}", server.admin_url))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    body["pg_calls"].as_array().unwrap_or_else(|| panic!("no pg_calls in {body}")).clone()
}

/// `kind by caller`, for comparing sequences of calls.
fn who(call: &Value) -> String {
    format!("{} by {}", call["kind"].as_str().unwrap(), call["caller"].as_str().unwrap())
}

/// The key the server made for the PG for the attempt the browser's `key` confirmed.
async fn pg_key(server: &Server, key: &str) -> String {
    let attempt = server.db().await.attempt_by_key(key).await.unwrap().expect("the attempt is stored");
    assert_ne!(attempt.pg_idempotency_key, key, "the browser's key stays the key of the shop's API");
    attempt.pg_idempotency_key
}

fn answer(call: &Value) -> &str {
    call["answer"].as_str().unwrap()
}

#[tokio::test]
async fn a_paid_order_shows_its_one_confirm_with_its_key_and_a_200() {
    let pg = FakePg::start().await;
    let server = server_with(&pg, |_| {}).await;
    let created = server.create_order().await;
    let (status, body) = server.confirm(&created.order, "key-logged").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("PAID")), "{body}");

    let calls = pg_calls(&server, &created.order.order_id).await;
    assert_eq!(calls.len(), 1, "{calls:?}");
    let call = &calls[0];
    assert_eq!(who(call), "confirm by customer");
    assert_eq!(call["idempotency_key"], pg_key(&server, "key-logged").await.as_str());
    assert!(answer(call).starts_with("HTTP 200 payment"), "{call}");
    assert!(call["server"].as_str().unwrap().starts_with("server-"), "{call}");
    assert!(call["took_ms"].as_i64().unwrap() >= 0);
    assert!(call["at"].as_str().is_some());
}

#[tokio::test]
async fn a_confirm_that_timed_out_is_followed_by_the_lookups_that_settled_it_in_order() {
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 3_000})).await;
    let server = server_with(&pg, |config| config.pg_read_timeout = Duration::from_secs(1)).await;
    let created = server.create_order().await;
    let order_id = &created.order.order_id;

    let (status, body) = server.confirm(&created.order, "key-slow").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::ACCEPTED, Some("UNKNOWN")), "{body}");
    server.wait_for(order_id, OrderStatus::Paid, SETTLE).await;

    let calls = pg_calls(&server, order_id).await;
    assert!(calls.len() >= 2, "{calls:?}");
    let first = &calls[0];
    assert_eq!(who(first), "confirm by customer");
    let key = pg_key(&server, "key-slow").await;
    assert_eq!(first["idempotency_key"], key.as_str());
    assert!(answer(first).starts_with("no answer") && answer(first).contains("timed out"), "{first}");
    assert!(first["took_ms"].as_i64().unwrap() >= 900, "it waited for its read timeout: {first}");
    for call in &calls[1..] {
        assert_eq!(call["caller"], "recovery", "{calls:?}");
        if call["kind"] == "lookup" {
            assert!(call["idempotency_key"].is_null(), "a lookup sends no key: {call}");
        } else {
            assert_eq!(call["idempotency_key"], key.as_str(), "a resend reuses the attempt's key: {call}");
        }
    }
    assert_eq!(who(&calls[1]), "lookup by recovery", "{calls:?}");
    let last = calls.last().unwrap();
    assert!(answer(last).starts_with("HTTP 200 payment") && answer(last).contains("Done"), "{calls:?}");
    let started: Vec<&str> = calls.iter().map(|call| call["at"].as_str().unwrap()).collect();
    assert!(started.windows(2).all(|pair| pair[0] <= pair[1]), "oldest first: {started:?}");
}

#[tokio::test]
async fn a_refund_shows_its_cancel_call_under_the_refunds_own_key() {
    let pg = FakePg::start().await;
    let server = server_with(&pg, |_| {}).await;
    let order = server.paid_order().await;
    let (status, body) = server.cancel(&order.order_id, "cancel-logged").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("CANCELED")), "{body}");

    let refunds = server.db().await.refunds(&order.order_id).await.unwrap();
    let calls = pg_calls(&server, &order.order_id).await;
    let whos: Vec<String> = calls.iter().map(who).collect();
    assert_eq!(whos, ["confirm by customer", "cancel by customer"], "{calls:?}");
    assert_eq!(calls[1]["idempotency_key"].as_str(), Some(refunds[0].pg_idempotency_key.as_str()));
    assert_ne!(calls[1]["idempotency_key"].as_str(), Some("cancel-logged"), "the PG's key is made by the server");
    assert!(answer(&calls[1]).starts_with("HTTP 200 payment"), "{calls:?}");
}

#[tokio::test]
async fn a_call_the_pg_reset_is_recorded_as_no_answer() {
    let pg = FakePg::start().await;
    pg.configure(json!({"faults": {"reset_before_processing": 1.0}})).await;
    let server = server_with(&pg, |_| {}).await;
    let created = server.create_order().await;
    let (status, body) = server.confirm(&created.order, "key-reset").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::ACCEPTED, Some("UNKNOWN")), "{body}");

    let calls = pg_calls(&server, &created.order.order_id).await;
    let first = calls.first().unwrap_or_else(|| panic!("no call recorded"));
    assert_eq!(who(first), "confirm by customer");
    assert_eq!(first["idempotency_key"], pg_key(&server, "key-reset").await.as_str());
    assert!(answer(first).starts_with("no answer"), "{first}");
    assert!(!answer(first).contains("timed out"), "a reset is not a timeout: {first}");

    pg.configure(json!({"faults": {"reset_before_processing": 0.0}})).await;
    server.wait_for(&created.order.order_id, OrderStatus::Paid, SETTLE).await;
}

#[tokio::test]
async fn an_order_keeps_only_its_newest_calls() {
    let pg = FakePg::start().await;
    let server = server_with(&pg, |_| {}).await;
    let db = server.db().await;
    let total = KEPT_PER_ORDER + 5;
    for n in 0..total {
        let call = NewPgCall {
            order_id: "ord_many_calls",
            kind: PgCallKind::Lookup,
            caller: PgCaller::Recovery,
            idempotency_key: None,
            server: "server-test",
            started_at_ms: n,
            took_ms: 1,
            answer: "HTTP 200",
        };
        db.record_pg_call(&call).await.unwrap();
    }
    let other = NewPgCall {
        order_id: "ord_other",
        kind: PgCallKind::Confirm,
        caller: PgCaller::Customer,
        idempotency_key: Some("k"),
        server: "server-test",
        started_at_ms: 0,
        took_ms: 1,
        answer: "HTTP 200",
    };
    db.record_pg_call(&other).await.unwrap();

    let kept = db.pg_calls("ord_many_calls").await.unwrap();
    let started: Vec<i64> = kept.iter().map(|call| call.started_at_ms).collect();
    assert_eq!(started, (5..total).collect::<Vec<_>>(), "the newest, oldest first");
    assert_eq!(db.pg_calls("ord_other").await.unwrap().len(), 1, "other orders keep theirs");
}

#[tokio::test]
async fn a_call_that_cannot_be_recorded_still_pays_the_order() {
    use sqlx::Connection;
    let pg = FakePg::start().await;
    let server = server_with(&pg, |_| {}).await;
    let created = server.create_order().await;
    // The log is gone: every record of a call fails.
    let mut connection = sqlx::AnyConnection::connect(server.store.db.url()).await.unwrap();
    sqlx::Executor::execute(&mut connection, "DROP TABLE pg_calls").await.unwrap();
    connection.close().await.unwrap();

    let (status, body) = server.confirm(&created.order, "key-unrecorded").await;

    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("PAID")), "{body}");
    assert_eq!(pg.charges(&created.order.order_id).await, 1);
    assert_eq!(server.history(&created.order.order_id).await, ["CREATED>PENDING", "PENDING>PAID"]);
}

//! Recovery's retry budget, wired into a running server: when many payments'
//! outcomes are unknown at once (a PG holding them past our read timeout),
//! recovery calls the PG about no more of them per window than the budget
//! allows, and settles the rest in the windows after.
//!
//! The server runs as its own process, so the metrics it shows are its own.

use crate::support;

use std::time::Duration;

use payonce_api::OrderStatus;
use serde_json::json;
use support::{FakePg, Server, assert_charges_agree, eventually};

/// Payments left unknown at once: more than the budget's floor per window.
const UNKNOWN: usize = 80;
/// The budget's floor, `retry_budget::FLOOR_PER_WINDOW`: a tenth of 80 confirms is less.
const FLOOR_PER_WINDOW: usize = 60;
/// Recovery's workers at this PG limit (a quarter of it, at most 10): each may
/// take the last call of the window at the same moment as another.
const WORKERS: usize = 10;

#[tokio::test]
async fn recovery_calls_the_pg_no_more_than_its_budget_allows_and_settles_the_rest_later() {
    let pg = FakePg::start().await;
    pg.configure(json!({"hold": true})).await;
    let server = Server::own_process(
        &pg.url,
        &[
            ("--pg-read-timeout", "1s"),
            // The budget's window is the recovery interval.
            ("--recovery-interval", "10s"),
            ("--pg-limit", "200"),
            // Every confirm at once, from this one address.
            ("--max-connections-per-client", "1000"),
        ],
    )
    .await;

    let mut orders = Vec::new();
    for _ in 0..UNKNOWN {
        orders.push(server.create_order().await.order);
    }
    let confirms =
        orders.iter().enumerate().map(|(n, order)| server.confirm_request(order, &format!("key-{n}")).send());
    for response in futures::future::join_all(confirms).await {
        let body: serde_json::Value = response.unwrap().json().await.unwrap();
        assert_eq!(body["status"], "UNKNOWN", "the PG holds every payment past the read timeout: {body}");
    }

    eventually("recovery runs out of budget", Duration::from_secs(30), || async {
        let over = server.metric("payment_pg_recovery_over_budget_total").await;
        over.is_some_and(|count| count != "0").then_some(())
    })
    .await;

    // Let go, every payment settles, in the windows after for those the budget held back.
    pg.configure(json!({"hold": false})).await;
    for order in &orders {
        server.wait_for(&order.order_id, OrderStatus::Paid, Duration::from_secs(60)).await;
    }
    let ids: Vec<&str> = orders.iter().map(|order| order.order_id.as_str()).collect();
    assert_charges_agree(&pg, &server, &ids).await;

    // Every call recovery made counts (its lookups, and the confirms it sent
    // again under their first key): in no window did they exceed the budget,
    // and in the first they filled it.
    let db = server.db().await;
    let mut started = Vec::new();
    for order in &orders {
        let calls = db.pg_calls(&order.order_id).await.unwrap();
        started.extend(calls.iter().filter(|call| call.caller == "recovery").map(|call| call.started_at_ms));
    }
    let busiest = busiest_window(&mut started, WINDOW_MS);
    assert!(
        (FLOOR_PER_WINDOW..=FLOOR_PER_WINDOW + WORKERS).contains(&busiest),
        "recovery's calls in its busiest window: {busiest}"
    );
}

/// The budget's window (the recovery interval), less one of the 60 buckets it
/// counts in: a bucket leaves the count as a whole.
const WINDOW_MS: i64 = 10_000 - 10_000 / 60 - 1;

/// The most calls that started within any `window_ms`.
fn busiest_window(started_ms: &mut [i64], window_ms: i64) -> usize {
    started_ms.sort_unstable();
    (0..started_ms.len())
        .map(|first| started_ms[first..].iter().take_while(|&&at| at < started_ms[first] + window_ms).count())
        .max()
        .unwrap_or(0)
}

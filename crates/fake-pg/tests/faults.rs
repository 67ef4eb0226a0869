//! Injected faults over real HTTP: what the caller sees, what was charged,
//! and what a retry with the same idempotency key gets.

use crate::common;

use common::{Pg, body, causes, error_code, fast_config, is_connection_reset, start};
use fake_pg::Payment;
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn a_decline_is_processed_not_charged_and_replayed() {
    let pg = start(fast_config()).await;
    pg.set_config(json!({"faults": {"decline": 1}})).await;
    let (status, code, _) = error_code(pg.confirm(Some("key-1"), &body("pk-1", "order-1", 1_000)).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::FORBIDDEN, "REJECT_CARD_PAYMENT"));

    let payment = pg.order_payment("order-1").await.unwrap();
    assert_eq!(payment.status.as_str(), "ABORTED");
    assert_eq!(payment.failure.unwrap().code, "REJECT_CARD_PAYMENT");

    // The decline is the outcome of the processing, so it is what the key replays,
    // even with the fault switched off.
    pg.set_config(json!({"faults": {"decline": 0}})).await;
    let (status, code, _) = error_code(pg.confirm(Some("key-1"), &body("pk-1", "order-1", 1_000)).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::FORBIDDEN, "REJECT_CARD_PAYMENT"));

    let stats = pg.stats().await;
    assert_eq!((stats.processings, stats.replays), (1, 1));
    assert_eq!((stats.faults_injected.decline, stats.faults_injected.total), (1, 1));
    assert!(stats.charges_by_order.is_empty());
}

#[tokio::test]
async fn refusals_at_the_front_door_process_nothing_and_store_nothing() {
    let pg = start(fast_config()).await;
    let cases = [
        ("error_500", StatusCode::INTERNAL_SERVER_ERROR, "FAILED_INTERNAL_SYSTEM_PROCESSING"),
        ("rate_limit_429", StatusCode::TOO_MANY_REQUESTS, "TOO_MANY_REQUESTS"),
        ("forbidden_consecutive", StatusCode::FORBIDDEN, "FORBIDDEN_CONSECUTIVE_REQUEST"),
    ];
    for (n, (fault, status, code)) in cases.into_iter().enumerate() {
        let order_id = format!("order-{n}");
        let request = body(&format!("pk-{n}"), &order_id, 1_000);
        let key = format!("key-{n}");
        pg.set_config(json!({"faults": {fault: 1}})).await;
        let (got_status, got_code, _) = error_code(pg.confirm(Some(&key), &request).await).await;
        assert_eq!((got_status, got_code.as_str()), (status, code));
        let seen = pg.order_payment(&order_id).await.expect("the key was seen");
        assert_eq!(seen.status.as_str(), "READY", "{fault} processed the payment");

        // Nothing was remembered: the retry with the same key is processed.
        pg.set_config(json!({"faults": {fault: 0}})).await;
        let retry = pg.confirm(Some(&key), &request).await;
        assert_eq!(retry.status(), StatusCode::OK, "{fault}");
    }
    let stats = pg.stats().await;
    assert_eq!((stats.processings, stats.replays), (3, 0));
    let faults = &stats.faults_injected;
    assert_eq!((faults.error_500, faults.rate_limit_429, faults.forbidden_consecutive, faults.total), (1, 1, 1, 3));
}

#[tokio::test]
async fn a_reset_before_processing_is_a_connection_error_and_charges_nothing() {
    let pg = start(fast_config()).await;
    pg.set_config(json!({"faults": {"reset_before_processing": 1}})).await;
    let error = pg
        .confirm_request(Some("key-1"), &body("pk-1", "order-1", 1_000))
        .send()
        .await
        .expect_err("a reset connection gives no response");
    assert!(is_connection_reset(&error), "not a reset: {error:?}");
    assert_eq!(pg.order_payment("order-1").await.unwrap().status.as_str(), "READY", "never processed");
    let stats = pg.stats().await;
    assert_eq!((stats.processings, stats.faults_injected.reset_before_processing), (0, 1));

    pg.set_config(json!({"faults": {"reset_before_processing": 0}})).await;
    let retry = pg.confirm(Some("key-1"), &body("pk-1", "order-1", 1_000)).await;
    assert_eq!(retry.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_reset_after_charging_leaves_the_payment_done_for_the_retry() {
    let pg = start(fast_config()).await;
    pg.set_config(json!({"faults": {"reset_after_charge": 1}})).await;
    let error = pg
        .confirm_request(Some("key-1"), &body("pk-1", "order-1", 1_000))
        .send()
        .await
        .expect_err("a reset connection gives no response");
    assert!(is_connection_reset(&error), "not a reset: {error:?}");

    let charged = pg.wait_for_status("order-1", "DONE").await;
    // A retry with the same key is a replay, so the fault cannot strike again.
    let response = pg.confirm(Some("key-1"), &body("pk-1", "order-1", 1_000)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let replay: Payment = response.json().await.unwrap();
    assert_eq!(replay, charged);

    let stats = pg.stats().await;
    assert_eq!((stats.processings, stats.replays), (1, 1));
    assert_eq!(stats.faults_injected.reset_after_charge, 1);
    assert_eq!(stats.charges_by_order.get("order-1"), Some(&1));
}

#[tokio::test]
async fn a_seed_repeats_the_same_faults_after_a_reset() {
    let pg = start(fast_config()).await;
    pg.set_config(json!({"seed": 7, "latency_ms": 1, "faults": {"error_500": 0.5}})).await;
    let run = || async {
        let mut statuses = Vec::new();
        for n in 0..24 {
            let response = pg.confirm(None, &body(&format!("pk-{n}"), &format!("order-{n}"), 1_000)).await;
            statuses.push(response.status().as_u16());
        }
        statuses
    };
    let first = run().await;
    assert!(first.contains(&200) && first.contains(&500), "{first:?}");
    pg.client.post(format!("{}/__admin/reset", pg.url)).send().await.unwrap();
    assert_eq!(run().await, first);

    pg.client.post(format!("{}/__admin/reset", pg.url)).send().await.unwrap();
    pg.set_config(json!({"seed": 8})).await;
    assert_ne!(run().await, first);
}

#[tokio::test]
async fn a_hold_keeps_payments_processing_until_it_is_turned_off() {
    let mut config = fast_config();
    config.runtime.latency_ms = 0;
    let pg = start(config).await;
    pg.set_config(json!({"hold": true})).await;
    let first = tokio::spawn(pg.confirm_request(Some("key-1"), &body("pk-1", "order-1", 1_000)).send());
    let second = tokio::spawn(pg.confirm_request(Some("key-2"), &body("pk-2", "order-2", 2_000)).send());
    pg.wait_for_stats("both confirms processing", |stats| stats.in_flight == 2).await;

    // Held past their latency: still processing, as a lookup shows, and unanswered.
    for order in ["order-1", "order-2"] {
        assert_eq!(pg.order_payment(order).await.unwrap().status.as_str(), "IN_PROGRESS");
    }
    assert!(!first.is_finished() && !second.is_finished());

    pg.set_config(json!({"hold": false})).await;
    for confirm in [first, second] {
        assert_eq!(confirm.await.unwrap().unwrap().status(), StatusCode::OK);
    }
    assert_eq!(pg.payment("pk-1").await.unwrap().status.as_str(), "DONE");
    let stats = pg.stats().await;
    assert_eq!((stats.in_flight, stats.processings), (0, 2));
}

#[tokio::test]
async fn over_http2_a_reset_ends_its_own_call_and_the_calls_beside_it_on_the_connection_are_answered() {
    let mut config = fast_config();
    config.runtime.latency_ms = 0;
    let pg = start(config).await;
    // One client, one HTTP/2 connection: every call below shares it.
    let client = reqwest::Client::builder().http2_prior_knowledge().build().unwrap();
    let pg = Pg { client, ..pg };
    pg.set_config(json!({"hold": true})).await;
    let beside = tokio::spawn(pg.confirm_request(Some("key-1"), &body("pk-1", "order-1", 1_000)).send());
    pg.wait_for_stats("the first confirm processing", |stats| stats.in_flight == 1).await;

    pg.set_config(json!({"hold": false, "faults": {"reset_before_processing": 1}})).await;
    let error = pg
        .confirm_request(Some("key-2"), &body("pk-2", "order-2", 2_000))
        .send()
        .await
        .expect_err("a reset call gives no response");
    assert_eq!(stream_reset_reason(&error), Some(h2::Reason::INTERNAL_ERROR), "{error:?}");

    let answered = beside.await.unwrap().expect("the call beside the reset one is answered");
    assert_eq!(answered.status(), StatusCode::OK);
    assert_eq!(pg.payment("pk-1").await.unwrap().status.as_str(), "DONE");
    let refused = pg.payment("pk-2").await.unwrap();
    assert_eq!(refused.status.as_str(), "READY", "a reset before processing charges nothing");
    let stats = pg.stats().await;
    assert_eq!((stats.processings, stats.faults_injected.reset_before_processing), (1, 1));
}

/// The reason an HTTP/2 stream was reset with, if the error is that.
fn stream_reset_reason(error: &reqwest::Error) -> Option<h2::Reason> {
    causes(error).find_map(|cause| cause.downcast_ref::<h2::Error>()).and_then(h2::Error::reason)
}

#[tokio::test]
async fn an_outage_refuses_every_api_call_with_503_and_processes_nothing() {
    let pg = start(fast_config()).await;
    pg.set_config(json!({"outage": true})).await;
    let (status, code, _) = error_code(pg.confirm(Some("key-1"), &body("pk-1", "order-1", 1_000)).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::SERVICE_UNAVAILABLE, "FAILED_INTERNAL_SYSTEM_PROCESSING"));
    assert_eq!(pg.get("/v1/payments/pk-1").await.status(), StatusCode::SERVICE_UNAVAILABLE);
    let stats = pg.stats().await;
    assert_eq!((stats.outage_refusals, stats.processings, stats.confirm_requests), (2, 0, 0));

    pg.set_config(json!({"outage": false})).await;
    let retry = pg.confirm(Some("key-1"), &body("pk-1", "order-1", 1_000)).await;
    assert_eq!(retry.status(), StatusCode::OK, "the key was not stored during the outage");
    assert_eq!(pg.payment("pk-1").await.unwrap().status.as_str(), "DONE");
    assert_eq!(pg.stats().await.lookups, 1);
}

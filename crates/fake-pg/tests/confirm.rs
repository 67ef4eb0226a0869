//! The confirm endpoint over real HTTP: approval, idempotency, callers that
//! hang up, the contract limit, and every way a request is refused.

use crate::common;

use std::time::Duration;

use common::{basic_auth, body, error_code, fast_config, start};
use fake_pg::{Config, Payment};
use reqwest::StatusCode;
use serde_json::{Value, json};

#[tokio::test]
async fn a_confirm_approves_and_the_payment_can_be_looked_up() {
    let pg = start(fast_config()).await;
    let response = pg.confirm(Some("key-1"), &body("pk-1", "order-1", 12_900)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let raw: Value = response.json().await.unwrap();
    for field in ["version", "mId", "lastTransactionKey", "requestedAt", "approvedAt", "card", "receipt"] {
        assert!(!raw[field].is_null(), "{field} is null");
    }
    assert!(raw["approvedAt"].as_str().unwrap().ends_with("+09:00"));
    assert!(raw.get("virtualAccount").is_some_and(Value::is_null));
    let payment: Payment = serde_json::from_value(raw).unwrap();
    assert_eq!(payment.status.as_str(), "DONE");
    assert_eq!((payment.total_amount, payment.vat), (12_900, 1_173));

    let by_key: Payment = pg.get("/v1/payments/pk-1").await.json().await.unwrap();
    assert_eq!(by_key, payment);
    assert_eq!(pg.order_payment("order-1").await, Some(payment));

    let stats = pg.stats().await;
    assert_eq!((stats.confirm_requests, stats.processings), (1, 1));
    assert_eq!(stats.charges_by_order.get("order-1"), Some(&1));
    assert!(stats.double_charges.is_empty());
    assert_eq!(stats.payments_by_status.get("DONE"), Some(&1));
}

#[tokio::test]
async fn the_same_key_replays_the_payment_processed_once() {
    let pg = start(fast_config()).await;
    let first: Payment = pg.confirm(Some("key-1"), &body("pk-1", "order-1", 1_000)).await.json().await.unwrap();
    // Toss scopes the key, not the body: a different body still gets the first payment.
    for replay_body in [body("pk-1", "order-1", 1_000), body("pk-2", "order-2", 5)] {
        let response = pg.confirm(Some("key-1"), &replay_body).await;
        assert_eq!(response.status(), StatusCode::OK);
        let replay: Payment = response.json().await.unwrap();
        assert_eq!(replay, first);
    }
    let stats = pg.stats().await;
    assert_eq!((stats.processings, stats.replays), (1, 2));
    assert_eq!(stats.charges_by_order.len(), 1);
}

#[tokio::test]
async fn the_same_key_while_processing_gets_409() {
    let mut config = fast_config();
    config.runtime.latency_ms = 1_500;
    let pg = start(config).await;
    let first = tokio::spawn({
        let request = pg.confirm_request(Some("key-1"), &body("pk-1", "order-1", 1_000));
        async move { request.send().await.unwrap() }
    });
    let in_progress = pg.wait_for_status("order-1", "IN_PROGRESS").await;
    assert_eq!(in_progress.approved_at, None);

    let (status, code, _) = error_code(pg.confirm(Some("key-1"), &body("pk-1", "order-1", 1_000)).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::CONFLICT, "IDEMPOTENT_REQUEST_PROCESSING"));

    let first = first.await.unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    let stats = pg.stats().await;
    assert_eq!((stats.processings, stats.in_progress_conflicts), (1, 1));
    assert_eq!(stats.peak_in_flight, 1);
    assert_eq!(stats.in_flight, 0);
}

#[tokio::test]
async fn processing_continues_and_charges_after_the_caller_hangs_up() {
    // 20 s of latency at a tenth of real time: the caller gives up at 1 s,
    // the PG finishes at 2 s.
    let mut config = fast_config();
    config.runtime.latency_ms = 20_000;
    config.time_scale = 0.1;
    let pg = start(config).await;
    let error = pg
        .confirm_request(Some("key-1"), &body("pk-1", "order-1", 1_000))
        .timeout(Duration::from_secs(1))
        .send()
        .await
        .unwrap_err();
    assert!(error.is_timeout(), "{error}");

    // The PG notices the hang-up a moment after the caller's timeout.
    let abandoned = pg.wait_for_stats("the abandoned call", |stats| stats.abandoned == 1).await;
    assert_eq!(abandoned.in_flight, 1);
    assert_eq!(pg.order_payment("order-1").await.unwrap().status.as_str(), "IN_PROGRESS");

    let done = pg.wait_for_status("order-1", "DONE").await;
    assert!(done.approved_at.is_some());
    let stats = pg.stats().await;
    assert_eq!(stats.in_flight, 0);
    assert_eq!(stats.charges_by_order.get("order-1"), Some(&1));

    // The order server's recovery asks again with the same key and learns the truth.
    let replay: Payment = pg.confirm(Some("key-1"), &body("pk-1", "order-1", 1_000)).await.json().await.unwrap();
    assert_eq!(replay.status.as_str(), "DONE");
}

#[tokio::test]
async fn hanging_up_aborts_the_payment_when_processing_stops_with_the_caller() {
    let mut config = fast_config();
    config.runtime.latency_ms = 20_000;
    config.runtime.continue_after_disconnect = false;
    config.time_scale = 0.1;
    let pg = start(config).await;
    let error = pg
        .confirm_request(Some("key-1"), &body("pk-1", "order-1", 1_000))
        .timeout(Duration::from_secs(1))
        .send()
        .await
        .unwrap_err();
    assert!(error.is_timeout(), "{error}");

    let aborted = pg.wait_for_status("order-1", "ABORTED").await;
    assert_eq!(aborted.failure.unwrap().code, "PAY_PROCESS_ABORTED");
    let stats = pg.stats().await;
    assert!(stats.charges_by_order.is_empty());
    assert_eq!(stats.in_flight, 0);

    let (status, code, _) = error_code(pg.confirm(Some("key-1"), &body("pk-1", "order-1", 1_000)).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::BAD_REQUEST, "PAY_PROCESS_ABORTED"));
    assert!(pg.stats().await.charges_by_order.is_empty());
}

#[tokio::test]
async fn the_contract_limit_counts_abandoned_calls() {
    // Two callers give up after 1 s; their processings run until 3 s.
    let mut config = fast_config();
    config.runtime.latency_ms = 30_000;
    config.runtime.contract_limit = Some(2);
    config.time_scale = 0.1;
    let pg = start(config).await;
    let abandon = |n: u32| {
        let request = pg
            .confirm_request(None, &body(&format!("pk-{n}"), &format!("order-{n}"), 1_000))
            .timeout(Duration::from_secs(1));
        async move { request.send().await.unwrap_err() }
    };
    let (first, second) = tokio::join!(abandon(1), abandon(2));
    assert!(first.is_timeout() && second.is_timeout());
    let stats = pg.wait_for_stats("both abandoned calls", |stats| stats.abandoned == 2).await;
    assert_eq!(stats.in_flight, 2);

    let (status, code, _) = error_code(pg.confirm(Some("key-3"), &body("pk-3", "order-3", 1_000)).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::TOO_MANY_REQUESTS, "TOO_MANY_REQUESTS"));
    let refused = pg.order_payment("order-3").await.expect("a confirmed key is known from then on");
    assert_eq!(refused.status.as_str(), "READY", "seen, never processed");
    let stats = pg.stats().await;
    assert_eq!((stats.contract_limit_rejections, stats.processings), (1, 2));

    // Once the abandoned calls finish (and are charged), there is room again,
    // and the refused key was not remembered.
    pg.wait_for_status("order-1", "DONE").await;
    pg.wait_for_status("order-2", "DONE").await;
    pg.set_config(json!({"latency_ms": 10})).await;
    let response = pg.confirm(Some("key-3"), &body("pk-3", "order-3", 1_000)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let stats = pg.stats().await;
    assert_eq!((stats.peak_in_flight, stats.charges_by_order.len()), (2, 3));
}

#[tokio::test]
async fn basic_auth_is_accepted_with_and_without_padding() {
    let pg = start(fast_config()).await;
    let padded = basic_auth(&pg.secret_key);
    assert!(padded.ends_with('='), "the default key must need padding for this test");
    let unpadded = padded.trim_end_matches('=').to_owned();
    for (n, header) in [padded, unpadded].into_iter().enumerate() {
        let response = pg
            .client
            .post(format!("{}/v1/payments/confirm", pg.url))
            .header("Authorization", header.clone())
            .json(&body(&format!("pk-{n}"), &format!("order-{n}"), 1_000))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{header}");
        let lookup = pg
            .client
            .get(format!("{}/v1/payments/pk-{n}", pg.url))
            .header("Authorization", header)
            .send()
            .await
            .unwrap();
        assert_eq!(lookup.status(), StatusCode::OK);
    }
}

#[tokio::test]
async fn bad_input_is_refused_and_charges_nothing() {
    let pg = start(fast_config()).await;
    let confirm_url = format!("{}/v1/payments/confirm", pg.url);
    let window_key = pg.open_window("order-w", 12_900).await;

    let missing_auth = pg.client.post(&confirm_url).json(&body("pk-1", "order-1", 1_000));
    let wrong_key = pg
        .client
        .post(&confirm_url)
        .header("Authorization", basic_auth("test_sk_not_this_one"))
        .json(&body("pk-1", "order-1", 1_000));
    let malformed = pg
        .client
        .post(&confirm_url)
        .header("Authorization", basic_auth(&pg.secret_key))
        .header("Content-Type", "application/json")
        .body("{\"paymentKey\": ");
    let long_key = "k".repeat(301);
    let cases = [
        (missing_auth, StatusCode::UNAUTHORIZED, "UNAUTHORIZED_KEY", ""),
        (wrong_key, StatusCode::UNAUTHORIZED, "UNAUTHORIZED_KEY", ""),
        (malformed, StatusCode::BAD_REQUEST, "INVALID_REQUEST", "JSON"),
        (
            pg.confirm_request(Some("key-a"), &json!({"paymentKey": "pk-1", "orderId": "order-1"})),
            StatusCode::BAD_REQUEST,
            "INVALID_REQUEST",
            "amount",
        ),
        (
            pg.confirm_request(Some("key-a"), &json!({"paymentKey": "pk-1", "orderId": 7, "amount": 1})),
            StatusCode::BAD_REQUEST,
            "INVALID_REQUEST",
            "orderId",
        ),
        (
            pg.confirm_request(Some("key-a"), &body(&window_key, "order-w", 12_000)),
            StatusCode::BAD_REQUEST,
            "INVALID_REQUEST",
            "amount",
        ),
        (
            pg.confirm_request(Some("key-a"), &body(&window_key, "order-other", 12_900)),
            StatusCode::BAD_REQUEST,
            "INVALID_REQUEST",
            "orderId",
        ),
        (
            pg.confirm_request(Some(&long_key), &body("pk-1", "order-1", 1_000)),
            StatusCode::BAD_REQUEST,
            "INVALID_IDEMPOTENCY_KEY",
            "300",
        ),
    ];
    let count = cases.len() as u64;
    for (request, status, code, mentions) in cases {
        let (got_status, got_code, message) = error_code(request.send().await.unwrap()).await;
        assert_eq!((got_status, got_code.as_str()), (status, code), "{message}");
        assert!(message.contains(mentions), "{message:?} should mention {mentions}");
    }

    let stats = pg.stats().await;
    assert_eq!((stats.confirm_requests, stats.processings, stats.replays), (count, 0, 0));
    assert!(stats.charges_by_order.is_empty());
    assert_eq!(pg.order_payment("order-1").await, None);
    assert_eq!(pg.order_payment("order-w").await.unwrap().status.as_str(), "READY");

    // key-a was used only by refused requests, so it was never recorded.
    let response = pg.confirm(Some("key-a"), &body(&window_key, "order-w", 12_900)).await;
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn another_key_for_a_processed_payment_or_a_charged_order_is_refused() {
    let pg = start(fast_config()).await;
    let response = pg.confirm(Some("key-1"), &body("pk-1", "order-1", 1_000)).await;
    assert_eq!(response.status(), StatusCode::OK);

    for key in [Some("key-2"), None] {
        let (status, code, _) = error_code(pg.confirm(key, &body("pk-1", "order-1", 1_000)).await).await;
        assert_eq!((status, code.as_str()), (StatusCode::BAD_REQUEST, "ALREADY_PROCESSED_PAYMENT"));
    }
    let (status, code, _) = error_code(pg.confirm(Some("key-3"), &body("pk-2", "order-1", 1_000)).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::BAD_REQUEST, "DUPLICATED_ORDER_ID"));

    let stats = pg.stats().await;
    assert_eq!(stats.processings, 1);
    assert_eq!(stats.charges_by_order.get("order-1"), Some(&1));
    assert!(stats.double_charges.is_empty());
}

#[tokio::test]
async fn concurrent_payments_of_one_order_show_up_as_a_double_charge() {
    // Two windows for one order, confirmed at the same time: neither is DONE
    // when the other starts, so the PG charges both, as a real one would.
    let mut config = fast_config();
    config.runtime.latency_ms = 1_000;
    let pg = start(config).await;
    let first_key = pg.open_window("order-1", 1_000).await;
    let second_key = pg.open_window("order-1", 1_000).await;
    let (first_body, second_body) = (body(&first_key, "order-1", 1_000), body(&second_key, "order-1", 1_000));
    let (first, second) =
        tokio::join!(pg.confirm(Some("key-1"), &first_body), pg.confirm(Some("key-2"), &second_body),);
    assert_eq!((first.status(), second.status()), (StatusCode::OK, StatusCode::OK));
    let stats = pg.stats().await;
    assert_eq!(stats.charges_by_order.get("order-1"), Some(&2));
    assert_eq!(stats.double_charges, vec!["order-1".to_owned()]);
}

#[tokio::test]
async fn strict_sessions_refuse_payment_keys_no_window_issued() {
    let config = Config { strict_sessions: true, ..fast_config() };
    let pg = start(config).await;
    let (status, code, _) = error_code(pg.confirm(Some("key-1"), &body("pk-made-up", "order-1", 1_000)).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::NOT_FOUND, "NOT_FOUND_PAYMENT_SESSION"));

    let payment_key = pg.window_with("order-1", 1_000, "approve").await;
    let response = pg.confirm(Some("key-1"), &body(&payment_key, "order-1", 1_000)).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(pg.stats().await.processings, 1);
}

#[tokio::test]
async fn the_test_code_header_answers_that_code_and_charges_nothing() {
    let pg = start(fast_config()).await;
    let cases = [
        ("REJECT_CARD_PAYMENT", StatusCode::FORBIDDEN),
        ("INVALID_CARD_EXPIRATION", StatusCode::BAD_REQUEST),
        ("FAILED_INTERNAL_SYSTEM_PROCESSING", StatusCode::INTERNAL_SERVER_ERROR),
        ("SOME_CODE_NOBODY_KNOWS", StatusCode::BAD_REQUEST),
    ];
    for (code, status) in cases {
        let response = pg
            .confirm_request(Some("key-1"), &body("pk-1", "order-1", 1_000))
            .header("TossPayments-Test-Code", code)
            .send()
            .await
            .unwrap();
        let (got_status, got_code, _) = error_code(response).await;
        assert_eq!((got_status, got_code.as_str()), (status, code));
    }
    let stats = pg.stats().await;
    assert_eq!((stats.test_code_responses, stats.processings), (4, 0));
    // Nothing was stored: the same key and payment now go through.
    let response = pg.confirm(Some("key-1"), &body("pk-1", "order-1", 1_000)).await;
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn lookups_need_the_key_and_answer_404_for_unknown_payments() {
    let pg = start(fast_config()).await;
    for path in ["/v1/payments/nope", "/v1/payments/orders/nope"] {
        let (status, code, _) = error_code(pg.get(path).await).await;
        assert_eq!((status, code.as_str()), (StatusCode::NOT_FOUND, "NOT_FOUND_PAYMENT"));
        let anonymous = pg.client.get(format!("{}{path}", pg.url)).send().await.unwrap();
        assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    }
    let (status, code, _) = error_code(pg.get("/v2/nothing").await).await;
    assert_eq!((status, code.as_str()), (StatusCode::NOT_FOUND, "NOT_FOUND"));
}

#[tokio::test]
async fn stats_decode_and_count_every_confirm() {
    let pg = start(fast_config()).await;
    assert_eq!(pg.stats().await, fake_pg::Stats::default(), "a new PG has counted nothing");

    let charged = pg.confirm(Some("key-1"), &body("pk-1", "order-1", 1_000)).await;
    assert_eq!(charged.status(), StatusCode::OK);
    let replayed = pg.confirm(Some("key-1"), &body("pk-1", "order-1", 1_000)).await;
    assert_eq!(replayed.status(), StatusCode::OK);
    let negative = json!({"paymentKey": "pk-2", "orderId": "order-2", "amount": -5});
    let (status, _, _) = error_code(pg.confirm(None, &negative).await).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let stats = pg.stats().await;
    assert_eq!((stats.confirm_requests, stats.processings, stats.replays), (3, 1, 1));
    assert_eq!(stats.charges_by_order.get("order-1"), Some(&1));
    assert_eq!(stats.payments_by_status.get("DONE"), Some(&1));
    assert!(stats.double_charges.is_empty());
}

//! The cancel endpoint over real HTTP: full and partial refunds, what cannot
//! be canceled, idempotency, Toss's one-cancel-a-second rule, callers that
//! hang up, and faults.

use crate::common;

use std::time::Duration;

use common::{Pg, cancel_body, error_code, fast_config, is_connection_reset, start};
use fake_pg::{Config, Payment};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Toss lets one cancel of a payment through per second; tests that cancel
/// a payment twice wait this long between.
const PAST_THE_CONSECUTIVE_WINDOW: Duration = Duration::from_millis(1_100);

async fn canceled(pg: &Pg, payment_key: &str, key: Option<&str>, body: &Value) -> Payment {
    let response = pg.cancel(payment_key, key, body).await;
    assert_eq!(response.status(), StatusCode::OK, "{}", response.text().await.unwrap());
    response.json().await.unwrap()
}

#[tokio::test]
async fn a_full_cancel_refunds_everything_and_the_lookups_show_it() {
    let pg = start(fast_config()).await;
    let approved = pg.charged("pk-1", "order-1", 12_900).await;
    let response = pg.cancel("pk-1", Some("cancel-1"), &cancel_body("changed mind", None)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let raw: Value = response.json().await.unwrap();
    assert_eq!((raw["status"].as_str(), raw["balanceAmount"].as_u64()), (Some("CANCELED"), Some(0)));
    let entry = &raw["cancels"][0];
    assert_eq!(entry["cancelAmount"], 12_900);
    assert_eq!(entry["cancelReason"], "changed mind");
    assert_eq!((entry["refundableAmount"].as_u64(), entry["cancelStatus"].as_str()), (Some(0), Some("DONE")));
    for zero in ["taxFreeAmount", "taxExemptionAmount", "transferDiscountAmount", "easyPayDiscountAmount"] {
        assert_eq!(entry[zero], 0, "{zero}");
    }
    assert!(entry["canceledAt"].as_str().unwrap().ends_with("+09:00"));
    assert!(entry.get("receiptKey").is_some() && entry.get("cancelRequestId").is_some());
    assert_eq!(entry["transactionKey"], raw["lastTransactionKey"], "the cancel is the last transaction");
    assert_ne!(raw["lastTransactionKey"].as_str(), approved.last_transaction_key.as_deref());

    let payment: Payment = serde_json::from_value(raw).unwrap();
    assert_eq!(payment.approved_at, approved.approved_at, "it was approved all the same");
    assert_eq!(pg.payment("pk-1").await.as_ref(), Some(&payment));
    assert_eq!(pg.order_payment("order-1").await.as_ref(), Some(&payment));

    let stats = pg.stats().await;
    assert_eq!((stats.cancel_requests, stats.cancels_processed, stats.processings), (1, 1, 1));
    assert_eq!(stats.refunds_by_order.get("order-1"), Some(&12_900));
    assert_eq!(stats.charges_by_order.get("order-1"), Some(&1), "a canceled approval was still a charge");
    assert_eq!(stats.payments_by_status.get("CANCELED"), Some(&1));
    assert!(stats.double_charges.is_empty() && stats.over_refunds.is_empty());
}

#[tokio::test]
async fn a_partial_cancel_then_the_rest() {
    let pg = start(fast_config()).await;
    pg.charged("pk-1", "order-1", 12_900).await;
    let partial = canceled(&pg, "pk-1", Some("cancel-1"), &cancel_body("one mug broke", Some(4_000))).await;
    assert_eq!((partial.status.as_str(), partial.balance_amount), ("PARTIAL_CANCELED", 8_900));
    assert_eq!((partial.supplied_amount + partial.vat, partial.vat), (8_900, 809), "supplied and VAT of the balance");
    let entries = partial.cancels.as_ref().unwrap();
    assert_eq!((entries.len(), entries[0].cancel_amount, entries[0].refundable_amount), (1, 4_000, 8_900));
    assert_eq!(pg.payment("pk-1").await.unwrap().status.as_str(), "PARTIAL_CANCELED");

    tokio::time::sleep(PAST_THE_CONSECUTIVE_WINDOW).await;
    let rest = canceled(&pg, "pk-1", Some("cancel-2"), &cancel_body("the rest too", None)).await;
    assert_eq!((rest.status.as_str(), rest.balance_amount, rest.refunded()), ("CANCELED", 0, 12_900));
    let entries = rest.cancels.unwrap();
    assert_eq!(entries.iter().map(|entry| entry.cancel_amount).collect::<Vec<_>>(), [4_000, 8_900]);
    assert_eq!(entries[1].refundable_amount, 0);
    let stats = pg.stats().await;
    assert_eq!((stats.cancels_processed, stats.refunds_by_order.get("order-1")), (2, Some(&12_900)));
}

#[tokio::test]
async fn more_than_the_balance_or_nothing_is_not_a_cancelable_amount() {
    let pg = start(fast_config()).await;
    pg.charged("pk-1", "order-1", 12_900).await;
    for amount in [json!(12_901), json!(0), json!(-100)] {
        let body = json!({"cancelReason": "too much", "cancelAmount": amount});
        let (status, code, _) = error_code(pg.cancel("pk-1", None, &body).await).await;
        assert_eq!((status, code.as_str()), (StatusCode::FORBIDDEN, "NOT_CANCELABLE_AMOUNT"), "{amount}");
    }
    let payment = pg.payment("pk-1").await.unwrap();
    assert_eq!((payment.status.as_str(), payment.balance_amount, payment.cancels), ("DONE", 12_900, None));
    let stats = pg.stats().await;
    assert_eq!((stats.cancel_requests, stats.cancels_processed), (3, 0));
    assert!(stats.refunds_by_order.is_empty());
}

#[tokio::test]
async fn payments_never_approved_cannot_be_canceled() {
    let pg = start(fast_config()).await;
    let ready = pg.open_window("order-ready", 1_000).await;
    pg.set_config(json!({"faults": {"decline": 1}})).await;
    let declined = pg.confirm(None, &common::body("pk-declined", "order-declined", 1_000)).await;
    assert_eq!(declined.status(), StatusCode::FORBIDDEN);
    // Ten minutes to confirm last 60 ms at this scale.
    let hurried = start(Config { time_scale: 0.0001, ..fast_config() }).await;
    let expired = hurried.open_window("order-expired", 1_000).await;
    tokio::time::sleep(Duration::from_millis(100)).await;

    for (pg, payment_key, status) in
        [(&pg, ready.as_str(), "READY"), (&pg, "pk-declined", "ABORTED"), (&hurried, &expired, "EXPIRED")]
    {
        let (code_status, code, message) =
            error_code(pg.cancel(payment_key, None, &cancel_body("r", None)).await).await;
        assert_eq!((code_status, code.as_str()), (StatusCode::FORBIDDEN, "NOT_CANCELABLE_PAYMENT"), "{status}");
        assert!(message.contains(status), "{message}");
        assert_eq!(pg.payment(payment_key).await.unwrap().status.as_str(), status);
        assert_eq!(pg.stats().await.cancels_processed, 0);
    }
    let (status, code, _) = error_code(pg.cancel("pk-nobody-knows", None, &cancel_body("r", None)).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::NOT_FOUND, "NOT_FOUND_PAYMENT"));
}

#[tokio::test]
async fn a_canceled_payment_is_already_canceled() {
    let pg = start(fast_config()).await;
    pg.charged("pk-1", "order-1", 1_000).await;
    canceled(&pg, "pk-1", None, &cancel_body("all", None)).await;
    tokio::time::sleep(PAST_THE_CONSECUTIVE_WINDOW).await;
    for amount in [None, Some(1)] {
        let (status, code, _) = error_code(pg.cancel("pk-1", None, &cancel_body("again", amount)).await).await;
        assert_eq!((status, code.as_str()), (StatusCode::BAD_REQUEST, "ALREADY_CANCELED_PAYMENT"));
    }
    let stats = pg.stats().await;
    assert_eq!((stats.cancels_processed, stats.refunds_by_order.get("order-1")), (1, Some(&1_000)));
}

#[tokio::test]
async fn bad_requests_are_refused_and_refund_nothing() {
    let pg = start(fast_config()).await;
    pg.charged("pk-1", "order-1", 1_000).await;
    let url = format!("{}/v1/payments/pk-1/cancel", pg.url);
    let anonymous = pg.client.post(&url).json(&cancel_body("r", None)).send().await.unwrap();
    assert_eq!(error_code(anonymous).await.1, "UNAUTHORIZED_KEY");
    let cases = [
        (json!({}), "cancelReason"),
        (json!({"cancelReason": ""}), "cancelReason"),
        (json!({"cancelReason": "r", "cancelAmount": "100"}), "cancelAmount"),
        (json!({"cancelReason": "r", "cancelAmount": 10.5}), "cancelAmount"),
    ];
    for (body, mentions) in cases {
        let (status, code, message) = error_code(pg.cancel("pk-1", Some("key-a"), &body).await).await;
        assert_eq!((status, code.as_str()), (StatusCode::BAD_REQUEST, "INVALID_REQUEST"), "{body}");
        assert!(message.contains(mentions), "{message}");
    }
    let stats = pg.stats().await;
    assert_eq!((stats.cancel_requests, stats.cancels_processed), (5, 0));
    // key-a went only with refusals at the door, so it was never recorded.
    canceled(&pg, "pk-1", Some("key-a"), &cancel_body("r", None)).await;
}

#[tokio::test]
async fn the_same_key_replays_the_first_answer_errors_included() {
    let pg = start(fast_config()).await;
    pg.charged("pk-1", "order-1", 12_900).await;
    let first = pg.cancel("pk-1", Some("cancel-1"), &cancel_body("one", Some(1_000))).await;
    assert_eq!(first.status(), StatusCode::OK);
    let first: Value = first.json().await.unwrap();
    tokio::time::sleep(PAST_THE_CONSECUTIVE_WINDOW).await;
    canceled(&pg, "pk-1", Some("cancel-2"), &cancel_body("two", Some(2_000))).await;

    // The key, not the body, picks the answer: the first, as it was then.
    let replay = pg.cancel("pk-1", Some("cancel-1"), &cancel_body("other", Some(5_000))).await;
    assert_eq!(replay.status(), StatusCode::OK);
    assert_eq!(replay.json::<Value>().await.unwrap(), first);
    assert_eq!(pg.payment("pk-1").await.unwrap().balance_amount, 9_900, "the lookup shows both cancels");

    // A refusal about the payment is a complete answer too.
    tokio::time::sleep(PAST_THE_CONSECUTIVE_WINDOW).await;
    let (status, code, _) =
        error_code(pg.cancel("pk-1", Some("cancel-3"), &cancel_body("x", Some(99_999))).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::FORBIDDEN, "NOT_CANCELABLE_AMOUNT"));
    let (status, code, _) = error_code(pg.cancel("pk-1", Some("cancel-3"), &cancel_body("x", Some(100))).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::FORBIDDEN, "NOT_CANCELABLE_AMOUNT"), "replayed");

    let stats = pg.stats().await;
    assert_eq!((stats.cancels_processed, stats.replays), (2, 2));
    assert_eq!(stats.refunds_by_order.get("order-1"), Some(&3_000), "the first key refunded once");
}

#[tokio::test]
async fn the_same_key_while_its_cancel_is_processing_gets_409() {
    let pg = start(fast_config()).await;
    pg.charged("pk-1", "order-1", 1_000).await;
    pg.set_config(json!({"latency_ms": 1_500})).await;
    let first = tokio::spawn({
        let request = pg.cancel_request("pk-1", Some("cancel-1"), &cancel_body("r", None));
        async move { request.send().await.unwrap() }
    });
    pg.wait_for_stats("the cancel in flight", |stats| stats.in_flight == 1).await;
    let (status, code, _) = error_code(pg.cancel("pk-1", Some("cancel-1"), &cancel_body("r", None)).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::CONFLICT, "IDEMPOTENT_REQUEST_PROCESSING"));
    assert_eq!(pg.payment("pk-1").await.unwrap().status.as_str(), "DONE", "not refunded yet");

    assert_eq!(first.await.unwrap().status(), StatusCode::OK);
    let stats = pg.stats().await;
    assert_eq!((stats.cancels_processed, stats.in_progress_conflicts, stats.in_flight), (1, 1, 0));
}

#[tokio::test]
async fn two_cancels_of_a_payment_within_a_second_process_only_the_first() {
    let pg = start(fast_config()).await;
    pg.charged("pk-1", "order-1", 12_900).await;
    canceled(&pg, "pk-1", Some("cancel-1"), &cancel_body("one", Some(1_000))).await;
    let (status, code, _) =
        error_code(pg.cancel("pk-1", Some("cancel-2"), &cancel_body("two", Some(1_000))).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::FORBIDDEN, "FORBIDDEN_CONSECUTIVE_REQUEST"));
    let stats = pg.stats().await;
    assert_eq!((stats.cancels_processed, stats.refunds_by_order.get("order-1")), (1, Some(&1_000)));
    assert_eq!(pg.payment("pk-1").await.unwrap().balance_amount, 11_900);

    // The refusal was about timing, not stored: the same key later goes through.
    tokio::time::sleep(PAST_THE_CONSECUTIVE_WINDOW).await;
    let second = canceled(&pg, "pk-1", Some("cancel-2"), &cancel_body("two", Some(1_000))).await;
    assert_eq!(second.balance_amount, 10_900);
}

#[tokio::test]
async fn a_cancel_goes_on_after_its_caller_hangs_up() {
    // 20 s at a tenth of real time: the caller gives up at 1 s, the PG refunds at 2 s.
    let config = Config { time_scale: 0.1, ..fast_config() };
    let pg = start(config).await;
    pg.charged("pk-1", "order-1", 1_000).await;
    pg.set_config(json!({"latency_ms": 20_000})).await;
    let error = pg
        .cancel_request("pk-1", Some("cancel-1"), &cancel_body("r", None))
        .timeout(Duration::from_secs(1))
        .send()
        .await
        .unwrap_err();
    assert!(error.is_timeout(), "{error}");
    let stats = pg.wait_for_stats("the abandoned cancel", |stats| stats.abandoned == 1).await;
    assert_eq!(stats.in_flight, 1);
    assert_eq!(pg.payment("pk-1").await.unwrap().status.as_str(), "DONE");

    let refunded = pg.wait_for_status("order-1", "CANCELED").await;
    assert_eq!(refunded.refunded(), 1_000);
    let replay = canceled(&pg, "pk-1", Some("cancel-1"), &cancel_body("r", None)).await;
    assert_eq!(replay, refunded, "the retry learns the truth");
    assert_eq!(pg.stats().await.cancels_processed, 1);
}

#[tokio::test]
async fn a_500_after_the_cancel_was_done_leaves_it_canceled_and_replays_the_500() {
    let pg = start(fast_config()).await;
    pg.charged("pk-1", "order-1", 1_000).await;
    pg.set_config(json!({"faults": {"error_500_after_charge": 1}})).await;
    let (status, code, _) = error_code(pg.cancel("pk-1", Some("cancel-1"), &cancel_body("r", None)).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::INTERNAL_SERVER_ERROR, "FAILED_INTERNAL_SYSTEM_PROCESSING"));
    assert_eq!(pg.payment("pk-1").await.unwrap().status.as_str(), "CANCELED", "only the lookup tells");
    let (status, _, _) = error_code(pg.cancel("pk-1", Some("cancel-1"), &cancel_body("r", None)).await).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "Toss replays the first answer");
    let stats = pg.stats().await;
    assert_eq!((stats.faults_injected.error_500_after_charge, stats.cancels_processed), (1, 1));
    assert_eq!(stats.refunds_by_order.get("order-1"), Some(&1_000));
}

#[tokio::test]
async fn a_reset_after_the_cancel_was_done_replays_the_canceled_payment() {
    let pg = start(fast_config()).await;
    pg.charged("pk-1", "order-1", 1_000).await;
    pg.set_config(json!({"faults": {"reset_after_charge": 1}})).await;
    let error = pg.cancel_request("pk-1", Some("cancel-1"), &cancel_body("r", None)).send().await.expect_err("a reset");
    assert!(is_connection_reset(&error), "not a reset: {error:?}");
    let refunded = pg.wait_for_status("order-1", "CANCELED").await;
    assert_eq!(canceled(&pg, "pk-1", Some("cancel-1"), &cancel_body("r", None)).await, refunded);
    assert_eq!(pg.stats().await.faults_injected.reset_after_charge, 1);
}

#[tokio::test]
async fn faults_at_the_door_refund_nothing_and_store_nothing() {
    let pg = start(fast_config()).await;
    pg.charged("pk-1", "order-1", 1_000).await;
    let cases = [
        ("error_500", StatusCode::INTERNAL_SERVER_ERROR, "FAILED_INTERNAL_SYSTEM_PROCESSING"),
        ("rate_limit_429", StatusCode::TOO_MANY_REQUESTS, "TOO_MANY_REQUESTS"),
        ("forbidden_consecutive", StatusCode::FORBIDDEN, "FORBIDDEN_CONSECUTIVE_REQUEST"),
    ];
    for (fault, status, code) in cases {
        pg.set_config(json!({"faults": {fault: 1}})).await;
        let (got_status, got_code, _) =
            error_code(pg.cancel("pk-1", Some("cancel-1"), &cancel_body("r", None)).await).await;
        assert_eq!((got_status, got_code.as_str()), (status, code), "{fault}");
        pg.set_config(json!({"faults": {fault: 0}})).await;
    }
    pg.set_config(json!({"faults": {"reset_before_processing": 1}})).await;
    let error = pg.cancel_request("pk-1", Some("cancel-1"), &cancel_body("r", None)).send().await.unwrap_err();
    assert!(is_connection_reset(&error), "not a reset: {error:?}");
    pg.set_config(json!({"faults": {"reset_before_processing": 0}})).await;
    assert_eq!(pg.payment("pk-1").await.unwrap().status.as_str(), "DONE");
    let stats = pg.stats().await;
    assert_eq!((stats.cancels_processed, stats.faults_injected.total), (0, 4));

    // Nothing was stored for the key, and nothing started the one-a-second clock.
    let refunded = canceled(&pg, "pk-1", Some("cancel-1"), &cancel_body("r", None)).await;
    assert_eq!(refunded.status.as_str(), "CANCELED");
}

#[tokio::test]
async fn a_card_company_failure_is_a_provider_error_that_refunds_nothing() {
    let pg = start(fast_config()).await;
    pg.charged("pk-1", "order-1", 1_000).await;
    pg.set_config(json!({"faults": {"decline": 1}})).await;
    let (status, code, _) = error_code(pg.cancel("pk-1", Some("cancel-1"), &cancel_body("r", None)).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::BAD_REQUEST, "PROVIDER_ERROR"));
    let payment = pg.payment("pk-1").await.unwrap();
    assert_eq!((payment.status.as_str(), payment.balance_amount), ("DONE", 1_000));
    pg.set_config(json!({"faults": {"decline": 0}})).await;
    let (_, code, _) = error_code(pg.cancel("pk-1", Some("cancel-1"), &cancel_body("r", None)).await).await;
    assert_eq!(code, "PROVIDER_ERROR", "the key replays it");
    let stats = pg.stats().await;
    assert_eq!((stats.cancels_processed, stats.faults_injected.decline), (1, 1));
    assert!(stats.refunds_by_order.is_empty());
}

#[tokio::test]
async fn an_outage_refuses_cancels_too() {
    let pg = start(fast_config()).await;
    pg.charged("pk-1", "order-1", 1_000).await;
    pg.set_config(json!({"outage": true})).await;
    let (status, _, _) = error_code(pg.cancel("pk-1", Some("cancel-1"), &cancel_body("r", None)).await).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    pg.set_config(json!({"outage": false})).await;
    assert_eq!(canceled(&pg, "pk-1", Some("cancel-1"), &cancel_body("r", None)).await.status.as_str(), "CANCELED");
}

//! Cancels and refunds against the fake PG over HTTP: the customer's own cancel
//! within the window, the operators' refunds behind a token, and refunds whose
//! answer the PG refused for now or lost, which go out once all the same.
//! Every test ends with the PG's ledger agreeing with the server.

use crate::support;

use std::time::Duration;

use payonce_api::OrderStatus;
use reqwest::StatusCode;
use serde_json::json;
use support::{FakePg, Server, assert_charges_agree, eventually};

const SETTLE: Duration = Duration::from_secs(15);
const TOKEN: &str = "test-admin-token-of-32-characters-or-more";

async fn server_with_token(pg: &FakePg) -> Server {
    Server::start_with(&pg.url, |config| config.admin_token = Some(TOKEN.into())).await
}

/// What the PG refunded of the order, and that it never refunded more than it charged.
async fn refunded_by_pg(pg: &FakePg, order_id: &str) -> u64 {
    let stats = pg.stats().await;
    assert!(stats.over_refunds.is_empty(), "over-refunds: {:?}", stats.over_refunds);
    stats.refunds_by_order.get(order_id).copied().unwrap_or(0)
}

#[tokio::test]
async fn a_customer_cancels_a_paid_order_and_is_refunded_in_full() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let order = server.paid_order().await;
    assert!(order.paid_at.is_some(), "the cancel window runs from it");

    let (status, body) = server.cancel(&order.order_id, "cancel-1").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "CANCELED");
    assert_eq!(body["refunded_amount"], order.amount);

    assert_eq!(refunded_by_pg(&pg, &order.order_id).await, order.amount);
    assert_eq!(
        server.history(&order.order_id).await,
        ["CREATED>PENDING", "PENDING>PAID", "PAID>CANCEL_REQUESTED", "CANCEL_REQUESTED>CANCELED"]
    );
    let refunds = server.db().await.refunds(&order.order_id).await.unwrap();
    assert_eq!(refunds.len(), 1);
    assert_eq!((refunds[0].status.as_str(), refunds[0].amount, refunds[0].calls), ("DONE", order.amount, 1));
    assert_charges_agree(&pg, &server, &[&order.order_id]).await;
}

#[tokio::test]
async fn an_operator_refunds_part_then_the_rest_and_each_action_is_audited() {
    // Toss refuses a second cancel of a payment within a second; scaled to 10 ms.
    let pg = FakePg::start_with(|config| config.time_scale = 0.01).await;
    let server = server_with_token(&pg).await;
    let order = server.paid_order().await;

    let (status, body) =
        server.operator_cancel(&order.order_id, Some(TOKEN), json!({"amount": 3_000, "reason": "one mug broke"})).await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("PARTIALLY_REFUNDED")), "{body}");
    assert_eq!(body["refunded_amount"], 3_000);
    // What an operator began is the shop's to finish: the customer's own cancel is refused.
    let (status, body) = server.cancel(&order.order_id, "cancel-the-rest").await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("ORDER_ALREADY_CANCELED")), "{body}");
    assert_eq!(pg.stats().await.cancel_requests, 1, "the customer's cancel sent nothing");
    tokio::time::sleep(Duration::from_millis(50)).await;

    let (status, body) =
        server.operator_cancel(&order.order_id, Some(TOKEN), json!({"reason": "customer returned the rest"})).await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("CANCELED")), "{body}");
    assert_eq!(body["refunded_amount"], order.amount);

    assert_eq!(refunded_by_pg(&pg, &order.order_id).await, order.amount);
    assert_eq!(pg.stats().await.cancels_processed, 2);
    assert_eq!(
        server.history(&order.order_id).await[2..],
        [
            "PAID>CANCEL_REQUESTED",
            "CANCEL_REQUESTED>PARTIALLY_REFUNDED",
            "PARTIALLY_REFUNDED>CANCEL_REQUESTED",
            "CANCEL_REQUESTED>CANCELED"
        ]
    );
    let audit = server.db().await.audit_log(&order.order_id).await.unwrap();
    assert_eq!(audit.len(), 2, "{audit:?}");
    // The refunds were sent saying `X-Operator: jiwoo`; the audit names the token's operator.
    assert!(audit.iter().all(|line| line.operator == "operator" && line.action == "cancel"), "{audit:?}");
    assert!(audit[0].detail.as_deref().unwrap().contains("3000 KRW"), "{audit:?}");
    assert!(audit[1].detail.as_deref().unwrap().contains("customer returned the rest"), "{audit:?}");
    assert_charges_agree(&pg, &server, &[&order.order_id]).await;
}

#[tokio::test]
async fn an_amount_over_what_is_left_or_a_reason_missing_or_too_long_is_refused_and_changes_nothing() {
    let pg = FakePg::start().await;
    let server = server_with_token(&pg).await;
    let order = server.paid_order().await;
    let db = server.db().await;
    let before = db.digest().await.unwrap();

    for amount in [order.amount + 1, 0] {
        let (status, body) =
            server.operator_cancel(&order.order_id, Some(TOKEN), json!({"amount": amount, "reason": "too much"})).await;
        assert_eq!((status, body["code"].as_str()), (StatusCode::BAD_REQUEST, Some("INVALID_CANCEL_AMOUNT")));
    }
    // A reason is 1 to 200 characters (not bytes: Korean takes three each).
    for reason in [String::new(), "   ".to_owned(), "환".repeat(201)] {
        let (status, body) = server.operator_cancel(&order.order_id, Some(TOKEN), json!({"reason": reason})).await;
        assert_eq!((status, body["code"].as_str()), (StatusCode::BAD_REQUEST, Some("INVALID_REQUEST")), "{reason:?}");
    }

    assert_eq!(db.digest().await.unwrap(), before);
    assert_eq!(pg.stats().await.cancel_requests, 0);
    assert_eq!(server.order(&order.order_id).await.status, OrderStatus::Paid);
    let (status, body) =
        server.operator_cancel(&order.order_id, Some(TOKEN), json!({"reason": "환".repeat(200)})).await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("CANCELED")), "{body}");
}

#[tokio::test]
async fn an_unpaid_order_cannot_be_cancelled() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;
    let db = server.db().await;
    let before = db.digest().await.unwrap();

    let (status, body) = server.cancel(&created.order.order_id, "cancel-unpaid").await;

    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("ORDER_NOT_PAID")), "{body}");
    assert_eq!(body["order"]["status"], "CREATED");
    assert_eq!(db.digest().await.unwrap(), before);
    assert_eq!(pg.stats().await.cancel_requests, 0);
}

#[tokio::test]
async fn another_customers_order_is_not_found_and_not_cancelled() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let order = server.paid_order().await;
    let stranger = server.other_customer();

    let response = stranger
        .post(format!("{}/api/orders/{}/cancel", server.url, order.order_id))
        .header("Idempotency-Key", "cancel-stranger")
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["code"], "ORDER_NOT_FOUND");
    assert_eq!(server.order(&order.order_id).await.status, OrderStatus::Paid);
    assert_eq!(pg.stats().await.cancel_requests, 0);
}

#[tokio::test]
async fn a_customer_cannot_cancel_after_the_window_but_an_operator_can() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| {
        config.cancel_window = Duration::from_millis(200);
        config.admin_token = Some(TOKEN.into());
    })
    .await;
    let config: serde_json::Value =
        server.http.get(format!("{}/api/config", server.url)).send().await.unwrap().json().await.unwrap();
    assert_eq!(config["cancel_window_ms"], 200, "the page offers the cancel within the same window");
    let order = server.paid_order().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let db = server.db().await;
    let before = db.digest().await.unwrap();

    let (status, body) = server.cancel(&order.order_id, "cancel-late").await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("CANCEL_WINDOW_PASSED")), "{body}");
    assert_eq!(db.digest().await.unwrap(), before);
    assert_eq!(pg.stats().await.cancel_requests, 0);

    let (status, body) = server.operator_cancel(&order.order_id, Some(TOKEN), json!({"reason": "goodwill"})).await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("CANCELED")), "{body}");
}

#[tokio::test]
async fn a_double_click_is_one_cancel_at_the_pg() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let order = server.paid_order().await;

    let (first, second) =
        tokio::join!(server.cancel(&order.order_id, "double-click"), server.cancel(&order.order_id, "double-click"));
    for (status, body) in [&first, &second] {
        assert!(matches!(*status, StatusCode::OK | StatusCode::ACCEPTED), "{status} {body}");
    }
    server.wait_for(&order.order_id, OrderStatus::Canceled, SETTLE).await;
    let (status, body) = server.cancel(&order.order_id, "double-click").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("CANCELED")), "the same key replays");
    let (status, body) = server.cancel(&order.order_id, "a-later-click").await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("ORDER_ALREADY_CANCELED")));

    let stats = pg.stats().await;
    assert_eq!((stats.cancel_requests, stats.cancels_processed), (1, 1));
    assert_eq!(refunded_by_pg(&pg, &order.order_id).await, order.amount);
    assert_eq!(server.db().await.refunds(&order.order_id).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_cancel_turned_away_then_failing_goes_out_once_in_the_end() {
    let pg = FakePg::start().await;
    // Its own process: the cancel calls counted are this server's alone.
    let server = Server::own_process(&pg.url, &[("--admin-token", TOKEN)]).await;
    let order = server.paid_order().await;
    pg.configure(json!({"faults": {"forbidden_consecutive": 1.0}})).await;

    let (status, body) = server.cancel(&order.order_id, "cancel-persistent").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::ACCEPTED, Some("CANCEL_REQUESTED")), "{body}");
    // Operators read at once what the PG said to it.
    let answer = last_refund_answer(&server, &order.order_id).await;
    assert!(answer.as_deref().is_some_and(|answer| answer.contains("FORBIDDEN_CONSECUTIVE_REQUEST")), "{answer:?}");

    // Recovery sends it again with the same key: turned away again, then a 500, then it goes out.
    eventually("recovery sends the cancel again", SETTLE, || async {
        (pg.stats().await.faults_injected.forbidden_consecutive >= 2).then_some(())
    })
    .await;
    pg.configure(json!({"faults": {"forbidden_consecutive": 0.0, "error_500": 1.0}})).await;
    eventually("the PG answers a resend with a 500", SETTLE, || async {
        (pg.stats().await.faults_injected.error_500 >= 1).then_some(())
    })
    .await;
    assert_eq!(server.order(&order.order_id).await.status, OrderStatus::CancelRequested);
    pg.configure(json!({"faults": {"error_500": 0.0}})).await;

    let canceled = server.wait_for(&order.order_id, OrderStatus::Canceled, SETTLE).await;
    assert_eq!(canceled.refunded_amount, order.amount);
    let stats = pg.stats().await;
    assert_eq!(stats.cancels_processed, 1);
    assert_eq!(refunded_by_pg(&pg, &order.order_id).await, order.amount);
    let refund = &server.db().await.refunds(&order.order_id).await.unwrap()[0];
    assert!(refund.calls >= 4, "the first call and at least three resends: {refund:?}");
    let answer = last_refund_answer(&server, &order.order_id).await;
    assert!(answer.as_deref().is_some_and(|answer| answer.starts_with("HTTP 200 payment")), "{answer:?}");

    // The operators' figures: each call under what it came to.
    let calls = cancel_calls(&server).await;
    let count = |call: &str, outcome: &str| calls.get(&(call.to_owned(), outcome.to_owned())).copied().unwrap_or(0);
    assert_eq!(count("first", "unknown"), 1, "{calls:?}");
    assert!(count("lookup", "not_refunded") >= 2, "a lookup before every resend: {calls:?}");
    assert!(count("resend", "unknown") >= 1 && count("resend", "unavailable") >= 1, "{calls:?}");
    assert_eq!(count("resend", "settled"), 1, "{calls:?}");
    let outcomes = ["first/unknown", "lookup/not_refunded", "lookup/unavailable", "resend/unknown"];
    let outcomes = [outcomes.as_slice(), &["resend/unavailable", "resend/settled"]].concat();
    for (call, outcome) in calls.keys() {
        assert!(outcomes.contains(&format!("{call}/{outcome}").as_str()), "{call}/{outcome}: {calls:?}");
    }
    // Only the passes the PG answered count toward the operators' alert: a
    // resend the PG gave no usable answer to (its 500) is not one of them.
    assert_eq!(u64::from(refund.recovery_passes), count("resend", "unknown"), "{refund:?} {calls:?}");
    assert_charges_agree(&pg, &server, &[&order.order_id]).await;
}

/// What the PG last said about the order's first refund, as operators read it.
async fn last_refund_answer(server: &Server, order_id: &str) -> Option<String> {
    let url = format!("{}/admin/orders/{order_id}", server.admin_url);
    let response = server.http.get(url).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let story: serde_json::Value = response.json().await.unwrap();
    story["refunds"][0]["last_pg_answer"].as_str().map(str::to_owned)
}

/// The server's cancel calls counted so far, by call and what each came to.
async fn cancel_calls(server: &Server) -> std::collections::BTreeMap<(String, String), u64> {
    let metrics = server.metrics().await;
    let label = |line: &str, name: &str| {
        let start = line.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
        line[start..].split('"').next().unwrap().to_owned()
    };
    metrics
        .lines()
        .filter(|line| line.starts_with("payment_pg_cancel_calls_total{"))
        .map(|line| {
            let count = line.rsplit(' ').next().unwrap().parse().unwrap();
            ((label(line, "call"), label(line, "outcome")), count)
        })
        .collect()
}

#[tokio::test]
async fn a_cancel_whose_answer_is_lost_is_settled_by_a_lookup_without_a_second_refund() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let order = server.paid_order().await;
    pg.configure(json!({"faults": {"reset_after_charge": 1.0}})).await;

    let (status, body) = server.cancel(&order.order_id, "cancel-lost").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::ACCEPTED, Some("CANCEL_REQUESTED")), "{body}");

    server.wait_for(&order.order_id, OrderStatus::Canceled, SETTLE).await;
    let stats = pg.stats().await;
    assert_eq!((stats.cancel_requests, stats.cancels_processed), (1, 1), "the lookup settled it, nothing was resent");
    assert!(stats.lookups >= 1);
    assert_eq!(refunded_by_pg(&pg, &order.order_id).await, order.amount);
    let events = server.db().await.history(&order.order_id).await.unwrap();
    let last = events.last().unwrap();
    assert_eq!((last.actor.as_str(), last.to_status.as_str()), ("recovery", "CANCELED"));
    assert_charges_agree(&pg, &server, &[&order.order_id]).await;
}

#[tokio::test]
async fn a_cancel_still_at_the_pg_goes_out_again_under_its_own_key_and_refunds_once() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let order = server.paid_order().await;
    // The PG keeps the refund processing past our read timeout, for as long as the test needs.
    pg.configure(json!({"hold": true})).await;

    let (status, body) = server.cancel(&order.order_id, "cancel-held").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::ACCEPTED, Some("CANCEL_REQUESTED")), "{body}");

    // Recovery sends it again while the first is still processing: under the
    // same key, which the PG answers "still processing", so nothing new starts.
    let stats = eventually("a resend meets the first cancel still processing", SETTLE, || async {
        let stats = pg.stats().await;
        (stats.in_progress_conflicts >= 1).then_some(stats)
    })
    .await;
    assert_eq!((stats.in_flight, stats.cancels_processed), (1, 1), "one refund at the PG: {stats:?}");
    assert_eq!(server.order(&order.order_id).await.status, OrderStatus::CancelRequested);

    pg.configure(json!({"hold": false})).await;
    let canceled = server.wait_for(&order.order_id, OrderStatus::Canceled, SETTLE).await;
    assert_eq!(canceled.refunded_amount, order.amount);
    let stats = pg.stats().await;
    assert_eq!(stats.cancels_processed, 1);
    // Recovery took the refund only once its first send had given up: never two calls about it at once.
    assert_eq!(stats.overlapping_calls, 0, "{stats:?}");
    assert_eq!(refunded_by_pg(&pg, &order.order_id).await, order.amount);
    assert_charges_agree(&pg, &server, &[&order.order_id]).await;
}

#[tokio::test]
async fn a_refusal_ends_the_refund_and_the_order_is_paid_again() {
    let pg = FakePg::start().await;
    let server = server_with_token(&pg).await;
    let order = server.paid_order().await;
    // Someone refunded part of it at the PG directly: a refund of nearly all of it is now more than is left.
    let response = reqwest::Client::new()
        .post(format!("{}/v1/payments/{}/cancel", pg.url, support::payment_key_for(&order)))
        .basic_auth(support::SECRET_KEY, Some(""))
        .header("Idempotency-Key", "outside")
        .json(&json!({"cancelReason": "outside the shop", "cancelAmount": 1_000}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(1_100)).await;

    let (status, body) = server
        .operator_cancel(&order.order_id, Some(TOKEN), json!({"amount": order.amount - 500, "reason": "most"}))
        .await;

    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("PAID")), "{body}");
    let refund = &server.db().await.refunds(&order.order_id).await.unwrap()[0];
    assert_eq!((refund.status.as_str(), refund.failure_code.as_deref()), ("FAILED", Some("NOT_CANCELABLE_AMOUNT")));
    assert_eq!(server.history(&order.order_id).await[2..], ["PAID>CANCEL_REQUESTED", "CANCEL_REQUESTED>PAID"]);
}

#[tokio::test]
async fn the_operators_api_is_off_without_a_token_and_closed_to_a_wrong_one() {
    let pg = FakePg::start().await;
    let off = Server::start(&pg.url).await;
    let order = off.paid_order().await;
    let (status, body) = off.operator_cancel(&order.order_id, Some(TOKEN), json!({"reason": "r"})).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::SERVICE_UNAVAILABLE, Some("OPERATOR_API_OFF")));

    let on = server_with_token(&pg).await;
    let order = on.paid_order().await;
    let db = on.db().await;
    let before = db.digest().await.unwrap();
    for token in [None, Some("wrong"), Some("")] {
        let (status, body) = on.operator_cancel(&order.order_id, token, json!({"reason": "r"})).await;
        assert_eq!((status, body["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("UNAUTHORIZED")), "{token:?}");
    }
    assert_eq!(db.digest().await.unwrap(), before);
    assert_eq!(pg.stats().await.cancel_requests, 0);
    // The public listener has no operators' routes at all.
    let response = on
        .http
        .post(format!("{}/admin/orders/{}/cancel", on.url, order.order_id))
        .bearer_auth(TOKEN)
        .json(&json!({"reason": "r"}))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_client_error());
    assert_eq!(on.order(&order.order_id).await.status, OrderStatus::Paid);
}

#[tokio::test]
async fn a_cancel_refused_by_the_card_company_goes_out_again_under_a_new_key() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let order = server.paid_order().await;
    // A processed cancel that refunds nothing: 400 PROVIDER_ERROR, replayed for its key.
    pg.configure(json!({"faults": {"decline": 1.0}})).await;

    let (status, body) = server.cancel(&order.order_id, "cancel-declined").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::ACCEPTED, Some("CANCEL_REQUESTED")), "{body}");
    pg.configure(json!({"faults": {"decline": 0.0}})).await;

    // Under its first key the PG would replay the refusal for ever: it went out under a new one.
    server.wait_for(&order.order_id, OrderStatus::Canceled, SETTLE).await;
    assert_eq!(pg.stats().await.cancels_processed, 2, "the refused processing, then the refund");
    assert_eq!(refunded_by_pg(&pg, &order.order_id).await, order.amount);
}

#[tokio::test]
async fn a_cancel_answered_already_canceled_is_settled_from_a_lookup() {
    let pg = FakePg::start_with(|config| config.time_scale = 0.01).await;
    let server = Server::start(&pg.url).await;
    let order = server.paid_order().await;
    // Cancelled in full at the PG, outside the shop.
    let response = reqwest::Client::new()
        .post(format!("{}/v1/payments/{}/cancel", pg.url, support::payment_key_for(&order)))
        .basic_auth(support::SECRET_KEY, Some(""))
        .header("Idempotency-Key", "outside")
        .json(&json!({"cancelReason": "outside the shop"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(50)).await;

    let (status, body) = server.cancel(&order.order_id, "cancel-after-outside").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::ACCEPTED, Some("CANCEL_REQUESTED")), "{body}");

    let canceled = server.wait_for(&order.order_id, OrderStatus::Canceled, SETTLE).await;
    assert_eq!(canceled.refunded_amount, order.amount);
    let stats = pg.stats().await;
    assert_eq!(stats.cancels_processed, 1, "only the cancel outside the shop refunded anything");
    assert_eq!(refunded_by_pg(&pg, &order.order_id).await, order.amount);
}

/// An order paid through the PG's window with the test card `scenario`.
async fn paid_under(pg: &FakePg, server: &Server, scenario: &str) -> payonce_api::Order {
    let created = server.create_order().await;
    let payment_key = pg.window_payment_key(&created, scenario).await;
    let response = server.confirm_with_key(&created.order, &payment_key, "pay-1").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

#[tokio::test]
async fn a_partial_refund_of_a_payment_refunded_only_in_full_is_refused_up_front() {
    let pg = FakePg::start().await;
    let server = server_with_token(&pg).await;
    let order = paid_under(&pg, &server, "approve_no_partial_refund").await;

    let (status, body) =
        server.operator_cancel(&order.order_id, Some(TOKEN), json!({"amount": 1_000, "reason": "one mug"})).await;

    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("PARTIAL_REFUND_NOT_ALLOWED")), "{body}");
    assert_eq!(body["order"]["status"], "PAID");
    assert!(server.db().await.refunds(&order.order_id).await.unwrap().is_empty(), "nothing stored");
    assert_eq!(pg.stats().await.cancels_processed, 0, "nothing sent");
    // The whole of it can be refunded.
    let (status, body) = server.operator_cancel(&order.order_id, Some(TOKEN), json!({"reason": "all of it"})).await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("CANCELED")), "{body}");
    assert_eq!(refunded_by_pg(&pg, &order.order_id).await, order.amount);
    assert_charges_agree(&pg, &server, &[&order.order_id]).await;
}

#[tokio::test]
async fn a_refund_past_its_refund_period_ends_refused_and_the_order_says_why() {
    let pg = FakePg::start().await;
    // Its own process: the alerts counted are this server's alone.
    let server = Server::own_process(&pg.url, &[]).await;
    let order = paid_under(&pg, &server, "approve_refund_period_over").await;

    let (status, body) = server.cancel(&order.order_id, "cancel-1").await;

    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("PAID")), "{body}");
    assert_eq!(body["refund_refusal"]["code"], "EXCEED_MAX_REFUND_DUE", "{body}");
    let message = body["refund_refusal"]["message"].as_str().unwrap();
    assert!(message.starts_with("The refund period") && message.contains("Nothing was refunded"), "{message}");
    let refund = &server.db().await.refunds(&order.order_id).await.unwrap()[0];
    assert_eq!((refund.status.as_str(), refund.failure_code.as_deref()), ("FAILED", Some("EXCEED_MAX_REFUND_DUE")));
    assert_eq!(refunded_by_pg(&pg, &order.order_id).await, 0);
    // The customer's order page reads the same, and a plain paid order carries no refusal.
    assert_eq!(server.order(&order.order_id).await.refund_refusal.unwrap().code, "EXCEED_MAX_REFUND_DUE");
    assert_eq!(server.paid_order().await.refund_refusal, None);
    // Operators are alerted, once, and see the cancel the refusal answered counted as settled.
    let alerts = server.metric("payment_refund_alerts_total").await;
    assert_eq!(alerts.as_deref(), Some("1"), "the refusal alerted operators once");
    let metrics = server.metrics().await;
    let first_calls: Vec<&str> =
        metrics.lines().filter(|line| line.starts_with("payment_pg_cancel_calls_total{")).collect();
    assert_eq!(first_calls.len(), 1, "{first_calls:?}");
    for part in [r#"pg="toss""#, r#"call="first""#, r#"outcome="settled""#, "} 1"] {
        assert!(first_calls[0].contains(part), "{part}: {first_calls:?}");
    }
    assert_charges_agree(&pg, &server, &[&order.order_id]).await;
}

#[tokio::test]
async fn a_worker_whose_lease_was_taken_over_can_neither_renew_it_give_the_refund_a_new_key_nor_store_a_refusal() {
    use payonce_server::db::{Actor, JobKind, RefundOutcome, now_ms};
    let pg = FakePg::start().await;
    // Recovery's own passes come an hour apart: the test's workers are the only ones.
    let server = Server::start_with(&pg.url, |config| config.recovery_interval = Duration::from_secs(3_600)).await;
    let order = server.paid_order().await;
    pg.configure(json!({"outage": true})).await;
    let (status, body) = server.cancel(&order.order_id, "cancel-1").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::ACCEPTED, Some("CANCEL_REQUESTED")), "{body}");
    let db = server.db().await;
    let refund = db.refunds(&order.order_id).await.unwrap().remove(0);
    let key = || async { db.refunds(&order.order_id).await.unwrap().remove(0).pg_idempotency_key };

    // Worker A takes the refund, and is frozen past its lease; worker B takes it over.
    let later = now_ms() + 3_600_000;
    let claimed = db.claim_job(JobKind::Refund, &refund.refund_id, "worker-a", later, later + 60_000).await.unwrap();
    assert!(claimed.is_some(), "A took it");
    let lapsed = later + 61_000;
    let taken_over = db.claim_job(JobKind::Refund, &refund.refund_id, "worker-b", lapsed, lapsed + 60_000);
    assert!(taken_over.await.unwrap().is_some(), "B took it over once A's lease lapsed");

    // A wakes: its lease is gone, and with it the right to the refund's key.
    let renewed = db.renew_job(JobKind::Refund, &refund.refund_id, "worker-a", lapsed + 120_000).await.unwrap();
    assert!(!renewed, "A cannot renew a lease B holds, so it calls the PG no more");
    assert!(!db.replace_refund_key(&refund.refund_id, "worker-a", "a-stale-key").await.unwrap());
    assert_eq!(key().await, refund.pg_idempotency_key, "A's new key would make B's send a second refund");

    // Nor to store a refusal A read: it may be of a cancel sent before one of
    // B's went through (KakaoPay, without keys, refuses the older once the
    // balance moved).
    let refused = RefundOutcome::Refused { code: "KAKAOPAY_710".to_owned() };
    let by_a = db.settle_refund(&refund, &refused, "HTTP 400 -710", (Actor::Cancel, Some("worker-a"))).await.unwrap();
    assert_eq!(by_a, None, "A's refusal is not stored");
    assert_eq!(db.refunds(&order.order_id).await.unwrap()[0].status.as_str(), "REQUESTED");

    assert!(db.renew_job(JobKind::Refund, &refund.refund_id, "worker-b", lapsed + 120_000).await.unwrap());
    assert!(db.replace_refund_key(&refund.refund_id, "worker-b", "b-new-key").await.unwrap());
    assert_eq!(key().await, "b-new-key", "the holder gives it a new key");
    let by_b = db.settle_refund(&refund, &refused, "HTTP 400 -710", (Actor::Recovery, Some("worker-b"))).await.unwrap();
    assert_eq!(by_b, Some(OrderStatus::Paid), "the holder's refusal settles it, and the order goes back");
}

//! Confirms against a real fake PG: each row of the classification table, the
//! confirm semantics, the concurrency limit, and recovery with the same key.

use crate::support;

use std::time::Duration;

use payonce_api::OrderStatus;
use reqwest::StatusCode;
use serde_json::json;
use support::{FakePg, Server, assert_charges_agree, eventually};

const SETTLE: Duration = Duration::from_secs(15);

#[tokio::test]
async fn an_approval_is_paid_and_charged_once() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;

    let (status, body) = server.confirm(&created.order, "key-approve").await;

    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "PAID");
    assert_eq!(body["order_id"], created.order.order_id.as_str());
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
    assert_eq!(pg.charges(&created.order.order_id).await, 1);
    // Every call names the API version the server reads, not the account's default.
    let stats = pg.stats().await;
    let versions: Vec<String> = stats.api_versions.into_keys().collect();
    assert_eq!(versions, ["2022-11-16"]);
    // Unless told to speak HTTP/2, each call holds an HTTP/1.1 connection of its own.
    assert_eq!(stats.http_versions.into_keys().collect::<Vec<_>>(), ["HTTP/1.1"]);
    // Operators count every status an order reached: the attempt stored, then its verdict.
    for status in ["PENDING", "PAID"] {
        let reached = server.metric(&format!(r#"payment_orders_total{{status="{status}"}}"#)).await;
        assert_eq!(reached.as_deref(), Some("1"), "{status}");
    }
}

/// With `--pg-http2` every call shares one connection to the PG. A call reset
/// on it is as unknown as over HTTP/1.1: looked up, never sent again.
#[tokio::test]
async fn over_http2_a_call_reset_after_the_charge_is_unknown_and_settled_by_lookup_with_one_charge() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| config.pg_http2 = true).await;
    let paid = server.create_order().await;
    let (status, body) = server.confirm(&paid.order, "key-paid").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("PAID")));

    pg.configure(json!({"faults": {"reset_after_charge": 1.0}})).await;
    let reset = server.create_order().await;
    let (status, body) = server.confirm(&reset.order, "key-reset").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::ACCEPTED, Some("UNKNOWN")));

    pg.configure(json!({"faults": {"reset_after_charge": 0.0}})).await;
    server.wait_for(&reset.order.order_id, OrderStatus::Paid, SETTLE).await;
    assert_charges_agree(&pg, &server, &[&paid.order.order_id, &reset.order.order_id]).await;
    let stats = pg.stats().await;
    assert_eq!(stats.processings, 2, "the reset confirm was looked up, not sent again");
    assert_eq!(stats.http_versions.into_keys().collect::<Vec<_>>(), ["HTTP/2.0"]);
}

#[tokio::test]
async fn a_card_decline_fails_with_a_reason_and_charges_nothing() {
    let pg = FakePg::start().await;
    pg.configure(json!({"faults": {"decline": 1.0}})).await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;

    let (status, body) = server.confirm(&created.order, "key-decline").await;

    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "FAILED");
    assert_eq!(body["failure"]["code"], "REJECT_CARD_PAYMENT");
    assert!(body["failure"]["message"].as_str().unwrap().contains("not been charged"));
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

#[tokio::test]
async fn rate_limits_and_consecutive_request_refusals_fail_without_a_charge() {
    for (fault, code) in
        [("rate_limit_429", "TOO_MANY_REQUESTS"), ("forbidden_consecutive", "FORBIDDEN_CONSECUTIVE_REQUEST")]
    {
        let pg = FakePg::start().await;
        pg.configure(json!({"faults": {fault: 1.0}})).await;
        let server = Server::start(&pg.url).await;
        let created = server.create_order().await;

        let (status, body) = server.confirm(&created.order, "key-turned-away").await;

        assert_eq!(status, StatusCode::OK, "{fault}");
        assert_eq!(body["status"], "FAILED", "{fault}");
        assert_eq!(body["failure"]["code"], code);
        assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
    }
}

#[tokio::test]
async fn an_unreachable_pg_fails_as_never_sent() {
    let server = Server::start(&FakePg::closed_port_url().await).await;
    let created = server.create_order().await;

    let (status, body) = server.confirm(&created.order, "key-unreachable").await;

    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "FAILED");
    assert_eq!(body["failure"]["code"], "PG_UNREACHABLE");
}

#[tokio::test]
async fn a_read_timeout_is_unknown_then_recovery_finds_the_charge() {
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 3_000})).await;
    let server = Server::start_with(&pg.url, |config| config.pg_read_timeout = Duration::from_secs(1)).await;
    let created = server.create_order().await;

    let (status, body) = server.confirm(&created.order, "key-timeout").await;

    assert_eq!(status, StatusCode::ACCEPTED, "a timeout is not a failure");
    assert_eq!(body["status"], "UNKNOWN");
    server.wait_for(&created.order.order_id, OrderStatus::Paid, SETTLE).await;
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
    let stats = pg.stats().await;
    assert_eq!(stats.processings, 1, "recovery replays, it never processes a second time");
    assert!(stats.replays + stats.in_progress_conflicts >= 1);
}

#[tokio::test]
async fn faults_after_sending_are_unknown_and_recovery_settles_them_with_one_charge() {
    for fault in ["reset_after_charge", "reset_before_processing", "error_500"] {
        let pg = FakePg::start().await;
        pg.configure(json!({"faults": {fault: 1.0}})).await;
        let server = Server::start(&pg.url).await;
        let created = server.create_order().await;

        let (status, body) = server.confirm(&created.order, "key-fault").await;
        assert_eq!(status, StatusCode::ACCEPTED, "{fault}");
        assert_eq!(body["status"], "UNKNOWN", "{fault}");

        pg.configure(json!({"faults": {fault: 0.0}})).await;
        server.wait_for(&created.order.order_id, OrderStatus::Paid, SETTLE).await;
        assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
    }
}

/// Someone else's confirm of the payment is processing at the PG under the very
/// key the browser sends: the server's own key is another, so the PG answers it
/// as a payment being processed (not the other caller's replay), and a lookup settles it.
#[tokio::test]
async fn the_browsers_key_never_reaches_the_pg_and_a_payment_processing_elsewhere_is_settled_by_lookup() {
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 2_000})).await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;
    let payment_key = support::payment_key_for(&created.order);
    let direct = {
        let order = created.order.clone();
        let pg_url = pg.url.clone();
        tokio::spawn(async move {
            let pg = reqwest::Client::new();
            pg.post(format!("{pg_url}/v1/payments/confirm"))
                .basic_auth(support::SECRET_KEY, Some(""))
                .header("Idempotency-Key", "key-shared")
                .json(&json!({"paymentKey": payment_key, "orderId": order.order_id, "amount": order.amount}))
                .send()
                .await
        })
    };
    eventually("the PG is processing", Duration::from_secs(5), || async {
        (pg.stats().await.in_flight == 1).then_some(())
    })
    .await;

    let (status, body) = server.confirm(&created.order, "key-shared").await;

    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(body["status"], "UNKNOWN");
    assert_eq!(pg.stats().await.in_progress_conflicts, 0, "not the other caller's key: no 409");
    server.wait_for(&created.order.order_id, OrderStatus::Paid, SETTLE).await;
    direct.await.unwrap().unwrap();
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

#[tokio::test]
async fn a_payment_already_processed_under_another_key_is_unknown_then_paid_by_lookup() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;
    let payment_key = support::payment_key_for(&created.order);
    assert_eq!(pg.confirm_directly(&created.order, &payment_key, "key-elsewhere").await.status(), StatusCode::OK);

    let (status, body) = server.confirm(&created.order, "key-here").await;

    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(body["status"], "UNKNOWN");
    server.wait_for(&created.order.order_id, OrderStatus::Paid, SETTLE).await;
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

#[tokio::test]
async fn recovery_settles_a_decline_that_arrives_after_an_unknown() {
    let pg = FakePg::start().await;
    pg.configure(json!({"faults": {"error_500": 1.0}})).await;
    // At the shipped interval, the first look comes 5 s after the unknown outcome.
    let server = Server::start_with(&pg.url, |config| config.recovery_interval = Duration::from_secs(60)).await;
    let created = server.create_order().await;

    let (_, body) = server.confirm(&created.order, "key-late-decline").await;
    assert_eq!(body["status"], "UNKNOWN");
    pg.configure(json!({"faults": {"error_500": 0.0, "decline": 1.0}})).await;

    let order = server.wait_for(&created.order.order_id, OrderStatus::Failed, SETTLE).await;
    assert_eq!(order.failure.unwrap().code, "REJECT_CARD_PAYMENT");
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

#[tokio::test]
async fn recovery_leaves_a_payment_unknown_while_the_pg_is_still_processing() {
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 6_000})).await;
    let server = Server::start_with(&pg.url, |config| config.pg_read_timeout = Duration::from_millis(500)).await;
    let created = server.create_order().await;

    let (_, body) = server.confirm(&created.order, "key-slow").await;
    assert_eq!(body["status"], "UNKNOWN");
    eventually("recovery looks up and resends while the PG is processing", SETTLE, || async {
        (pg.stats().await.in_progress_conflicts >= 2).then_some(())
    })
    .await;
    assert_eq!(server.order(&created.order.order_id).await.status, OrderStatus::Unknown);
    // Operators read what the PG last said about it.
    let attempt = server.db().await.attempt_detail(&created.order.order_id).await.unwrap().unwrap();
    let answer = attempt.last_pg_answer.unwrap_or_default();
    assert!(answer.starts_with("HTTP "), "{answer:?}");
    let metrics = server.metrics().await;
    assert!(
        metrics.contains(r#"payment_pg_recovery_calls_total{pg="toss",call="lookup",verdict="not_confirmed"}"#),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"payment_pg_recovery_calls_total{pg="toss",call="resend",verdict="nothing"}"#),
        "{metrics}"
    );

    server.wait_for(&created.order.order_id, OrderStatus::Paid, SETTLE).await;
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

/// Recovery that never runs after its first pass at start: what settles an
/// order in these tests is the detached PG call itself.
fn without_recovery(config: &mut payonce_server::ServerConfig) {
    config.recovery_interval = Duration::from_secs(3_600);
}

#[tokio::test]
async fn a_customer_who_hangs_up_is_still_charged_once_and_the_order_is_paid_by_the_detached_call() {
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 1_500})).await;
    let server = Server::start_with(&pg.url, without_recovery).await;
    let created = server.create_order().await;

    let hung_up = server.confirm_request(&created.order, "key-hangup").timeout(Duration::from_millis(500)).send().await;

    assert!(hung_up.unwrap_err().is_timeout());
    assert_eq!(server.order(&created.order.order_id).await.status, OrderStatus::Pending);
    server.wait_for(&created.order.order_id, OrderStatus::Paid, SETTLE).await;
    assert_eq!(pg.stats().await.lookups, 0, "recovery did not settle it");
    assert_eq!(server.history(&created.order.order_id).await, ["CREATED>PENDING", "PENDING>PAID"]);
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

#[tokio::test]
async fn the_same_key_replays_the_stored_outcome_without_calling_the_pg_again() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;

    let first = server.confirm(&created.order, "key-replay").await;
    let second = server.confirm(&created.order, "key-replay").await;

    assert_eq!(first.0, StatusCode::OK);
    assert_eq!(second, first);
    assert_eq!(pg.stats().await.confirm_requests, 1);
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

#[tokio::test]
async fn while_a_payment_is_processing_any_second_confirm_gets_409() {
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 1_500})).await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;
    let first = tokio::spawn(server.confirm_request(&created.order, "key-first").send());
    eventually("the first confirm reached the PG", Duration::from_secs(5), || async {
        (pg.stats().await.in_flight == 1).then_some(())
    })
    .await;

    let same_key = server.confirm(&created.order, "key-first").await;
    let other_key = server.confirm(&created.order, "key-second").await;

    for (status, body) in [&same_key, &other_key] {
        assert_eq!(*status, StatusCode::CONFLICT);
        assert_eq!(body["code"], "PAYMENT_IN_PROGRESS");
        assert_eq!(body["order"]["status"], "PENDING");
    }
    assert_eq!(first.await.unwrap().unwrap().status(), StatusCode::OK);
    assert_eq!(pg.stats().await.confirm_requests, 1);
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

#[tokio::test]
async fn a_paid_order_refuses_another_key_and_shows_the_paid_order() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;
    server.confirm(&created.order, "key-one").await;

    let (status, body) = server.confirm(&created.order, "key-two").await;

    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["code"], "ORDER_ALREADY_PAID");
    assert_eq!(body["order"]["status"], "PAID");
    assert_eq!(pg.stats().await.confirm_requests, 1);
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

#[tokio::test]
async fn a_failed_order_refuses_another_key() {
    let pg = FakePg::start().await;
    pg.configure(json!({"faults": {"decline": 1.0}})).await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;
    server.confirm(&created.order, "key-one").await;

    let (status, body) = server.confirm(&created.order, "key-two").await;

    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["code"], "ORDER_ALREADY_FAILED");
    assert_eq!(body["order"]["status"], "FAILED");
    assert_eq!(pg.stats().await.confirm_requests, 1);
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

#[tokio::test]
async fn a_key_used_for_another_order_is_refused_with_422() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let first = server.create_order().await;
    let second = server.create_order().await;
    server.confirm(&first.order, "key-reused").await;

    let (status, body) = server.confirm(&second.order, "key-reused").await;

    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(body["code"], "IDEMPOTENCY_KEY_REUSED");
    assert_eq!(server.order(&second.order.order_id).await.status, OrderStatus::Created);
    assert_charges_agree(&pg, &server, &[&first.order.order_id, &second.order.order_id]).await;
}

#[tokio::test]
async fn a_wrong_amount_is_refused_before_the_pg_is_called() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;

    let response = server
        .http
        .post(format!("{}/api/orders/{}/confirm", server.url, created.order.order_id))
        .header("Idempotency-Key", "key-amount")
        .json(&json!({"payment_key": "pk_x", "amount": created.order.amount - 1}))
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["code"], "AMOUNT_MISMATCH");
    assert_eq!(pg.stats().await.confirm_requests, 0);
    assert_eq!(server.order(&created.order.order_id).await.status, OrderStatus::Created);
    let (status, _) = server.confirm(&created.order, "key-amount").await;
    assert_eq!(status, StatusCode::OK, "the refused key was not stored");
}

#[tokio::test]
async fn at_the_pg_limit_a_confirm_fails_busy_and_nothing_is_charged() {
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 1_500})).await;
    let server =
        Server::start_with(&pg.url, |config| config.pg_limit = payonce_server::config::Concurrency::Fixed(1)).await;
    let holding = server.create_order().await;
    let refused = server.create_order().await;
    let first = tokio::spawn(server.confirm_request(&holding.order, "key-holding").send());
    eventually("the first confirm holds the only place", Duration::from_secs(5), || async {
        (pg.stats().await.in_flight == 1).then_some(())
    })
    .await;

    let (status, body) = server.confirm(&refused.order, "key-refused").await;

    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "FAILED");
    assert_eq!(body["failure"]["code"], "PG_BUSY");
    assert_eq!(first.await.unwrap().unwrap().status(), StatusCode::OK);
    assert_eq!(pg.stats().await.confirm_requests, 1, "the refused confirm never reached the PG");
    assert_charges_agree(&pg, &server, &[&holding.order.order_id, &refused.order.order_id]).await;
    let metrics = server.metrics().await;
    assert!(metrics.contains("payment_pg_confirm_calls_total{pg=\"toss\",outcome=\"busy\"}"), "{metrics}");
}

#[tokio::test]
async fn concurrent_confirms_of_one_order_with_different_keys_make_one_payment() {
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 300})).await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;

    let attempts: Vec<_> =
        (0..8).map(|n| tokio::spawn(server.confirm_request(&created.order, &format!("key-race-{n}")).send())).collect();
    let mut statuses = Vec::new();
    for attempt in attempts {
        statuses.push(attempt.await.unwrap().unwrap().status());
    }

    assert_eq!(statuses.iter().filter(|status| **status == StatusCode::OK).count(), 1, "{statuses:?}");
    assert!(statuses.iter().all(|status| *status == StatusCode::OK || *status == StatusCode::CONFLICT));
    assert_eq!(pg.stats().await.confirm_requests, 1);
    server.wait_for(&created.order.order_id, OrderStatus::Paid, SETTLE).await;
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

#[tokio::test]
async fn a_confirm_whose_client_hung_up_is_still_counted_as_499() {
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 1_500})).await;
    let server = Server::start_with(&pg.url, without_recovery).await;
    let created = server.create_order().await;

    let hung_up =
        server.confirm_request(&created.order, "key-counted").timeout(Duration::from_millis(300)).send().await;
    assert!(hung_up.is_err());

    let counted = "http_requests_total{route=\"/api/orders/{order_id}/confirm\",status=\"499\"}";
    eventually("the abandoned request is counted", Duration::from_secs(5), || async {
        server.metrics().await.contains(counted).then_some(())
    })
    .await;
    server.wait_for(&created.order.order_id, OrderStatus::Paid, SETTLE).await;
    assert_eq!(pg.stats().await.lookups, 0, "the detached call, not recovery, settled it");
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

#[tokio::test]
async fn no_database_connection_is_held_while_a_confirm_waits_for_the_pg() {
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 6_000})).await;
    let server = Server::start_with(&pg.url, |config| {
        config.db_max_connections = 1;
        config.pg_read_timeout = Duration::from_secs(8);
    })
    .await;
    let waiting = server.create_order().await;
    let confirm = tokio::spawn(server.confirm_request(&waiting.order, "key-waiting").send());
    eventually("the confirm waits on the PG", Duration::from_secs(5), || async {
        (pg.stats().await.in_flight == 1).then_some(())
    })
    .await;

    // With the only connection held by the waiting confirm, these would wait
    // for the PG's six seconds, or fail after the pool's five.
    let other = server.other_customer();
    let quick = Duration::from_secs(3);
    let created = other
        .post(format!("{}/api/orders", server.url))
        .json(&json!({"items": [{"sku": "CERAMIC-MUG", "quantity": 1}]}))
        .timeout(quick)
        .send()
        .await
        .expect("another customer orders while a confirm waits");
    assert_eq!(created.status(), StatusCode::CREATED);
    let listed = other.get(format!("{}/api/orders", server.url)).timeout(quick).send().await.unwrap();
    assert_eq!(listed.status(), StatusCode::OK);
    let shown = server.http.get(format!("{}/api/orders/{}", server.url, waiting.order.order_id)).timeout(quick);
    assert_eq!(shown.send().await.unwrap().status(), StatusCode::OK);
    assert_eq!(pg.stats().await.in_flight, 1, "the confirm was still waiting throughout");

    assert_eq!(confirm.await.unwrap().unwrap().status(), StatusCode::OK);
    assert_charges_agree(&pg, &server, &[&waiting.order.order_id]).await;
}

#[tokio::test]
async fn a_payment_the_pg_is_still_processing_does_not_hold_up_the_recovery_of_others() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    // B's test card takes 70 s: past the 2 s read timeout it is UNKNOWN, and every
    // recovery call meets 409 while the PG works on it.
    let b = server.create_order().await;
    let payment_key = pg.window_payment_key(&b, "approve_70s").await;
    let confirm_b = server.confirm_with_key(&b.order, &payment_key, "key-b").send().await.unwrap();
    assert_eq!(confirm_b.status(), StatusCode::ACCEPTED);
    eventually("recovery meets B still processing", SETTLE, || async {
        (pg.stats().await.in_progress_conflicts >= 1).then_some(())
    })
    .await;

    // Meanwhile C's answer is lost to a 500 and must still be recovered promptly.
    let c = server.create_order().await;
    pg.configure(json!({"faults": {"error_500": 1.0}})).await;
    let (_, body) = server.confirm(&c.order, "key-c").await;
    assert_eq!(body["status"], "UNKNOWN");
    pg.configure(json!({"faults": {"error_500": 0.0}})).await;

    server.wait_for(&c.order.order_id, OrderStatus::Paid, SETTLE).await;
    assert_eq!(server.order(&b.order.order_id).await.status, OrderStatus::Unknown);
    assert_charges_agree(&pg, &server, &[&c.order.order_id]).await;
}

#[tokio::test]
async fn two_shops_on_one_pg_account_whose_browsers_send_the_same_key_are_each_charged_for_their_own_order() {
    // Toss scopes an Idempotency-Key by merchant account, URL and method: under the
    // browsers' own keys the second shop's confirm would get the first's payment back.
    let pg = FakePg::start().await;
    let first_shop = Server::start(&pg.url).await;
    let second_shop = Server::start_with(&pg.url, |config| config.order_id_prefix = "shop2_".into()).await;
    let first = first_shop.create_order().await;
    let second = second_shop.create_order().await;

    let (status, body) = first_shop.confirm(&first.order, "the-same-key").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("PAID")), "{body}");
    let (status, body) = second_shop.confirm(&second.order, "the-same-key").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("PAID")), "{body}");

    assert_eq!(body["order_id"], second.order.order_id.as_str());
    assert_eq!((pg.charges(&first.order.order_id).await, pg.charges(&second.order.order_id).await), (1, 1));
    assert_charges_agree(&pg, &first_shop, &[&first.order.order_id]).await;
    assert_charges_agree(&pg, &second_shop, &[&second.order.order_id]).await;
}

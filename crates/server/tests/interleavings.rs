//! What the model checker (`crates/model`) found, against the real server and
//! fake PG where the fake can set the interleaving up: a 429 the PG answers
//! the customer's confirm after recovery's resend was charged fails nothing, a
//! charge found partly refunded is recorded with its refund, and a confirm
//! naming another order's payment settles by a lookup by the order's id. (The
//! age rule is tested in `settlement.rs`, the lease rule against the database
//! there too, the breaker's probe deadline in `resilience/breaker.rs`; all of
//! them in every interleaving by the model.)

use crate::support;

use std::time::Duration;

use payonce_api::OrderStatus;
use reqwest::StatusCode;
use serde_json::json;
use support::{FakePg, Server, assert_charges_agree, payment_key_for};

const SETTLE: Duration = Duration::from_secs(15);
const TOKEN: &str = "test-admin-token-of-32-characters-or-more";

#[tokio::test]
async fn a_429_that_comes_after_recoverys_resend_was_charged_fails_nothing() {
    let pg = FakePg::start().await;
    // The customer's confirm is turned away with a 429 the PG answers only once
    // another request of its key has processed the payment.
    pg.configure(json!({"faults": {"rate_limit_429_held": 1.0}})).await;
    let server = Server::start_with(&pg.url, |config| {
        config.admin_token = Some(TOKEN.into());
        // Room for the held 429 to come back as an answer, not a timeout.
        config.pg_read_timeout = Duration::from_secs(20);
    })
    .await;
    let created = server.create_order().await;
    let order_id = created.order.order_id.clone();
    let confirm = tokio::spawn({
        let request = server.confirm_request(&created.order, "key-held-429");
        async move { request.send().await.unwrap().json::<serde_json::Value>().await.unwrap() }
    });
    support::eventually("the confirm at the PG", SETTLE, || async {
        (pg.stats().await.confirm_requests == 1).then_some(())
    })
    .await;

    // An operator asks the PG now: recovery takes the attempt over and resends
    // it with its key; the PG charges it, and its answer is lost to a reset.
    pg.configure(json!({"faults": {"rate_limit_429_held": 0.0, "reset_after_charge": 1.0}})).await;
    let asked = reqwest::Client::new()
        .post(format!("{}/admin/orders/{order_id}/recover", server.admin_url))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert!(asked.status().is_success(), "{}", asked.status());

    // Only then does the customer's confirm hear its 429: the payment is not failed.
    let answered = confirm.await.unwrap();
    assert_ne!(answered["status"], "FAILED", "{answered}");
    pg.configure(json!({"faults": {"reset_after_charge": 0.0}})).await;
    server.wait_for(&order_id, OrderStatus::Paid, SETTLE).await;
    assert!(!server.history(&order_id).await.iter().any(|step| step.ends_with(">FAILED")));
    assert_eq!(pg.stats().await.faults_injected.rate_limit_429_held, 1);
    assert_charges_agree(&pg, &server, &[&order_id]).await;
}

#[tokio::test]
async fn a_charge_found_partly_refunded_is_recorded_with_its_refund_and_the_rest_can_be_refunded() {
    let pg = FakePg::start().await;
    // The confirm charges and its answer is lost; lookups outlast the server's
    // wait for them until the PG's console has refunded part of the charge.
    pg.configure(json!({"lookup_latency_ms": 60_000, "faults": {"reset_after_charge": 1.0}})).await;
    let server = Server::start_with(&pg.url, |config| config.admin_token = Some(TOKEN.into())).await;
    let created = server.create_order().await;
    let order_id = created.order.order_id.as_str();
    let (_, body) = server.confirm(&created.order, "key-partly-refunded").await;
    assert_eq!(body["status"], "UNKNOWN", "{body}");

    pg.configure(json!({"faults": {"reset_after_charge": 0.0}})).await;
    let refunded_at_the_console = pg.cancel_directly(&payment_key_for(&created.order), Some(1_000)).await;
    assert_eq!(refunded_at_the_console.status(), StatusCode::OK);
    pg.configure(json!({"lookup_latency_ms": 0})).await;

    let order = server.wait_for(order_id, OrderStatus::PartiallyRefunded, SETTLE).await;
    assert_eq!(order.refunded_amount, 1_000, "the refund the PG shows is the shop's too");
    let (status, body) =
        server.operator_cancel(order_id, Some(TOKEN), json!({"reason": "the rest, as the customer asked"})).await;
    // Refunded at once, or, when it follows the console's refund within the
    // PG's second for consecutive cancels (403 FORBIDDEN_CONSECUTIVE_REQUEST,
    // turned away unstored: a lookup that settles fast gets there), sent again
    // by recovery.
    assert!(
        matches!(
            (status, body["status"].as_str()),
            (StatusCode::OK, Some("CANCELED")) | (StatusCode::ACCEPTED, Some("CANCEL_REQUESTED"))
        ),
        "{status} {body}"
    );
    let order = server.wait_for(order_id, OrderStatus::Canceled, SETTLE).await;
    assert_eq!(order.refunded_amount, created.order.amount);
    assert_charges_agree(&pg, &server, &[order_id]).await;
}

#[tokio::test]
async fn a_confirm_naming_another_orders_payment_settles_failed_by_the_orders_own_lookup() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let paid = server.paid_order().await;
    let other = server.create_order().await;
    let other_id = other.order.order_id.as_str();

    // The confirm of the other order, with the paid order's key, meets an
    // outage: what the PG would have answered it is not known.
    pg.configure(json!({"outage": true})).await;
    let response =
        server.confirm_with_key(&other.order, &payment_key_for(&paid), "key-of-another").send().await.unwrap();
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["status"], "UNKNOWN", "{body}");
    pg.configure(json!({"outage": false})).await;

    // By its key the PG shows the paid order's payment; by the order's id, none.
    let order = server.wait_for(other_id, OrderStatus::Failed, SETTLE).await;
    assert_eq!(order.failure.map(|failure| failure.code).as_deref(), Some("NOT_FOUND_PAYMENT"));
    assert_eq!(server.order(&paid.order_id).await.status, OrderStatus::Paid, "the paid order is untouched");
    assert_eq!((pg.charges(&paid.order_id).await, pg.charges(other_id).await), (1, 0));
}

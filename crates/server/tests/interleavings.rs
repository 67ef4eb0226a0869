//! What the model checker (`crates/model`) found, against the real server and
//! fake PG where the fake can set the interleaving up: a charge found partly
//! refunded is recorded with its refund, and a confirm naming another order's
//! payment settles by a lookup by the order's id. (The age rule is tested in
//! `settlement.rs`, the lease rule against the database there too, the
//! breaker's probe deadline in `resilience/breaker.rs`; all of them in every
//! interleaving by the model.)

mod support;

use std::time::Duration;

use payonce_api::OrderStatus;
use reqwest::StatusCode;
use serde_json::json;
use support::{FakePg, Server, assert_charges_agree, payment_key_for};

const SETTLE: Duration = Duration::from_secs(15);
const TOKEN: &str = "test-admin-token";

#[tokio::test]
async fn a_charge_found_partly_refunded_is_recorded_with_its_refund_and_the_rest_can_be_refunded() {
    let pg = FakePg::start().await;
    // The confirm charges and its answer is lost; lookups outlast the server's
    // wait for them until the PG's console has refunded part of the charge.
    pg.configure(json!({"lookup_latency_ms": 60_000, "faults": {"reset_after_charge": 1.0}})).await;
    let server = Server::start_with(&pg.url, |config| config.admin_token = Some(TOKEN.to_owned())).await;
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
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("CANCELED")), "{body}");
    assert_eq!(body["refunded_amount"], created.order.amount);
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
    let response = server.confirm_with_key(&other.order, &payment_key_for(&paid), "key-of-another").send().await.unwrap();
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["status"], "UNKNOWN", "{body}");
    pg.configure(json!({"outage": false})).await;

    // By its key the PG shows the paid order's payment; by the order's id, none.
    let order = server.wait_for(other_id, OrderStatus::Failed, SETTLE).await;
    assert_eq!(order.failure.map(|failure| failure.code).as_deref(), Some("NOT_FOUND_PAYMENT"));
    assert_eq!(server.order(&paid.order_id).await.status, OrderStatus::Paid, "the paid order is untouched");
    assert_eq!((pg.charges(&paid.order_id).await, pg.charges(other_id).await), (1, 0));
}

//! What the model checker (`crates/model`) found, against the real server and
//! fake PG where the fake can set the interleaving up: a charge found partly
//! refunded is recorded with its refund. (The others are tested where their
//! rules live, in `settlement/`, `db/status.rs` and `resilience/breaker.rs`,
//! and in every interleaving by the model.)

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

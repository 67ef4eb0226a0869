//! The database going away mid-run, and coming back: requests fail with a
//! code and nothing half-written, a payment already at the PG is settled once
//! the database returns, and the server needs no restart.
//!
//! The test stops and starts a PostgreSQL server of its own (scripts/postgres.sh),
//! so it runs in the test command's PostgreSQL run only.

use crate::support;

use std::path::PathBuf;
use std::time::Duration;

use payonce_api::OrderStatus;
use reqwest::StatusCode;
use serde_json::json;
use support::{FakePg, Server, Store, assert_charges_agree, eventually, test_config};

/// A PostgreSQL server of this test's own, run by scripts/postgres.sh.
struct OwnPostgres {
    name: String,
}

impl OwnPostgres {
    fn script() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/postgres.sh")
    }

    fn run(args: &[&str]) -> String {
        let output = std::process::Command::new("bash").arg(Self::script()).args(args).output().unwrap();
        assert!(output.status.success(), "postgres.sh {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    }

    /// On a Unix socket of its own, not a TCP port: while it is stopped,
    /// another test run's PostgreSQL could take a port it freed, and the order
    /// server would reach that one instead of finding its database gone.
    fn start() -> (Self, String) {
        let name = format!("outage-{}", std::process::id());
        let url = Self::run(&["start", &name, "", "fast", "socket"]);
        (Self { name }, url)
    }

    fn stop(&self) {
        Self::run(&["stop", &self.name]);
    }

    fn resume(&self) {
        Self::run(&["resume", &self.name]);
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let _ = std::process::Command::new("bash").arg(Self::script()).args(["remove", &self.name]).output();
    }
}

#[tokio::test]
#[ignore = "needs PostgreSQL: scripts/test.sh runs it with a server of its own"]
async fn the_database_going_away_fails_requests_with_a_code_and_the_payment_settles_when_it_returns() {
    let (postgres, url) = OwnPostgres::start();
    let pg = FakePg::start().await;
    let store = Store { dir: tempfile::tempdir().unwrap(), db: url.parse().unwrap() };
    let server = Server::start_on(test_config(&pg.url, &store), store).await;
    let paid_before = server.create_order().await;
    assert_eq!(server.confirm(&paid_before.order, "key-before").await.1["status"], "PAID");

    // A confirm is at the PG when the database goes away.
    pg.configure(json!({"latency_ms": 1_500})).await;
    let in_flight = server.create_order().await;
    let order_id = in_flight.order.order_id.clone();
    let confirm = tokio::spawn(server.confirm_request(&in_flight.order, "key-during").send());
    eventually("the PG is processing", Duration::from_secs(5), || async {
        (pg.stats().await.in_flight == 1).then_some(())
    })
    .await;
    postgres.stop();

    // The charge cannot be stored: the customer hears a code, never "not charged".
    let response = confirm.await.unwrap().unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(response.headers().contains_key("retry-after"));
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["code"], "DATABASE_UNAVAILABLE", "{body}");
    // Checking, and new orders, fail the same way; nothing reaches the PG.
    let check = server.http.get(format!("{}/api/orders/{order_id}", server.url)).send().await.unwrap();
    assert_eq!(check.status(), StatusCode::SERVICE_UNAVAILABLE);
    let create = server
        .http
        .post(format!("{}/api/orders", server.url))
        .json(&json!({"items": [{"sku": "CERAMIC-MUG", "quantity": 1}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(create.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(pg.stats().await.confirm_requests, 2);

    // It comes back: the same server, not restarted, settles the payment.
    postgres.resume();
    server.wait_for(&order_id, OrderStatus::Paid, Duration::from_secs(30)).await;
    assert_eq!(server.order(&paid_before.order.order_id).await.status, OrderStatus::Paid);
    assert_eq!(server.history(&order_id).await, ["CREATED>PENDING", "PENDING>UNKNOWN", "UNKNOWN>PAID"]);
    assert_charges_agree(&pg, &server, &[&order_id, &paid_before.order.order_id]).await;
    let fresh = server.create_order().await;
    assert_eq!(server.confirm(&fresh.order, "key-after").await.1["status"], "PAID");
}

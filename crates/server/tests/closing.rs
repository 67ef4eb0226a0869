//! Closing an order that never got a confirm: only the server says "not
//! charged", and only when it is true. Also the recent-order warning, which
//! covers every payment still in progress however old.

use crate::support;

use payonce_api::{Order, OrderStatus};
use payonce_server::db::now_ms;
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::{FakePg, Server, assert_charges_agree};

async fn abandon(server: &Server, client: &reqwest::Client, order_id: &str) -> (StatusCode, Value) {
    let response = server.close_request(client, order_id).send().await.unwrap();
    (response.status(), response.json().await.unwrap())
}

#[tokio::test]
async fn a_close_without_its_json_body_is_refused_and_the_order_stays_open() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;
    let order_id = created.order.order_id.as_str();
    let url = format!("{}/api/orders/{order_id}/abandon", server.url);

    // What a form on a sibling subdomain can send with the customer's cookie:
    // no body, a form's body, or text; and JSON that is not `{}`.
    let form = server.http.post(&url).header("Content-Type", "application/x-www-form-urlencoded").body("a=1");
    let text = server.http.post(&url).header("Content-Type", "text/plain").body("{}");
    let fields = server.http.post(&url).json(&json!({"status": "FAILED"}));
    for (what, request) in [("no body", server.http.post(&url)), ("a form", form), ("text", text), ("fields", fields)] {
        let response = request.send().await.unwrap();
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        assert_eq!(
            (status, body["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some("INVALID_REQUEST")),
            "{what}: {body}"
        );
        assert!(!body["message"].as_str().unwrap().is_empty(), "{what}: {body}");
    }
    assert_eq!(server.order(order_id).await.status, OrderStatus::Created, "still open, still payable");
    assert_eq!(server.history(order_id).await, Vec::<String>::new());

    let (status, closed) = abandon(&server, &server.http, order_id).await;
    assert_eq!((status, closed["status"].as_str()), (StatusCode::OK, Some("FAILED")));
}

#[tokio::test]
async fn an_order_without_a_confirm_is_closed_as_not_charged_and_a_late_confirm_never_reaches_the_pg() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;
    let order_id = created.order.order_id.as_str();

    let (status, closed) = abandon(&server, &server.http, order_id).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(closed["status"], "FAILED");
    assert_eq!(closed["failure"]["code"], "CONFIRM_NOT_RECEIVED");
    assert!(closed["failure"]["message"].as_str().unwrap().contains("not been charged"));

    let (status, late) = server.confirm(&created.order, "key-late").await;
    assert_eq!((status, late["code"].as_str()), (StatusCode::CONFLICT, Some("ORDER_ALREADY_FAILED")));
    assert_eq!(late["order"]["status"], "FAILED");
    assert_eq!(pg.stats().await.confirm_requests, 0);
    let (_, again) = abandon(&server, &server.http, order_id).await;
    assert_eq!(again, closed, "closing twice changes nothing");
    assert_eq!(server.history(order_id).await, ["CREATED>FAILED"]);
    assert_charges_agree(&pg, &server, &[order_id]).await;
}

#[tokio::test]
async fn an_order_with_a_confirm_is_not_closed_and_the_answer_is_its_real_state() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let paid = server.create_order().await;
    server.confirm(&paid.order, "key-paid").await;
    pg.configure(json!({"faults": {"reset_after_charge": 1.0}})).await;
    let unknown = server.create_order().await;
    server.confirm(&unknown.order, "key-unknown").await;

    let (_, answer) = abandon(&server, &server.http, &paid.order.order_id).await;
    assert_eq!(answer["status"], "PAID");
    let (_, answer) = abandon(&server, &server.http, &unknown.order.order_id).await;
    assert!(["UNKNOWN", "PAID"].contains(&answer["status"].as_str().unwrap()), "{answer}");

    server.wait_for(&unknown.order.order_id, OrderStatus::Paid, std::time::Duration::from_secs(15)).await;
    assert_charges_agree(&pg, &server, &[&paid.order.order_id, &unknown.order.order_id]).await;
}

#[tokio::test]
async fn another_customer_cannot_close_an_order() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;

    let (status, body) = abandon(&server, &server.other_customer(), &created.order.order_id).await;

    assert_eq!((status, body["code"].as_str()), (StatusCode::NOT_FOUND, Some("ORDER_NOT_FOUND")));
    assert_eq!(server.order(&created.order.order_id).await.status, OrderStatus::Created);
}

#[tokio::test]
async fn a_confirm_and_a_close_racing_for_one_order_settle_it_one_way_only() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let mut order_ids = Vec::new();
    for round in 0..12 {
        let created = server.create_order().await;
        let order_id = created.order.order_id.clone();
        let confirm = server.confirm_request(&created.order, &format!("key-race-{round}")).send();
        let close = server.close_request(&server.http, &order_id).send();
        let (confirmed, closed) = tokio::join!(confirm, close);
        let closed: Order = closed.unwrap().json().await.unwrap();
        let confirmed: Value = confirmed.unwrap().json().await.unwrap();

        let stored = server.order(&order_id).await;
        match stored.status {
            // The close came first: the confirm was refused and never sent.
            OrderStatus::Failed => {
                assert_eq!(stored.failure.as_ref().unwrap().code, "CONFIRM_NOT_RECEIVED");
                assert_eq!(confirmed["code"], "ORDER_ALREADY_FAILED");
                assert_eq!(closed.status, OrderStatus::Failed);
            }
            // The confirm came first: the close answered with the payment as it stood.
            OrderStatus::Paid => assert!(closed.status.is_in_progress() || closed.status == OrderStatus::Paid),
            other => panic!("round {round}: {other:?}"),
        }
        order_ids.push(order_id);
    }
    let ids: Vec<&str> = order_ids.iter().map(String::as_str).collect();
    assert_charges_agree(&pg, &server, &ids).await;
}

#[tokio::test]
async fn the_recent_order_warning_covers_payments_in_progress_however_old_and_paid_ones_only_lately() {
    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    // The PG takes 20 s over the first payment; the server stops waiting after 2 s.
    pg.configure(json!({"latency_ms": 20_000})).await;
    let in_progress = server.create_order().await;
    let (_, body) = server.confirm(&in_progress.order, "key-in-progress").await;
    assert_eq!(body["status"], "UNKNOWN", "the PG is still processing it");
    pg.configure(json!({"latency_ms": 10})).await;
    let paid = server.create_order().await;
    server.confirm(&paid.order, "key-paid").await;
    let db = server.db().await;
    let customer = db.customer_of(&paid.order.order_id).await.unwrap().unwrap();

    // Within ten minutes: the newest payment, the paid one, is the warning.
    let now = db.recent_payment(&customer, now_ms() - 600_000).await.unwrap().unwrap();
    assert_eq!((now.order_id.as_str(), now.status), (paid.order.order_id.as_str(), OrderStatus::Paid));
    // An hour on, the paid order no longer warns; the one still unsettled does, however old.
    let later = db.recent_payment(&customer, now_ms() + 3_600_000).await.unwrap();
    let later = later.expect("an unsettled payment always warns");
    assert_eq!(later.order_id, in_progress.order.order_id);
}

//! Toss's webhooks over real HTTP: a shop's endpoint that answers 200 gets one
//! `PAYMENT_STATUS_CHANGED` event per status change, with the Payment; one that
//! fails gets it again on Toss's schedule (time-scaled), and never more than
//! seven resends.

use crate::common;

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use common::{body, fast_config, start};
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// A shop's webhook endpoint: records every event, answering the first
/// `failures` with 500 and the rest with 200.
#[derive(Clone, Default)]
struct Shop {
    events: Arc<Mutex<Vec<Value>>>,
    failures: usize,
}

async fn receive(State(shop): State<Shop>, axum::Json(event): axum::Json<Value>) -> StatusCode {
    let mut events = shop.events.lock().unwrap();
    events.push(event);
    if events.len() <= shop.failures { StatusCode::INTERNAL_SERVER_ERROR } else { StatusCode::OK }
}

async fn shop(failures: usize) -> (String, Shop) {
    let shop = Shop { failures, ..Shop::default() };
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/api/webhooks/toss", listener.local_addr().unwrap());
    let app = Router::new().route("/api/webhooks/toss", post(receive)).with_state(shop.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, shop)
}

#[tokio::test]
async fn a_charge_and_its_refund_are_announced_once_each_with_the_payment() {
    let (url, shop) = shop(0).await;
    let pg = start(fast_config()).await;
    pg.set_config(json!({"webhook_url": url})).await;

    pg.charged("pk-1", "order-1", 1_000).await;
    pg.wait_for_stats("the charge announced", |stats| stats.webhooks_delivered == 1).await;
    let response = pg.cancel("pk-1", Some("c-1"), &common::cancel_body("changed mind", None)).await;
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    let stats = pg.wait_for_stats("the refund announced", |stats| stats.webhooks_delivered == 2).await;

    let events = shop.events.lock().unwrap().clone();
    let statuses: Vec<&str> = events.iter().map(|event| event["data"]["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["DONE", "CANCELED"]);
    for event in &events {
        assert_eq!(event["eventType"], "PAYMENT_STATUS_CHANGED");
        assert_eq!(
            (event["data"]["orderId"].as_str(), event["data"]["paymentKey"].as_str()),
            (Some("order-1"), Some("pk-1"))
        );
        let created_at = event["createdAt"].as_str().unwrap();
        assert!(created_at.len() == 26 && !created_at.contains('+'), "Korean wall clock, no offset: {created_at}");
    }
    assert_eq!((stats.webhook_failed_sends, stats.webhooks_given_up), (0, 0));
}

#[tokio::test]
async fn a_declined_payment_is_announced_aborted() {
    let (url, shop) = shop(0).await;
    let pg = start(fast_config()).await;
    pg.set_config(json!({"webhook_url": url, "faults": {"decline": 1.0}})).await;
    let response = pg.confirm(Some("k-1"), &body("pk-1", "order-1", 1_000)).await;
    assert_eq!(response.status(), reqwest::StatusCode::FORBIDDEN);
    pg.wait_for_stats("the decline announced", |stats| stats.webhooks_delivered == 1).await;
    assert_eq!(shop.events.lock().unwrap()[0]["data"]["status"], "ABORTED");
}

#[tokio::test]
async fn an_event_the_shop_fails_is_resent_on_tosss_schedule_then_given_up() {
    // A minute of the schedule is 0.6 ms here: the seven resends' 3 days 19 hours take 3.3 s.
    let mut config = fast_config();
    config.time_scale = 0.000_01;
    let (url, shop) = shop(usize::MAX).await;
    let pg = start(config).await;
    pg.set_config(json!({"webhook_url": url})).await;

    pg.charged("pk-1", "order-1", 1_000).await;
    let stats = pg.wait_for_stats("the event given up", |stats| stats.webhooks_given_up == 1).await;

    assert_eq!((stats.webhook_failed_sends, stats.webhooks_delivered), (8, 0), "the first send and seven resends");
    assert_eq!(shop.events.lock().unwrap().len(), 8);
}

#[tokio::test]
async fn a_resend_that_gets_200_is_the_last() {
    let mut config = fast_config();
    config.time_scale = 0.001;
    let (url, shop) = shop(2).await;
    let pg = start(config).await;
    pg.set_config(json!({"webhook_url": url})).await;

    pg.charged("pk-1", "order-1", 1_000).await;
    let stats = pg.wait_for_stats("the event delivered", |stats| stats.webhooks_delivered == 1).await;

    assert_eq!(stats.webhook_failed_sends, 2);
    assert_eq!(shop.events.lock().unwrap().len(), 3);
}

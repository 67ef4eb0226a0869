//! The admin API over real HTTP, and shutting the server down.

use crate::common;

use std::time::Duration;

use common::{body, error_code, fast_config, start};
use fake_pg::{Config, RuntimeConfig};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::net::TcpListener;

#[tokio::test]
async fn config_starts_as_given_and_reads_back_whole() {
    let pg = start(Config::default()).await;
    let config: Value = pg.client.get(format!("{}/__admin/config", pg.url)).send().await.unwrap().json().await.unwrap();
    // The literal JSON is pinned by the unit test of RuntimeConfig's serialisation.
    assert_eq!(config, serde_json::to_value(RuntimeConfig::default()).unwrap());
}

#[tokio::test]
async fn put_merges_only_the_fields_given() {
    let pg = start(fast_config()).await;
    let response =
        pg.put_config(json!({"faults": {"decline": 1}, "slow_tail": {"fraction": 0.05}, "contract_limit": 40})).await;
    assert_eq!(response.status(), StatusCode::OK);
    let returned: RuntimeConfig = response.json().await.unwrap();

    let mut expected = fast_config().runtime;
    expected.faults.decline = 1.0;
    expected.slow_tail.fraction = 0.05;
    expected.contract_limit = Some(40);
    assert_eq!(returned, expected);
    let read_back: RuntimeConfig =
        pg.client.get(format!("{}/__admin/config", pg.url)).send().await.unwrap().json().await.unwrap();
    assert_eq!(read_back, expected);

    // And it takes effect on the next confirm.
    let (status, code, _) = error_code(pg.confirm(None, &body("pk-1", "order-1", 1_000)).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::FORBIDDEN, "REJECT_CARD_PAYMENT"));
}

#[tokio::test]
async fn put_refuses_bad_values_and_changes_nothing() {
    let pg = start(fast_config()).await;
    let cases = [
        (json!({"faults": {"error_500": 1.5}}), "faults.error_500"),
        (json!({"slow_tail": {"fraction": -0.5}}), "slow_tail.fraction"),
        (json!({"faults": {"declines": 0.1}}), "declines"),
        (json!({"latency_ms": "slow"}), "latency_ms"),
        (json!({"contract_limit": -1}), "contract_limit"),
        (json!([]), "object"),
    ];
    for (patch, mentions) in cases {
        let (status, code, message) = error_code(pg.put_config(patch.clone()).await).await;
        assert_eq!((status, code.as_str()), (StatusCode::BAD_REQUEST, "INVALID_CONFIG"), "{patch}");
        assert!(message.contains(mentions), "{message:?} should mention {mentions}");
    }
    let malformed = pg.client.put(format!("{}/__admin/config", pg.url)).body("{").send().await.unwrap();
    assert_eq!(malformed.status(), StatusCode::BAD_REQUEST);

    let config: RuntimeConfig =
        pg.client.get(format!("{}/__admin/config", pg.url)).send().await.unwrap().json().await.unwrap();
    assert_eq!(config, fast_config().runtime);
}

#[tokio::test]
async fn reset_forgets_payments_keys_and_counters_but_keeps_the_config() {
    let pg = start(fast_config()).await;
    pg.set_config(json!({"latency_ms": 5})).await;
    let response = pg.confirm(Some("key-1"), &body("pk-1", "order-1", 1_000)).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(pg.stats().await.processings, 1);

    let reset = pg.client.post(format!("{}/__admin/reset", pg.url)).send().await.unwrap();
    assert_eq!(reset.status(), StatusCode::NO_CONTENT);
    assert_eq!(pg.stats().await, fake_pg::Stats::default());
    assert_eq!(pg.order_payment("order-1").await, None);
    let config: RuntimeConfig =
        pg.client.get(format!("{}/__admin/config", pg.url)).send().await.unwrap().json().await.unwrap();
    assert_eq!(config.latency_ms, 5);

    // The key and the paymentKey are free again: this is a new processing.
    let response = pg.confirm(Some("key-1"), &body("pk-1", "order-1", 1_000)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let stats = pg.stats().await;
    assert_eq!((stats.processings, stats.replays), (1, 0));
}

#[tokio::test]
async fn shutdown_stops_the_server() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(fake_pg::serve_with_shutdown(fast_config(), listener, async {
        let _ = stopped.await;
    }));
    let health = reqwest::get(format!("http://{address}/__admin/health")).await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);

    stop.send(()).unwrap();
    let result = tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("the server stops within the drain timeout")
        .unwrap();
    assert!(result.is_ok());
    assert!(tokio::net::TcpStream::connect(address).await.is_err());
}

#[tokio::test]
async fn an_invalid_config_is_refused_at_start() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut config = fast_config();
    config.runtime.faults.decline = 2.0;
    let error = fake_pg::serve(config, listener).await.unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    assert!(error.to_string().contains("faults.decline"));
}

#[tokio::test]
async fn two_calls_about_one_payment_at_once_show_as_an_overlap() {
    let mut config = fast_config();
    config.runtime.lookup_latency_ms = 300;
    let pg = start(config).await;
    let payment_key = pg.window_with("order-overlap", 1_000, "approve").await;

    // One after the other: no overlap.
    pg.payment(&payment_key).await;
    pg.payment(&payment_key).await;
    assert_eq!(pg.stats().await.overlapping_calls, 0);

    // Two at once about the same payment, and one about another payment beside them.
    let other_key = pg.window_with("order-beside", 1_000, "approve").await;
    tokio::join!(pg.payment(&payment_key), pg.payment(&payment_key), pg.payment(&other_key));
    let stats = pg.stats().await;
    assert_eq!(stats.overlapping_calls, 1);
    assert_eq!(stats.overlapping_payment_keys, vec![payment_key.clone()]);

    // A caller that hung up closed its call: asking again is no overlap.
    let hung_up = tokio::time::timeout(Duration::from_millis(50), pg.payment(&other_key)).await;
    assert!(hung_up.is_err(), "the lookup takes longer than the caller waits");
    common::eventually(Duration::from_secs(5), || async {
        let before = pg.stats().await.overlapping_calls;
        pg.payment(&other_key).await;
        (pg.stats().await.overlapping_calls == before).then_some(())
    })
    .await
    .expect("the hung-up call was closed");
}

//! The payment window over real HTTP: each scenario from the button press to
//! the confirm's outcome, as a browser and the shop's server would see it.

use crate::common;

use std::time::{Duration, Instant};

use common::{SHOP, body, error_code, eventually, fast_config, is_connection_reset, payment_key_in, start};
use fake_pg::{Config, Payment, Scenario};
use reqwest::{Response, StatusCode};
use serde_json::json;

fn location(response: &Response) -> String {
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    response.headers()["location"].to_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_window_shows_the_order_and_a_button_per_scenario() {
    let pg = start(fast_config()).await;
    let (status, html) = pg.window_html("order-1", 12_900, &format!("{SHOP}/ok")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("₩12,900"));
    assert!(html.contains("order-1"));
    assert!(html.contains("Tee &lt;b&gt;x2&lt;/b&gt; &amp; socks"), "order name not escaped");
    assert!(!html.contains("<b>x2</b>"));
    assert!(html.contains(r#"<meta name="viewport" content="width=device-width, initial-scale=1">"#));
    for scenario in Scenario::ALL {
        let id = scenario.id();
        assert!(html.contains(&format!(r#"value="{id}" data-scenario="{id}""#)), "no button for {id}");
    }
    // One per test card, and the close button (which cancels, as the cancel card does).
    assert_eq!(html.matches(r#"<button type="submit""#).count(), Scenario::ALL.len() + 1);
    // Each load issues its own paymentKey, and the window is READY until a card is chosen.
    let payment_key = payment_key_in(&html);
    let (_, again) = pg.window_html("order-1", 12_900, &format!("{SHOP}/ok")).await;
    assert_ne!(payment_key_in(&again), payment_key);
    let payment: Payment = pg.get(&format!("/v1/payments/{payment_key}")).await.json().await.unwrap();
    assert_eq!(payment.status.as_str(), "READY");
}

#[tokio::test]
async fn approve_redirects_to_success_and_the_confirm_charges() {
    let pg = start(fast_config()).await;
    let payment_key = pg.open_window("order-1", 12_900).await;
    let response = pg.submit_window(&payment_key, "approve").await;
    assert_eq!(
        location(&response),
        format!("{SHOP}/pay/success?paymentKey={payment_key}&orderId=order-1&amount=12900")
    );
    // Authenticated in the window, not yet confirmed.
    let waiting = pg.order_payment("order-1").await.unwrap();
    assert_eq!((waiting.status.as_str(), waiting.method.as_deref()), ("IN_PROGRESS", Some("카드")));

    let response = pg.confirm(Some("key-1"), &body(&payment_key, "order-1", 12_900)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let payment: Payment = response.json().await.unwrap();
    assert_eq!(payment.status.as_str(), "DONE");
    assert_eq!(payment.order_name, "Tee <b>x2</b> & socks");

    // The receipt link works and shows the order.
    let receipt_url = payment.receipt.unwrap().url;
    let receipt = pg.client.get(&receipt_url).send().await.unwrap();
    assert_eq!(receipt.status(), StatusCode::OK);
    assert!(receipt.text().await.unwrap().contains("order-1"));
}

#[tokio::test]
async fn a_success_url_with_a_query_gets_the_parameters_appended() {
    let pg = start(fast_config()).await;
    let (_, html) = pg.window_html("order-1", 500, &format!("{SHOP}/ok?lang=ko")).await;
    let payment_key = payment_key_in(&html);
    let response = pg.submit_window(&payment_key, "approve").await;
    assert_eq!(location(&response), format!("{SHOP}/ok?lang=ko&paymentKey={payment_key}&orderId=order-1&amount=500"));
}

#[tokio::test]
async fn a_double_submit_redirects_with_the_same_payment_key() {
    let pg = start(fast_config()).await;
    let payment_key = pg.open_window("order-1", 1_000).await;
    let first = location(&pg.submit_window(&payment_key, "approve").await);
    let second = location(&pg.submit_window(&payment_key, "approve").await);
    assert_eq!(first, second);
    // Even after the confirm, a late resubmit changes nothing.
    pg.confirm(Some("key-1"), &body(&payment_key, "order-1", 1_000)).await;
    let late = location(&pg.submit_window(&payment_key, "cancel").await);
    assert_eq!(late, first);
    assert_eq!(pg.order_payment("order-1").await.unwrap().status.as_str(), "DONE");
}

#[tokio::test]
async fn slow_approvals_take_40_and_70_seconds_scaled_by_time_scale() {
    // At 0.02 of real time: 40 s is 0.8 s and 70 s is 1.4 s.
    let mut config = fast_config();
    config.time_scale = 0.02;
    let pg = start(config).await;
    let slow = pg.window_with("order-40", 1_000, "approve_40s").await;
    let slower = pg.window_with("order-70", 1_000, "approve_70s").await;
    let quick = pg.window_with("order-q", 1_000, "approve").await;
    let timed = |payment_key: String, order_id: &'static str| {
        let request = pg.confirm_request(None, &body(&payment_key, order_id, 1_000));
        async move {
            let started = Instant::now();
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            started.elapsed()
        }
    };
    let (forty, seventy, usual) =
        tokio::join!(timed(slow, "order-40"), timed(slower, "order-70"), timed(quick, "order-q"));
    assert!(forty >= Duration::from_millis(800), "{forty:?}");
    assert!(seventy >= Duration::from_millis(1_400), "{seventy:?}");
    assert!(seventy > forty && forty > usual, "{usual:?} {forty:?} {seventy:?}");
}

#[tokio::test]
async fn decline_scenarios_decline_with_their_codes() {
    let pg = start(fast_config()).await;
    let cases = [
        ("decline_reject_card", StatusCode::FORBIDDEN, "REJECT_CARD_PAYMENT"),
        ("decline_invalid_expiration", StatusCode::BAD_REQUEST, "INVALID_CARD_EXPIRATION"),
    ];
    for (scenario, status, code) in cases {
        let payment_key = pg.window_with(scenario, 1_000, scenario).await;
        let request = body(&payment_key, scenario, 1_000);
        let (got_status, got_code, _) = error_code(pg.confirm(Some(scenario), &request).await).await;
        assert_eq!((got_status, got_code.as_str()), (status, code));
        let payment = pg.order_payment(scenario).await.unwrap();
        assert_eq!(payment.status.as_str(), "ABORTED");
        assert_eq!(payment.failure.unwrap().code, code);
        // The same key replays the decline; another key finds the payment processed.
        let (replay_status, replay_code, _) = error_code(pg.confirm(Some(scenario), &request).await).await;
        assert_eq!((replay_status, replay_code.as_str()), (status, code));
        let (_, other, _) = error_code(pg.confirm(Some("other"), &request).await).await;
        assert_eq!(other, "ALREADY_PROCESSED_PAYMENT");
    }
    let stats = pg.stats().await;
    assert_eq!((stats.processings, stats.faults_injected.decline), (2, 2));
    assert!(stats.charges_by_order.is_empty());
}

#[tokio::test]
async fn error_500_then_charge_answers_500_and_replays_it_as_toss_does_while_the_lookup_shows_the_charge() {
    let pg = start(fast_config()).await;
    let payment_key = pg.window_with("order-1", 1_000, "error_500_then_charge").await;
    let request = body(&payment_key, "order-1", 1_000);
    let (status, code, _) = error_code(pg.confirm(Some("key-1"), &request).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::INTERNAL_SERVER_ERROR, "FAILED_INTERNAL_SYSTEM_PROCESSING"));

    // Toss answers a repeated key with the first response, a 500 included.
    let (status, code, _) = error_code(pg.confirm(Some("key-1"), &request).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::INTERNAL_SERVER_ERROR, "FAILED_INTERNAL_SYSTEM_PROCESSING"));
    // Only a lookup tells that the payment was charged.
    let looked_up = pg.payment(&payment_key).await.unwrap();
    assert_eq!((looked_up.order_id.as_str(), looked_up.status.as_str()), ("order-1", "DONE"));
    let stats = pg.stats().await;
    assert_eq!((stats.processings, stats.replays), (1, 1));
    assert_eq!(stats.faults_injected.error_500_after_charge, 1);
    assert_eq!(stats.charges_by_order.get("order-1"), Some(&1));
}

#[tokio::test]
async fn in_outcome_mode_a_retry_after_error_500_then_charge_gets_the_payment() {
    let pg = start(fast_config()).await;
    pg.set_config(json!({"replay": "outcome"})).await;
    let payment_key = pg.window_with("order-1", 1_000, "error_500_then_charge").await;
    let request = body(&payment_key, "order-1", 1_000);
    let (status, _, _) = error_code(pg.confirm(Some("key-1"), &request).await).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);

    let retry = pg.confirm(Some("key-1"), &request).await;
    assert_eq!(retry.status(), StatusCode::OK);
    let payment: Payment = retry.json().await.unwrap();
    assert_eq!((payment.payment_key, payment.status.as_str()), (payment_key, "DONE"));
    assert_eq!(pg.stats().await.charges_by_order.get("order-1"), Some(&1));
}

#[tokio::test]
async fn reset_after_charge_resets_the_connection_but_the_retry_gets_the_payment() {
    let pg = start(fast_config()).await;
    let payment_key = pg.window_with("order-1", 1_000, "reset_after_charge").await;
    let request = body(&payment_key, "order-1", 1_000);
    let error =
        pg.confirm_request(Some("key-1"), &request).send().await.expect_err("a reset connection gives no response");
    assert!(is_connection_reset(&error), "not a reset: {error:?}");
    assert_eq!(pg.order_payment("order-1").await.unwrap().status.as_str(), "DONE");

    let retry = pg.confirm(Some("key-1"), &request).await;
    assert_eq!(retry.status(), StatusCode::OK);
    let payment: Payment = retry.json().await.unwrap();
    assert_eq!(payment.status.as_str(), "DONE");
    assert_eq!(pg.stats().await.charges_by_order.get("order-1"), Some(&1));
}

#[tokio::test]
async fn rate_limited_and_blocked_scenarios_never_process() {
    let pg = start(fast_config()).await;
    let cases = [
        ("rate_limited_429", StatusCode::TOO_MANY_REQUESTS, "TOO_MANY_REQUESTS"),
        ("forbidden_consecutive_403", StatusCode::FORBIDDEN, "FORBIDDEN_CONSECUTIVE_REQUEST"),
    ];
    for (scenario, status, code) in cases {
        let payment_key = pg.window_with(scenario, 1_000, scenario).await;
        for _ in 0..2 {
            let request = body(&payment_key, scenario, 1_000);
            let (got_status, got_code, _) = error_code(pg.confirm(Some(scenario), &request).await).await;
            assert_eq!((got_status, got_code.as_str()), (status, code));
        }
        assert_eq!(pg.order_payment(scenario).await.unwrap().status.as_str(), "IN_PROGRESS");
    }
    let stats = pg.stats().await;
    assert_eq!(stats.processings, 0);
    assert_eq!((stats.faults_injected.rate_limit_429, stats.faults_injected.forbidden_consecutive), (2, 2));
    assert!(stats.charges_by_order.is_empty());
}

#[tokio::test]
async fn cancel_goes_back_to_the_fail_url_and_cannot_be_confirmed() {
    let pg = start(fast_config()).await;
    let payment_key = pg.open_window("order-1", 1_000).await;
    let target = location(&pg.submit_window(&payment_key, "cancel").await);
    let expected_prefix = format!("{SHOP}/pay/fail?code=PAY_PROCESS_CANCELED&message=");
    assert!(target.starts_with(&expected_prefix), "{target}");
    assert!(target.ends_with("&orderId=order-1"), "{target}");

    let (status, code, _) = error_code(pg.confirm(Some("key-1"), &body(&payment_key, "order-1", 1_000)).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::NOT_FOUND, "NOT_FOUND_PAYMENT_SESSION"));
    assert_eq!(pg.stats().await.processings, 0);
}

#[tokio::test]
async fn bad_window_requests_get_a_readable_400_page() {
    let pg = start(fast_config()).await;
    let response = pg
        .client
        .get(format!("{}/v1/window?orderId=order-1&amount=12.5&successUrl=/relative", pg.url))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let html = response.text().await.unwrap();
    for problem in ["amount must be", "orderName is required", "failUrl is required", "successUrl must be"] {
        assert!(html.contains(problem), "{problem} not in the page");
    }

    let unknown = pg.submit_window("no-such-key", "approve").await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    let payment_key = pg.open_window("order-2", 1_000).await;
    let bad_scenario = pg.submit_window(&payment_key, "approve_forever").await;
    assert_eq!(bad_scenario.status(), StatusCode::BAD_REQUEST);
    assert!(bad_scenario.text().await.unwrap().contains("Choose one of the test cards"));
}

#[tokio::test]
async fn a_window_not_confirmed_within_ten_minutes_scaled_expires_and_cannot_be_confirmed() {
    // Ten minutes at a time scale of 0.0002 is 120 ms.
    let pg = start(Config { time_scale: 0.000_2, ..fast_config() }).await;
    let payment_key = pg.window_with("order-1", 1_000, "approve").await;
    let expired = eventually(Duration::from_secs(5), || async {
        let payment = pg.payment(&payment_key).await?;
        (payment.status.as_str() == "EXPIRED").then_some(payment)
    })
    .await;
    assert!(expired.is_some(), "the payment expired");

    let request = body(&payment_key, "order-1", 1_000);
    let (status, code, _) = error_code(pg.confirm(Some("key-1"), &request).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::NOT_FOUND, "NOT_FOUND_PAYMENT_SESSION"));
    let (status, code, _) = error_code(pg.confirm(Some("key-1"), &request).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::NOT_FOUND, "NOT_FOUND_PAYMENT_SESSION"), "replayed");
    let stats = pg.stats().await;
    assert_eq!((stats.processings, stats.payments_by_status.get("EXPIRED")), (0, Some(&1)));
    assert!(stats.charges_by_order.is_empty());
}

//! The payment SDK (`/v2/standard`) and the window it opens: what the PG checks
//! once the page's arguments reach it, the customer closing the window, and
//! the window's language. The SDK's own checks in the page run in Chromium
//! (the browser journeys).

use crate::common;

use common::{SHOP, fast_config, start};
use fake_pg::DEFAULT_CLIENT_KEY;
use reqwest::{Response, StatusCode};

/// The window as the SDK opens it.
async fn sdk_window(pg: &common::Pg, params: &[(&str, &str)], accept_language: Option<&str>) -> Response {
    let mut query = vec![
        ("clientKey", DEFAULT_CLIENT_KEY),
        ("customerKey", "@@ANONYMOUS"),
        ("orderId", "order-1"),
        ("amount", "12900"),
        ("orderName", "Mug x2"),
        ("successUrl", "http://shop.test/pay/success"),
        ("failUrl", "http://shop.test/pay/fail"),
        ("lang", ""),
    ];
    for (name, value) in params {
        query.retain(|(existing, _)| existing != name);
        query.push((name, value));
    }
    let mut request = pg.client.get(format!("{}/v1/window", pg.url)).query(&query);
    if let Some(language) = accept_language {
        request = request.header("Accept-Language", language);
    }
    request.send().await.unwrap()
}

fn location(response: &Response) -> String {
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    response.headers()["location"].to_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_sdk_is_served_at_a_stable_path_with_this_pgs_address_and_client_key() {
    let mut config = fast_config();
    config.client_key = "test_ck_shop_42".to_owned();
    let pg = start(config).await;

    let response = pg.client.get(format!("{}/v2/standard", pg.url)).send().await.unwrap();

    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/javascript"));
    let script = response.text().await.unwrap();
    assert!(script.contains("window.TossPayments = TossPayments;"));
    assert!(script.contains(&format!(r#"var PG = "{}";"#, pg.url)));
    assert!(script.contains(r#"var CLIENT_KEY = "test_ck_shop_42";"#));
    assert!(script.contains(r#"TossPayments.ANONYMOUS = ANONYMOUS;"#));
}

#[tokio::test]
async fn a_window_for_an_order_already_opened_with_another_amount_returns_to_the_fail_url() {
    let pg = start(fast_config()).await;
    assert_eq!(sdk_window(&pg, &[], None).await.status(), StatusCode::OK);

    let tampered = sdk_window(&pg, &[("amount", "100")], None).await;

    let target = location(&tampered);
    assert!(target.starts_with(&format!("{SHOP}/pay/fail?code=PAY_PROCESS_ABORTED&")), "{target}");
    assert!(target.ends_with("&orderId=order-1"), "{target}");
    // The same order for its own amount opens again (the customer came back to pay).
    assert_eq!(sdk_window(&pg, &[], None).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_window_opened_with_another_merchants_client_key_is_refused() {
    let pg = start(fast_config()).await;

    let response = sdk_window(&pg, &[("clientKey", "test_ck_someone_else")], None).await;

    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(response.text().await.unwrap().contains("INVALID_CLIENT_KEY"));
}

#[tokio::test]
async fn closing_the_window_returns_to_the_fail_url_with_pay_process_canceled() {
    let pg = start(fast_config()).await;
    let html = sdk_window(&pg, &[], None).await.text().await.unwrap();
    let close = html.find(r#"data-action="close""#).expect("a close button");
    let button_start = html[..close].rfind("<button").unwrap();
    assert!(html[button_start..close].contains(r#"name="scenario" value="cancel""#));
    let payment_key = common::payment_key_in(&html);

    let closed = pg.submit_window(&payment_key, "cancel").await;

    let target = location(&closed);
    assert!(target.starts_with(&format!("{SHOP}/pay/fail?code=PAY_PROCESS_CANCELED&")), "{target}");
    assert!(target.ends_with("&orderId=order-1"), "{target}");
}

#[tokio::test]
async fn the_window_speaks_the_shop_pages_language_or_else_the_browsers() {
    let pg = start(fast_config()).await;

    let korean_page = sdk_window(&pg, &[("lang", "ko")], Some("en-US")).await.text().await.unwrap();
    assert!(korean_page.contains(r#"<html lang="ko">"#));
    assert!(korean_page.contains("12,900원"));
    assert!(korean_page.contains("결제창 닫기"));

    let korean_browser = sdk_window(&pg, &[], Some("ko-KR,ko;q=0.9")).await.text().await.unwrap();
    assert!(korean_browser.contains(r#"<html lang="ko">"#));

    let english_page = sdk_window(&pg, &[("lang", "en")], Some("ko-KR")).await.text().await.unwrap();
    assert!(english_page.contains(r#"<html lang="en">"#));
    assert!(english_page.contains("₩12,900"));
    assert!(english_page.contains("Close the payment window"));
}

//! The KakaoPay face over real HTTP: ready, the customer's window, approve,
//! order and cancel, as a shop's server and a browser would see them, with
//! the same latency, faults and counters as the Toss face.

use crate::common;

use std::time::Duration;

use common::{Pg, SHOP, eventually, fast_config, is_connection_reset, start};
use fake_pg::{Api, Config, DEFAULT_SECRET_KEY};
use reqwest::{Response, StatusCode};
use serde_json::{Value, json};

const CID: &str = "TC0ONETIME";
const USER: &str = "user-1";

fn kakaopay() -> Config {
    Config { api: Api::KakaoPay, ..fast_config() }
}

fn authorization() -> String {
    format!("SECRET_KEY {DEFAULT_SECRET_KEY}")
}

/// `POST /online/v1/payment/{call}` with the secret key.
async fn call(pg: &Pg, call: &str, body: &Value) -> Response {
    pg.client
        .post(format!("{}/online/v1/payment/{call}", pg.url))
        .header("Authorization", authorization())
        .json(body)
        .send()
        .await
        .unwrap()
}

/// The body of a 200 answer.
async fn ok(response: Response) -> Value {
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// The HTTP status, `error_code` and the whole body of an error answer.
async fn error(response: Response) -> (StatusCode, i64, Value) {
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    let code = body["error_code"].as_i64().unwrap_or_else(|| panic!("no error_code in {body}"));
    (status, code, body)
}

fn ready_body(order_id: &str, amount: u64) -> Value {
    json!({
        "cid": CID, "partner_order_id": order_id, "partner_user_id": USER, "item_name": "Mug",
        "quantity": 1, "total_amount": amount, "tax_free_amount": 0,
        "approval_url": format!("{SHOP}/pay/kakao/approve?order={order_id}"),
        "cancel_url": format!("{SHOP}/pay/kakao/cancel"), "fail_url": format!("{SHOP}/pay/kakao/fail"),
    })
}

/// Readies a payment and returns its tid and the ready's answer.
async fn ready(pg: &Pg, order_id: &str, amount: u64) -> (String, Value) {
    let answer = ok(call(pg, "ready", &ready_body(order_id, amount)).await).await;
    (answer["tid"].as_str().unwrap().to_owned(), answer)
}

async fn window(pg: &Pg, tid: &str, mode: &str) -> Response {
    pg.client.get(format!("{}/kakaopay/window/{tid}?mode={mode}&lang=en", pg.url)).send().await.unwrap()
}

/// Presses a choice in the window and returns where it sends the browser.
async fn choose(pg: &Pg, tid: &str, choice: &str) -> String {
    let response = pg
        .client
        .post(format!("{}/kakaopay/window/{tid}", pg.url))
        .form(&[("choice", choice), ("mode", "mobile")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    response.headers()["location"].to_str().unwrap().to_owned()
}

/// Readies a payment and authenticates it in the window with `choice`:
/// its tid and the pg_token the approval URL got.
async fn authenticated_with(pg: &Pg, order_id: &str, amount: u64, choice: &str) -> (String, String) {
    let (tid, _) = ready(pg, order_id, amount).await;
    let location = choose(pg, &tid, choice).await;
    let prefix = format!("{SHOP}/pay/kakao/approve?order={order_id}&pg_token=");
    let token = location.strip_prefix(&prefix).unwrap_or_else(|| panic!("{location}")).to_owned();
    (tid, token)
}

async fn authenticated(pg: &Pg, order_id: &str, amount: u64) -> (String, String) {
    authenticated_with(pg, order_id, amount, "approve").await
}

fn approve_body(tid: &str, order_id: &str, pg_token: &str) -> Value {
    json!({"cid": CID, "tid": tid, "partner_order_id": order_id, "partner_user_id": USER, "pg_token": pg_token})
}

async fn approve(pg: &Pg, tid: &str, order_id: &str, pg_token: &str) -> Response {
    call(pg, "approve", &approve_body(tid, order_id, pg_token)).await
}

/// Readies, authenticates and approves a payment; its tid.
async fn charged(pg: &Pg, order_id: &str, amount: u64) -> String {
    let (tid, token) = authenticated(pg, order_id, amount).await;
    ok(approve(pg, &tid, order_id, &token).await).await;
    tid
}

async fn order(pg: &Pg, tid: &str) -> Value {
    ok(call(pg, "order", &json!({"cid": CID, "tid": tid})).await).await
}

async fn status(pg: &Pg, tid: &str) -> String {
    order(pg, tid).await["status"].as_str().unwrap().to_owned()
}

/// Polls the order until it shows `expected`, or panics at the deadline.
async fn wait_for_status(pg: &Pg, tid: &str, expected: &str) -> Value {
    eventually(Duration::from_secs(10), || async { Some(order(pg, tid).await).filter(|o| o["status"] == expected) })
        .await
        .unwrap_or_else(|| panic!("{tid} never showed {expected}"))
}

fn cancel_body(tid: &str, amount: u64, available: Option<u64>) -> Value {
    let mut body = json!({"cid": CID, "tid": tid, "cancel_amount": amount, "cancel_tax_free_amount": 0});
    if let Some(available) = available {
        body["cancel_available_amount"] = available.into();
    }
    body
}

#[tokio::test]
async fn ready_window_approve_and_the_order_shows_one_charge() {
    let pg = start(kakaopay()).await;
    let (tid, answer) = ready(&pg, "order-1", 12_900).await;
    assert!(tid.starts_with('T') && tid.len() == 20, "{tid}");
    let pc_url = answer["next_redirect_pc_url"].as_str().unwrap();
    assert_eq!(pc_url, format!("{}/kakaopay/window/{tid}?mode=pc", pg.url));
    for field in ["next_redirect_mobile_url", "next_redirect_app_url", "android_app_scheme", "ios_app_scheme"] {
        assert!(answer[field].as_str().unwrap().contains(&tid), "{field}");
    }
    let created_at = answer["created_at"].as_str().unwrap();
    assert!(created_at.len() == 19 && created_at.as_bytes()[10] == b'T', "no offset: {created_at}");
    assert_eq!(status(&pg, &tid).await, "READY");

    // A PC gets KakaoPay's QR page; seeing it opens the payment.
    let page = window(&pg, &tid, "pc").await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(html.contains("QR") && html.contains("₩12,900") && html.contains(r#"value="approve""#));
    assert_eq!(status(&pg, &tid).await, "OPEN_PAYMENT");

    let location = choose(&pg, &tid, "approve").await;
    let token = location.split("&pg_token=").nth(1).unwrap().to_owned();
    assert!(location.starts_with(&format!("{SHOP}/pay/kakao/approve?order=order-1&pg_token=")), "{location}");
    assert_eq!(status(&pg, &tid).await, "AUTH_PASSWORD");

    let approved = ok(approve(&pg, &tid, "order-1", &token).await).await;
    assert!(approved["aid"].as_str().unwrap().starts_with('A'));
    assert_eq!((approved["tid"].as_str(), approved["cid"].as_str()), (Some(tid.as_str()), Some(CID)));
    assert_eq!(approved["amount"]["total"], 12_900);
    assert_eq!(approved["amount"]["vat"], 1_173);
    assert_eq!(approved["payment_method_type"], "CARD");
    assert!(approved["card_info"]["approved_id"].is_string());
    assert!(approved.get("status").is_none(), "KakaoPay's approve has no status");

    let shown = order(&pg, &tid).await;
    assert_eq!(shown["status"], "SUCCESS_PAYMENT");
    assert_eq!(shown["payment_action_details"][0]["payment_action_type"], "PAYMENT");
    assert_eq!(shown["payment_action_details"][0]["aid"], approved["aid"]);
    assert_eq!(shown["cancel_available_amount"]["total"], 12_900);
    let stats = pg.stats().await;
    assert_eq!((stats.confirm_requests, stats.processings), (1, 1));
    assert_eq!(stats.charges_by_order.get("order-1"), Some(&1));

    // A second approve is refused and charges nothing.
    let (status_code, code, _) = error(approve(&pg, &tid, "order-1", &token).await).await;
    assert_eq!((status_code, code), (StatusCode::BAD_REQUEST, -702));
    let stats = pg.stats().await;
    assert_eq!((stats.processings, stats.charges_by_order.get("order-1")), (1, Some(&1)));
    assert!(stats.double_charges.is_empty());
}

#[tokio::test]
async fn an_approve_must_carry_the_token_and_repeat_the_ready() {
    let pg = start(kakaopay()).await;
    let (tid, _) = ready(&pg, "order-1", 5_000).await;
    let (_, code, _) = error(approve(&pg, &tid, "order-1", "no-token-yet").await).await;
    assert_eq!(code, -701, "the customer has not authenticated");

    let token = choose(&pg, &tid, "approve").await.split("pg_token=").nth(1).unwrap().to_owned();
    let (status_code, code, _) = error(approve(&pg, &tid, "order-1", "wrong-token").await).await;
    assert_eq!((status_code, code), (StatusCode::BAD_REQUEST, -708));
    let (_, code, _) = error(approve(&pg, &tid, "order-2", &token).await).await;
    assert_eq!(code, -706);
    let mut other_user = approve_body(&tid, "order-1", &token);
    other_user["partner_user_id"] = "user-2".into();
    assert_eq!(error(call(&pg, "approve", &other_user).await).await.1, -707);
    let mut other_amount = approve_body(&tid, "order-1", &token);
    other_amount["total_amount"] = 4_999.into();
    assert_eq!(error(call(&pg, "approve", &other_amount).await).await.1, -704);
    let unknown = approve_body("T0000000000000000000", "order-1", &token);
    assert_eq!(error(call(&pg, "approve", &unknown).await).await.1, -721);

    assert_eq!(status(&pg, &tid).await, "AUTH_PASSWORD", "nothing was processed");
    assert_eq!(pg.stats().await.processings, 0);
    ok(approve(&pg, &tid, "order-1", &token).await).await;
}

#[tokio::test]
async fn a_wrong_password_or_quitting_in_the_window_cannot_be_approved() {
    let pg = start(kakaopay()).await;
    for (choice, url, expected) in [
        ("wrong_password", format!("{SHOP}/pay/kakao/fail"), "FAIL_AUTH_PASSWORD"),
        ("quit", format!("{SHOP}/pay/kakao/cancel"), "QUIT_PAYMENT"),
    ] {
        let order_id = format!("order-{choice}");
        let (tid, _) = ready(&pg, &order_id, 1_000).await;
        assert_eq!(choose(&pg, &tid, choice).await, url);
        assert_eq!(status(&pg, &tid).await, expected);
        let (status_code, code, _) = error(approve(&pg, &tid, &order_id, "any-token").await).await;
        assert_eq!((status_code, code), (StatusCode::BAD_REQUEST, -783), "{choice}");
        // A second press, or an approve in the window afterwards, changes nothing.
        assert_eq!(choose(&pg, &tid, "approve").await, url);
        assert_eq!(status(&pg, &tid).await, expected);
    }
    assert!(pg.stats().await.charges_by_order.is_empty());
}

#[tokio::test]
async fn a_session_not_approved_within_fifteen_minutes_expires() {
    // Fifteen minutes at 0.004 of real time: 3.6 s, for a busy machine to
    // prepare and authenticate in.
    let pg = start(Config { time_scale: 0.004, ..kakaopay() }).await;
    // Prepared first, so it is past its fifteen minutes once the other is,
    // however long the machine took between the two.
    let (untouched_tid, _) = ready(&pg, "order-2", 1_000).await;
    let (authenticated_tid, token) = authenticated(&pg, "order-1", 1_000).await;
    assert_eq!(status(&pg, &authenticated_tid).await, "AUTH_PASSWORD");

    let expired = wait_for_status(&pg, &authenticated_tid, "FAIL_PAYMENT").await;
    assert!(expired["approved_at"].is_null());
    let (status_code, code, _) = error(approve(&pg, &authenticated_tid, "order-1", &token).await).await;
    assert_eq!((status_code, code), (StatusCode::BAD_REQUEST, -723));
    assert_eq!(status(&pg, &untouched_tid).await, "FAIL_PAYMENT");

    // The window only says so, and sends the customer to fail_url.
    let page = window(&pg, &untouched_tid, "mobile").await.text().await.unwrap();
    assert!(page.contains("expired") && page.contains(&format!("{SHOP}/pay/kakao/fail")), "{page}");
    assert_eq!(choose(&pg, &untouched_tid, "approve").await, format!("{SHOP}/pay/kakao/fail"));
    assert!(pg.stats().await.charges_by_order.is_empty());
}

#[tokio::test]
async fn an_approve_whose_caller_hangs_up_still_charges() {
    let pg = start(kakaopay()).await;
    pg.set_config(json!({"latency_ms": 1_500})).await;
    let (tid, token) = authenticated(&pg, "order-1", 3_000).await;
    let gave_up = pg
        .client
        .post(format!("{}/online/v1/payment/approve", pg.url))
        .header("Authorization", authorization())
        .json(&approve_body(&tid, "order-1", &token))
        .timeout(Duration::from_millis(200))
        .send()
        .await;
    assert!(gave_up.unwrap_err().is_timeout());
    assert_eq!(status(&pg, &tid).await, "AUTH_PASSWORD", "still processing");

    let shown = wait_for_status(&pg, &tid, "SUCCESS_PAYMENT").await;
    assert_eq!(shown["amount"]["total"], 3_000);
    let stats = pg.wait_for_stats("the abandoned approve", |stats| stats.abandoned == 1).await;
    assert_eq!(stats.charges_by_order.get("order-1"), Some(&1));
    let (_, code, _) = error(approve(&pg, &tid, "order-1", &token).await).await;
    assert_eq!(code, -702, "a blind retry learns it was approved");
}

#[tokio::test]
async fn a_second_approve_while_the_first_is_processing_is_a_duplicate() {
    let pg = start(kakaopay()).await;
    pg.set_config(json!({"hold": true})).await;
    let (tid, token) = authenticated(&pg, "order-1", 1_000).await;
    let first = tokio::spawn(approve_request(&pg, &tid, &token));
    pg.wait_for_stats("the first approve in flight", |stats| stats.in_flight == 1).await;
    let (status_code, code, _) = error(approve(&pg, &tid, "order-1", &token).await).await;
    assert_eq!((status_code, code), (StatusCode::BAD_REQUEST, -785));
    assert_eq!(status(&pg, &tid).await, "AUTH_PASSWORD");
    pg.set_config(json!({"hold": false})).await;
    assert_eq!(first.await.unwrap().status(), StatusCode::OK);
    assert_eq!(pg.stats().await.processings, 1);
}

/// An approve that can run in a task of its own.
fn approve_request(pg: &Pg, tid: &str, token: &str) -> impl Future<Output = Response> + use<> {
    let request = pg
        .client
        .post(format!("{}/online/v1/payment/approve", pg.url))
        .header("Authorization", authorization())
        .json(&approve_body(tid, "order-1", token));
    async move { request.send().await.unwrap() }
}

#[tokio::test]
async fn a_500_after_charging_leaves_the_order_approved() {
    let pg = start(kakaopay()).await;
    pg.set_config(json!({"faults": {"error_500_after_charge": 1.0}})).await;
    let (tid, token) = authenticated(&pg, "order-1", 2_000).await;
    let (status_code, code, _) = error(approve(&pg, &tid, "order-1", &token).await).await;
    assert_eq!((status_code, code), (StatusCode::INTERNAL_SERVER_ERROR, -500));
    assert_eq!(status(&pg, &tid).await, "SUCCESS_PAYMENT", "only the order lookup tells the truth");
    let stats = pg.stats().await;
    assert_eq!(stats.charges_by_order.get("order-1"), Some(&1));
    assert_eq!(stats.faults_injected.error_500_after_charge, 1);
}

#[tokio::test]
async fn the_windows_fault_choices_strike_the_approve() {
    let pg = start(kakaopay()).await;
    let (tid, token) = authenticated_with(&pg, "order-1", 1_000, "reset_after_charge").await;
    let request = pg
        .client
        .post(format!("{}/online/v1/payment/approve", pg.url))
        .header("Authorization", authorization())
        .json(&approve_body(&tid, "order-1", &token))
        .send()
        .await;
    assert!(is_connection_reset(&request.unwrap_err()), "no answer at all");
    assert_eq!(status(&pg, &tid).await, "SUCCESS_PAYMENT");

    let (tid, token) = authenticated_with(&pg, "order-2", 1_000, "decline_reject_card").await;
    let (status_code, code, body) = error(approve(&pg, &tid, "order-2", &token).await).await;
    assert_eq!((status_code, code), (StatusCode::BAD_REQUEST, -780));
    assert!(body["extras"]["method_result_code"].is_string() && body["extras"]["method_result_message"].is_string());
    assert_eq!(status(&pg, &tid).await, "FAIL_PAYMENT");
    assert_eq!(error(approve(&pg, &tid, "order-2", &token).await).await.1, -783, "a declined payment stays failed");
}

#[tokio::test]
async fn cancels_in_part_then_in_full() {
    let pg = start(kakaopay()).await;
    let tid = charged(&pg, "order-1", 10_000).await;

    let mut partial = cancel_body(&tid, 3_000, Some(10_000));
    partial["payload"] = "one mug broke".into();
    let first = ok(call(&pg, "cancel", &partial).await).await;
    assert_eq!(first["status"], "PART_CANCEL_PAYMENT");
    assert_eq!(first["approved_cancel_amount"]["total"], 3_000);
    assert_eq!(first["canceled_amount"]["total"], 3_000);
    assert_eq!(first["cancel_available_amount"]["total"], 7_000);
    assert_eq!(first["amount"]["total"], 10_000);
    assert_eq!(first["payload"], "one mug broke");
    assert_eq!(status(&pg, &tid).await, "PART_CANCEL_PAYMENT");

    let rest = ok(call(&pg, "cancel", &cancel_body(&tid, 7_000, Some(7_000))).await).await;
    assert_eq!(rest["status"], "CANCEL_PAYMENT");
    assert_eq!(
        (rest["canceled_amount"]["total"].as_u64(), rest["cancel_available_amount"]["total"].as_u64()),
        (Some(10_000), Some(0))
    );
    let shown = order(&pg, &tid).await;
    assert_eq!(shown["status"], "CANCEL_PAYMENT");
    let actions: Vec<&str> = shown["payment_action_details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|action| action["payment_action_type"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["PAYMENT", "CANCEL", "CANCEL"]);
    assert_eq!(shown["payment_action_details"][1]["payload"], "one mug broke");
    assert!(shown["canceled_at"].is_string());

    let (status_code, code, _) = error(call(&pg, "cancel", &cancel_body(&tid, 1, None)).await).await;
    assert_eq!((status_code, code), (StatusCode::BAD_REQUEST, -784), "nothing left to cancel");
    let stats = pg.stats().await;
    assert_eq!(stats.refunds_by_order.get("order-1"), Some(&10_000));
    assert!(stats.over_refunds.is_empty());
}

#[tokio::test]
async fn a_cancel_with_a_stale_available_amount_or_over_the_rest_is_refused() {
    let pg = start(kakaopay()).await;
    let tid = charged(&pg, "order-1", 10_000).await;
    ok(call(&pg, "cancel", &cancel_body(&tid, 4_000, None)).await).await;

    // A retry of that cancel, written when 10,000 were left: refused, nothing refunded.
    let (status_code, code, body) = error(call(&pg, "cancel", &cancel_body(&tid, 4_000, Some(10_000))).await).await;
    assert_eq!((status_code, code), (StatusCode::BAD_REQUEST, -710));
    assert!(body["error_message"].as_str().unwrap().contains("cancel_available_amount"));
    let (_, code, _) = error(call(&pg, "cancel", &cancel_body(&tid, 6_001, None)).await).await;
    assert_eq!(code, -710, "more than is left");

    assert_eq!(order(&pg, &tid).await["cancel_available_amount"]["total"], 6_000);
    assert_eq!(pg.stats().await.refunds_by_order.get("order-1"), Some(&4_000));

    let (tid, _) = ready(&pg, "order-2", 1_000).await;
    assert_eq!(error(call(&pg, "cancel", &cancel_body(&tid, 1_000, None)).await).await.1, -784, "never approved");
}

#[tokio::test]
async fn a_declined_cancel_refunds_nothing() {
    let pg = start(kakaopay()).await;
    let tid = charged(&pg, "order-1", 10_000).await;
    pg.set_config(json!({"faults": {"decline": 1.0}})).await;
    let (status_code, code, body) = error(call(&pg, "cancel", &cancel_body(&tid, 10_000, None)).await).await;
    assert_eq!((status_code, code), (StatusCode::BAD_REQUEST, -781));
    assert!(body["extras"]["method_result_code"].is_string());
    assert_eq!(status(&pg, &tid).await, "SUCCESS_PAYMENT");
}

#[tokio::test]
async fn calls_without_the_secret_key_are_refused() {
    let pg = start(kakaopay()).await;
    let post = |authorization: Option<&str>| {
        let request = pg.client.post(format!("{}/online/v1/payment/ready", pg.url)).json(&ready_body("o", 1_000));
        match authorization {
            Some(value) => request.header("Authorization", value),
            None => request,
        }
    };
    let (status_code, code, _) = error(post(None).send().await.unwrap()).await;
    assert_eq!((status_code, code), (StatusCode::BAD_REQUEST, -400));
    for wrong in ["SECRET_KEY not-the-key", "KakaoAK whatever", &common::basic_auth(DEFAULT_SECRET_KEY)] {
        let (status_code, code, _) = error(post(Some(wrong)).send().await.unwrap()).await;
        assert_eq!((status_code, code), (StatusCode::UNAUTHORIZED, -401), "{wrong}");
    }
    let dev = post(Some(&format!("DEV_SECRET_KEY {DEFAULT_SECRET_KEY}"))).send().await.unwrap();
    assert_eq!(dev.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_validation_error_names_the_field() {
    let pg = start(kakaopay()).await;
    let mut body = ready_body("order-1", 1_000);
    body.as_object_mut().unwrap().remove("tax_free_amount");
    let (status_code, code, answer) = error(call(&pg, "ready", &body).await).await;
    assert_eq!((status_code, code), (StatusCode::BAD_REQUEST, -2));
    assert!(answer["error_message"].as_str().unwrap().contains("tax_free_amount"), "{answer}");
    assert!(answer.get("extras").is_none());

    let mut body = ready_body("order-1", 1_000);
    body["total_amount"] = "1000".into();
    let (_, code, answer) = error(call(&pg, "ready", &body).await).await;
    assert_eq!(code, -2);
    assert!(answer["error_message"].as_str().unwrap().contains("total_amount"), "{answer}");
}

#[tokio::test]
async fn faults_at_the_door_answer_in_kakaopays_codes() {
    let pg = start(kakaopay()).await;
    let (tid, token) = authenticated(&pg, "order-1", 1_000).await;
    pg.set_config(json!({"faults": {"rate_limit_429": 1.0}})).await;
    let (status_code, code, _) = error(approve(&pg, &tid, "order-1", &token).await).await;
    assert_eq!((status_code, code), (StatusCode::TOO_MANY_REQUESTS, -429));
    pg.set_config(json!({"faults": {"rate_limit_429": 0.0, "error_500": 1.0}})).await;
    let (status_code, code, _) = error(approve(&pg, &tid, "order-1", &token).await).await;
    assert_eq!((status_code, code), (StatusCode::INTERNAL_SERVER_ERROR, -500));
    pg.set_config(json!({"faults": {"error_500": 0.0}, "outage": true})).await;
    let (status_code, code, _) = error(approve(&pg, &tid, "order-1", &token).await).await;
    assert_eq!((status_code, code), (StatusCode::SERVICE_UNAVAILABLE, -503));
    pg.set_config(json!({"outage": false})).await;
    assert_eq!(status(&pg, &tid).await, "AUTH_PASSWORD", "nothing was processed");
    ok(approve(&pg, &tid, "order-1", &token).await).await;
}

#[tokio::test]
async fn each_face_serves_only_its_own_routes() {
    let kakao = start(kakaopay()).await;
    let confirm = kakao.confirm(None, &common::body("pk-1", "order-1", 1_000)).await;
    let (status_code, code, _) = error(confirm).await;
    assert_eq!((status_code, code), (StatusCode::NOT_FOUND, -404));
    for path in ["/v1/window", "/v2/standard", "/v1/payments/pk-1"] {
        assert_eq!(kakao.get(path).await.status(), StatusCode::NOT_FOUND, "{path}");
    }
    assert_eq!(kakao.client.get(format!("{}/__admin/health", kakao.url)).send().await.unwrap().status(), 200);

    let toss = start(fast_config()).await;
    let response = call(&toss, "ready", &ready_body("order-1", 1_000)).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "NOT_FOUND", "Toss's shape on Toss's face");
}

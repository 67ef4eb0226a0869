//! KakaoPay through the order server, against the fake PG speaking KakaoPay:
//! the payment prepared before the window, approved once with the window's
//! `pg_token`, and an approve whose answer was lost settled by looking the
//! payment up, never by approving again.

use crate::support;

use std::time::Duration;

use payonce_api::{CreatedOrder, OrderStatus, PgWindow, ShopConfig};
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::{FakePg, Server};

async fn kakaopay() -> FakePg {
    FakePg::start_with(|config| config.api = fake_pg::Api::KakaoPay).await
}

async fn shop(pg: &FakePg) -> Server {
    shop_with(pg, |_| {}).await
}

/// A shop that takes KakaoPay at `pg`, with `tweak` to its settings.
async fn shop_with(pg: &FakePg, tweak: impl FnOnce(&mut payonce_server::ServerConfig)) -> Server {
    let url = pg.url.clone();
    Server::start_with(&pg.url, move |config| {
        config.kakaopay_url = Some(url);
        tweak(config);
    })
    .await
}

async fn prepare(server: &Server, order_id: &str) -> reqwest::Response {
    server
        .http
        .post(format!("{}/api/orders/{order_id}/window", server.url))
        .json(&json!({"pg": "kakaopay"}))
        .send()
        .await
        .unwrap()
}

async fn window(server: &Server, created: &CreatedOrder) -> PgWindow {
    let response = prepare(server, &created.order.order_id).await;
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

/// Presses `choice` in the window at `url`, as the customer's phone would, and
/// returns where KakaoPay sends the browser.
async fn press(url: &str, choice: &str) -> String {
    let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let action = url.split('?').next().unwrap();
    let response = no_redirects.post(action).form(&[("choice", choice), ("mode", "mobile")]).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "{}", response.text().await.unwrap());
    response.headers()["location"].to_str().unwrap().to_owned()
}

/// The `pg_token` KakaoPay sent the customer back with, and the `ready` the
/// return names, as the confirm sends them (`token ready`).
fn returned(location: &str) -> String {
    let url = reqwest::Url::parse(location).unwrap();
    let field = |wanted: &str| url.query_pairs().find(|(name, _)| name == wanted).map(|(_, value)| value.into_owned());
    let token = field("pg_token").expect(location);
    let ready = field("ready").expect(location);
    format!("{token} {ready}")
}

/// The confirm the page sends for KakaoPay's return: its `pg_token` and the
/// `ready` it names, as `returned` reads them (`token ready`), or a token alone.
async fn confirm(server: &Server, created: &CreatedOrder, returned: &str) -> (StatusCode, Value) {
    let body = match returned.split_once(' ') {
        Some((pg_token, ready)) => json!({"pg_token": pg_token, "ready": ready, "amount": created.order.amount}),
        None => json!({"pg_token": returned, "amount": created.order.amount}),
    };
    let response = server
        .http
        .post(format!("{}/api/orders/{}/confirm", server.url, created.order.order_id))
        .header("Idempotency-Key", uuid::Uuid::new_v4().to_string())
        .json(&body)
        .send()
        .await
        .unwrap();
    (response.status(), response.json().await.unwrap())
}

/// An order with its KakaoPay payment authorised in the window: the order and the token.
async fn authorised(server: &Server, choice: &str) -> (CreatedOrder, String) {
    let created = server.create_order().await;
    let window = window(server, &created).await;
    let location = press(&window.mobile_url, choice).await;
    assert!(location.starts_with(&format!("{}/pay/success?", server.url)), "{location}");
    (created, returned(&location))
}

#[tokio::test]
async fn a_kakaopay_payment_is_prepared_approved_once_and_paid() {
    let pg = kakaopay().await;
    let server = shop(&pg).await;
    let created = server.create_order().await;
    let first = window(&server, &created).await;
    assert_eq!(window(&server, &created).await, first, "asked again, the same prepared payment");
    let location = press(&first.mobile_url, "approve").await;
    let back = reqwest::Url::parse(&location).unwrap();
    let order_id = &created.order.order_id;
    let amount = created.order.amount.to_string();
    let query: Vec<(String, String)> = back.query_pairs().into_owned().collect();
    for expected in [("pg", "kakaopay"), ("orderId", order_id.as_str()), ("amount", amount.as_str())] {
        assert!(query.iter().any(|(name, value)| (name.as_str(), value.as_str()) == expected), "{location}");
    }

    assert!(query.iter().any(|(name, value)| name == "ready" && !value.is_empty()), "the return names its ready");

    let (status, order) = confirm(&server, &created, &returned(&location)).await;
    assert_eq!((status, order["status"].as_str()), (StatusCode::OK, Some("PAID")), "{order}");
    assert_eq!(pg.charges(order_id).await, 1);
    assert_eq!(pg.stats().await.confirm_requests, 1, "one approve");
    let again = prepare(&server, order_id).await;
    assert_eq!(again.status(), StatusCode::CONFLICT, "a paid order is not prepared again");
}

#[tokio::test]
async fn a_customer_who_finishes_in_an_older_window_is_approved_with_that_windows_payment() {
    let pg = kakaopay().await;
    let server = shop(&pg).await;
    let created = server.create_order().await;
    let order_id = &created.order.order_id;
    let older = window(&server, &created).await;
    // Past half its life, the order's window is prepared again (another tab,
    // a reload); the older window is still open on the customer's phone.
    let pool = {
        sqlx::any::install_default_drivers();
        sqlx::AnyPool::connect(server.store.db.url()).await.unwrap()
    };
    let eight_minutes_ago = "UPDATE kakaopay_readies SET ready_at_ms = ready_at_ms - 480000 WHERE order_id = $1";
    sqlx::query(eight_minutes_ago).bind(order_id.as_str()).execute(&pool).await.unwrap();
    pool.close().await;
    let newer = window(&server, &created).await;
    assert_ne!(newer, older, "a window past half its life is prepared again");

    let location = press(&older.mobile_url, "approve").await;
    let (status, order) = confirm(&server, &created, &returned(&location)).await;
    assert_eq!((status, order["status"].as_str()), (StatusCode::OK, Some("PAID")), "{order}");
    assert_eq!(pg.charges(order_id).await, 1);
    assert_eq!(pg.stats().await.confirm_requests, 1, "one approve, of the older window's payment");
}

#[tokio::test]
async fn an_approve_slower_than_the_servers_wait_is_settled_by_lookups_never_a_second_approve() {
    let pg = kakaopay().await;
    // The approve takes longer than the server waits (2 s), and goes on after it.
    pg.configure(json!({"latency_ms": 3_000})).await;
    let server = shop(&pg).await;
    let (created, token) = authorised(&server, "approve").await;
    let (status, order) = confirm(&server, &created, &token).await;
    assert_eq!((status, order["status"].as_str()), (StatusCode::ACCEPTED, Some("UNKNOWN")), "{order}");
    let order_id = &created.order.order_id;
    server.wait_for(order_id, OrderStatus::Paid, Duration::from_secs(20)).await;
    assert_eq!(pg.charges(order_id).await, 1);
    let stats = pg.stats().await;
    assert_eq!(stats.confirm_requests, 1, "recovery looked the payment up and approved nothing");
    assert!(stats.lookups >= 1, "recovery looked: {stats:?}");
}

#[tokio::test]
async fn a_500_after_charging_is_settled_by_a_lookup() {
    let pg = kakaopay().await;
    let server = shop(&pg).await;
    let (created, token) = authorised(&server, "error_500_then_charge").await;
    let (status, order) = confirm(&server, &created, &token).await;
    assert_eq!((status, order["status"].as_str()), (StatusCode::ACCEPTED, Some("UNKNOWN")), "{order}");
    let order_id = &created.order.order_id;
    server.wait_for(order_id, OrderStatus::Paid, Duration::from_secs(20)).await;
    assert_eq!(pg.charges(order_id).await, 1);
    assert_eq!(pg.stats().await.confirm_requests, 1);
}

#[tokio::test]
async fn a_declined_card_fails_the_order_with_nothing_charged() {
    let pg = kakaopay().await;
    let server = shop(&pg).await;
    let (created, token) = authorised(&server, "decline_reject_card").await;
    let (status, order) = confirm(&server, &created, &token).await;
    assert_eq!((status, order["status"].as_str()), (StatusCode::OK, Some("FAILED")), "{order}");
    assert_eq!(order["failure"]["code"], "KAKAOPAY_DECLINED", "{order}");
    assert_eq!(pg.charges(&created.order.order_id).await, 0);
}

#[tokio::test]
async fn a_return_that_names_no_ready_approves_the_orders_latest() {
    // Returns from windows prepared before returns named their ready.
    let pg = kakaopay().await;
    let server = shop(&pg).await;
    let (created, returned) = authorised(&server, "approve").await;
    let (token, _ready) = returned.split_once(' ').unwrap();
    let (status, order) = confirm(&server, &created, token).await;
    assert_eq!((status, order["status"].as_str()), (StatusCode::OK, Some("PAID")), "{order}");
    assert_eq!(pg.charges(&created.order.order_id).await, 1);
}

#[tokio::test]
async fn a_token_the_window_never_gave_is_declined_and_charges_nothing() {
    let pg = kakaopay().await;
    let server = shop(&pg).await;
    let (created, _) = authorised(&server, "approve").await;
    let (status, order) = confirm(&server, &created, "not-the-windows-token").await;
    assert_eq!((status, order["status"].as_str()), (StatusCode::OK, Some("FAILED")), "{order}");
    assert_eq!(pg.charges(&created.order.order_id).await, 0);
}

#[tokio::test]
async fn a_confirm_with_nothing_prepared_or_both_keys_or_no_kakaopay_is_refused_and_stores_nothing() {
    let pg = kakaopay().await;
    let server = shop(&pg).await;
    let created = server.create_order().await;
    let (status, body) = confirm(&server, &created, "token").await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("PAYMENT_NOT_PREPARED")), "{body}");
    let both = server
        .http
        .post(format!("{}/api/orders/{}/confirm", server.url, created.order.order_id))
        .header("Idempotency-Key", uuid::Uuid::new_v4().to_string())
        .json(&json!({"payment_key": "pk", "pg_token": "token", "amount": created.order.amount}))
        .send()
        .await
        .unwrap();
    assert_eq!(both.status(), StatusCode::BAD_REQUEST);
    window(&server, &created).await;
    let (status, body) = confirm(&server, &created, "token not-a-ready-of-this-order").await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("PAYMENT_NOT_PREPARED")), "{body}");
    let ready_without_token = server
        .http
        .post(format!("{}/api/orders/{}/confirm", server.url, created.order.order_id))
        .header("Idempotency-Key", uuid::Uuid::new_v4().to_string())
        .json(&json!({"payment_key": "pk", "ready": "r", "amount": created.order.amount}))
        .send()
        .await
        .unwrap();
    assert_eq!(ready_without_token.status(), StatusCode::BAD_REQUEST);
    assert_eq!(server.order(&created.order.order_id).await.status, OrderStatus::Created, "nothing was stored");

    let toss_only = Server::start(&pg.url).await;
    let created = toss_only.create_order().await;
    let response = prepare(&toss_only, &created.order.order_id).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "PG_NOT_OFFERED", "{body}");
    let (status, body) = confirm(&toss_only, &created, "token").await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::BAD_REQUEST, Some("PG_NOT_OFFERED")), "{body}");
}

#[tokio::test]
async fn the_page_is_told_kakaopay_is_offered_and_the_windows_exits_lead_to_the_fail_page_with_codes() {
    let pg = kakaopay().await;
    let server = shop(&pg).await;
    let shop: ShopConfig =
        server.http.get(format!("{}/api/config", server.url)).send().await.unwrap().json().await.unwrap();
    assert!(shop.kakaopay, "the cart offers KakaoPay where the shop takes it");
    let toss_only = Server::start(&pg.url).await;
    let shop: ShopConfig =
        toss_only.http.get(format!("{}/api/config", toss_only.url)).send().await.unwrap().json().await.unwrap();
    assert!(!shop.kakaopay, "and only there");

    for (choice, code) in [("quit", "KAKAOPAY_QUIT"), ("wrong_password", "KAKAOPAY_FAILED")] {
        let created = server.create_order().await;
        let location = press(&window(&server, &created).await.mobile_url, choice).await;
        let url = reqwest::Url::parse(&location).unwrap();
        assert_eq!(url.path(), "/pay/fail", "{choice}: {location}");
        let query: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        for (name, value) in [("pg", "kakaopay"), ("orderId", created.order.order_id.as_str()), ("code", code)] {
            assert!(query.contains(&(name.to_owned(), value.to_owned())), "{choice}: {location}");
        }
    }
}

#[tokio::test]
async fn a_window_is_prepared_only_at_a_pg_that_asks_for_one_and_a_pg_nobody_knows_is_refused() {
    let pg = kakaopay().await;
    let server = shop(&pg).await;
    let created = server.create_order().await;
    let url = format!("{}/api/orders/{}/window", server.url, created.order.order_id);
    for (body, says) in [
        (json!({"pg": "toss"}), "the page opens the window for cards by itself"),
        (json!({"pg": "paypal"}), "pg"),
        (json!({}), "pg"),
    ] {
        let response = server.http.post(&url).json(&body).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        let answer: Value = response.json().await.unwrap();
        assert_eq!(answer["code"], "INVALID_REQUEST", "{body}: {answer}");
        assert!(answer["message"].as_str().unwrap().contains(says), "{body}: {answer}");
    }
    assert_eq!(server.order(&created.order.order_id).await.status, OrderStatus::Created);
    // The order's own PG's window still opens.
    assert!(window(&server, &created).await.mobile_url.starts_with(&pg.url));
}

#[tokio::test]
async fn kakaopay_out_of_reach_prepares_nothing_and_says_so() {
    let pg = FakePg::start().await;
    let closed = FakePg::closed_port_url().await;
    let server = Server::start_with(&pg.url, move |config| config.kakaopay_url = Some(closed)).await;
    let created = server.create_order().await;
    let response = prepare(&server, &created.order.order_id).await;
    assert_eq!(response.status(), StatusCode::BAD_GATEWAY);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "PG_UNREACHABLE", "{body}");
    assert_eq!(server.order(&created.order.order_id).await.status, OrderStatus::Created);
}

const TOKEN: &str = "test-admin-token-of-32-characters-or-more";

/// A KakaoPay order paid in full, on a shop with an operator.
async fn paid(pg: &FakePg) -> (Server, CreatedOrder) {
    paid_as(pg, "approve").await
}

/// A KakaoPay order paid in full in the window's `choice`, on a shop with an operator.
async fn paid_as(pg: &FakePg, choice: &str) -> (Server, CreatedOrder) {
    let url = pg.url.clone();
    let server = Server::start_with(&pg.url, move |config| {
        config.kakaopay_url = Some(url);
        config.admin_token = Some(TOKEN.into());
    })
    .await;
    let (created, token) = authorised(&server, choice).await;
    let (status, order) = confirm(&server, &created, &token).await;
    assert_eq!((status, order["status"].as_str()), (StatusCode::OK, Some("PAID")), "{order}");
    (server, created)
}

async fn refunded_by_kakaopay(pg: &FakePg, order_id: &str) -> u64 {
    let stats = pg.stats().await;
    assert!(stats.over_refunds.is_empty(), "over-refunds: {:?}", stats.over_refunds);
    stats.refunds_by_order.get(order_id).copied().unwrap_or(0)
}

#[tokio::test]
async fn a_customer_cancels_a_kakaopay_order_and_kakaopay_refunds_it() {
    let pg = kakaopay().await;
    let (server, created) = paid(&pg).await;
    let order_id = &created.order.order_id;
    let (status, body) = server.cancel(order_id, "cancel-1").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("CANCELED")), "{body}");
    assert_eq!(body["refunded_amount"], created.order.amount);
    assert_eq!(refunded_by_kakaopay(&pg, order_id).await, created.order.amount);
    assert_eq!(pg.stats().await.cancel_requests, 1);
}

#[tokio::test]
async fn an_operator_refunds_a_kakaopay_order_in_part_then_the_rest() {
    let pg = kakaopay().await;
    let (server, created) = paid(&pg).await;
    let order_id = &created.order.order_id;
    let (status, body) =
        server.operator_cancel(order_id, Some(TOKEN), json!({"amount": 3_000, "reason": "one mug broke"})).await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("PARTIALLY_REFUNDED")), "{body}");
    let (status, body) = server.operator_cancel(order_id, Some(TOKEN), json!({"reason": "the rest came back"})).await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("CANCELED")), "{body}");
    assert_eq!(refunded_by_kakaopay(&pg, order_id).await, created.order.amount);
    assert_eq!(pg.stats().await.cancels_processed, 2);
}

#[tokio::test]
async fn a_cancel_whose_answer_is_lost_is_settled_by_a_lookup_and_refunds_once() {
    let pg = kakaopay().await;
    let (server, created) = paid(&pg).await;
    // The cancel takes longer than the server waits (2 s), and goes on after it.
    pg.configure(json!({"latency_ms": 3_000})).await;
    let order_id = &created.order.order_id;
    let (status, body) = server.cancel(order_id, "cancel-1").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::ACCEPTED, Some("CANCEL_REQUESTED")), "{body}");
    server.wait_for(order_id, OrderStatus::Canceled, Duration::from_secs(30)).await;
    assert_eq!(refunded_by_kakaopay(&pg, order_id).await, created.order.amount, "refunded once");
}

#[tokio::test]
async fn a_partial_refund_kakaopay_refuses_on_its_first_send_ends_refused_at_once() {
    let pg = kakaopay().await;
    let (server, created) = paid_as(&pg, "approve_no_partial_refund").await;
    let order_id = &created.order.order_id;
    let (status, body) =
        server.operator_cancel(order_id, Some(TOKEN), json!({"amount": 3_000, "reason": "one mug broke"})).await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("PAID")), "{body}");
    assert_eq!(body["refund_refusal"]["code"], "KAKAOPAY_784", "{body}");
    assert_eq!(refunded_by_kakaopay(&pg, order_id).await, 0);
}

#[tokio::test]
async fn a_refund_refused_on_a_send_after_the_first_ends_refused_instead_of_going_out_for_ever() {
    let pg = kakaopay().await;
    let (server, created) = paid_as(&pg, "approve_no_partial_refund").await;
    let order_id = &created.order.order_id;
    // The first cancel meets KakaoPay's maintenance (-503): nothing is
    // processed, and recovery sends it again once a lookup shows the balance
    // untouched. That send is refused for good.
    pg.configure(json!({"outage": true})).await;
    let (status, body) =
        server.operator_cancel(order_id, Some(TOKEN), json!({"amount": 3_000, "reason": "one mug broke"})).await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::ACCEPTED, Some("CANCEL_REQUESTED")), "{body}");
    pg.configure(json!({"outage": false})).await;

    let order = server.wait_for(order_id, OrderStatus::Paid, Duration::from_secs(30)).await;
    assert_eq!(order.refund_refusal.map(|refusal| refusal.code), Some("KAKAOPAY_784".to_owned()));
    let refund = &server.db().await.refunds(order_id).await.unwrap()[0];
    assert_eq!((refund.status.as_str(), refund.failure_code.as_deref()), ("FAILED", Some("KAKAOPAY_784")));
    let stats = pg.stats().await;
    assert_eq!(stats.cancel_requests, 1, "after the outage, one cancel went out, refused: {stats:?}");
    assert!(stats.outage_refusals >= 1, "the first met the outage: {stats:?}");
    assert_eq!(refunded_by_kakaopay(&pg, order_id).await, 0);
}

#[tokio::test]
async fn operators_see_which_pg_each_order_went_to() {
    let pg = kakaopay().await;
    let (server, created) = paid(&pg).await;
    let admin =
        |path: String| reqwest::Client::new().get(format!("{}{path}", server.admin_url)).bearer_auth(TOKEN).send();
    let list: Value = admin("/admin/orders".to_owned()).await.unwrap().json().await.unwrap();
    let row = list["orders"].as_array().unwrap().iter().find(|row| row["order_id"] == created.order.order_id.as_str());
    assert_eq!(row.map(|row| row["pg"].clone()), Some(json!("kakaopay")), "{list}");
    let story: Value = admin(format!("/admin/orders/{}", created.order.order_id)).await.unwrap().json().await.unwrap();
    assert_eq!(story["attempt"]["pg"], "kakaopay", "{story}");
    let calls: Vec<&str> =
        story["pg_calls"].as_array().unwrap().iter().filter_map(|call| call["kind"].as_str()).collect();
    assert_eq!(calls, ["confirm"], "the one approve, recorded as the order's confirm: {story}");
    let unpaid = server.create_order().await;
    let list: Value = admin("/admin/orders".to_owned()).await.unwrap().json().await.unwrap();
    let row = list["orders"].as_array().unwrap().iter().find(|row| row["order_id"] == unpaid.order.order_id.as_str());
    assert_eq!(row.map(|row| row["pg"].clone()), Some(Value::Null), "no PG before a confirm: {list}");
}

#[tokio::test]
async fn an_approve_that_never_landed_is_never_sent_again_and_fails_as_not_approved_once_kakaopays_time_is_over() {
    // KakaoPay's fifteen minutes, scaled to 4.5 s; the approve fails inside
    // KakaoPay with a 500 and processes nothing.
    let pg = FakePg::start_with(|config| {
        config.api = fake_pg::Api::KakaoPay;
        config.time_scale = 0.005;
    })
    .await;
    let server = shop_with(&pg, |config| config.kakaopay_session_lifetime = Duration::from_millis(4_500)).await;
    let (created, token) = authorised(&server, "approve").await;
    pg.configure(json!({"faults": {"error_500": 1.0}})).await;
    let (status, order) = confirm(&server, &created, &token).await;
    assert_eq!((status, order["status"].as_str()), (StatusCode::ACCEPTED, Some("UNKNOWN")), "{order}");
    let order_id = &created.order.order_id;
    let failed = server.wait_for(order_id, OrderStatus::Failed, Duration::from_secs(30)).await;
    let failure = failed.failure.expect("told why");
    // The customer finished in time: not "expired", but not approved.
    assert_eq!(failure.code, "KAKAOPAY_NOT_APPROVED", "{failure:?}");
    assert!(failure.message.contains("Nothing was charged"), "{failure:?}");
    assert_eq!(pg.charges(order_id).await, 0);
    let stats = pg.stats().await;
    assert_eq!(stats.confirm_requests, 1, "the approve was sent once, and only looked up after");
    assert!(stats.lookups >= 2, "{stats:?}");
}

#[tokio::test]
async fn an_approve_whose_store_waited_past_the_confirms_lease_is_never_sent() {
    // The confirm's lease: 0.5 + 1 s for the call and 1 s to store its
    // answer. The database stalls writers for 3.5 s, so the attempt is stored
    // after its lease: recovery may have counted on the one approve having
    // left by then (as after a server frozen there), and KakaoPay has no key
    // to tell a late approve from a second one. It is never sent.
    let pg = kakaopay().await;
    let server = shop_with(&pg, |config| config.pg_read_timeout = Duration::from_secs(1)).await;
    let (created, token) = authorised(&server, "approve").await;

    let stall = support::WriteStall::begin(&server.store).await;
    // The stall itself: how long the database keeps the store waiting.
    let stalling = async {
        tokio::time::sleep(Duration::from_millis(3_500)).await;
        stall.end().await;
    };
    let ((_, answer), ()) = tokio::join!(confirm(&server, &created, &token), stalling);
    assert_ne!(answer["status"], "PAID", "{answer}");
    let order_id = &created.order.order_id;
    assert_ne!(server.order(order_id).await.status, OrderStatus::Paid);
    assert_eq!(pg.stats().await.confirm_requests, 0, "KakaoPay never received the approve");
    assert_eq!(pg.charges(order_id).await, 0);
}

//! Reconciliation and the operators' console API against the fake PG over
//! HTTP: charges no order made (injected with the PG's direct charges) are
//! refunded once however often a pass runs; an order the PG never charged is
//! flagged and left alone; a clean shop has nothing to report; payments still
//! being settled are left to recovery. The operators' endpoints need the token,
//! list unsettled orders first, tell an order's story, ask the PG on demand,
//! and write every action to the audit log.

use crate::support;

use std::time::Duration;

use payonce_api::OrderStatus;
use payonce_server::ServerConfig;
use payonce_server::app::App;
use payonce_server::payment::reconcile::{PassMode, StartedBy, run_pass};
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::{FakePg, Server, Store, assert_charges_agree};

const TOKEN: &str = "test-admin-token-of-32-characters-or-more";

async fn server_with_token(pg: &FakePg) -> Server {
    Server::start_with(&pg.url, |config| config.admin_token = Some(TOKEN.into())).await
}

/// Charges at the PG directly, with no order of the shop behind it.
async fn charge_directly(pg: &FakePg, order_id: &str, amount: u64, payment_key: &str) {
    let response = reqwest::Client::new()
        .post(format!("{}/__admin/charges", pg.url))
        .json(&json!({"orderId": order_id, "amount": amount, "paymentKey": payment_key}))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.text().await.unwrap());
}

/// A request to the operators' API with `token` if given, claiming to be
/// "jiwoo" in `X-Operator`, which the audit log does not believe. A pass
/// takes well under a second here: one still listing after 20 s never ends.
async fn admin(server: &Server, method: reqwest::Method, path: &str, token: Option<&str>) -> (StatusCode, Value) {
    let mut request = reqwest::Client::new()
        .request(method, format!("{}{path}", server.admin_url))
        .header("X-Operator", "jiwoo")
        .timeout(Duration::from_secs(20));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A server's own `App` on a fresh database, without its timers or listeners:
/// the test runs its passes itself. The store holds the database's folder.
async fn app_without_timers(pg: &FakePg, tweak: impl FnOnce(&mut ServerConfig)) -> (App, Store) {
    let store = Store::fresh().await;
    let mut config = support::test_config(&pg.url, &store);
    tweak(&mut config);
    let db = payonce_server::db::Db::open(&store.db, 2).await.unwrap();
    (App::new(config, db), store)
}

async fn reconcile(server: &Server) -> Value {
    let (status, report) = admin(server, reqwest::Method::POST, "/admin/reconcile", Some(TOKEN)).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    report
}

fn kinds(report: &Value) -> Vec<(String, String)> {
    report["mismatches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|found| (found["kind"].as_str().unwrap().to_owned(), found["order_id"].as_str().unwrap().to_owned()))
        .collect()
}

fn refunded(stats: &fake_pg::Stats, order_id: &str) -> u64 {
    stats.refunds_by_order.get(order_id).copied().unwrap_or(0)
}

#[tokio::test]
async fn a_charge_without_an_order_is_refunded_once_however_often_reconciliation_runs() {
    let pg = FakePg::start().await;
    let server = server_with_token(&pg).await;
    let order = server.paid_order().await;
    charge_directly(&pg, "ord_orphan", 12_900, "pk_orphan").await;

    let report = reconcile(&server).await;
    assert_eq!(kinds(&report), [("charge_without_order".to_owned(), "ord_orphan".to_owned())], "{report}");
    assert_eq!(report["mismatches"][0]["action"], "refunded", "{report}");
    assert_eq!(report["mismatches"][0]["pg_amount"], 12_900);
    assert_eq!((report["approvals"].as_u64(), report["matched"].as_u64()), (Some(2), Some(1)), "{report}");
    let stats = pg.stats().await;
    assert_eq!((refunded(&stats, "ord_orphan"), stats.cancel_requests), (12_900, 1));
    assert!(stats.over_refunds.is_empty());
    assert!(server.metrics().await.contains("payment_reconcile_mismatch_total{kind=\"charge_without_order\"}"));
    assert!(server.metrics().await.contains("payment_reconcile_last_run_timestamp_seconds"));

    // The PG now lists the refund: nothing left to do, nothing sent again.
    let again = reconcile(&server).await;
    assert!(kinds(&again).is_empty(), "{again}");
    assert_eq!(again["refunded_orphans"], json!(["pk_orphan"]));
    let stats = pg.stats().await;
    assert_eq!((refunded(&stats, "ord_orphan"), stats.cancel_requests), (12_900, 1));

    let db = server.db().await;
    let stored = db.orphan_refund("pk_orphan").await.unwrap().unwrap();
    assert_eq!((stored.status.as_str(), stored.calls), ("DONE", 1));
    let (status, last) = admin(&server, reqwest::Method::GET, "/admin/reconcile", Some(TOKEN)).await;
    assert_eq!((status, &last), (StatusCode::OK, &again));
    let audit = db.audit_log_without_order().await.unwrap();
    assert_eq!(
        audit.iter().map(|line| (line.operator.as_str(), line.action.as_str())).collect::<Vec<_>>(),
        [("operator", "reconcile"), ("operator", "reconcile")],
        "the token's operator, whatever X-Operator said"
    );
    assert_eq!(server.order(&order.order_id).await.status, OrderStatus::Paid);
    assert_charges_agree(&pg, &server, &[&order.order_id]).await;
}

#[tokio::test]
async fn an_orphan_charges_refund_left_unanswered_goes_out_once_without_another_pass() {
    let pg = FakePg::start().await;
    // No scheduled pass: the one an operator starts is the last to list the charge.
    let server = server_with_token(&pg).await;
    charge_directly(&pg, "ord_unanswered", 12_900, "pk_unanswered").await;
    // The refund's send is cut off before the PG processes it: nothing refunded, outcome unknown.
    pg.configure(json!({"faults": {"reset_before_processing": 1.0}})).await;

    let report = reconcile(&server).await;
    assert_eq!(kinds(&report), [("charge_without_order".to_owned(), "ord_unanswered".to_owned())], "{report}");
    let action = report["mismatches"][0]["action"].as_str().unwrap();
    assert!(action.contains("outcome unknown"), "{report}");
    assert_eq!(refunded(&pg.stats().await, "ord_unanswered"), 0);

    // The PG answers again: the job engine looks the charge up and sends the
    // refund again, with its key, without waiting for a pass that lists it.
    pg.configure(json!({"faults": {"reset_before_processing": 0.0}})).await;
    let db = server.db().await;
    let stored = support::eventually("the refund goes out", Duration::from_secs(20), || async {
        db.orphan_refund("pk_unanswered").await.unwrap().filter(|refund| refund.status == "DONE")
    })
    .await;
    assert_eq!(stored.calls, 2, "sent by the pass, then once more by the engine");
    let stats = pg.stats().await;
    assert_eq!((refunded(&stats, "ord_unanswered"), stats.cancels_processed), (12_900, 1), "refunded once");
    assert!(stats.over_refunds.is_empty());
    let payment = pg.payment("pk_unanswered").await.unwrap();
    assert_eq!(serde_json::to_value(payment.status).unwrap(), "CANCELED");
    // Operators count the refund done once, when it was.
    assert_eq!(server.metric(r#"payment_refunds_total{status="DONE"}"#).await.as_deref(), Some("1"));
}

#[tokio::test]
async fn a_second_charge_of_a_paid_order_is_refunded_and_the_order_left_as_it_was() {
    let pg = FakePg::start().await;
    let server = server_with_token(&pg).await;
    let order = server.paid_order().await;
    charge_directly(&pg, &order.order_id, 5_000, "pk_second").await;

    let report = reconcile(&server).await;
    assert_eq!(kinds(&report), [("charge_without_order".to_owned(), order.order_id.clone())], "{report}");
    assert_eq!(report["mismatches"][0]["payment_key"], "pk_second");
    assert_eq!(report["mismatches"][0]["shop_status"], "PAID");

    assert_eq!(refunded(&pg.stats().await, &order.order_id), 5_000, "the second charge only");
    assert_eq!(serde_json::to_value(pg.payment("pk_second").await.unwrap().status).unwrap(), "CANCELED");
    let order_now = server.order(&order.order_id).await;
    assert_eq!((order_now.status, order_now.refunded_amount), (OrderStatus::Paid, 0));
    assert_eq!(server.history(&order.order_id).await, ["CREATED>PENDING", "PENDING>PAID"]);
}

#[tokio::test]
async fn an_order_paid_without_a_charge_at_the_pg_is_flagged_and_nothing_changes() {
    let pg = FakePg::start().await;
    let server = server_with_token(&pg).await;
    let order = server.paid_order().await;
    // The PG forgets every payment and transaction: the order's charge is gone from its ledger.
    let reset = reqwest::Client::new().post(format!("{}/__admin/reset", pg.url)).send().await.unwrap();
    assert!(reset.status().is_success());

    let report = reconcile(&server).await;
    assert_eq!(kinds(&report), [("paid_without_charge".to_owned(), order.order_id.clone())], "{report}");
    assert_eq!(report["mismatches"][0]["action"], "flagged");
    assert_eq!(report["mismatches"][0]["shop_amount"], order.amount);

    let stats = pg.stats().await;
    assert_eq!((stats.cancel_requests, stats.lookups), (0, 0), "nothing was sent for it");
    let order_now = server.order(&order.order_id).await;
    assert_eq!((order_now.status, order_now.refunded_amount), (OrderStatus::Paid, 0));
    assert_eq!(server.history(&order.order_id).await, ["CREATED>PENDING", "PENDING>PAID"]);
    assert!(server.db().await.refunds(&order.order_id).await.unwrap().is_empty());
    assert!(server.metrics().await.contains("payment_reconcile_mismatch_total{kind=\"paid_without_charge\"}"));
}

#[tokio::test]
async fn a_clean_shop_with_a_refund_has_nothing_to_report() {
    let pg = FakePg::start().await;
    let server = server_with_token(&pg).await;
    let kept = server.paid_order().await;
    let cancelled = server.paid_order().await;
    let (status, body) = server.cancel(&cancelled.order_id, "cancel-clean").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("CANCELED")), "{body}");

    let report = reconcile(&server).await;
    assert!(kinds(&report).is_empty(), "{report}");
    assert_eq!((report["approvals"].as_u64(), report["cancels"].as_u64()), (Some(2), Some(1)), "{report}");
    assert_eq!(report["matched"], 2);
    assert_eq!(pg.stats().await.cancel_requests, 1, "only the customer's");
    // The pass read the PG's last day and an hour, up to the second after it started.
    let at = |field: &str| humantime::parse_rfc3339(report[field].as_str().unwrap()).unwrap();
    assert_eq!(at("window_end").duration_since(at("window_start")).unwrap(), Duration::from_secs(25 * 3_600 + 1));
    assert_eq!(at("window_end").duration_since(at("started_at")).unwrap(), Duration::from_secs(1));
    assert_charges_agree(&pg, &server, &[&kept.order_id, &cancelled.order_id]).await;
}

#[tokio::test]
async fn the_operators_api_needs_the_token_and_is_off_without_one() {
    let pg = FakePg::start().await;
    let server = server_with_token(&pg).await;
    let order = server.paid_order().await;
    let paths = [
        (reqwest::Method::GET, "/admin/orders".to_owned()),
        (reqwest::Method::GET, format!("/admin/orders/{}", order.order_id)),
        (reqwest::Method::POST, format!("/admin/orders/{}/recover", order.order_id)),
        (reqwest::Method::POST, "/admin/reconcile".to_owned()),
        (reqwest::Method::GET, "/admin/reconcile".to_owned()),
    ];
    for (method, path) in &paths {
        for token in [None, Some("wrong")] {
            let (status, body) = admin(&server, method.clone(), path, token).await;
            assert_eq!((status, body["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("UNAUTHORIZED")), "{path}");
        }
    }
    let off = Server::start(&pg.url).await;
    for (method, path) in &paths {
        let (status, body) = admin(&off, method.clone(), path, Some(TOKEN)).await;
        assert_eq!((status, body["code"].as_str()), (StatusCode::SERVICE_UNAVAILABLE, Some("OPERATOR_API_OFF")));
    }
    let stats = pg.stats().await;
    assert_eq!((stats.cancel_requests, stats.lookups), (0, 0));
    assert!(server.db().await.last_reconcile_run().await.unwrap().is_none(), "no pass ran");
}

#[tokio::test]
async fn operators_see_unsettled_orders_first_with_their_story_and_can_ask_the_pg_now() {
    let pg = FakePg::start().await;
    // Recovery would first look at an unknown outcome 5 minutes on: only the operator's ask settles it here.
    let server = Server::start_with(&pg.url, |config| {
        config.admin_token = Some(TOKEN.into());
        config.recovery_interval = Duration::from_secs(3_600);
    })
    .await;
    let paid = server.paid_order().await;
    let refunding = server.paid_order().await;
    pg.configure(json!({"faults": {"error_500_after_charge": 1.0}})).await;
    let unknown = server.create_order().await.order;
    let (_, body) = server.confirm(&unknown, "key-unknown").await;
    assert_eq!(body["status"], "UNKNOWN", "{body}");
    let (_, body) = server.cancel(&refunding.order_id, "cancel-lost").await;
    assert_eq!(body["status"], "CANCEL_REQUESTED", "{body}");
    pg.configure(json!({"faults": {"error_500_after_charge": 0.0}})).await;
    let created = server.create_order().await.order;

    let (status, list) = admin(&server, reqwest::Method::GET, "/admin/orders", Some(TOKEN)).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let listed: Vec<(&str, &str)> = list["orders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| (row["order_id"].as_str().unwrap(), row["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        listed[..2],
        [(unknown.order_id.as_str(), "UNKNOWN"), (refunding.order_id.as_str(), "CANCEL_REQUESTED")]
    );
    assert_eq!(listed.len(), 4);
    assert!(
        listed.contains(&(paid.order_id.as_str(), "PAID")) && listed.contains(&(created.order_id.as_str(), "CREATED"))
    );
    assert!(list["orders"][0]["unknown_reason"].as_str().unwrap().contains("500"), "{list}");
    assert!(list["orders"][0]["waiting_s"].is_i64());

    let (_, only) = admin(&server, reqwest::Method::GET, "/admin/orders?status=cancel_requested", Some(TOKEN)).await;
    assert_eq!(only["orders"].as_array().unwrap().len(), 1, "{only}");
    let (_, none) = admin(&server, reqwest::Method::GET, "/admin/orders?older_than=1h", Some(TOKEN)).await;
    assert!(none["orders"].as_array().unwrap().is_empty(), "{none}");
    for bad in ["?status=LOST", "?older_than=soon", "?colour=red"] {
        let (status, body) = admin(&server, reqwest::Method::GET, &format!("/admin/orders{bad}"), Some(TOKEN)).await;
        assert_eq!((status, body["code"].as_str()), (StatusCode::BAD_REQUEST, Some("INVALID_REQUEST")), "{bad}");
    }

    // Reconciliation leaves both to recovery: no mismatch, nothing sent.
    let cancels_before = pg.stats().await.cancel_requests;
    let report = reconcile(&server).await;
    assert!(kinds(&report).is_empty(), "{report}");
    let skipped: Vec<&str> =
        report["skipped_unsettled"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(skipped.contains(&unknown.order_id.as_str()) && skipped.contains(&refunding.order_id.as_str()), "{report}");
    assert_eq!(pg.stats().await.cancel_requests, cancels_before);

    let path = format!("/admin/orders/{}/recover", unknown.order_id);
    let (status, body) = admin(&server, reqwest::Method::POST, &path, Some(TOKEN)).await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("PAID")), "{body}");
    let path = format!("/admin/orders/{}/recover", paid.order_id);
    let (status, body) = admin(&server, reqwest::Method::POST, &path, Some(TOKEN)).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("NOT_UNSETTLED")), "{body}");
    let (status, body) = admin(&server, reqwest::Method::POST, "/admin/orders/ord_nope/recover", Some(TOKEN)).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::NOT_FOUND, Some("ORDER_NOT_FOUND")), "{body}");

    let (status, story) =
        admin(&server, reqwest::Method::GET, &format!("/admin/orders/{}", unknown.order_id), Some(TOKEN)).await;
    assert_eq!(status, StatusCode::OK, "{story}");
    let history: Vec<String> = story["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|event| format!("{}>{}", event["from"].as_str().unwrap(), event["to"].as_str().unwrap()))
        .collect();
    assert_eq!(history, ["CREATED>PENDING", "PENDING>UNKNOWN", "UNKNOWN>PAID"]);
    assert_eq!(story["order"]["status"], "PAID");
    assert_eq!(story["attempt"]["idempotency_key"], "key-unknown");
    assert_eq!(story["audit"][0]["action"], "recover", "{story}");
    assert_eq!(story["audit"][0]["operator"], "operator", "the token's operator, not X-Operator");

    let (_, story) =
        admin(&server, reqwest::Method::GET, &format!("/admin/orders/{}", refunding.order_id), Some(TOKEN)).await;
    assert_eq!(story["refunds"][0]["status"], "REQUESTED", "{story}");

    let db = server.db().await;
    assert_eq!(db.audit_log(&unknown.order_id).await.unwrap().len(), 1);
    assert!(db.audit_log(&paid.order_id).await.unwrap().is_empty(), "a refused ask changed nothing");
}

#[tokio::test]
async fn one_pass_runs_at_a_time_across_servers_and_a_schedule_waits_its_interval() {
    let store = Store::fresh().await;
    let db = payonce_server::db::Db::open(&store.db, 2).await.unwrap();
    let job = payonce_server::db::RECONCILE_JOB;
    let now = payonce_server::db::now_ms();

    assert!(db.claim_pass_lease(job, "server-a", now, now + 60_000, None).await.unwrap());
    assert!(!db.claim_pass_lease(job, "server-b", now, now + 60_000, None).await.unwrap(), "a pass is running");
    assert!(!db.renew_pass_lease(job, "server-b", now + 60_000).await.unwrap());
    assert!(db.renew_pass_lease(job, "server-a", now + 60_000).await.unwrap());
    db.release_pass_lease(job, "server-a").await.unwrap();
    // Released: a scheduled pass waits out the interval since the last began; an operator's does not.
    assert!(!db.claim_pass_lease(job, "server-b", now + 1_000, now + 61_000, Some(now - 540_000)).await.unwrap());
    assert!(db.claim_pass_lease(job, "server-b", now + 1_000, now + 61_000, None).await.unwrap());
    // A lapsed lease (its holder died) is taken over.
    assert!(db.claim_pass_lease(job, "server-c", now + 62_000, now + 122_000, Some(now + 61_000)).await.unwrap());
    assert!(!db.renew_pass_lease(job, "server-b", now + 200_000).await.unwrap(), "the old holder lost it");
}

#[tokio::test]
async fn a_scheduled_pass_waits_its_interval_since_the_last_one_began_and_an_operators_pass_does_not() {
    let pg = FakePg::start().await;
    let (app, _store) = app_without_timers(&pg, |config| config.reconcile_interval = Duration::from_secs(3_600)).await;
    // Who started each pass that ran (as `admin` does, a pass still running after 20 s never ends).
    let pass = async |started_by| {
        let ran = tokio::time::timeout(Duration::from_secs(20), run_pass(&app, started_by, PassMode::Act)).await;
        ran.expect("the pass ended").unwrap().map(|report| report.started_by)
    };

    assert_eq!(pass(StartedBy::Schedule).await.as_deref(), Some("schedule"), "the first pass runs");
    assert_eq!(pass(StartedBy::Schedule).await, None, "the next is due an hour after this one began");
    assert_eq!(pass(StartedBy::Operator).await.as_deref(), Some("operator"), "an operator's runs at once");
}

#[tokio::test]
async fn a_pass_holds_its_lease_while_it_lists_and_once_it_lost_it_refunds_nothing() {
    use payonce_server::error::AppError;
    let pg = FakePg::start().await;
    charge_directly(&pg, "ord_orphan_taken_over", 5_000, "pk_orphan_taken_over").await;
    // The pass's one page of the ledger takes 5 s to read: longer than the
    // test's own steps take on a busy machine.
    pg.configure(json!({"lookup_latency_ms": 5_000})).await;
    let (app, _store) = app_without_timers(&pg, |config| config.pg_read_timeout = Duration::from_secs(15)).await;
    let db = app.db.clone();
    let job = payonce_server::db::RECONCILE_JOB;

    let pass = tokio::spawn({
        let app = app.clone();
        async move { run_pass(&app, StartedBy::Operator, PassMode::Act).await }
    });
    let now = payonce_server::db::now_ms;
    support::eventually("the pass takes the lease", Duration::from_secs(10), || async {
        let (holder, _) = db.pass_lease(job).await.unwrap();
        (holder.as_deref() == Some(&*app.worker_id)).then_some(())
    })
    .await;
    assert!(!pass.is_finished(), "the pass is still listing");
    assert!(!db.claim_pass_lease(job, "server-b", now(), now() + 60_000, None).await.unwrap(), "held while it lists");
    // Ten hours on, as if the pass's server had been frozen: its lease lapsed and another took it.
    let later = now() + 36_000_000;
    assert!(db.claim_pass_lease(job, "server-b", later, later + 60_000, None).await.unwrap());

    let ended = tokio::time::timeout(Duration::from_secs(20), pass).await.expect("the pass ended").unwrap();
    assert!(matches!(ended, Err(AppError::ReconcileRunning)), "{ended:?}");
    assert_eq!(pg.stats().await.cancel_requests, 0, "the orphan charge is left to the lease's new holder");
}

#[tokio::test]
async fn the_console_page_is_served_on_the_admin_listener_only_and_holds_no_token() {
    let pg = FakePg::start().await;
    let server = server_with_token(&pg).await;
    let http = reqwest::Client::new();

    let page = http.get(format!("{}/admin/", server.admin_url)).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let policy = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(policy.contains("script-src 'self'") && !policy.contains("unsafe-eval"), "{policy}");
    let html = page.text().await.unwrap();
    assert!(html.contains("<script src=\"/admin/console.js\"></script>"), "{html}");
    assert!(!html.contains(TOKEN));

    let script = http.get(format!("{}/admin/console.js", server.admin_url)).send().await.unwrap();
    assert_eq!(script.status(), StatusCode::OK);
    assert!(script.headers()["content-type"].to_str().unwrap().starts_with("text/javascript"));
    let script = script.text().await.unwrap();
    assert!(script.contains("sessionStorage") && script.contains("\"Bearer \""));
    assert!(!script.contains("innerHTML"), "data is shown as text only");

    let public = http.get(format!("{}/admin/", server.url)).send().await.unwrap();
    assert_ne!(public.status(), StatusCode::OK, "customers' listener has no console");
}

#[tokio::test]
async fn the_scheduled_pass_refunds_an_orphan_charge_by_itself_and_only_once() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| config.reconcile_interval = Duration::from_millis(300)).await;
    charge_directly(&pg, "ord_orphan_scheduled", 7_000, "pk_orphan_scheduled").await;

    support::eventually("the scheduled pass refunds the orphan charge", Duration::from_secs(10), || async {
        (refunded(&pg.stats().await, "ord_orphan_scheduled") == 7_000).then_some(())
    })
    .await;
    // Several more passes: the PG lists it refunded, so nothing is sent again.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let stats = pg.stats().await;
    assert_eq!((refunded(&stats, "ord_orphan_scheduled"), stats.cancel_requests), (7_000, 1));
    let db = server.db().await;
    let last = db.last_reconcile_run().await.unwrap().expect("scheduled passes are stored");
    assert!(last.id >= 2, "more than one pass ran: {}", last.id);
    let report: Value = serde_json::from_str(&last.report).unwrap();
    assert_eq!(report["started_by"], "schedule");
    assert_eq!(report["refunded_orphans"], json!(["pk_orphan_scheduled"]));
    assert!(db.audit_log_without_order().await.unwrap().is_empty(), "no operator acted");
}

#[tokio::test]
async fn a_refund_made_at_the_pg_behind_the_shops_back_is_flagged_and_nothing_changes() {
    let pg = FakePg::start().await;
    let server = server_with_token(&pg).await;
    let order = server.paid_order().await;
    let attempt = server.db().await.sent_attempt_for_order(&order.order_id).await.unwrap().unwrap();
    let cancelled = reqwest::Client::new()
        .post(format!("{}/v1/payments/{}/cancel", pg.url, attempt.payment_key))
        .basic_auth(support::SECRET_KEY, Some(""))
        .header("Idempotency-Key", "cancel-behind-the-back")
        .json(&json!({"cancelReason": "refunded by hand", "cancelAmount": 2_000}))
        .send()
        .await
        .unwrap();
    assert!(cancelled.status().is_success(), "{}", cancelled.text().await.unwrap());

    let report = reconcile(&server).await;
    assert_eq!(kinds(&report), [("refund_mismatch".to_owned(), order.order_id.clone())], "{report}");
    let found = &report["mismatches"][0];
    assert_eq!((found["pg_refunded"].as_u64(), found["shop_refunded"].as_u64()), (Some(2_000), Some(0)), "{report}");
    assert_eq!(found["action"], "flagged");
    assert_eq!(pg.stats().await.cancel_requests, 1, "only the one made by hand");
    let order_now = server.order(&order.order_id).await;
    assert_eq!((order_now.status, order_now.refunded_amount), (OrderStatus::Paid, 0));
}

#[tokio::test]
async fn the_operators_api_is_published_as_openapi_and_every_operation_in_it_is_served_behind_the_token() {
    let pg = FakePg::start().await;
    let server = server_with_token(&pg).await;
    let order = server.paid_order().await;
    reconcile(&server).await;

    // The description itself needs no token: it tells how to use one.
    let spec: Value = server
        .http
        .get(format!("{}/admin/openapi.json", server.admin_url))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(spec["openapi"].as_str().unwrap().starts_with("3."), "{spec}");
    assert_eq!(spec["components"]["securitySchemes"]["admin_token"]["scheme"], "bearer", "{spec}");
    let mut operations: Vec<(String, String)> = spec["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| item.as_object().unwrap().keys().map(move |method| (method.clone(), path.clone())))
        .collect();
    operations.sort();
    let expected = [
        ("get", "/admin/events"),
        ("get", "/admin/operator"),
        ("get", "/admin/orders"),
        ("get", "/admin/orders/{order_id}"),
        ("get", "/admin/reconcile"),
        ("post", "/admin/events/{event_id}/resend"),
        ("post", "/admin/orders/{order_id}/cancel"),
        ("post", "/admin/orders/{order_id}/recover"),
        ("post", "/admin/reconcile"),
        ("post", "/admin/shops/{shop_id}/events/resend"),
    ];
    assert_eq!(operations, expected.map(|(method, path)| (method.to_owned(), path.to_owned())));

    for (method, path) in &operations {
        // A refund of an order that does not exist: served, and nothing is sent.
        let order_id = if path.ends_with("/cancel") { "ord_missing" } else { order.order_id.as_str() };
        // An event and a shop that do not exist: served, answered 404 with codes of their own.
        let path =
            path.replace("{order_id}", order_id).replace("{event_id}", "evt_missing").replace("{shop_id}", "nobody");
        let url = format!("{}{path}", server.admin_url);
        let request = |token: Option<&str>| {
            let request = match method.as_str() {
                "get" => reqwest::Client::new().get(&url),
                _ => reqwest::Client::new()
                    .post(&url)
                    .header("Idempotency-Key", "key-spec")
                    .json(&json!({"reason": "spec"})),
            };
            match token {
                Some(token) => request.bearer_auth(token),
                None => request,
            }
        };
        let refused = request(None).send().await.unwrap();
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED, "{method} {path} without the token");
        let response = request(Some(TOKEN)).send().await.unwrap();
        let status = response.status();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        assert!(
            status != StatusCode::METHOD_NOT_ALLOWED && body["code"] != "NOT_FOUND",
            "{method} {path}: {status} {body}"
        );
    }
    assert_eq!(pg.stats().await.cancel_requests, 0);

    // What the handlers answer has exactly the fields the description names.
    let schemas = &spec["components"]["schemas"];
    let fields = |value: &Value| {
        let mut names: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
        names.sort();
        names
    };
    let (_, story) =
        admin(&server, reqwest::Method::GET, &format!("/admin/orders/{}", order.order_id), Some(TOKEN)).await;
    let (_, list) = admin(&server, reqwest::Method::GET, "/admin/orders", Some(TOKEN)).await;
    let (_, report) = admin(&server, reqwest::Method::GET, "/admin/reconcile", Some(TOKEN)).await;
    for (schema, answer) in [
        ("OrderStory", &story),
        ("AttemptView", &story["attempt"]),
        ("StatusChange", &story["history"][0]),
        ("PgCallView", &story["pg_calls"][0]),
        ("OrderList", &list),
        ("OrderRow", &list["orders"][0]),
        ("Report", &report),
    ] {
        assert_eq!(fields(&schemas[schema]["properties"]), fields(answer), "{schema}: {answer}");
    }
}

#[tokio::test]
async fn a_charge_of_another_user_of_the_pg_account_is_reported_and_never_refunded() {
    let pg = FakePg::start().await;
    let server = server_with_token(&pg).await;
    // A POS terminal on the same merchant account, and a staging deploy with its own prefix.
    charge_directly(&pg, "pos-terminal-7-0001", 30_000, "pk_pos").await;
    charge_directly(&pg, "staging_ord_1", 12_900, "pk_staging").await;

    for _ in 0..2 {
        let report = reconcile(&server).await;
        assert!(kinds(&report).is_empty(), "not the shop's disagreements: {report}");
        let others: Vec<&str> =
            report["not_the_shops"].as_array().unwrap().iter().map(|c| c["order_id"].as_str().unwrap()).collect();
        assert_eq!(others, ["pos-terminal-7-0001", "staging_ord_1"], "{report}");
        assert_eq!(report["not_the_shops"][0]["amount"], 30_000);
    }
    let stats = pg.stats().await;
    assert_eq!(stats.cancel_requests, 0, "nothing sent");
    assert_eq!((refunded(&stats, "pos-terminal-7-0001"), refunded(&stats, "staging_ord_1")), (0, 0));
    assert!(server.db().await.orphan_refund("pk_pos").await.unwrap().is_none());
}

#[tokio::test]
async fn with_another_prefix_the_shops_own_orphan_charges_are_refunded_and_the_defaults_are_not() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| {
        config.admin_token = Some(TOKEN.into());
        config.order_id_prefix = "shop2_".into();
    })
    .await;
    let order = server.paid_order().await;
    assert!(order.order_id.starts_with("shop2_"), "{}", order.order_id);
    charge_directly(&pg, "shop2_orphan", 12_900, "pk_mine").await;
    charge_directly(&pg, "ord_of_the_other_shop", 12_900, "pk_theirs").await;

    let report = reconcile(&server).await;

    assert_eq!(kinds(&report), [("charge_without_order".to_owned(), "shop2_orphan".to_owned())], "{report}");
    assert_eq!(report["mismatches"][0]["action"], "refunded");
    assert_eq!(report["not_the_shops"][0]["order_id"], "ord_of_the_other_shop");
    assert_eq!(report["matched"], 1, "the shop's own order, under its prefix");
    let stats = pg.stats().await;
    assert_eq!((refunded(&stats, "shop2_orphan"), refunded(&stats, "ord_of_the_other_shop")), (12_900, 0));
    assert_charges_agree(&pg, &server, &[&order.order_id]).await;
}

#[tokio::test]
async fn in_report_mode_an_orphan_of_the_shop_is_reported_and_not_refunded() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| {
        config.admin_token = Some(TOKEN.into());
        config.reconcile_orphans = payonce_rules::settlement::OrphanPolicy::Report;
    })
    .await;
    charge_directly(&pg, "ord_orphan", 12_900, "pk_orphan").await;

    let report = reconcile(&server).await;

    assert_eq!(kinds(&report), [("charge_without_order".to_owned(), "ord_orphan".to_owned())], "{report}");
    let action = report["mismatches"][0]["action"].as_str().unwrap();
    assert!(action.starts_with("reported"), "{action}");
    assert_eq!(pg.stats().await.cancel_requests, 0);
    assert!(server.db().await.orphan_refund("pk_orphan").await.unwrap().is_none());
}

#[tokio::test]
async fn a_dry_run_says_what_a_pass_would_do_and_changes_nothing() {
    let pg = FakePg::start().await;
    let server = server_with_token(&pg).await;
    charge_directly(&pg, "ord_orphan", 12_900, "pk_orphan").await;

    let (status, dry) = admin(&server, reqwest::Method::POST, "/admin/reconcile?dry_run=true", Some(TOKEN)).await;

    assert_eq!(status, StatusCode::OK, "{dry}");
    assert_eq!((dry["dry_run"].as_bool(), dry["run_id"].as_i64()), (Some(true), None), "{dry}");
    assert_eq!(kinds(&dry), [("charge_without_order".to_owned(), "ord_orphan".to_owned())]);
    assert_eq!(dry["mismatches"][0]["action"], "would refund in full");
    assert_eq!(pg.stats().await.cancel_requests, 0, "nothing refunded");
    let (status, _) = admin(&server, reqwest::Method::GET, "/admin/reconcile", Some(TOKEN)).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a dry run is not the last pass");
    let audit = server.db().await.audit_log_without_order().await.unwrap();
    let detail = audit[0].detail.as_deref().unwrap_or_default();
    assert!(detail.contains("dry run"), "{detail}");
    for bad in ["?dry_run=yes", "?dryrun=true"] {
        let (status, body) =
            admin(&server, reqwest::Method::POST, &format!("/admin/reconcile{bad}"), Some(TOKEN)).await;
        assert_eq!((status, body["code"].as_str()), (StatusCode::BAD_REQUEST, Some("INVALID_REQUEST")), "{bad}");
    }
    // The real pass then refunds it.
    let report = reconcile(&server).await;
    assert_eq!(report["mismatches"][0]["action"], "refunded");
    assert_eq!(refunded(&pg.stats().await, "ord_orphan"), 12_900);
}

//! Prometheus metrics, recorded where transitions happen; the book's
//! "Observable" paragraph (docs/payment-safety.md) lists their names.

use std::sync::OnceLock;
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use metrics::{counter, gauge};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use payonce_api::{OrderStatus, Pg};

/// The process-wide recorder. Several servers in one test process share it,
/// since `metrics` has one global recorder.
pub fn handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let handle = PrometheusBuilder::new().install_recorder().expect("no other metrics recorder is installed");
            describe();
            handle
        })
        .clone()
}

fn describe() {
    metrics::describe_counter!("payment_pg_confirm_calls_total", "Confirm calls to the PG by outcome");
    metrics::describe_counter!("payment_pg_lookup_retry_total", "Recovery lookups retried after no usable answer");
    metrics::describe_counter!("payment_pg_recovery_calls_total", "Recovery calls to the PG by call and verdict");
    metrics::describe_counter!(
        "payment_pg_recovery_over_budget_total",
        "Recovery calls not made because the retry budget was spent"
    );
    metrics::describe_counter!("payment_pg_breaker_opened_total", "Times the PG circuit breaker opened");
    metrics::describe_counter!(
        "payment_recovery_alerts_total",
        "Payments still unsettled after many answered recovery passes: they need an operator"
    );
    metrics::describe_counter!(
        "payment_pg_lookup_retry_exhausted_total",
        "Recovery passes that ended without settling a payment"
    );
    metrics::describe_gauge!("payment_unknown_oldest_age_seconds", "Age of the oldest unsettled payment");
    metrics::describe_gauge!("payment_pg_in_flight", "PG calls in flight");
    metrics::describe_gauge!("payment_pg_limit", "PG calls allowed at once (fixed, or learned)");
    for (old, new) in OLD_NAMES {
        let help = format!("The old name of {new}, kept until a later release");
        if old.ends_with("_total") {
            metrics::describe_counter!(*old, help);
        } else {
            metrics::describe_gauge!(*old, help);
        }
    }
    metrics::describe_histogram!(
        "payment_pg_place_seconds",
        "Time to take (op=take) or free (op=free) a place under a cluster's shared PG limit"
    );
    metrics::describe_counter!("payment_orders_total", "Order status transitions by new status");
    metrics::describe_counter!(
        "payment_order_waits_total",
        "Checks that waited for their order, by how the wait ended (changed, timeout, stopping), or why they could not (full, client_full, customer_full)"
    );
    metrics::describe_gauge!("payment_order_waiting", "Checks waiting for their order to change now");
    metrics::describe_counter!(
        "payment_reconcile_mismatch_total",
        "Disagreements between the PG's transactions and the orders found by reconciliation, by kind"
    );
    metrics::describe_gauge!(
        "payment_reconcile_last_run_timestamp_seconds",
        "When this server last finished a reconciliation pass (Unix seconds)"
    );
    metrics::describe_counter!(
        "payment_webhooks_total",
        "PG webhook events by outcome (looking_up: a lookup brought forward; nothing)"
    );
    metrics::describe_counter!("payment_refunds_total", "Refund transitions by new status (REQUESTED, DONE, FAILED)");
    metrics::describe_counter!(
        "payment_pg_cancel_calls_total",
        "Refund calls to the PG by call (first, lookup, resend) and what came of them"
    );
    metrics::describe_counter!(
        "payment_refund_alerts_total",
        "Refunds still not done after many answered passes (raised again every so many passes)"
    );
    metrics::describe_counter!(
        "operator_sign_in_failures_total",
        "Requests to the operators' API with a wrong or missing token, by what came of them (unauthorized, refused)"
    );
    metrics::describe_counter!("http_requests_total", "HTTP requests by route and status");
    metrics::describe_histogram!("http_request_duration_seconds", "HTTP request latency by route");
}

/// One confirm call (an approve, at KakaoPay) to `pg` finished with this
/// outcome (`paid`, `failed`, `unknown`, `unreachable`, `busy`).
pub fn pg_confirm_call(pg: Pg, outcome: &'static str) {
    counter!("payment_pg_confirm_calls_total", "pg" => pg.as_str(), "outcome" => outcome).increment(1);
}

/// A request to the operators' API came with a wrong or missing token: answered
/// `unauthorized`, or `refused` (429) once its address had failed too often.
pub fn operator_sign_in_failed(outcome: &'static str) {
    counter!("operator_sign_in_failures_total", "outcome" => outcome).increment(1);
}

/// Metrics renamed so that each idea has one word, each also recorded under
/// its old name until a later release, for the dashboards and alerts that use it.
pub const OLD_NAMES: &[(&str, &str)] = &[
    ("payment_pg_query_retry_total", "payment_pg_lookup_retry_total"),
    ("payment_pg_query_retry_exhausted_total", "payment_pg_lookup_retry_exhausted_total"),
    ("payment_pg_concurrency_limit", "payment_pg_limit"),
];

/// The calls `pg`'s limit allows at once (each PG has its own contract).
pub fn pg_limit(pg: Pg, limit: f64) {
    gauge!("payment_pg_limit", "pg" => pg.as_str()).set(limit);
    gauge!("payment_pg_concurrency_limit", "pg" => pg.as_str()).set(limit);
}

/// Taking or freeing a place under a cluster's shared limit took this long: the
/// cost the shared limit adds to a PG call.
pub fn pg_place_seconds(op: &'static str, took: std::time::Duration) {
    metrics::histogram!("payment_pg_place_seconds", "op" => op).record(took.as_secs_f64());
}

pub fn pg_in_flight(pg: Pg, delta: f64) {
    gauge!("payment_pg_in_flight", "pg" => pg.as_str()).increment(delta);
}

pub fn order_transition(status: OrderStatus) {
    counter!("payment_orders_total", "status" => status.as_str()).increment(1);
}

/// A check's wait for its order ended: `changed`, `timeout`, `stopping`; or it was
/// not held, too many waiting: `full` (server-wide), `client_full`, `customer_full`.
pub fn order_wait(outcome: &'static str) {
    counter!("payment_order_waits_total", "outcome" => outcome).increment(1);
}

/// A shop created a checkout through the shop API.
pub fn checkout_created(shop: &str) {
    counter!("payment_checkouts_created_total", "shop" => shop.to_owned()).increment(1);
}

/// A checkout's time ran out unpaid, and it was closed.
/// One send of an event to its shop, and how it went: `delivered`, `retry` or `gave_up`.
pub fn event_send(shop: &str, outcome: &'static str) {
    counter!("payment_event_sends_total", "shop" => shop.to_owned(), "outcome" => outcome).increment(1);
}

/// An event reached its shop this long after its change was committed.
pub fn event_lag(seconds: f64) {
    metrics::histogram!("payment_event_lag_seconds").record(seconds);
}

/// Events given up past their retry window: operators must look.
pub fn event_alerts(given_up: u64) {
    counter!("payment_event_alerts_total").increment(given_up);
}

/// How long the oldest event not yet delivered has waited.
pub fn event_oldest_pending_age(seconds: f64) {
    gauge!("payment_event_oldest_pending_age_seconds").set(seconds);
}

pub fn checkout_expired() {
    counter!("payment_checkouts_expired_total").increment(1);
}

/// A request to the shop API was refused its key: `unauthorized`, or `throttled` past the failures allowed.
pub fn shop_key_refused(outcome: &'static str) {
    counter!("payment_shop_key_refused_total", "outcome" => outcome).increment(1);
}

pub fn order_waiting(delta: f64) {
    gauge!("payment_order_waiting").increment(delta);
}

pub fn recovery_retry() {
    counter!("payment_pg_lookup_retry_total").increment(1);
    counter!("payment_pg_query_retry_total").increment(1);
}

/// One recovery call to `pg` (`lookup` or `resend`) and what its answer settled.
pub fn recovery_call(pg: Pg, call: &'static str, verdict: &'static str) {
    counter!("payment_pg_recovery_calls_total", "pg" => pg.as_str(), "call" => call, "verdict" => verdict).increment(1);
}

pub fn breaker_opened() {
    counter!("payment_pg_breaker_opened_total").increment(1);
}

pub fn recovery_over_budget() {
    counter!("payment_pg_recovery_over_budget_total").increment(1);
}

pub fn recovery_alert() {
    counter!("payment_recovery_alerts_total").increment(1);
}

pub fn recovery_exhausted() {
    counter!("payment_pg_lookup_retry_exhausted_total").increment(1);
    counter!("payment_pg_query_retry_exhausted_total").increment(1);
}

/// A refund moved to this status (`REQUESTED`, `DONE`, `FAILED`).
pub fn refund_transition(status: &'static str) {
    counter!("payment_refunds_total", "status" => status).increment(1);
}

/// One call to `pg` about a refund (`first`, `lookup`, `resend`) and what came of it.
pub fn refund_call(pg: Pg, call: &'static str, outcome: &'static str) {
    counter!("payment_pg_cancel_calls_total", "pg" => pg.as_str(), "call" => call, "outcome" => outcome).increment(1);
}

/// A webhook event, and whether it brought a lookup forward (`looking_up`) or not (`nothing`).
pub fn webhook_received(outcome: &'static str) {
    counter!("payment_webhooks_total", "outcome" => outcome).increment(1);
}

pub fn refund_alert() {
    counter!("payment_refund_alerts_total").increment(1);
}

pub fn unknown_oldest_age(seconds: f64) {
    gauge!("payment_unknown_oldest_age_seconds").set(seconds);
}

/// Counts every request by its route template, so label values stay bounded.
pub async fn track_http(request: Request, next: Next) -> Response {
    let route =
        request.extensions().get::<MatchedPath>().map_or_else(|| "static".to_owned(), |path| path.as_str().to_owned());
    let mut tracked = TrackedRequest { route, started: Instant::now(), status: None };
    let response = next.run(request).await;
    tracked.status = Some(response.status().as_u16());
    response
}

/// Records the request when it ends, including when the client hangs up first
/// and the handler is dropped: those are counted with status 499, as nginx does,
/// because a confirm the browser gave up on is exactly the one to see.
struct TrackedRequest {
    route: String,
    started: Instant,
    status: Option<u16>,
}

impl Drop for TrackedRequest {
    fn drop(&mut self) {
        let route = std::mem::take(&mut self.route);
        let status = self.status.unwrap_or(499).to_string();
        metrics::histogram!("http_request_duration_seconds", "route" => route.clone())
            .record(self.started.elapsed().as_secs_f64());
        counter!("http_requests_total", "route" => route, "status" => status).increment(1);
    }
}

/// Counts a disagreement a reconciliation pass found.
pub fn reconcile_mismatch(kind: &'static str) {
    counter!("payment_reconcile_mismatch_total", "kind" => kind).increment(1);
}

/// Records when a reconciliation pass finished.
pub fn reconcile_ran(at: std::time::SystemTime) {
    let seconds = at.duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_secs_f64();
    gauge!("payment_reconcile_last_run_timestamp_seconds").set(seconds);
}

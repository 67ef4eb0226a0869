//! A customer who hangs up at any point of a confirm leaves either no attempt,
//! or one whose PG call goes out and whose answer is stored: never an attempt
//! stranded PENDING for recovery to find. The confirm request is dropped after
//! each of its await points in turn, with no recovery running.

use crate::support;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, header};
use payonce_api::OrderStatus;
use payonce_server::db::Db;
use payonce_server::state::AppState;
use serde_json::json;
use support::{FakePg, eventually};
use tower::ServiceExt;

/// Polls the inner future at most `polls` times, then drops it where it stands.
struct DropAfter<F: Future> {
    inner: Option<Pin<Box<F>>>,
    polls: usize,
}

impl<F: Future> Future for DropAfter<F> {
    type Output = Option<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if self.polls == 0 {
            self.inner = None;
            return Poll::Ready(None);
        }
        self.polls -= 1;
        match self.inner.as_mut().expect("polled after the end").as_mut().poll(cx) {
            Poll::Ready(output) => Poll::Ready(Some(output)),
            Poll::Pending => Poll::Pending,
        }
    }
}

#[tokio::test]
async fn a_confirm_dropped_at_any_await_point_leaves_no_attempt_or_one_whose_call_went_out() {
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 200})).await;
    let store = support::Store::fresh().await;
    let config = support::test_config(&pg.url, &store);
    let db = Db::open(&config.db, 4).await.unwrap();
    let cookies = payonce_server::customer::CustomerCookies::load(&config, &db).await.unwrap();
    let state = AppState::new(config, db.clone(), cookies);
    let app = payonce_server::routes::router(state.clone());

    let mut completed = false;
    for polls in 0..50 {
        let (order_id, amount, cookie) = create_order(&app).await;
        let confirm = Request::post(format!("/api/orders/{order_id}/confirm"))
            .header(header::COOKIE, &cookie)
            .header(header::CONTENT_TYPE, "application/json")
            .header("Idempotency-Key", format!("key-drop-{polls}"))
            .body(Body::from(json!({"payment_key": format!("pk_{order_id}"), "amount": amount}).to_string()))
            .unwrap();
        let answered = DropAfter { inner: Some(Box::pin(app.clone().oneshot(confirm))), polls }.await.is_some();

        // Whatever the request left behind finishes without it.
        eventually("the detached confirm finishes", Duration::from_secs(10), || async {
            state.pg_tasks.is_empty().then_some(())
        })
        .await;
        let order = db.order(&order_id).await.unwrap().unwrap();
        let charges = pg.charges(&order_id).await;
        let pg_saw_it = pg.payment(&format!("pk_{order_id}")).await.is_some();
        match order.status {
            OrderStatus::Created => {
                assert!(!pg_saw_it, "dropped after {polls} polls: no attempt, yet the PG was called")
            }
            OrderStatus::Paid => assert_eq!(charges, 1, "dropped after {polls} polls"),
            other => panic!("dropped after {polls} polls, the order was left {other:?}"),
        }
        if answered {
            completed = true;
            break;
        }
    }
    assert!(completed, "the confirm finished within the polls tried");
}

/// Creates an order through the router; returns its id, amount and the customer's cookie.
async fn create_order(app: &axum::Router) -> (String, u64, String) {
    let request = Request::post("/api/orders")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json!({"items": [{"sku": "CERAMIC-MUG", "quantity": 1}]}).to_string()))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let cookie = response.headers()[header::SET_COOKIE].to_str().unwrap().split(';').next().unwrap().to_owned();
    let body = axum::body::to_bytes(response.into_body(), 64 * 1024).await.unwrap();
    let order: serde_json::Value = serde_json::from_slice(&body).unwrap();
    (order["order_id"].as_str().unwrap().to_owned(), order["amount"].as_u64().unwrap(), cookie)
}

//! Checks waiting for their order hold no database connection, and a server
//! that stops answers them at once. Alone in its test binary: it counts the
//! waiting checks with a process-wide gauge.

use crate::support;

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;
use support::{FakePg, Server, eventually};

const WAITERS: usize = 20;

async fn waiting_now(server: &Server) -> usize {
    let metrics = server.metrics().await;
    metrics
        .lines()
        .find_map(|line| line.strip_prefix("payment_order_waiting "))
        .and_then(|value| value.trim().parse::<f64>().ok())
        .map_or(0, |value| value as usize)
}

#[tokio::test]
async fn waiting_checks_hold_no_connection_and_end_when_the_server_stops() {
    let pg = FakePg::start().await;
    // One connection for the whole server: a wait that held it would stop everything else.
    // One customer holds all the checks: its own limit is raised to hold them all.
    let server = Server::start_with(&pg.url, |config| {
        config.db_max_connections = 1;
        config.max_waiting_checks_per_customer = WAITERS as u32;
    })
    .await;
    let watched = server.create_order().await.order;
    let checks: Vec<_> = (0..WAITERS)
        .map(|_| {
            let url = format!("{}/api/orders/{}?wait=2s", server.url, watched.order_id);
            let http = server.http.clone();
            tokio::spawn(async move {
                let response = http.get(url).send().await.unwrap();
                (response.status(), response.json::<Value>().await.unwrap())
            })
        })
        .collect();
    eventually("every check is waiting", Duration::from_secs(5), || async {
        (waiting_now(&server).await >= WAITERS).then_some(())
    })
    .await;

    // While they wait, the one connection serves a new order and closes the watched one.
    let other = server.create_order().await.order;
    assert_eq!(server.order(&other.order_id).await.order_id, other.order_id);
    let closed = server.close_request(&server.http, &watched.order_id).send().await;
    assert_eq!(closed.unwrap().status(), StatusCode::OK);
    for check in checks {
        let (status, body) = check.await.unwrap();
        assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("FAILED")), "{body}");
    }

    // A customer who leaves mid-wait is no longer counted as waiting, well before the wait would end.
    let leaving = {
        let url = format!("{}/api/orders/{}?wait=2s", server.url, other.order_id);
        let http = server.http.clone();
        tokio::spawn(async move { http.get(url).send().await })
    };
    eventually("the check is waiting", Duration::from_secs(5), || async {
        (waiting_now(&server).await >= 1).then_some(())
    })
    .await;
    leaving.abort();
    eventually("the check that hung up is not counted", Duration::from_millis(1_500), || async {
        (waiting_now(&server).await == 0).then_some(())
    })
    .await;

    // A server that stops does not keep its customers waiting: they get the order as it is.
    let check = {
        let url = format!("{}/api/orders/{}?wait=2s", server.url, other.order_id);
        let http = server.http.clone();
        tokio::spawn(async move { http.get(url).send().await.unwrap().json::<Value>().await.unwrap() })
    };
    eventually("the check is waiting", Duration::from_secs(5), || async {
        (waiting_now(&server).await >= 1).then_some(())
    })
    .await;
    server.stop().await;
    let answered = check.await.unwrap();
    assert_eq!(answered["status"], "CREATED", "{answered}");
}

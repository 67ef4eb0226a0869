//! Bad input changes nothing: random and hostile requests to every route of
//! the fake PG (its API, cancels and the transaction listing included, its
//! payment window, its admin reads) are answered 4xx,
//! never 5xx: the API and admin ones as Toss's `{code, message}`, the window's
//! as a readable page; and a refused request leaves the payments as they were.

use crate::common;

use std::sync::OnceLock;

use common::{Pg, basic_auth, fast_config, start};
use proptest::prelude::*;
use reqwest::Method;
use serde_json::Value;
use tokio::runtime::Runtime;

struct Gateway {
    runtime: Runtime,
    pg: Pg,
}

fn gateway() -> &'static Gateway {
    static GATEWAY: OnceLock<Gateway> = OnceLock::new();
    GATEWAY.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let pg = runtime.block_on(async {
            let pg = start(fast_config()).await;
            // A charged payment for hostile cancels to aim at.
            let response = pg
                .admin_charge(
                    serde_json::json!({"orderId": "order-charged", "amount": 1_000, "paymentKey": "pk-charged"}),
                )
                .await;
            assert!(response.status().is_success());
            pg
        });
        Gateway { runtime, pg }
    })
}

#[derive(Debug, Clone)]
struct Hostile {
    method: Method,
    path: String,
    authorization: Option<String>,
    idempotency_key: Option<String>,
    content_type: Option<String>,
    body: Vec<u8>,
}

fn segments() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("pk_nope".to_owned()),
        Just("%00".to_owned()),
        Just("..%2F..".to_owned()),
        Just("%ED%95%9C%EA%B8%80".to_owned()),
        "[a-zA-Z0-9_=-]{1,80}",
        "[a-z]{250,300}",
    ]
}

fn paths() -> impl Strategy<Value = String> {
    (
        segments(),
        prop::sample::select(vec![
            "/v1/payments/confirm",
            "/v1/payments/{id}",
            "/v1/payments/orders/{id}",
            "/v1/payments/{id}/cancel",
            "/v1/payments/pk-charged/cancel",
            "/v1/transactions?startDate={id}&endDate=2099-01-01T00:00:00",
            "/v1/transactions?startDate=2000-01-01T00:00:00&endDate=2099-01-01T00:00:00&startingAfter={id}&limit={id}",
            "/v1/transactions?startDate=2000-01-01T00:00:00.{id}&endDate={id}",
            "/v1/window?orderId={id}&amount=-1&orderName=%00&successUrl=javascript:alert(1)&failUrl=x",
            "/v1/window?orderId={id}",
            "/v1/window",
            "/v1/receipt/{id}",
            "/__admin/stats",
            "/__admin/config",
            "/v2/{id}",
        ]),
    )
        .prop_map(|(id, template)| template.replace("{id}", &id))
}

fn json_values() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        Just(Value::from(u64::MAX)),
        Just(serde_json::json!(0.5)),
        ".{0,40}".prop_map(Value::from),
        "[a-zA-Z0-9_-]{70,90}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 20, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "paymentKey",
                    "orderId",
                    "amount",
                    "scenario",
                    "cancelReason",
                    "cancelAmount"
                ]),
                inner,
                0..4
            )
            .prop_map(|map| Value::Object(map.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

fn bodies() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        json_values().prop_map(|value| value.to_string().into_bytes()),
        Just(br#"{"paymentKey":"pk","orderId":"order-1","amount":1,"amount":-5}"#.to_vec()),
        Just(br#"{"paymentKey":"pk","orderId":"order 1","amount":1}"#.to_vec()),
        Just(br#"{"paymentKey":"pk","orderId":"order-1","amount":1e400}"#.to_vec()),
        Just(br#"{"paymentKey":"pk","orderId":"order-1","amount":"#.to_vec()),
        Just(b"paymentKey=pk&scenario=approve&scenario=cancel".to_vec()),
        Just(br#"{"cancelReason":"r","cancelAmount":99999999}"#.to_vec()),
        Just(br#"{"cancelReason":"r","cancelAmount":-1}"#.to_vec()),
        Just(br#"{"cancelReason":"","cancelAmount":1}"#.to_vec()),
        prop::collection::vec(any::<u8>(), 0..120),
    ]
}

fn hostile() -> impl Strategy<Value = Hostile> {
    (
        prop::sample::select(vec![Method::GET, Method::POST, Method::PUT, Method::DELETE]),
        paths(),
        prop::option::of(prop_oneof![
            Just(basic_auth(fake_pg::DEFAULT_SECRET_KEY)),
            Just(basic_auth("test_sk_someone_else")),
            Just("Basic !!!".to_owned()),
            Just("Bearer x".to_owned()),
        ]),
        prop::option::of(prop_oneof![Just(String::new()), "[ -~]{1,40}", "[a-z]{301,310}"]),
        prop::option::of(prop::sample::select(vec![
            "application/json",
            "text/plain",
            "application/x-www-form-urlencoded",
        ])),
        bodies(),
    )
        .prop_filter("admin writes change the fake on purpose", |(method, path, ..)| {
            !(path.starts_with("/__admin") && *method != Method::GET)
        })
        .prop_map(|(method, path, authorization, idempotency_key, content_type, body)| Hostile {
            method,
            path,
            authorization,
            idempotency_key,
            content_type: content_type.map(str::to_owned),
            body,
        })
}

/// What a request could change: the payments, their charges and refunds.
fn ledger(stats: &fake_pg::Stats) -> String {
    format!(
        "{:?} {:?} {} {:?} {}",
        stats.payments_by_status,
        stats.charges_by_order,
        stats.processings,
        stats.refunds_by_order,
        stats.cancels_processed
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn hostile_requests_are_refused_without_a_5xx_and_change_nothing(request in hostile()) {
        let gateway = gateway();
        let (status, content_type, body, before, after) = gateway.runtime.block_on(async {
            let pg = &gateway.pg;
            let before = ledger(&pg.stats().await);
            let mut builder = pg.client.request(request.method.clone(), format!("{}{}", pg.url, request.path));
            for (name, value) in [
                ("Authorization", &request.authorization),
                ("Idempotency-Key", &request.idempotency_key),
                ("Content-Type", &request.content_type),
            ] {
                if let Some(value) = value {
                    builder = builder.header(name, value);
                }
            }
            let response = builder.body(request.body.clone()).send().await.unwrap();
            let status = response.status();
            let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
            let body = response.bytes().await.unwrap();
            (status, content_type, body, before, ledger(&pg.stats().await))
        });
        prop_assert!(!status.is_server_error(), "{request:?} got {status}: {}", String::from_utf8_lossy(&body));
        if status.is_client_error() {
            if content_type.starts_with("text/html") {
                prop_assert!(request.path.starts_with("/v1/window") || request.path.starts_with("/v1/receipt"), "{request:?}");
            } else {
                let error: Value = serde_json::from_slice(&body)
                    .map_err(|_| TestCaseError::fail(format!("{request:?}: {status} without a JSON body")))?;
                prop_assert!(error["code"].as_str().is_some_and(|code| !code.is_empty()), "{request:?}: {error}");
                prop_assert!(error["message"].as_str().is_some(), "{request:?}: {error}");
            }
            prop_assert_eq!(before, after, "{:?} was refused ({}) but changed the payments", request, status);
        }
    }
}

//! Bad input changes nothing: random and hostile requests to every route of
//! the order server (methods, paths, headers, content types, bodies of every
//! shape, unicode, huge and negative numbers, duplicated keys, truncated JSON)
//! are answered 4xx with `{code, message}`, never 5xx, and a refused request
//! leaves the database byte for byte as it was. Forged `X-Forwarded-For`
//! headers (the shop trusts its own proxy's address, as behind haproxy) change
//! nothing either, and a customer cookie that is not the one the server signed
//! (garbage, the customer's id alone, a signature tampered with) never reaches
//! that customer's order. The operators' listener gets the same, with and
//! without its token, and the shop API with bad checkouts and wrong keys.

use crate::support;

use std::sync::OnceLock;

use proptest::prelude::*;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use support::{FakePg, Server, customer_cookie};
use tokio::runtime::Runtime;

/// The operators' token of the shop under attack.
const OPERATOR_TOKEN: &str = "hostile-operator-token-of-32-characters-or-more";

/// A server under attack, on a runtime of its own (proptest is synchronous).
struct Shop {
    runtime: Runtime,
    server: Server,
    order_id: String,
    /// The `name=value` cookie of the customer whose order it is, as the server signed it.
    owner_cookie: String,
    _pg: FakePg,
}

impl Shop {
    fn open() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let (pg, server, order_id, owner_cookie) = runtime.block_on(async {
            let pg = FakePg::start().await;
            let server = Server::start_with(&pg.url, |config| {
                config.admin_token = Some(OPERATOR_TOKEN.into());
                config.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()];
            })
            .await;
            let owner = reqwest::Client::builder().cookie_store(true).build().unwrap();
            let owner_cookie = customer_cookie(owner.get(format!("{}/api/catalog", server.url))).await.unwrap();
            let order_id = server.create_order_for(&owner).await.order.order_id;
            (pg, server, order_id, owner_cookie)
        });
        Shop { runtime, server, order_id, owner_cookie, _pg: pg }
    }
}

/// Each test compares the database before and after its own requests, so each
/// has a shop of its own: another test's writes (the operators' cases may
/// legitimately write) must never land between its two digests. The cases of
/// one property test run one after another, so they share their test's shop.
fn customers_shop() -> &'static Shop {
    static SHOP: OnceLock<Shop> = OnceLock::new();
    SHOP.get_or_init(Shop::open)
}

fn forged_cookies_shop() -> &'static Shop {
    static SHOP: OnceLock<Shop> = OnceLock::new();
    SHOP.get_or_init(Shop::open)
}

fn operators_shop() -> &'static Shop {
    static SHOP: OnceLock<Shop> = OnceLock::new();
    SHOP.get_or_init(Shop::open)
}

/// A hostile request.
#[derive(Debug, Clone)]
struct Hostile {
    method: Method,
    path: String,
    content_type: Option<String>,
    idempotency_key: Option<String>,
    /// Extra headers (`X-Forwarded-For`; the operators' listener: `Authorization`, `X-Operator`).
    headers: Vec<(String, String)>,
    /// The customer cookie sent: the order's owner's when `None`.
    cookie: Option<ForgedCookie>,
    body: Vec<u8>,
}

/// A customer cookie the server did not sign, made from the owner's when sent.
#[derive(Debug, Clone)]
enum ForgedCookie {
    /// Any value under the customer cookie's name.
    Garbage(String),
    /// The owner's customer id without its signature.
    IdAlone,
    /// The owner's cookie with one character of its signature changed.
    Tampered(usize),
    /// The owner's value under the `__Host-` name an https shop would use.
    Renamed,
}

impl ForgedCookie {
    fn made_from(&self, owner: &str) -> String {
        let (name, value) = owner.split_once('=').unwrap();
        match self {
            ForgedCookie::Garbage(value) => format!("{name}={value}"),
            // A signed value is the signature (44 characters, `=` escaped) then the id.
            ForgedCookie::IdAlone => format!("{name}={}", &value[value.len() - 36..]),
            ForgedCookie::Tampered(at) => {
                let mut bytes = value.as_bytes().to_vec();
                let at = at % 40;
                bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
                format!("{name}={}", String::from_utf8(bytes).unwrap())
            }
            ForgedCookie::Renamed => format!("__Host-{name}={value}"),
        }
    }
}

fn forged_cookies() -> impl Strategy<Value = Option<ForgedCookie>> {
    prop::option::of(prop_oneof![
        "[a-zA-Z0-9%=+/_.-]{0,80}".prop_map(ForgedCookie::Garbage),
        Just(ForgedCookie::IdAlone),
        (0..40usize).prop_map(ForgedCookie::Tampered),
        Just(ForgedCookie::Renamed),
    ])
}

/// What a client or a proxy the shop does not run may put in `X-Forwarded-For`.
fn forwarded_for() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::option::of(prop_oneof![
        "[ -~]{0,40}",
        prop::collection::vec("(25[0-5]|2[0-4][0-9]|1?[0-9]{1,2})(\\.(25[0-5]|2[0-4][0-9]|1?[0-9]{1,2})){3}", 1..20)
            .prop_map(|hops| hops.join(", ")),
        Just("::1, ::ffff:10.0.0.1, fe80::1%eth0, [2001:db8::1]:443".to_owned()),
        "[0-9., ]{2000,3000}",
    ])
    .prop_map(|value| value.map(|value| vec![("X-Forwarded-For".to_owned(), value)]).unwrap_or_default())
}

fn ids() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("{order}".to_owned()),
        Just("ord_nope".to_owned()),
        Just("..%2F..%2Fetc%2Fpasswd".to_owned()),
        Just("%00".to_owned()),
        Just("%F0%9F%92%B3".to_owned()),
        "[a-zA-Z0-9_]{1,40}",
        "[a-z]{300,400}",
    ]
}

fn paths() -> impl Strategy<Value = String> {
    (
        ids(),
        prop::sample::select(vec![
            "/api/orders",
            "/api/orders/recent",
            "/api/orders/{id}",
            "/api/orders/{id}/confirm",
            "/api/orders/{id}/abandon",
            "/api/catalog",
            "/api/config",
            "/api/nothing/{id}",
            "/api/orders/{id}/confirm/extra",
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
        Just(serde_json::json!(-1)),
        Just(serde_json::json!(1.5)),
        ".{0,30}".prop_map(Value::from),
        Just(Value::from("\u{0}\u{202e}💳 ' OR 1=1 --")),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec!["items", "sku", "quantity", "payment_key", "amount", "x", "__proto__"]),
                inner,
                0..5
            )
            .prop_map(|map| Value::Object(map.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

fn bodies() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        json_values().prop_map(|value| value.to_string().into_bytes()),
        // Shapes a JSON encoder never makes.
        Just(br#"{"payment_key":"pk","amount":1,"amount":-1}"#.to_vec()),
        Just(br#"{"items":[{"sku":"CERAMIC-MUG","quantity":1}],"items":[]}"#.to_vec()),
        Just(br#"{"payment_key":"pk","amount":1e309}"#.to_vec()),
        Just(br#"{"payment_key":"pk","amount":18446744073709551616}"#.to_vec()),
        Just(br#"{"items":[{"sku":"CERAMIC-MUG","quantity":-3}]}"#.to_vec()),
        Just(br#"{"items":[{"sku":"CERAMIC-MUG","quantity":1"#.to_vec()),
        prop::collection::vec(any::<u8>(), 0..200),
        Just(vec![b'['; 5_000]),
        Just(vec![b'a'; 20_000]),
    ]
}

fn hostile() -> impl Strategy<Value = Hostile> {
    (
        prop::sample::select(vec![Method::GET, Method::POST, Method::PUT, Method::DELETE, Method::PATCH]),
        paths(),
        prop::option::of(prop::sample::select(vec![
            "application/json".to_owned(),
            "text/plain".to_owned(),
            "application/x-www-form-urlencoded".to_owned(),
            "application/json; charset=utf-16".to_owned(),
            "multipart/form-data".to_owned(),
        ])),
        prop::option::of(prop_oneof![Just(String::new()), "[ -~]{1,20}", "[a-z]{301,320}"]),
        forwarded_for(),
        forged_cookies(),
        bodies(),
    )
        .prop_map(|(method, path, content_type, idempotency_key, headers, cookie, body)| Hostile {
            method,
            path,
            content_type,
            idempotency_key,
            headers,
            cookie,
            body,
        })
}

fn admin_paths() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec![
            "/admin/",
            "/admin/orders",
            "/admin/orders?status={id}",
            "/admin/orders?older_than={id}",
            "/admin/orders?status=UNKNOWN&status=PAID",
            "/admin/orders/{id}",
            "/admin/orders/{id}/cancel",
            "/admin/orders/{id}/recover",
            "/admin/reconcile",
            "/admin/nothing/{id}",
            "/admin/orders/{id}/cancel/extra",
        ]),
        ids(),
    )
        .prop_map(|(template, id)| template.replace("{id}", &id))
}

fn operator_headers() -> impl Strategy<Value = Vec<(String, String)>> {
    let authorization = prop::option::of(prop_oneof![
        Just(format!("Bearer {OPERATOR_TOKEN}")),
        Just("Bearer wrong".to_owned()),
        Just("Bearer ".to_owned()),
        Just(format!("Basic {OPERATOR_TOKEN}")),
        "[ -~]{0,40}",
        "[a-z]{5000,5100}",
    ]);
    let operator = prop::option::of(prop_oneof![Just("지우".to_owned()), "[ -~]{0,30}", "[a-z]{1000,1100}"]);
    (authorization, operator).prop_map(|(authorization, operator)| {
        let mut headers = Vec::new();
        if let Some(value) = authorization {
            headers.push(("Authorization".to_owned(), value));
        }
        if let Some(value) = operator {
            headers.push(("X-Operator".to_owned(), value));
        }
        headers
    })
}

fn hostile_to_operators() -> impl Strategy<Value = Hostile> {
    (hostile(), admin_paths(), operator_headers()).prop_map(|(request, path, headers)| Hostile {
        path,
        headers,
        ..request
    })
}

/// A client on an address of its own, one of 127.0.0.0/8: the admin listener
/// refuses an address after a few wrong tokens, and the cases with the right
/// token must still reach the routes (the throttle has its own test).
fn next_operator_address() -> reqwest::Client {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let address =
        std::net::Ipv4Addr::new(127, 1, u8::try_from(n / 250 % 250).unwrap(), u8::try_from(n % 250 + 1).unwrap());
    reqwest::Client::builder().local_address(std::net::IpAddr::V4(address)).build().unwrap()
}

/// Sends `request` to `base` of `shop` and reports its status, body, and whether the database changed.
fn send(shop: &Shop, base: &str, request: &Hostile) -> (StatusCode, Vec<u8>, bool) {
    let client = if base == shop.server.admin_url { next_operator_address() } else { shop.server.http.clone() };
    let cookie =
        request.cookie.as_ref().map_or(shop.owner_cookie.clone(), |forged| forged.made_from(&shop.owner_cookie));
    send_from(shop, base, &client, request, Some(cookie))
}

/// Sends `request` from `client`, with `cookie` if given; see `send`.
fn send_from(
    shop: &Shop,
    base: &str,
    client: &reqwest::Client,
    request: &Hostile,
    cookie: Option<String>,
) -> (StatusCode, Vec<u8>, bool) {
    shop.runtime.block_on(async {
        let db = shop.server.db().await;
        let before = db.digest().await.unwrap();
        let url = format!("{base}{}", request.path.replace("{order}", &shop.order_id));
        let mut builder = client.request(request.method.clone(), url).body(request.body.clone());
        if let Some(content_type) = &request.content_type {
            builder = builder.header("Content-Type", content_type);
        }
        if let Some(key) = &request.idempotency_key {
            builder = builder.header("Idempotency-Key", key);
        }
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        if let Some(cookie) = cookie {
            builder = builder.header("Cookie", cookie);
        }
        let response = builder.send().await.unwrap();
        let status = response.status();
        let body = response.bytes().await.unwrap().to_vec();
        let after = db.digest().await.unwrap();
        (status, body, before != after)
    })
}

/// The rules every answer to a hostile request keeps.
fn assert_refused_cleanly(
    request: &Hostile,
    status: StatusCode,
    body: &[u8],
    changed: bool,
) -> Result<(), TestCaseError> {
    prop_assert!(!status.is_server_error(), "{request:?} got {status}: {}", String::from_utf8_lossy(body));
    if status.is_client_error() {
        let error: Value = serde_json::from_slice(body)
            .map_err(|_| TestCaseError::fail(format!("{request:?}: {status} without a JSON body")))?;
        prop_assert!(error["code"].as_str().is_some_and(|code| !code.is_empty()), "{request:?}: {error}");
        prop_assert!(error["message"].as_str().is_some_and(|message| !message.is_empty()), "{request:?}: {error}");
        prop_assert!(!changed, "{request:?} was refused ({status}) but changed the database");
    } else if changed {
        prop_assert!(may_write(request) && status.is_success(), "{request:?} changed the database with {status}");
    }
    Ok(())
}

/// Whether a request with this method and path could legitimately change data
/// (a well-formed order or confirm): only those may answer 2xx and write.
fn may_write(request: &Hostile) -> bool {
    request.method == Method::POST
}

/// Whatever a forged cookie asks of the owner's order: reading it, listing the
/// customer's orders, closing or confirming it.
fn forged_asks() -> impl Strategy<Value = Hostile> {
    let forged = forged_cookies().prop_filter_map("a forged cookie", |cookie| cookie);
    let asks = prop::sample::select(vec![
        (Method::GET, "/api/orders/{order}"),
        (Method::GET, "/api/orders/{order}?wait=500ms"),
        (Method::GET, "/api/orders"),
        (Method::GET, "/api/orders/recent"),
        (Method::POST, "/api/orders/{order}/abandon"),
        (Method::POST, "/api/orders/{order}/confirm"),
    ]);
    (forged, asks, forwarded_for()).prop_map(|(cookie, (method, path), headers)| Hostile {
        method,
        path: path.to_owned(),
        content_type: Some("application/json".to_owned()),
        idempotency_key: Some("forged-cookie-key".to_owned()),
        headers,
        cookie: Some(cookie),
        body: br#"{"payment_key":"tpk_forged","amount":25800}"#.to_vec(),
    })
}

/// Cases per property: 256 on SQLite; 64 on PostgreSQL, where each case's two
/// digests of the database take about twice as long. The requests come from the
/// same strategies, and the SQLite run of the same tests sends all 256.
fn cases() -> u32 {
    if support::postgres_server().is_some() { 64 } else { 256 }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_cookie_the_server_did_not_sign_never_reaches_its_customers_order(request in forged_asks()) {
        let shop = forged_cookies_shop();
        let (status, body, changed) = send(shop, &shop.server.url, &request);
        let text = String::from_utf8_lossy(&body);
        prop_assert!(!text.contains(&shop.order_id), "{request:?} read the owner's order: {status} {text}");
        prop_assert!(!changed, "{request:?} changed the database ({status})");
        prop_assert!(!status.is_server_error(), "{request:?}: {status}");
    }

    #[test]
    fn hostile_requests_are_refused_with_a_code_and_change_nothing(request in hostile()) {
        let shop = customers_shop();
        let (status, body, changed) = send(shop, &shop.server.url, &request);
        assert_refused_cleanly(&request, status, &body, changed)?;
        let about_the_order = request.path.contains("{order}");
        prop_assert!(
            request.cookie.is_none() || !about_the_order || !status.is_success(),
            "{request:?}: a cookie the server did not sign reached the owner's order ({status})"
        );
    }

    #[test]
    fn hostile_requests_to_the_operators_are_refused_with_a_code_and_change_nothing(request in hostile_to_operators()) {
        let shop = operators_shop();
        let (status, body, changed) = send(shop, &shop.server.admin_url, &request);
        assert_refused_cleanly(&request, status, &body, changed)?;
        let authorized = request.headers.iter().any(|(name, value)| name == "Authorization" && *value == format!("Bearer {OPERATOR_TOKEN}"));
        prop_assert!(authorized || !changed, "{request:?} changed the database without the token");
    }
}

/// The shop API's keys: the shop under attack's, another shop's.
const BOOKS_KEY: &str = "sk_books_hostile_0123456789abcdefghijklmnopqrstuv";
const TEA_KEY: &str = "sk_tea_hostile_0123456789abcdefghijklmnopqrstuvwx";
/// The Idempotency-Key of the one checkout the shop created before the attack.
const USED_KEY: &str = "used-key";

/// A server with two shops, one checkout made by the first with `USED_KEY`.
fn shop_api_shop() -> &'static Shop {
    static SHOP: OnceLock<Shop> = OnceLock::new();
    SHOP.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let (pg, server, order_id) = runtime.block_on(async {
            use payonce_server::shops::{Shops, key_digest};
            let pg = FakePg::start().await;
            let shops = format!(
                "[[shop]]\nid = \"books\"\nname = \"Books\"\norder_id_prefix = \"ord_books_\"\n\
                 return_origins = [\"https://books.example\"]\npay_with = [\"toss\"]\nkey_digests = [\"{}\"]\n\
                 [[shop]]\nid = \"tea\"\nname = \"Tea\"\norder_id_prefix = \"ord_tea_\"\n\
                 return_origins = [\"https://tea.example\"]\npay_with = [\"toss\"]\nkey_digests = [\"{}\"]\n",
                key_digest(BOOKS_KEY),
                key_digest(TEA_KEY)
            );
            let server = Server::start_with(&pg.url, |config| {
                config.shops = Shops::parse(&shops, "ord_").unwrap();
            })
            .await;
            let created = reqwest::Client::new()
                .post(format!("{}/v1/checkouts", server.url))
                .bearer_auth(BOOKS_KEY)
                .header("Idempotency-Key", USED_KEY)
                .json(&good_checkout())
                .send()
                .await
                .unwrap();
            assert_eq!(created.status(), StatusCode::CREATED);
            let created: Value = created.json().await.unwrap();
            (pg, server, created["id"].as_str().unwrap().to_owned())
        });
        Shop { runtime, server, order_id, owner_cookie: String::new(), _pg: pg }
    })
}

fn good_checkout() -> Value {
    serde_json::json!({
        "reference": "ORDER-1",
        "name": {"en": "Two novels", "ko": "소설 두 권"},
        "lines": [{"name": "A novel", "quantity": 2, "unit_amount": 14_000}],
        "amount": 28_000,
        "return_url": "https://books.example/orders/1/back",
    })
}

/// A checkout a shop should never get created: one thing wrong with a good one.
fn bad_checkouts() -> impl Strategy<Value = Vec<u8>> {
    let broken = prop::sample::select(vec![
        ("amount", serde_json::json!(28_001)),
        ("amount", serde_json::json!(0)),
        ("amount", serde_json::json!(-28_000)),
        ("amount", serde_json::json!(u64::MAX)),
        ("amount", serde_json::json!("28000")),
        ("lines", serde_json::json!([])),
        ("lines", serde_json::json!([{"name": "A", "quantity": 2, "unit_amount": u64::MAX}])),
        ("lines", serde_json::json!([{"name": "A", "quantity": 0, "unit_amount": 28_000}])),
        ("lines", serde_json::json!([{"name": "A", "quantity": 1000, "unit_amount": 28}])),
        ("lines", serde_json::json!([{"name": "", "quantity": 1, "unit_amount": 28_000}])),
        ("lines", serde_json::json!([{"name": "A", "quantity": 1, "unit_amount": 28_000, "sku": "x"}])),
        (
            "lines",
            serde_json::json!(
                (0..51).map(|_| serde_json::json!({"name": "A", "quantity": 1, "unit_amount": 1})).collect::<Vec<_>>()
            ),
        ),
        ("return_url", serde_json::json!("https://evil.example/orders/1/back")),
        ("return_url", serde_json::json!("http://books.example/orders/1/back")),
        ("return_url", serde_json::json!("javascript:alert(1)")),
        ("return_url", serde_json::json!("https://user:pass@books.example/")),
        ("return_url", serde_json::json!("/orders/1/back")),
        ("return_url", serde_json::json!(format!("https://books.example/{}", "a".repeat(3_000)))),
        (
            "metadata",
            serde_json::json!(
                (0..21).map(|n| (n.to_string(), "v".to_owned())).collect::<std::collections::BTreeMap<_, _>>()
            ),
        ),
        ("metadata", serde_json::json!({"note": "v".repeat(501)})),
        ("metadata", serde_json::json!({"": "v"})),
        ("metadata", serde_json::json!({"n": 1})),
        ("name", serde_json::json!({})),
        ("name", serde_json::json!({"en": "a".repeat(101)})),
        ("name", serde_json::json!({"fr": "Deux romans"})),
        ("reference", serde_json::json!("")),
        ("reference", serde_json::json!("r".repeat(65))),
        ("reference", serde_json::json!("a\u{0}b")),
        ("pay_with", serde_json::json!(["kakaopay"])),
        ("pay_with", serde_json::json!([])),
        ("pay_with", serde_json::json!(["paypal"])),
        ("expires_in", serde_json::json!(0)),
        ("expires_in", serde_json::json!(86_401)),
        ("currency", serde_json::json!("USD")),
    ]);
    prop_oneof![
        4 => broken.prop_map(|(field, value)| {
            let mut body = good_checkout();
            body[field] = value;
            body.to_string().into_bytes()
        }),
        1 => bodies(),
    ]
}

/// Requests to the shop API that must all be refused: bad checkouts with the
/// right key, any checkout with a wrong, missing or another shop's key, the
/// used key with another body, bad refunds and reads.
fn hostile_to_the_shop_api() -> impl Strategy<Value = Hostile> {
    let key = prop_oneof![
        6 => Just(Some(BOOKS_KEY.to_owned())),
        1 => Just(Some(TEA_KEY.to_owned())),
        1 => Just(None),
        1 => "[ -~]{0,60}".prop_map(Some),
    ];
    let idempotency_key = prop::option::of(prop_oneof![
        4 => "[a-z0-9]{8,16}",
        2 => Just(USED_KEY.to_owned()),
        1 => Just(String::new()),
        1 => "[a-z]{301,320}",
    ]);
    let path = prop::sample::select(vec![
        (Method::POST, "/v1/checkouts"),
        (Method::POST, "/v1/checkouts"),
        (Method::POST, "/v1/checkouts"),
        (Method::POST, "/v1/checkouts/{order}/refunds"),
        (Method::GET, "/v1/checkouts?limit=0"),
        (Method::GET, "/v1/checkouts?after=%00"),
        (Method::PUT, "/v1/checkouts/{order}"),
        (Method::DELETE, "/v1/checkouts/{order}"),
        (Method::POST, "/v1/checkouts/ord_nope/refunds"),
        (Method::POST, "/v1/nothing"),
    ]);
    (key, idempotency_key, path, bad_checkouts(), forwarded_for()).prop_map(
        |(key, idempotency_key, (method, path), body, mut headers)| {
            if let Some(key) = key {
                headers.push(("Authorization".to_owned(), format!("Bearer {key}")));
            }
            Hostile {
                method,
                path: path.to_owned(),
                content_type: Some("application/json".to_owned()),
                idempotency_key,
                headers,
                cookie: None,
                body,
            }
        },
    )
}

/// Sends `request` to the shop API from an address of its own (wrong keys are
/// throttled per address), and reports its status, body and whether the database changed.
fn send_to_the_shop_api(shop: &Shop, request: &Hostile) -> (StatusCode, Vec<u8>, bool) {
    send_from(shop, &shop.server.url, &next_operator_address(), request, None)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_shop_api_refuses_bad_checkouts_and_keys_with_a_code_and_changes_nothing(request in hostile_to_the_shop_api()) {
        let shop = shop_api_shop();
        let (status, body, changed) = send_to_the_shop_api(shop, &request);
        prop_assert!(status.is_client_error(), "{request:?} was not refused: {status} {}", String::from_utf8_lossy(&body));
        assert_refused_cleanly(&request, status, &body, changed)?;
    }
}

#[test]
fn a_truncated_body_changes_nothing_and_the_server_goes_on() {
    use tokio::io::AsyncWriteExt;
    let shop = Shop::open();
    shop.runtime.block_on(async {
        let db = shop.server.db().await;
        let before = db.digest().await.unwrap();
        let mut stream = tokio::net::TcpStream::connect(shop.server.url.trim_start_matches("http://")).await.unwrap();
        let head =
            "POST /api/orders HTTP/1.1\r\nHost: shop\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n";
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(br#"{"items":[{"sku":"CERAMIC-MUG","#).await.unwrap();
        drop(stream); // the client goes away mid-body
        let catalog = shop.server.http.get(format!("{}/api/catalog", shop.server.url)).send().await.unwrap();
        assert_eq!(catalog.status(), StatusCode::OK);
        assert_eq!(db.digest().await.unwrap(), before);
    });
}

//! The `payonce-server` binary as an operator runs it: killed mid-payment, and
//! refusing a configuration that would report payments wrongly.

use crate::support;

use std::time::Duration;

use payonce_api::OrderStatus;
use serde_json::json;
use support::{FakePg, Server, assert_charges_agree, customer_cookie, eventually};

#[tokio::test]
async fn a_server_killed_mid_payment_settles_the_order_after_restart_with_one_charge() {
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 2_000})).await;
    let args = [
        "--pg-url",
        &pg.url,
        "--pg-read-timeout",
        "1500ms",
        "--pg-connect-timeout",
        "500ms",
        "--recovery-interval",
        "300ms",
    ];
    let http = reqwest::Client::builder().cookie_store(true).build().unwrap();
    let server = Server::spawn_binary(support::Store::fresh().await, http, &args).await;
    let created = server.create_order().await;
    let confirm = tokio::spawn(server.confirm_request(&created.order, "key-killed").send());
    eventually("the PG is processing the payment", Duration::from_secs(5), || async {
        (pg.stats().await.in_flight == 1).then_some(())
    })
    .await;

    let (store, http) = server.kill().await;
    assert!(confirm.await.unwrap().is_err(), "the customer's request died with the server");
    let restarted = Server::spawn_binary(store, http, &args).await;

    assert_eq!(restarted.order(&created.order.order_id).await.status, OrderStatus::Pending, "the write-ahead survived");
    restarted.wait_for(&created.order.order_id, OrderStatus::Paid, Duration::from_secs(30)).await;
    assert_eq!(
        restarted.history(&created.order.order_id).await,
        ["CREATED>PENDING", "PENDING>UNKNOWN", "UNKNOWN>PAID"],
        "recovery first said the outcome was unknown, then what the PG showed"
    );
    assert_charges_agree(&pg, &restarted, &[&created.order.order_id]).await;
    assert_eq!(pg.stats().await.processings, 1);
}

#[tokio::test]
async fn an_operator_sees_the_learned_pg_limit_from_the_start_at_40() {
    let pg = FakePg::start().await;
    let http = reqwest::Client::builder().cookie_store(true).build().unwrap();
    let server = Server::spawn_binary(support::Store::fresh().await, http, &["--pg-url", &pg.url]).await;
    let paid = server.paid_order().await;
    assert_eq!(paid.status, OrderStatus::Paid);

    // Published as the server starts, before the limit first changes; each PG's is its own.
    assert_eq!(server.metric("payment_pg_limit{pg=\"toss\"}").await.as_deref(), Some("40"));
    // And under its old name, until a later release.
    assert_eq!(server.metric("payment_pg_concurrency_limit{pg=\"toss\"}").await.as_deref(), Some("40"));
}

/// The learned limit hears from every call the PG processes, through the
/// gateway each call goes through: a confirm the PG took while every place
/// was in use raises it (slow start), one it refused for load lowers it.
#[tokio::test]
async fn the_learned_pg_limit_rises_while_the_pg_takes_every_place_and_falls_when_it_refuses_for_load() {
    use payonce_rules::learning::INITIAL;

    let pg = FakePg::start().await;
    // Held at the PG, each confirm stays in processing and keeps its place;
    // a read timeout longer than the test, as a timeout counts as overload.
    pg.configure(json!({"hold": true})).await;
    let server = Server::own_process(&pg.url, &[("--pg-read-timeout", "60s")]).await;
    let limit = || async {
        let value = server.metric("payment_pg_limit{pg=\"toss\"}").await?;
        value.parse::<u32>().ok()
    };
    assert_eq!(limit().await, Some(INITIAL));

    let mut orders = Vec::new();
    for _ in 0..INITIAL {
        orders.push(server.create_order().await.order);
    }
    // Sent together and never awaited: the PG holds them all.
    let _held: Vec<_> = orders
        .iter()
        .map(|order| tokio::spawn(server.confirm_request(order, &uuid::Uuid::new_v4().to_string()).send()))
        .collect();
    let risen = eventually("the PG took a confirm with every place in use", Duration::from_secs(20), || async {
        limit().await.filter(|&limit| limit > INITIAL)
    })
    .await;

    // The PG's contract is full: the confirm the risen limit lets through is refused for load.
    pg.configure(json!({"contract_limit": INITIAL})).await;
    let refused = server.create_order().await.order;
    let _ = server.confirm(&refused, &uuid::Uuid::new_v4().to_string()).await;
    assert!(pg.stats().await.contract_limit_rejections > 0, "the PG refused it for load");
    let fallen = eventually("the refusal lowered the limit", Duration::from_secs(10), || async {
        limit().await.filter(|&limit| limit < risen)
    })
    .await;
    assert!(fallen < INITIAL, "a refusal takes the limit down to 95 %: {risen} -> {fallen}");
}

#[tokio::test]
async fn the_binary_refuses_a_checking_window_shorter_than_its_pg_timeout() {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_payonce-server"))
        .args(["--listen", "127.0.0.1:0", "--max-checks", "10"])
        .output()
        .await
        .unwrap();

    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("refusing to start"), "{stderr}");
    assert!(stderr.contains("= 35s") && stderr.contains("= 1m 3s"), "{stderr}");
}

#[tokio::test]
async fn the_binary_refuses_a_malformed_duration_with_an_example() {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_payonce-server"))
        .args(["--confirm-wait", "fifteen"])
        .output()
        .await
        .unwrap();

    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--confirm-wait") && stderr.contains("examples: 500ms, 15s, 2m"), "{stderr}");
}

#[tokio::test]
async fn help_shows_no_secret_from_the_environment() {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_payonce-server"))
        .arg("--help")
        .env("PAYONCE_PG_SECRET_KEY", "live_sk_from_the_environment")
        .env("PAYONCE_ADMIN_TOKEN", "admin-token-from-the-environment-of-this-test")
        .env("PAYONCE_DB", "postgres://shop:db-password-from-the-environment@db.internal/shop")
        .output()
        .await
        .unwrap();

    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(help.contains("--pg-secret-key-file") && help.contains("--admin-token-file"), "{help}");
    for secret in [
        "live_sk_from_the_environment",
        "admin-token-from-the-environment-of-this-test",
        "db-password-from-the-environment",
    ] {
        assert!(!help.contains(secret), "{secret} in --help:\n{help}");
    }
}

#[tokio::test]
async fn the_binary_refuses_a_live_key_for_a_pg_that_is_not_toss() {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_payonce-server"))
        .args(["--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--pg-url", "http://127.0.0.1:9"])
        .env("PAYONCE_PG_SECRET_KEY", "live_sk_shop")
        .output()
        .await
        .unwrap();

    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("refusing to start") && stderr.contains("goes only to https://api.tosspayments.com"),
        "{stderr}"
    );
    assert!(!stderr.contains("live_sk_shop"), "{stderr}");
}

#[tokio::test]
async fn customers_keep_their_orders_across_a_rotation_of_the_cookie_key_and_old_cookies_end_with_it() {
    let pg = FakePg::start().await;
    let keys = tempfile::tempdir().unwrap();
    let key_file = |name: &str, key: &str| {
        let path = keys.path().join(name);
        std::fs::write(&path, format!("{key}\n")).unwrap();
        path.display().to_string()
    };
    let (old_key, new_key) =
        (key_file("old", &"3f9a1c7e5b2d8046".repeat(4)), key_file("new", &"c4e8a2f6b0d9175e".repeat(4)));
    let http = reqwest::Client::new();
    let server = Server::spawn_binary(
        support::Store::fresh().await,
        http,
        &["--pg-url", &pg.url, "--customer-key-file", &old_key],
    )
    .await;
    let old_cookie =
        customer_cookie(server.http.get(format!("{}/api/catalog", server.url))).await.expect("a new customer");
    let created = server
        .http
        .post(format!("{}/api/orders", server.url))
        .header("cookie", &old_cookie)
        .json(&json!({"items": [{"sku": "CERAMIC-MUG", "quantity": 1}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), reqwest::StatusCode::CREATED);
    let order: payonce_api::CreatedOrder = created.json().await.unwrap();
    let order_url = |server: &Server| format!("{}/api/orders/{}", server.url, order.order.order_id);
    let (store, http) = server.kill().await;

    // Rotated: until the rotation's end the old key only verifies, and the customer's cookie is signed again.
    let rotation = |until: &'static str| {
        let previous = ["--customer-key-previous-file", &old_key, "--customer-key-previous-until", until];
        [&["--pg-url", &pg.url, "--customer-key-file", &new_key][..], &previous[..]].concat()
    };
    let rotated = Server::spawn_binary(store, http, &rotation("2999-01-01T00:00:00Z")).await;
    let seen = rotated.http.get(order_url(&rotated)).header("cookie", &old_cookie).send().await.unwrap();
    assert_eq!(seen.status(), reqwest::StatusCode::OK, "the customer is the same under the new key");
    let new_cookie = customer_cookie(rotated.http.get(order_url(&rotated)).header("cookie", &old_cookie))
        .await
        .expect("signed again with the new key");
    assert_ne!(new_cookie, old_cookie);
    let (store, http) = rotated.kill().await;

    // Past the rotation's end, with the old key still given: a cookie only it
    // signed (one forged with it, if it leaked) names nobody.
    let ended = Server::spawn_binary(store, http, &rotation("2000-01-01T00:00:00Z")).await;
    let stale = ended.http.get(order_url(&ended)).header("cookie", &old_cookie).send().await.unwrap();
    assert_eq!(stale.status(), reqwest::StatusCode::NOT_FOUND, "past its end the old key signs in nobody");
    let seen = ended.http.get(order_url(&ended)).header("cookie", &new_cookie).send().await.unwrap();
    assert_eq!(seen.status(), reqwest::StatusCode::OK, "the cookie signed again during the rotation still counts");
    let (store, http) = ended.kill().await;

    // The old key dropped: the cookie signed again still names the customer; one only the old key signed, nobody.
    let after = Server::spawn_binary(store, http, &["--pg-url", &pg.url, "--customer-key-file", &new_key]).await;
    let seen = after.http.get(order_url(&after)).header("cookie", &new_cookie).send().await.unwrap();
    assert_eq!(seen.status(), reqwest::StatusCode::OK);
    let stale = after.http.get(order_url(&after)).header("cookie", &old_cookie).send().await.unwrap();
    assert_eq!(stale.status(), reqwest::StatusCode::NOT_FOUND, "a cookie only the dropped key signed is no customer");
}

#[tokio::test]
async fn the_binary_refuses_an_operators_file_with_a_bad_line_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("operators");
    let digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    std::fs::write(
        &file,
        format!("# the shop's operators\njiwoo refund {digest}\njiwoo read-only {}\n", "0".repeat(64)),
    )
    .unwrap();
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_payonce-server"))
        .args(["--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"])
        .arg("--operators-file")
        .arg(&file)
        .output()
        .await
        .unwrap();

    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("refusing to start") && stderr.contains("--operators-file"), "{stderr}");
    assert!(stderr.contains("line 3: the name \"jiwoo\" is already on line 2"), "{stderr}");
}

#[tokio::test]
async fn the_binary_refuses_a_short_admin_token() {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_payonce-server"))
        .args(["--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"])
        .env("PAYONCE_ADMIN_TOKEN", "e2e-operator-token")
        .output()
        .await
        .unwrap();

    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("refusing to start") && stderr.contains("shorter than 32"), "{stderr}");
    assert!(!stderr.contains("e2e-operator-token"), "{stderr}");
}

#[tokio::test]
async fn the_binary_makes_an_operators_line_from_a_token_on_stdin_and_refuses_a_weak_one() {
    use tokio::io::AsyncWriteExt;
    let line = |name: &'static str, token: &'static str| async move {
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_payonce-server"))
            .args(["operator-line", name, "refund"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(token.as_bytes()).await.unwrap();
        child.wait_with_output().await.unwrap()
    };
    // printf %s test-token-of-32-characters-or-more | sha256sum
    let made = line("jiwoo", "test-token-of-32-characters-or-more\n").await;
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let expected = payonce_server::operators::file_line("jiwoo", "refund", "test-token-of-32-characters-or-more");
    assert_eq!(String::from_utf8_lossy(&made.stdout).trim_end(), expected.unwrap());
    let weak = line("jiwoo", "password").await;
    assert_eq!(weak.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&weak.stderr).contains("shorter than 32"));
}

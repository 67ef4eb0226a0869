//! The transaction listing and direct charges over real HTTP: every approval
//! and cancel is a transaction, listed by date a page at a time.

use crate::common;

use std::time::Duration;

use common::{Pg, cancel_body, error_code, fast_config, start};
use fake_pg::{Payment, Transaction};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// A range wide enough for anything a test makes.
const ALL_TIME: &str = "startDate=2000-01-01T00:00:00&endDate=2099-12-31T23:59:59.999";

async fn page(pg: &Pg, query: &str) -> Vec<Transaction> {
    let response = pg.get(&format!("/v1/transactions?{query}")).await;
    assert_eq!(response.status(), StatusCode::OK, "{}", response.text().await.unwrap());
    response.json().await.unwrap()
}

async fn charged_directly(pg: &Pg, order_id: &str, amount: u64) -> Payment {
    let response = pg.admin_charge(json!({"orderId": order_id, "amount": amount})).await;
    assert_eq!(response.status(), StatusCode::OK, "{}", response.text().await.unwrap());
    response.json().await.unwrap()
}

/// The orderIds of the transactions from `start` to `end`.
async fn orders_between(pg: &Pg, start: &str, end: &str) -> Vec<String> {
    page(pg, &format!("startDate={start}&endDate={end}")).await.into_iter().map(|t| t.order_id).collect()
}

/// A transaction's time as the listing takes it: Korean local time, no offset.
fn local(transaction: &Transaction) -> &str {
    transaction.transaction_at.strip_suffix("+09:00").expect("Korean time")
}

#[tokio::test]
async fn every_approval_and_cancel_is_a_transaction() {
    let pg = start(fast_config()).await;
    let direct = charged_directly(&pg, "recon-1", 5_000).await;
    let confirmed = pg.charged("pk-1", "order-1", 1_000).await;
    let partial: Payment = pg.cancel("pk-1", None, &cancel_body("r", Some(300))).await.json().await.unwrap();
    pg.confirm(None, &common::body("pk-never", "order-never", 1_000)).await; // approved, but
    pg.open_window("order-window", 1_000).await; // a window alone is no transaction

    let raw: Value = pg.get(&format!("/v1/transactions?{ALL_TIME}")).await.json().await.unwrap();
    for field in [
        "mId",
        "transactionKey",
        "paymentKey",
        "orderId",
        "method",
        "customerKey",
        "useEscrow",
        "receiptUrl",
        "status",
        "transactionAt",
        "currency",
        "amount",
    ] {
        assert!(raw[0].get(field).is_some(), "{field} missing from {}", raw[0]);
    }
    let listed: Vec<Transaction> = serde_json::from_value(raw).unwrap();
    let summary: Vec<_> = listed.iter().map(|t| (t.order_id.as_str(), t.status.as_str(), t.amount)).collect();
    assert_eq!(
        summary,
        [
            ("recon-1", "DONE", 5_000),
            ("order-1", "DONE", 1_000),
            ("order-1", "PARTIAL_CANCELED", 300),
            ("order-never", "DONE", 1_000),
        ]
    );
    assert_eq!(listed[0].transaction_key, direct.last_transaction_key.unwrap());
    assert_eq!(listed[1].transaction_key, confirmed.last_transaction_key.unwrap());
    assert_eq!(listed[2].transaction_key, partial.cancels.unwrap()[0].transaction_key);
    let first = &listed[0];
    assert_eq!(
        (first.m_id.as_str(), first.method.as_deref(), first.currency.as_str()),
        ("tosspayments", Some("카드"), "KRW")
    );
    assert_eq!(first.payment_key, direct.payment_key);
    assert!(!first.use_escrow && first.receipt_url.as_deref().is_some_and(|url| url.ends_with(&direct.payment_key)));
    assert!(first.transaction_at.ends_with("+09:00"));
}

#[tokio::test]
async fn pages_follow_starting_after() {
    let pg = start(fast_config()).await;
    for n in 0..5 {
        charged_directly(&pg, &format!("order-{n}"), 1_000 + n).await;
    }
    let all = page(&pg, ALL_TIME).await;
    assert_eq!(all.len(), 5, "the default limit holds them all");
    let first = page(&pg, &format!("{ALL_TIME}&limit=2")).await;
    assert_eq!(first, all[..2]);
    let second = page(&pg, &format!("{ALL_TIME}&limit=2&startingAfter={}", first[1].transaction_key)).await;
    assert_eq!(second, all[2..4]);
    let last = page(&pg, &format!("{ALL_TIME}&limit=2&startingAfter={}", second[1].transaction_key)).await;
    assert_eq!(last, all[4..]);
    assert!(page(&pg, &format!("{ALL_TIME}&startingAfter={}", last[0].transaction_key)).await.is_empty());

    let (status, code, _) = error_code(pg.get(&format!("/v1/transactions?{ALL_TIME}&startingAfter=nope")).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::BAD_REQUEST, "INVALID_TRANSACTION_KEY"));
    for limit in ["0", "10001", "many"] {
        let (status, code, _) = error_code(pg.get(&format!("/v1/transactions?{ALL_TIME}&limit={limit}")).await).await;
        assert_eq!((status, code.as_str()), (StatusCode::BAD_REQUEST, "INVALID_REQUEST"), "{limit}");
    }
}

#[tokio::test]
async fn dates_pick_transactions_by_the_second_both_ends_included() {
    let pg = start(fast_config()).await;
    charged_directly(&pg, "early", 1_000).await;
    // The next one lands in a later second.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    charged_directly(&pg, "late", 2_000).await;
    let all = page(&pg, ALL_TIME).await;
    let (early, late) = (&all[0], &all[1]);
    assert_ne!(local(early), local(late));

    assert_eq!(orders_between(&pg, local(early), local(early)).await, ["early"]);
    assert_eq!(orders_between(&pg, local(late), "2099-01-01T00:00:00").await, ["late"]);
    assert_eq!(
        orders_between(&pg, &format!("{}.000", local(early)), &format!("{}.999", local(late))).await,
        ["early", "late"]
    );
    assert!(orders_between(&pg, "2000-01-01T00:00:00", "2000-01-02T00:00:00").await.is_empty());

    let bad = [
        ("startDate=2022-01-01&endDate=2022-01-02T00:00:00", StatusCode::BAD_REQUEST, "INVALID_DATE"),
        ("startDate=2022-01-01T00:00:00%2B09:00&endDate=2022-01-02T00:00:00", StatusCode::BAD_REQUEST, "INVALID_DATE"),
        ("startDate=2022-13-01T00:00:00&endDate=2022-01-02T00:00:00", StatusCode::BAD_REQUEST, "INVALID_DATE"),
        ("startDate=2022-01-02T00:00:00&endDate=2022-01-01T00:00:00", StatusCode::BAD_REQUEST, "INVALID_DATE"),
        ("endDate=2022-01-01T00:00:00", StatusCode::BAD_REQUEST, "INVALID_REQUEST"),
    ];
    for (query, status, code) in bad {
        let (got_status, got_code, _) = error_code(pg.get(&format!("/v1/transactions?{query}")).await).await;
        assert_eq!((got_status, got_code.as_str()), (status, code), "{query}");
    }
    let anonymous = pg.client.get(format!("{}/v1/transactions?{ALL_TIME}", pg.url)).send().await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_direct_charge_is_a_done_payment_with_no_idempotency_record() {
    let pg = start(fast_config()).await;
    let response = pg.admin_charge(json!({"orderId": "recon-1", "amount": 7_000, "paymentKey": "pk-direct"})).await;
    assert_eq!(response.status(), StatusCode::OK);
    let payment: Payment = response.json().await.unwrap();
    assert_eq!(
        (payment.status.as_str(), payment.payment_key.as_str(), payment.total_amount),
        ("DONE", "pk-direct", 7_000)
    );
    assert!(payment.approved_at.is_some() && payment.receipt.is_some());
    assert_eq!(pg.order_payment("recon-1").await, Some(payment.clone()));
    let stats = pg.stats().await;
    assert_eq!(stats.charges_by_order.get("recon-1"), Some(&1));
    assert_eq!((stats.processings, stats.confirm_requests), (0, 0), "no confirm led to it");

    // Known as processed: a confirm of it is refused, whatever its key.
    let (status, code, _) =
        error_code(pg.confirm(Some("key-1"), &common::body("pk-direct", "recon-1", 7_000)).await).await;
    assert_eq!((status, code.as_str()), (StatusCode::BAD_REQUEST, "ALREADY_PROCESSED_PAYMENT"));
    // And it cancels like any other.
    let canceled = pg.cancel("pk-direct", None, &cancel_body("never ordered", None)).await;
    assert_eq!(canceled.status(), StatusCode::OK);

    for (body, mentions) in [
        (json!({"orderId": "recon-2"}), "amount"),
        (json!({"orderId": "recon 2", "amount": 1}), "orderId"),
        (json!({"amount": 1}), "orderId"),
        (json!({"orderId": "recon-2", "amount": 1, "paymentKey": "pk-direct"}), "exists"),
    ] {
        let (status, code, message) = error_code(pg.admin_charge(body.clone()).await).await;
        assert_eq!((status, code.as_str()), (StatusCode::BAD_REQUEST, "INVALID_REQUEST"), "{body}");
        assert!(message.contains(mentions), "{message}");
    }
    assert_eq!(pg.order_payment("recon-2").await, None);
}

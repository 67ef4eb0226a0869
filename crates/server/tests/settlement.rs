//! Settling payments against a PG that behaves as Toss documents: a repeated
//! Idempotency-Key replays the first response (a 500 included), unconfirmed
//! payments expire, and only a lookup tells what became of a payment. Every
//! test ends with the order agreeing with the PG's ledger.

use crate::support;

use std::time::Duration;

use payonce_api::OrderStatus;
use reqwest::StatusCode;
use serde_json::json;
use support::{FakePg, Server, assert_charges_agree, eventually};

const SETTLE: Duration = Duration::from_secs(15);

#[tokio::test]
async fn a_500_after_the_charge_is_replayed_as_a_500_so_a_lookup_finds_the_payment() {
    let pg = FakePg::start().await;
    pg.configure(json!({"faults": {"error_500_after_charge": 1.0}})).await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;
    let order_id = created.order.order_id.as_str();

    let (status, body) = server.confirm(&created.order, "key-500-charged").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::ACCEPTED, Some("UNKNOWN")));

    server.wait_for(order_id, OrderStatus::Paid, SETTLE).await;
    let stats = pg.stats().await;
    assert_eq!(stats.processings, 1);
    assert!(stats.lookups >= 1, "the lookup, not a replay, settled it");
    assert_eq!(server.history(order_id).await, ["CREATED>PENDING", "PENDING>UNKNOWN", "UNKNOWN>PAID"]);
    assert_charges_agree(&pg, &server, &[order_id]).await;
}

#[tokio::test]
async fn a_reset_after_the_charge_is_unknown_then_paid() {
    let pg = FakePg::start().await;
    pg.configure(json!({"faults": {"reset_after_charge": 1.0}})).await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;

    let (_, body) = server.confirm(&created.order, "key-reset-charged").await;
    assert_eq!(body["status"], "UNKNOWN");

    server.wait_for(&created.order.order_id, OrderStatus::Paid, SETTLE).await;
    assert_eq!(pg.stats().await.processings, 1);
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

#[tokio::test]
async fn an_approval_slower_than_the_read_timeout_is_paid_once_the_pg_finishes() {
    // The window's 70 s card at a time scale of 0.05 takes 3.5 s; the server gives up after 2 s.
    let pg = FakePg::start_with(|config| config.time_scale = 0.05).await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;
    let payment_key = pg.window_payment_key(&created, "approve_70s").await;

    let response = server.confirm_with_key(&created.order, &payment_key, "key-70s").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);

    server.wait_for(&created.order.order_id, OrderStatus::Paid, SETTLE).await;
    let stats = pg.stats().await;
    assert_eq!(stats.processings, 1, "resends while it processed met 409, never a second processing");
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

#[tokio::test]
async fn a_payment_whose_session_expired_before_any_confirm_arrived_is_failed_and_never_charged() {
    // Ten minutes at 0.0005 is 300 ms. Every confirm is reset before the PG processes it.
    let pg = FakePg::start_with(|config| config.time_scale = 0.000_5).await;
    pg.configure(json!({"faults": {"reset_before_processing": 1.0}})).await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;

    let (_, body) = server.confirm(&created.order, "key-expired").await;
    assert_eq!(body["status"], "UNKNOWN");

    let order = server.wait_for(&created.order.order_id, OrderStatus::Failed, SETTLE).await;
    // A lookup after the ten minutes shows the session EXPIRED; a resend that
    // arrives after them is refused for the expired session. Which comes first
    // depends on when recovery's passes fall; both settle it failed.
    let code = order.failure.unwrap().code;
    assert!(["EXPIRED_PAYMENT", "NOT_FOUND_PAYMENT_SESSION"].contains(&code.as_str()), "{code}");
    assert_eq!(pg.stats().await.processings, 0);
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

#[tokio::test]
async fn a_confirm_that_never_arrived_is_resent_with_its_own_key_and_processed_once() {
    let pg = FakePg::start().await;
    pg.configure(json!({"faults": {"reset_before_processing": 1.0}})).await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;

    let (_, body) = server.confirm(&created.order, "key-resent").await;
    assert_eq!(body["status"], "UNKNOWN");
    pg.configure(json!({"faults": {"reset_before_processing": 0.0}})).await;

    server.wait_for(&created.order.order_id, OrderStatus::Paid, SETTLE).await;
    let stats = pg.stats().await;
    assert_eq!((stats.processings, stats.faults_injected.reset_before_processing), (1, 1));
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

#[tokio::test]
async fn a_replayed_decline_is_settled_by_the_lookup_as_failed() {
    let pg = FakePg::start().await;
    // The PG declines after 2.5 s; the server stops waiting after 2 s.
    pg.configure(json!({"latency_ms": 2_500, "faults": {"decline": 1.0}})).await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;

    let (_, body) = server.confirm(&created.order, "key-declined-late").await;
    assert_eq!(body["status"], "UNKNOWN");

    let order = server.wait_for(&created.order.order_id, OrderStatus::Failed, SETTLE).await;
    assert_eq!(order.failure.unwrap().code, "REJECT_CARD_PAYMENT");
    assert_charges_agree(&pg, &server, &[&created.order.order_id]).await;
}

#[tokio::test]
async fn while_the_pg_is_out_the_breaker_holds_recovery_back_without_backing_off_and_it_settles_soon_after() {
    let pg = FakePg::start().await;
    // A 20 s recovery interval makes the breaker's cool-down 10 s. Its own
    // process: the breaker's figures are this server's alone.
    let server = Server::own_process(&pg.url, &[("--recovery-interval", "20s")]).await;
    let created = server.create_order().await;
    let order_id = created.order.order_id.as_str();
    pg.configure(json!({"outage": true})).await;

    let (_, body) = server.confirm(&created.order, "key-outage").await;
    assert_eq!(body["status"], "UNKNOWN", "a 503 is not a failure");
    // The confirm, then five lookups without an answer: the breaker opens.
    eventually("the breaker opens after five failed lookups", SETTLE, || async {
        (pg.stats().await.outage_refusals >= 6).then_some(())
    })
    .await;
    let when_opened = pg.stats().await.outage_refusals;
    assert_eq!(when_opened, 6, "no sixth lookup: the breaker opened at the fifth failure");
    // While it is open, recovery calls nothing; without it, a lookup every second or so.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(pg.stats().await.outage_refusals, when_opened, "recovery called the PG while the breaker was open");
    let attempt = server.db().await.sent_attempt_for_order(order_id).await.unwrap().unwrap();
    assert_eq!(attempt.recovery_passes, 0, "passes without an answer are not failed passes");
    assert_eq!(attempt.status, OrderStatus::Unknown);

    // The PG answers again: the breaker's probe after its cool-down settles the payment.
    pg.configure(json!({"outage": false})).await;
    server.wait_for(order_id, OrderStatus::Paid, SETTLE).await;
    assert_eq!(server.history(order_id).await, ["CREATED>PENDING", "PENDING>UNKNOWN", "UNKNOWN>PAID"]);
    let opened = server.metric("payment_pg_breaker_opened_total").await;
    assert_eq!(opened.as_deref(), Some("1"), "the breaker opened once");
    assert_charges_agree(&pg, &server, &[order_id]).await;
}

#[tokio::test]
async fn two_servers_on_one_database_never_recover_the_same_attempt_twice() {
    let pg = FakePg::start().await;
    // Slow lookups, so both servers' passes meet while an attempt is being looked up.
    pg.configure(json!({"lookup_latency_ms": 400, "faults": {"reset_after_charge": 1.0}})).await;
    let first = Server::start(&pg.url).await;
    let store = support::Store::beside(&first.store);
    let second = Server::start_on(support::test_config(&pg.url, &store), store).await;
    let mut order_ids = Vec::new();
    for n in 0..8 {
        let created = first.create_order().await;
        let (_, body) = first.confirm(&created.order, &format!("key-shared-{n}")).await;
        assert_eq!(body["status"], "UNKNOWN");
        order_ids.push(created.order.order_id);
    }

    for order_id in &order_ids {
        first.wait_for(order_id, OrderStatus::Paid, SETTLE).await;
        let history = first.history(order_id).await;
        assert_eq!(history, ["CREATED>PENDING", "PENDING>UNKNOWN", "UNKNOWN>PAID"], "{order_id}");
    }
    let stats = pg.stats().await;
    assert_eq!(stats.lookups, 8, "each attempt was looked up by one server, once");
    assert_eq!(stats.overlapping_calls, 0, "never by both at once");
    let ids: Vec<&str> = order_ids.iter().map(String::as_str).collect();
    assert_charges_agree(&pg, &first, &ids).await;
    drop(second);
}

#[tokio::test]
async fn a_definitive_answer_arriving_after_recovery_took_over_settles_once() {
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 1_500})).await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;
    let order_id = created.order.order_id.clone();
    let confirm = tokio::spawn(server.confirm_request(&created.order, "key-taken-over").send());
    eventually("the PG is processing", Duration::from_secs(5), || async {
        (pg.stats().await.in_flight == 1).then_some(())
    })
    .await;

    // As if the confirm task were frozen past its lease: recovery takes over.
    assert!(server.db().await.recover_now(payonce_server::db::JobKind::Payment, &order_id).await.unwrap());
    eventually("recovery marked it unknown", Duration::from_secs(5), || async {
        (server.order(&order_id).await.status == OrderStatus::Unknown).then_some(())
    })
    .await;

    let answer = confirm.await.unwrap().unwrap();
    assert_eq!(answer.status(), StatusCode::OK, "the confirm task's answer still settles it");
    server.wait_for(&order_id, OrderStatus::Paid, SETTLE).await;
    let history = server.history(&order_id).await;
    assert_eq!(history, ["CREATED>PENDING", "PENDING>UNKNOWN", "UNKNOWN>PAID"], "one settlement, by one of them");
    assert_eq!(pg.stats().await.processings, 1);
    assert_charges_agree(&pg, &server, &[&order_id]).await;
}

#[tokio::test]
async fn a_confirm_whose_store_waited_on_the_database_keeps_the_attempt_for_its_whole_call() {
    // The attempt's lease counts from before its store began: 0.5 + 4 s for
    // the call and 1 s to store its answer. The database stalls writers for
    // 4 s, so the stored lease would lapse 1.5 s into a 3 s approval; renewed
    // for a whole call before it goes out, it holds past the answer.
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 3_000})).await;
    let server = Server::start_with(&pg.url, |config| config.pg_read_timeout = Duration::from_secs(4)).await;
    let created = server.create_order().await;
    let order_id = created.order.order_id.clone();

    let stall = support::WriteStall::begin(&server.store).await;
    // The stall itself: how long the database keeps the store waiting.
    let stalling = async {
        tokio::time::sleep(Duration::from_secs(4)).await;
        stall.end().await;
    };
    let ((status, answer), ()) = tokio::join!(server.confirm(&created.order, "key-slow-store"), stalling);
    assert_eq!((status, answer["status"].as_str()), (StatusCode::OK, Some("PAID")), "{answer}");
    assert_eq!(
        server.history(&order_id).await,
        ["CREATED>PENDING", "PENDING>PAID"],
        "recovery never took the attempt, nor the page saw it unknown, while its confirm was out"
    );
    assert_eq!(pg.stats().await.lookups, 0, "nothing looked the payment up while its confirm was out");
    assert_charges_agree(&pg, &server, &[&order_id]).await;
}

/// A server whose recovery passes come an hour apart (an unknown outcome's
/// first look five minutes after it), at a PG that never receives a confirm:
/// what the test does is all that touches its payments.
async fn quiet_server() -> (FakePg, Server) {
    let pg = FakePg::start().await;
    pg.configure(json!({"faults": {"reset_before_processing": 1.0}})).await;
    let server = Server::start_with(&pg.url, |config| config.recovery_interval = Duration::from_secs(3_600)).await;
    (pg, server)
}

/// A payment whose confirm never reached the PG: UNKNOWN. Its order's id.
async fn unknown_payment(server: &Server, idempotency_key: &str) -> String {
    let created = server.create_order().await;
    let (_, body) = server.confirm(&created.order, idempotency_key).await;
    assert_eq!(body["status"], "UNKNOWN", "{body}");
    created.order.order_id
}

#[tokio::test]
async fn a_payments_lease_is_its_holders_alone_and_a_worker_it_lapsed_on_can_no_longer_renew_release_or_settle_it() {
    use payonce_api::Failure;
    use payonce_rules::settlement::Transition;
    use payonce_server::db::{Actor, JobKind, Lease, Writer, now_ms};
    let (pg, server) = quiet_server().await;
    let order_id = unknown_payment(&server, "key-held").await;
    let db = server.db().await;

    // Worker A takes the payment; while its lease holds, B cannot.
    let later = now_ms() + 3_600_000;
    let claim = |worker: &'static str, at: i64| db.claim_job(JobKind::Payment, &order_id, worker, at, at + 60_000);
    assert!(claim("worker-a", later).await.unwrap().is_some(), "A took it");
    assert!(claim("worker-b", later + 30_000).await.unwrap().is_none(), "two workers would ask the PG at once");

    // A freezes past its lease, and B takes the payment over.
    let lapsed = later + 61_000;
    assert!(claim("worker-b", lapsed).await.unwrap().is_some(), "B took it over once A's lease lapsed");

    // A wakes: it can neither renew the lease, let it go, nor store what it learned.
    assert!(!db.renew_job(JobKind::Payment, &order_id, "worker-a", lapsed + 120_000).await.unwrap());
    assert_eq!(db.release_job(JobKind::Payment, &order_id, "worker-a", None, true, None).await.unwrap(), 0);
    assert!(claim("worker-c", lapsed + 1_000).await.unwrap().is_none(), "B's lease still holds: A let go of nothing");
    let failed = Transition::Failed(Failure { code: "NOT_FOUND_PAYMENT".into(), message: "A's stale lookup".into() });
    let release = Lease::Release { next_attempt_at_ms: 0 };
    let by_a =
        db.transition(&order_id, OrderStatus::Unknown, &failed, release, Writer::holding(Actor::Recovery, "worker-a"));
    assert!(by_a.await.unwrap().is_none(), "a failure A read may be older than a resend of B's that charged");
    assert_eq!(server.order(&order_id).await.status, OrderStatus::Unknown);

    let by_b =
        db.transition(&order_id, OrderStatus::Unknown, &failed, release, Writer::holding(Actor::Recovery, "worker-b"));
    assert!(by_b.await.unwrap().is_some(), "the holder settles it");
    assert_eq!(server.order(&order_id).await.status, OrderStatus::Failed);
    assert_charges_agree(&pg, &server, &[&order_id]).await;
}

#[tokio::test]
async fn the_job_engine_sleeps_until_the_first_payment_falls_due_and_an_interval_when_none_is_open() {
    use payonce_server::db::{JobKind, now_ms};
    let (_pg, server) = quiet_server().await;
    let db = server.db().await;
    for kind in JobKind::ALL {
        assert_eq!(db.next_job_due_ms(kind).await.unwrap(), None, "nothing open: the engine sleeps its interval");
    }

    let stored_before = now_ms();
    unknown_payment(&server, "key-due-later").await;
    let due = db.next_job_due_ms(JobKind::Payment).await.unwrap().expect("the unknown payment is a job");
    // Were it due at once, the engine would wake every sixtieth of its interval to find nothing to do.
    let first_look = 5 * 60 * 1_000;
    assert!(due >= stored_before + first_look, "due at {due}, {} ms after the store", due - stored_before);
    assert!(due <= now_ms() + first_look, "due at {due}: not later than its first look");
    assert_eq!(db.next_job_due_ms(JobKind::Refund).await.unwrap(), None);
}

#[tokio::test]
async fn an_unknown_answer_for_an_attempt_already_unknown_changes_nothing_and_panics_nothing() {
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 1_500, "faults": {"reset_after_charge": 1.0}})).await;
    let server = Server::start(&pg.url).await;
    let created = server.create_order().await;
    let order_id = created.order.order_id.clone();
    let confirm = tokio::spawn(server.confirm_request(&created.order, "key-unknown-twice").send());
    eventually("the PG is processing", Duration::from_secs(5), || async {
        (pg.stats().await.in_flight == 1).then_some(())
    })
    .await;
    assert!(server.db().await.recover_now(payonce_server::db::JobKind::Payment, &order_id).await.unwrap());
    eventually("recovery marked it unknown", Duration::from_secs(5), || async {
        (server.order(&order_id).await.status == OrderStatus::Unknown).then_some(())
    })
    .await;

    // The reset reaches the confirm task for an attempt that is UNKNOWN already.
    let answer = confirm.await.unwrap().unwrap();
    assert_eq!(answer.status(), StatusCode::ACCEPTED, "answered, not a panic's 500");
    server.wait_for(&order_id, OrderStatus::Paid, SETTLE).await;
    assert_eq!(server.history(&order_id).await, ["CREATED>PENDING", "PENDING>UNKNOWN", "UNKNOWN>PAID"]);
    assert_charges_agree(&pg, &server, &[&order_id]).await;
}

#[tokio::test]
async fn a_settled_payment_never_changes_whatever_answer_arrives_late() {
    use payonce_api::Failure;
    use payonce_rules::settlement::Transition;
    use payonce_server::db::{Actor, Lease, Writer};

    let pg = FakePg::start().await;
    let server = Server::start(&pg.url).await;
    let paid = server.create_order().await;
    server.confirm(&paid.order, "key-paid").await;
    pg.configure(json!({"faults": {"decline": 1.0}})).await;
    let failed = server.create_order().await;
    server.confirm(&failed.order, "key-failed").await;
    let db = server.db().await;
    let late_decline = Transition::Failed(Failure { code: "REJECT_CARD_PAYMENT".into(), message: "late".into() });

    // Both ways: a late decline for a paid order, a late charge for a failed one,
    // from every status the confirm task or recovery settles from, and from the
    // settled status itself (the lifecycle refuses the move).
    // Written as the confirm task that holds the attempt: only the status refuses it.
    let holder = db.attempt_detail(&paid.order.order_id).await.unwrap().unwrap().lease_owner.unwrap();
    let confirm = Writer::holding(Actor::Confirm, &holder);
    let lease = Lease::Release { next_attempt_at_ms: 0 };
    for from in [OrderStatus::Pending, OrderStatus::Unknown, OrderStatus::Paid, OrderStatus::Failed] {
        let late = db.transition(&paid.order.order_id, from, &late_decline, lease, confirm).await.unwrap();
        assert_eq!(late, None, "a late decline from {from:?}");
        let recovery = Writer::without_lease(Actor::Recovery);
        let late = db.transition(&failed.order.order_id, from, &Transition::Paid, lease, recovery).await.unwrap();
        assert_eq!(late, None, "a late charge from {from:?}");
    }

    assert_eq!(server.order(&paid.order.order_id).await.status, OrderStatus::Paid);
    assert_eq!(server.order(&failed.order.order_id).await.status, OrderStatus::Failed);
    assert_eq!(server.history(&paid.order.order_id).await, ["CREATED>PENDING", "PENDING>PAID"]);
    assert_eq!(server.history(&failed.order.order_id).await, ["CREATED>PENDING", "PENDING>FAILED"]);
    assert_charges_agree(&pg, &server, &[&paid.order.order_id, &failed.order.order_id]).await;
}

#[tokio::test]
async fn only_the_holder_of_the_attempts_lease_stores_a_failure_or_an_unknown_outcome() {
    use payonce_api::Failure;
    use payonce_rules::settlement::Transition;
    use payonce_server::db::{Actor, Lease, Writer};

    let pg = FakePg::start().await;
    pg.configure(json!({"faults": {"reset_before_processing": 1.0}})).await;
    // Recovery waits a whole interval before its first look: the attempt stays UNKNOWN meanwhile.
    let server = Server::start_with(&pg.url, |config| config.recovery_interval = Duration::from_secs(600)).await;
    let created = server.create_order().await;
    let order_id = created.order.order_id.as_str();
    let (_, body) = server.confirm(&created.order, "key-held").await;
    assert_eq!(body["status"], "UNKNOWN", "{body}");
    let db = server.db().await;
    let holder = db.attempt_detail(order_id).await.unwrap().unwrap().lease_owner.unwrap();
    let declined = Transition::Failed(Failure { code: "REJECT_CARD_PAYMENT".into(), message: "late".into() });
    let (unknown, lease) = (OrderStatus::Unknown, Lease::Release { next_attempt_at_ms: 0 });

    // A task of the same server whose lease was taken over, and one holding none.
    let overtaken = format!("{}/another-pass", holder.split('/').next().unwrap());
    for writer in [Writer::holding(Actor::Recovery, &overtaken), Writer::without_lease(Actor::Recovery)] {
        assert_eq!(db.transition(order_id, unknown, &declined, lease, writer).await.unwrap(), None, "{writer:?}");
        let unknown_again = Transition::Unknown("late".into());
        assert_eq!(db.transition(order_id, unknown, &unknown_again, lease, writer).await.unwrap(), None);
    }
    assert_eq!(server.order(order_id).await.status, OrderStatus::Unknown);
    let holding = Writer::holding(Actor::Confirm, &holder);
    let moved = db.transition(order_id, unknown, &declined, lease, holding).await.unwrap();
    assert_eq!(moved.map(|moved| moved.to), Some(OrderStatus::Failed), "the holder's failure is stored");
    assert_eq!(server.history(order_id).await, ["CREATED>PENDING", "PENDING>UNKNOWN", "UNKNOWN>FAILED"]);
    assert_eq!(pg.charges(order_id).await, 0);
}

#[tokio::test]
async fn a_payment_never_confirmed_settles_failed_once_past_its_session_even_when_the_pg_answers_404() {
    // Ten minutes at 0.0005 is 300 ms; the server is told the same. The first
    // confirm fails inside the PG with a 500 stored against its key, so every
    // resend gets that 500 again; once the session is over, the PG answers 404
    // for the payment, never EXPIRED.
    let pg = FakePg::start_with(|config| config.time_scale = 0.000_5).await;
    pg.configure(json!({"expired_lookup": "not_found", "faults": {"error_500_stored": 1.0}})).await;
    let server = Server::start_with(&pg.url, |config| config.pg_session_lifetime = Duration::from_millis(300)).await;
    let created = server.create_order().await;
    let order_id = created.order.order_id.as_str();
    let (_, body) = server.confirm(&created.order, "key-stored-500").await;
    assert_eq!(body["status"], "UNKNOWN", "{body}");

    let order = server.wait_for(order_id, OrderStatus::Failed, SETTLE).await;
    assert_eq!(order.failure.map(|failure| failure.code).as_deref(), Some("EXPIRED_PAYMENT"));
    let stats = pg.stats().await;
    assert_eq!((stats.processings, pg.charges(order_id).await), (0, 0), "nothing was ever processed");
    assert_eq!(stats.faults_injected.error_500_stored, 1, "the resends met the stored 500, not a new fault");
}

#[tokio::test]
async fn a_lookup_made_inside_the_session_is_judged_by_the_age_it_went_out_at_not_the_age_it_came_back_at() {
    // The server believes the session lasts 100 ms, so nothing unconfirmed can
    // be charged 3.6 s after the attempt (the session, then a confirm's 2.5 s
    // and its 1 s margin). The PG takes 3.3 s to charge, past the server's 2 s
    // read timeout, so recovery's first lookup reads the payment still in
    // progress (it goes out between 2 s and 3.3 s), and its answer takes 1.7 s
    // to come back: past 3.6 s, when the PG has charged meanwhile. Judged by
    // the age it came back at, that stale "not confirmed" would settle FAILED
    // a charged payment.
    let pg = FakePg::start().await;
    pg.configure(json!({"latency_ms": 3_300, "lookup_answer_delay_ms": 1_700})).await;
    let server = Server::start_with(&pg.url, |config| config.pg_session_lifetime = Duration::from_millis(100)).await;
    let created = server.create_order().await;
    let order_id = created.order.order_id.as_str();
    let payment_key = pg.window_payment_key(&created, "approve").await;

    let response = server.confirm_with_key(&created.order, &payment_key, "key-stale-lookup").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED, "the server stopped waiting before the PG answered");

    let order = server.wait_for(order_id, OrderStatus::Paid, SETTLE).await;
    assert_eq!(order.failure, None);
    assert_eq!(pg.stats().await.processings, 1, "charged once: the resend met the first answer");
    assert_charges_agree(&pg, &server, &[order_id]).await;
}

#[tokio::test]
async fn recovery_resends_the_confirms_of_several_payments_side_by_side() {
    // Three confirms never reach the PG: their outcomes are unknown. A resend
    // waits up to 30 s for its answer, so one worker could not send the next sooner.
    let pg = FakePg::start().await;
    pg.configure(json!({"faults": {"reset_before_processing": 1.0}})).await;
    let server = Server::start_with(&pg.url, |config| config.pg_read_timeout = Duration::from_secs(30)).await;
    let mut order_ids = Vec::new();
    for key in ["key-one", "key-two", "key-three"] {
        let created = server.create_order().await;
        let (_, body) = server.confirm(&created.order, key).await;
        assert_eq!(body["status"], "UNKNOWN", "{body}");
        order_ids.push(created.order.order_id);
    }
    // Recovery's resends are held at the PG: with a worker each, all three are there at once.
    pg.configure(json!({"faults": {"reset_before_processing": 0.0}, "hold": true})).await;
    eventually("the three resends are at the PG together", SETTLE, || async {
        (pg.stats().await.in_flight == 3).then_some(())
    })
    .await;

    pg.configure(json!({"hold": false})).await;
    for order_id in &order_ids {
        server.wait_for(order_id, OrderStatus::Paid, SETTLE).await;
    }
    let order_ids: Vec<&str> = order_ids.iter().map(String::as_str).collect();
    assert_charges_agree(&pg, &server, &order_ids).await;
}

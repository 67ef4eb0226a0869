//! The flow's rules, table by table, plus an exhaustive check that no sequence
//! of events makes it send a second confirm.

use payonce_api::{ApiErrorBody, Failure, Order, OrderStatus, PageConfig};

use super::*;

const T0: Millis = 1_700_000_000_000;

fn timings() -> PageConfig {
    PageConfig::DEFAULT
}

fn params() -> SuccessParams {
    SuccessParams { payment_key: "pk_1".into(), order_id: "ord_1".into(), amount: 12_900 }
}

fn opened(stored: Option<StoredAttempt>) -> Event {
    Event::Opened { params: Ok(params()), stored, now: T0 }
}

fn claimed(mine: bool, stored: Option<StoredAttempt>) -> Event {
    Event::Claimed { mine, stored, new_key: "key-new".into(), now: T0 }
}

fn stored(started_at: Millis, outcome: Option<Outcome>) -> StoredAttempt {
    StoredAttempt {
        order_id: "ord_1".into(),
        idempotency_key: "key-old".into(),
        payment_key: "pk_1".into(),
        amount: 12_900,
        started_at,
        outcome,
    }
}

fn order(status: OrderStatus) -> Order {
    Order {
        order_id: "ord_1".into(),
        status,
        amount: 12_900,
        order_name: "Pour-over coffee set".into(),
        items: vec![],
        created_at: "2026-11-30T00:00:00Z".into(),
        updated_at: "2026-11-30T00:00:00Z".into(),
        failure: (status == OrderStatus::Failed).then(server_failure),
        refunded_amount: 0,
        paid_at: None,
        refund_refusal: None,
        back: None,
    }
}

/// The failure as the server words it.
fn server_failure() -> Failure {
    Failure { code: "REJECT_CARD_PAYMENT".into(), message: "Declined by the card company.".into() }
}

fn response(status: u16, body: impl serde::Serialize) -> ConfirmReply {
    ConfirmReply::Response { status, body: serde_json::to_string(&body).unwrap() }
}

fn error_body(code: &str, order: Option<Order>) -> ApiErrorBody {
    ApiErrorBody { code: code.into(), message: "the reason".into(), order }
}

/// Opened with nothing stored, and the server says it has no confirm: claiming.
fn claiming() -> Flow {
    let mut flow = Flow::new(timings());
    flow.handle(opened(None));
    flow.handle(Event::Verified { check: Check::NotReceived, now: T0 });
    flow
}

fn submitting() -> Flow {
    let mut flow = claiming();
    flow.handle(claimed(true, None));
    flow
}

fn checking() -> Flow {
    let mut flow = submitting();
    flow.handle(Event::ConfirmWaitElapsed { now: T0 + 15_000 });
    flow
}

fn sends(effects: &[Effect]) -> usize {
    effects.iter().filter(|effect| matches!(effect, Effect::SendConfirm { .. })).count()
}

fn records(effects: &[Effect]) -> bool {
    effects.iter().any(|effect| matches!(effect, Effect::RecordOutcome { .. }))
}

#[test]
fn opening_with_nothing_stored_asks_the_server_before_anything_else() {
    let mut flow = Flow::new(timings());
    assert_eq!(flow.handle(opened(None)), vec![Effect::Verify { order_id: "ord_1".into() }]);
    assert_eq!(flow.state(), &State::Verifying);
    assert_eq!(flow.state().name(), "starting");
}

#[test]
fn a_server_without_the_confirm_or_out_of_reach_leads_to_claiming_the_order() {
    for check in [Check::NotReceived, Check::NothingLearned] {
        let mut flow = Flow::new(timings());
        flow.handle(opened(None));
        let effects = flow.handle(Event::Verified { check: check.clone(), now: T0 });
        assert_eq!(effects, vec![Effect::Claim { order_id: "ord_1".into() }], "{check:?}");
        assert_eq!(flow.state(), &State::Claiming);
    }
}

#[test]
fn the_tab_holding_the_claim_persists_the_attempt_then_sends_once_and_starts_the_wait() {
    let mut flow = claiming();
    let effects = flow.handle(claimed(true, None));

    assert_eq!(
        effects,
        vec![
            Effect::LockNavigation,
            Effect::PersistAttempt(StoredAttempt { idempotency_key: "key-new".into(), ..stored(T0, None) }),
            Effect::SendConfirm {
                order_id: "ord_1".into(),
                idempotency_key: "key-new".into(),
                payment_key: "pk_1".into(),
                amount: 12_900,
            },
            Effect::StartConfirmTimer { after_ms: 15_000 },
        ]
    );
    assert_eq!(flow.state(), &State::Submitting { started_at: T0 });
}

#[test]
fn a_page_without_confirm_parameters_is_invalid_and_sends_nothing() {
    let mut flow = Flow::new(timings());
    let effects = flow.handle(Event::Opened { params: Err(InvalidLink::Missing), stored: None, now: T0 });
    assert!(effects.is_empty());
    assert_eq!(flow.state().name(), "invalid");
}

#[test]
fn a_reload_with_a_pending_attempt_resumes_checking_without_sending() {
    let mut flow = Flow::new(timings());
    let effects = flow.handle(opened(Some(stored(T0 - 20_000, None))));

    assert_eq!(sends(&effects), 0);
    assert!(effects.contains(&Effect::LockNavigation));
    assert!(effects.contains(&Effect::ScheduleCheck { after_ms: 0 }), "the first check goes at once");
    assert!(!effects.iter().any(|effect| matches!(effect, Effect::Verify { .. } | Effect::Claim { .. })));
    assert_eq!(flow.state().name(), "checking");
}

#[test]
fn a_reload_while_the_post_is_in_flight_checks_until_the_servers_deadline_without_sending() {
    // Reloaded 2 s after the POST left: no answer was seen, none will be.
    let mut flow = Flow::new(timings());
    let effects = flow.handle(opened(Some(stored(T0 - 2_000, None))));

    assert_eq!(sends(&effects), 0);
    let State::Checking { started_at, checks_total, window_ends_at, .. } = flow.state().clone() else {
        panic!("{:?}", flow.state())
    };
    assert_eq!(started_at, T0 - 2_000);
    assert_eq!(checks_total, 31, "ceil((63s - 2s) / 2s)");
    assert!(window_ends_at >= started_at + timings().server_max_processing_ms);
    let effects = flow.handle(Event::ConfirmWaitElapsed { now: T0 + 13_000 });
    assert!(effects.is_empty(), "this page has no POST of its own to wait for");
}

#[test]
fn a_reload_after_the_outcome_shows_it_without_sending_or_checking() {
    for (outcome, name) in [
        (Outcome::Paid, "paid"),
        (Outcome::Failed { failure: server_failure() }, "failed"),
        (Outcome::Refunded { partial: false }, "refunded"),
        (Outcome::Elsewhere, "elsewhere"),
    ] {
        let mut flow = Flow::new(timings());
        assert!(flow.handle(opened(Some(stored(T0 - 60_000, Some(outcome))))).is_empty());
        assert_eq!(flow.state().name(), name);
    }
}

#[test]
fn stored_outcomes_read_back_as_written() {
    for outcome in [
        Outcome::Paid,
        Outcome::Refunded { partial: true },
        Outcome::Failed { failure: server_failure() },
        Outcome::Elsewhere,
    ] {
        let text = serde_json::to_string(&stored(T0, Some(outcome.clone()))).unwrap();
        assert_eq!(serde_json::from_str::<StoredAttempt>(&text).unwrap().outcome, Some(outcome));
    }
    let older = r#"{"order_id":"ord_1","idempotency_key":"k","payment_key":"pk_1","amount":1,"started_at":1,"outcome":{"status":"PAID"}}"#;
    assert_eq!(serde_json::from_str::<StoredAttempt>(older).unwrap().outcome, Some(Outcome::Paid));
}

#[test]
fn an_attempt_stored_for_another_order_is_not_this_one() {
    let other = StoredAttempt { order_id: "ord_other".into(), ..stored(T0, Some(Outcome::Paid)) };
    let mut flow = Flow::new(timings());
    assert_eq!(flow.handle(opened(Some(other.clone()))), vec![Effect::Verify { order_id: "ord_1".into() }]);
    flow.handle(Event::Verified { check: Check::NotReceived, now: T0 });
    assert_eq!(sends(&flow.handle(claimed(true, Some(other)))), 1);
}

/// Nothing stored for the order, as after a write that failed: the server's view
/// decides, and only a server without the confirm gets one.
#[test]
fn with_nothing_stored_a_server_that_has_the_payment_is_checked_not_sent_to() {
    let cases = [
        (Check::InProgress, "checking"),
        (Check::Settled(Verdict::Paid { amount: 12_900 }), "paid"),
        (Check::Settled(Verdict::Failed(server_failure())), "failed"),
        (Check::Settled(Verdict::Refunded { amount: 12_900, partial: false }), "refunded"),
        (Check::Settled(Verdict::Elsewhere), "elsewhere"),
    ];
    for (check, expected) in cases {
        let mut flow = Flow::new(timings());
        flow.handle(opened(None));
        let effects = flow.handle(Event::Verified { check: check.clone(), now: T0 });
        assert_eq!(flow.state().name(), expected, "{check:?}");
        assert_eq!(sends(&effects), 0, "{check:?}");
        assert!(!records(&effects), "nothing is stored to keep an outcome with: {check:?}");
        // Whatever follows, this flow never sends.
        for event in all_events() {
            assert_eq!(sends(&flow.handle(event)), 0, "{check:?}");
        }
    }
}

#[test]
fn a_second_tab_that_finds_the_attempt_or_loses_the_claim_checks_instead_of_sending() {
    let cases = [
        (claimed(true, Some(stored(T0 - 300, None))), "checking"),
        (claimed(false, Some(stored(T0 - 300, None))), "checking"),
        (claimed(false, None), "checking"),
        (claimed(false, Some(stored(T0 - 300, Some(Outcome::Paid)))), "paid"),
    ];
    for (event, expected) in cases {
        let mut flow = claiming();
        let effects = flow.handle(event.clone());
        assert_eq!(flow.state().name(), expected, "{event:?}");
        assert_eq!(sends(&effects), 0, "{event:?}");
        assert!(!effects.iter().any(|effect| matches!(effect, Effect::PersistAttempt(_))), "{event:?}");
    }
}

#[test]
fn definitive_replies_settle_and_unlock() {
    let cases = [
        (response(200, order(OrderStatus::Paid)), "paid"),
        (response(200, order(OrderStatus::Failed)), "failed"),
        (response(200, order(OrderStatus::Canceled)), "refunded"),
        (response(200, order(OrderStatus::PartiallyRefunded)), "refunded"),
        // Charged; the refund asked for since has not given the money back yet.
        (response(200, order(OrderStatus::CancelRequested)), "paid"),
        (response(409, error_body("ORDER_ALREADY_PAID", Some(order(OrderStatus::Paid)))), "paid"),
        (response(409, error_body("ORDER_ALREADY_FAILED", Some(order(OrderStatus::Failed)))), "failed"),
        (response(409, error_body("ORDER_ALREADY_PAID", Some(order(OrderStatus::Canceled)))), "refunded"),
        (response(400, error_body("AMOUNT_MISMATCH", None)), "failed"),
        (response(404, error_body("ORDER_NOT_FOUND", None)), "elsewhere"),
    ];
    for (reply, expected) in cases {
        let mut flow = submitting();
        let effects = flow.handle(Event::ConfirmReplied { reply: reply.clone(), now: T0 + 500 });
        assert_eq!(flow.state().name(), expected, "{reply:?}");
        assert!(effects.contains(&Effect::UnlockNavigation));
        assert!(records(&effects));
    }
}

#[test]
fn a_refused_confirm_shows_the_servers_words_and_adds_none() {
    let mut flow = submitting();
    flow.handle(Event::ConfirmReplied { reply: response(400, error_body("AMOUNT_MISMATCH", None)), now: T0 });
    assert_eq!(
        flow.state(),
        &State::Failed {
            order_id: "ord_1".into(),
            failure: Failure { code: "AMOUNT_MISMATCH".into(), message: "the reason".into() }
        }
    );
}

#[test]
fn an_order_this_browser_cannot_see_is_elsewhere_not_failed() {
    let mut flow = submitting();
    let effects =
        flow.handle(Event::ConfirmReplied { reply: response(404, error_body("ORDER_NOT_FOUND", None)), now: T0 });
    assert_eq!(flow.state(), &State::Elsewhere { order_id: "ord_1".into() });
    assert!(effects.contains(&Effect::RecordOutcome { order_id: "ord_1".into(), outcome: Outcome::Elsewhere }));

    assert_eq!(classify_refused_check(404, Some("ORDER_NOT_FOUND"), None), Check::Settled(Verdict::Elsewhere));
    assert_eq!(classify_refused_check(500, Some("INTERNAL"), None), Check::NothingLearned);
    assert_eq!(classify_refused_check(502, None, None), Check::NothingLearned);
    assert_eq!(
        classify_refused_check(429, Some("RATE_LIMITED"), Some(3_000)),
        Check::Throttled { retry_after_ms: 3_000 }
    );
    assert_eq!(classify_refused_check(429, None, None), Check::Throttled { retry_after_ms: 1_000 });
}

/// The server says how long to wait in seconds; the page waits that long,
/// and never reads a date or a number it does not understand as "at once".
#[test]
fn retry_after_is_read_in_seconds_and_only_in_seconds() {
    assert_eq!(retry_after_ms("3"), Some(3_000));
    assert_eq!(retry_after_ms(" 12 "), Some(12_000));
    assert_eq!(retry_after_ms("0"), Some(0));
    assert_eq!(retry_after_ms("Wed, 21 Oct 2026 07:28:00 GMT"), None, "the server sends no dates");
    assert_eq!(retry_after_ms("-1"), None);
    assert_eq!(retry_after_ms(""), None);
}

#[test]
fn a_cancelled_or_partly_refunded_order_is_refunded_never_paid_or_failed() {
    for (status, partial) in [(OrderStatus::Canceled, false), (OrderStatus::PartiallyRefunded, true)] {
        let expected = State::Refunded { order_id: "ord_1".into(), amount: 12_900, partial };
        let mut flow = submitting();
        flow.handle(Event::ConfirmReplied { reply: response(200, order(status)), now: T0 });
        assert_eq!(flow.state(), &expected, "confirm reply {status:?}");

        let mut flow = checking();
        flow.handle(Event::CheckDue { now: 0 });
        let effects = flow.handle(Event::CheckReplied { check: classify_check(&order(status)), now: 0 });
        assert_eq!(flow.state(), &expected, "check {status:?}");
        assert!(
            effects
                .contains(&Effect::RecordOutcome { order_id: "ord_1".into(), outcome: Outcome::Refunded { partial } })
        );
    }
}

#[test]
fn ambiguous_replies_go_to_checking_and_never_resend() {
    let cases = [
        ConfirmReply::NoResponse { detail: "network error".into() },
        ConfirmReply::NoResponse { detail: "aborted".into() },
        response(500, error_body("INTERNAL", None)),
        response(502, "Bad Gateway"),
        response(503, ""),
        response(202, order(OrderStatus::Unknown)),
        response(202, order(OrderStatus::Pending)),
        response(409, error_body("PAYMENT_IN_PROGRESS", Some(order(OrderStatus::Pending)))),
        response(409, error_body("PAYMENT_IN_PROGRESS", None)),
        response(429, error_body("TOO_MANY", None)),
        ConfirmReply::Response { status: 200, body: "<html>proxy page</html>".into() },
        ConfirmReply::Response { status: 400, body: "not json".into() },
        response(200, serde_json::json!({"status": "PAID"})),
    ];
    for reply in cases {
        let mut flow = submitting();
        let effects = flow.handle(Event::ConfirmReplied { reply: reply.clone(), now: T0 + 1_000 });
        assert_eq!(flow.state().name(), "checking", "{reply:?}");
        assert_eq!(sends(&effects), 0);
        assert!(!effects.contains(&Effect::UnlockNavigation));
    }
}

#[test]
fn the_wait_ends_at_confirm_wait_with_an_abort_and_the_first_check_at_once() {
    let mut flow = submitting();
    let effects = flow.handle(Event::ConfirmWaitElapsed { now: T0 + 15_000 });
    assert_eq!(effects, vec![Effect::AbortConfirm, Effect::ScheduleCheck { after_ms: 0 }]);
    assert_eq!(
        flow.state(),
        &State::Checking { started_at: T0, checks_done: 0, checks_total: 25, window_ends_at: T0 + 65_000 }
    );
}

#[test]
fn checking_asks_every_interval_and_gives_up_after_the_last_check() {
    let mut flow = checking();
    for check in 1..=25 {
        assert_eq!(
            flow.handle(Event::CheckDue { now: 0 }),
            vec![Effect::SendCheck { order_id: "ord_1".into(), wait_ms: 2_000 }],
            "each check may wait on the server for a change"
        );
        let effects = flow.handle(Event::CheckReplied { check: Check::InProgress, now: 0 });
        if check < 25 {
            assert_eq!(effects, vec![Effect::ScheduleCheck { after_ms: 2_000 }], "check {check}");
            assert!(matches!(flow.state(), State::Checking { checks_done, .. } if *checks_done == check));
        } else {
            assert_eq!(effects, vec![Effect::UnlockNavigation]);
        }
    }
    assert_eq!(flow.state(), &State::Unresolved { order_id: "ord_1".into() });
}

#[test]
fn a_throttled_check_is_not_counted_and_the_next_waits_as_long_as_the_server_asked() {
    let mut flow = checking();
    let before = flow.state().clone();
    flow.handle(Event::CheckDue { now: T0 + 17_000 });
    let effects =
        flow.handle(Event::CheckReplied { check: Check::Throttled { retry_after_ms: 3_000 }, now: T0 + 17_010 });

    assert!(effects.contains(&Effect::ScheduleCheck { after_ms: 3_000 }), "{effects:?}");
    assert_eq!(flow.state(), &before, "still checking, the check not counted");
    assert_eq!(sends(&effects), 0);
    assert!(!effects.contains(&Effect::UnlockNavigation));
    let effects =
        flow.handle(Event::CheckReplied { check: Check::Throttled { retry_after_ms: 100 }, now: T0 + 17_020 });
    assert!(
        effects.contains(&Effect::ScheduleCheck { after_ms: 1_980 }),
        "never sooner than the interval: {effects:?}"
    );
}

#[test]
fn throttled_to_the_end_of_the_window_the_page_says_unresolved_never_failed() {
    let mut flow = submitting();
    flow.handle(Event::ConfirmWaitElapsed { now: T0 + 15_000 });
    let mut now = T0 + 15_000;
    let mut effects = vec![];
    while flow.state().name() == "checking" {
        flow.handle(Event::CheckDue { now });
        now += 10;
        effects = flow.handle(Event::CheckReplied { check: Check::Throttled { retry_after_ms: 5_000 }, now });
        if let Some(Effect::ScheduleCheck { after_ms }) = effects.last() {
            now += after_ms;
        }
    }
    assert_eq!(flow.state(), &State::Unresolved { order_id: "ord_1".into() });
    assert_eq!(effects, vec![Effect::UnlockNavigation]);
    assert!(now <= T0 + 65_000 + 5_010, "the window ends when it would, give or take one pause: {now}");
}

#[test]
fn a_check_the_server_held_for_its_whole_wait_is_followed_at_once() {
    let mut flow = checking();
    flow.handle(Event::CheckDue { now: T0 + 17_000 });
    let effects = flow.handle(Event::CheckReplied { check: Check::InProgress, now: T0 + 19_000 });
    assert_eq!(effects, vec![Effect::ScheduleCheck { after_ms: 0 }]);
}

#[test]
fn a_check_answered_early_by_a_change_that_settles_nothing_is_followed_after_the_rest_of_the_interval() {
    let mut flow = checking();
    flow.handle(Event::CheckDue { now: T0 + 17_000 });
    // PENDING became UNKNOWN: the server answered at once, and nothing is settled.
    let effects = flow.handle(Event::CheckReplied { check: Check::InProgress, now: T0 + 17_500 });
    assert_eq!(effects, vec![Effect::ScheduleCheck { after_ms: 1_500 }]);
}

#[test]
fn waiting_checks_keep_to_the_same_number_of_checks_and_the_same_window() {
    let mut flow = submitting();
    flow.handle(Event::ConfirmWaitElapsed { now: T0 + 15_000 });
    let mut now = T0 + 15_000;
    let mut checks = 0;
    while flow.state().name() == "checking" {
        flow.handle(Event::CheckDue { now });
        checks += 1;
        now += 2_000; // held by the server for the whole wait
        let effects = flow.handle(Event::CheckReplied { check: Check::InProgress, now });
        if let [Effect::ScheduleCheck { after_ms }] = effects.as_slice() {
            now += after_ms;
        }
    }
    assert_eq!(checks, 25);
    assert_eq!(now, T0 + 65_000, "the window ends when it did with checks that answer at once");
    assert_eq!(flow.state().name(), "unresolved");
}

#[test]
fn a_final_check_settles_the_flow() {
    for (status, expected) in [(OrderStatus::Paid, "paid"), (OrderStatus::Failed, "failed")] {
        let mut flow = checking();
        flow.handle(Event::CheckDue { now: 0 });
        let check = classify_check(&order(status));
        let effects = flow.handle(Event::CheckReplied { check, now: 0 });
        assert_eq!(flow.state().name(), expected);
        assert!(effects.contains(&Effect::UnlockNavigation));
    }
}

#[test]
fn checks_tell_a_confirm_in_progress_from_one_never_received() {
    assert_eq!(classify_check(&order(OrderStatus::Created)), Check::NotReceived);
    assert_eq!(classify_check(&order(OrderStatus::Pending)), Check::InProgress);
    assert_eq!(classify_check(&order(OrderStatus::Unknown)), Check::InProgress);
    assert_eq!(classify_check(&order(OrderStatus::Paid)), Check::Settled(Verdict::Paid { amount: 12_900 }));
    assert_eq!(
        classify_check(&order(OrderStatus::CancelRequested)),
        Check::Settled(Verdict::Paid { amount: 12_900 }),
        "a refund under way is a charge, never a payment in progress"
    );
}

fn run_checks(flow: &mut Flow, checks: &[Check]) -> Vec<Effect> {
    let mut effects = vec![];
    for check in checks {
        flow.handle(Event::CheckDue { now: 0 });
        effects = flow.handle(Event::CheckReplied { check: check.clone(), now: 0 });
    }
    effects
}

/// Checked to the end of the window, and the server never had the confirm.
fn closing() -> Flow {
    let mut flow = checking();
    run_checks(&mut flow, &vec![Check::NotReceived; 25]);
    flow
}

#[test]
fn a_confirm_the_server_never_received_asks_the_server_to_close_the_order_and_claims_nothing() {
    let mut flow = checking();
    let effects = run_checks(&mut flow, &vec![Check::NotReceived; 25]);
    assert!(effects.contains(&Effect::Abandon { order_id: "ord_1".into() }));
    assert!(!records(&effects), "no outcome before the server's");
    assert!(!effects.contains(&Effect::UnlockNavigation), "still waiting for the server's word");
    assert!(matches!(flow.state(), State::Closing { .. }));
    assert_eq!(flow.state().name(), "checking");
    assert!(flow.state().is_busy());
}

#[test]
fn the_servers_answer_to_closing_the_order_is_what_the_page_shows() {
    let cases = [
        (
            Check::Settled(Verdict::Failed(server_failure())),
            State::Failed { order_id: "ord_1".into(), failure: server_failure() },
        ),
        (Check::Settled(Verdict::Paid { amount: 12_900 }), State::Paid { order_id: "ord_1".into(), amount: 12_900 }),
        (
            Check::Settled(Verdict::Refunded { amount: 12_900, partial: false }),
            State::Refunded { order_id: "ord_1".into(), amount: 12_900, partial: false },
        ),
        (Check::Settled(Verdict::Elsewhere), State::Elsewhere { order_id: "ord_1".into() }),
        (Check::InProgress, State::Unresolved { order_id: "ord_1".into() }),
        (Check::NotReceived, State::Unresolved { order_id: "ord_1".into() }),
        (Check::NothingLearned, State::Unresolved { order_id: "ord_1".into() }),
    ];
    for (check, expected) in cases {
        let mut flow = closing();
        let effects = flow.handle(Event::AbandonReplied { check: check.clone(), now: T0 + 80_000 });
        assert_eq!(flow.state(), &expected, "{check:?}");
        assert!(effects.contains(&Effect::UnlockNavigation), "{check:?}");
        assert_eq!(sends(&effects), 0);
        let recorded = records(&effects);
        assert_eq!(recorded, !matches!(expected, State::Unresolved { .. }), "{check:?}");
    }
}

#[test]
fn a_server_holding_the_confirm_without_an_outcome_leaves_it_unresolved() {
    let mut checks = vec![Check::NotReceived, Check::InProgress];
    checks.extend(vec![Check::NothingLearned; 23]);
    let mut flow = checking();
    run_checks(&mut flow, &checks);
    assert_eq!(flow.state().name(), "unresolved", "the latest thing learned was that the server has it");

    let mut flow = checking();
    run_checks(&mut flow, &vec![Check::NothingLearned; 25]);
    assert_eq!(flow.state().name(), "unresolved", "a server that never answered may hold the payment");
}

#[test]
fn checking_ends_with_its_window_even_when_checks_are_slow() {
    let mut flow = checking();
    let State::Checking { window_ends_at, .. } = flow.state().clone() else { panic!() };
    flow.handle(Event::CheckDue { now: 0 });
    flow.handle(Event::CheckReplied { check: Check::NothingLearned, now: window_ends_at - 1 });
    assert_eq!(flow.state().name(), "checking");
    flow.handle(Event::CheckDue { now: 0 });
    flow.handle(Event::CheckReplied { check: Check::NothingLearned, now: window_ends_at });
    assert_eq!(flow.state().name(), "unresolved");
}

#[test]
fn a_definitive_reply_that_arrives_while_checking_is_believed() {
    let mut flow = checking();
    flow.handle(Event::ConfirmReplied { reply: response(200, order(OrderStatus::Paid)), now: 0 });
    assert_eq!(flow.state().name(), "paid");

    let mut flow = checking();
    let effects =
        flow.handle(Event::ConfirmReplied { reply: ConfirmReply::NoResponse { detail: "aborted".into() }, now: 0 });
    assert!(effects.is_empty(), "our own abort arriving late changes nothing");
    assert_eq!(flow.state().name(), "checking");
}

#[test]
fn an_early_ambiguous_error_checks_until_the_server_deadline() {
    // A 502 after one second: the server may still be working for 62 more seconds.
    let mut flow = submitting();
    let effects = flow.handle(Event::ConfirmReplied { reply: response(502, ""), now: T0 + 1_000 });
    let State::Checking { checks_total, window_ends_at, .. } = flow.state().clone() else { panic!() };
    assert_eq!(checks_total, 31, "ceil(62s / 2s)");
    assert!(window_ends_at >= T0 + 63_000);
    assert!(effects.iter().any(|effect| matches!(effect, Effect::Log(_))), "the extension is explained");
}

#[test]
fn a_window_shorter_than_the_servers_processing_is_extended() {
    let short = PageConfig {
        confirm_wait_ms: 15_000,
        check_interval_ms: 2_000,
        max_checks: 10,
        server_max_processing_ms: 63_000,
        check_wait_ms: 2_000,
        ..PageConfig::DEFAULT
    };
    let mut flow = Flow::new(short);
    flow.handle(opened(None));
    flow.handle(Event::Verified { check: Check::NotReceived, now: T0 });
    flow.handle(claimed(true, None));
    let effects = flow.handle(Event::ConfirmWaitElapsed { now: T0 + 15_000 });
    let State::Checking { checks_total, window_ends_at, .. } = flow.state().clone() else { panic!() };
    assert_eq!(checks_total, 24, "ceil((63s - 15s) / 2s)");
    assert!(window_ends_at >= T0 + 63_000);
    assert!(effects.iter().any(|effect| matches!(effect, Effect::Log(message) if message.contains("24"))));
}

#[test]
fn a_window_that_covers_the_server_is_not_extended() {
    let mut flow = submitting();
    let effects = flow.handle(Event::ConfirmWaitElapsed { now: T0 + 15_000 });
    let State::Checking { checks_total, .. } = flow.state().clone() else { panic!() };
    assert_eq!(checks_total, 25);
    assert!(!effects.iter().any(|effect| matches!(effect, Effect::Log(_))), "no extension to explain: {effects:?}");
}

#[test]
fn final_states_ignore_everything() {
    let mut flow = submitting();
    flow.handle(Event::ConfirmReplied { reply: response(200, order(OrderStatus::Paid)), now: 0 });
    for event in all_events() {
        assert!(flow.handle(event).is_empty());
        assert_eq!(flow.state().name(), "paid");
    }
}

#[test]
fn busy_states_are_exactly_submitting_checking_and_closing() {
    assert!(submitting().state().is_busy());
    assert!(checking().state().is_busy());
    assert!(closing().state().is_busy());
    assert!(!claiming().state().is_busy());
    assert!(!State::Paid { order_id: "o".into(), amount: 1 }.is_busy());
    assert!(!State::Unresolved { order_id: "o".into() }.is_busy());
    assert!(!State::Elsewhere { order_id: "o".into() }.is_busy());
    assert!(!State::Starting.is_busy());
}

/// A final state is one the flow never leaves, which is when the page lets its
/// tab's claim on the order go: a claim released early would let another tab send.
#[test]
fn final_states_are_exactly_those_no_event_leaves() {
    for flow in [claiming(), submitting(), checking(), closing()] {
        assert!(!flow.state().is_final(), "{:?} goes on", flow.state());
    }
    assert!(!State::Starting.is_final());
    let ends = [
        Check::Settled(Verdict::Failed(server_failure())),
        Check::Settled(Verdict::Paid { amount: 12_900 }),
        Check::Settled(Verdict::Refunded { amount: 12_900, partial: true }),
        Check::Settled(Verdict::Elsewhere),
        Check::NothingLearned,
    ];
    for check in ends {
        let mut flow = closing();
        flow.handle(Event::AbandonReplied { check, now: T0 + 80_000 });
        let ended = flow.state().clone();
        assert!(ended.is_final(), "{ended:?} is the end");
        for event in all_events() {
            flow.handle(event);
            assert_eq!(flow.state(), &ended, "nothing changes a final state");
        }
    }
}

fn all_events() -> Vec<Event> {
    let failed = Check::Settled(Verdict::Failed(server_failure()));
    let paid = Check::Settled(Verdict::Paid { amount: 12_900 });
    vec![
        Event::Opened { params: Err(InvalidLink::Missing), stored: None, now: T0 },
        opened(None),
        opened(Some(stored(T0, None))),
        opened(Some(stored(T0, Some(Outcome::Paid)))),
        Event::Verified { check: Check::NotReceived, now: T0 },
        Event::Verified { check: Check::NothingLearned, now: T0 },
        Event::Verified { check: Check::InProgress, now: T0 },
        Event::Verified { check: paid.clone(), now: T0 },
        Event::Verified { check: Check::Settled(Verdict::Elsewhere), now: T0 },
        claimed(true, None),
        claimed(true, Some(stored(T0, None))),
        claimed(false, None),
        Event::ConfirmReplied { reply: ConfirmReply::NoResponse { detail: "x".into() }, now: T0 + 1 },
        Event::ConfirmReplied { reply: response(500, ""), now: T0 + 1 },
        Event::ConfirmReplied { reply: response(202, order(OrderStatus::Unknown)), now: T0 + 1 },
        Event::ConfirmReplied { reply: response(200, order(OrderStatus::Paid)), now: T0 + 1 },
        Event::ConfirmReplied { reply: response(200, order(OrderStatus::Canceled)), now: T0 + 1 },
        Event::ConfirmReplied { reply: response(400, error_body("AMOUNT_MISMATCH", None)), now: T0 + 1 },
        Event::ConfirmReplied { reply: response(404, error_body("ORDER_NOT_FOUND", None)), now: T0 + 1 },
        Event::ConfirmWaitElapsed { now: T0 + 15_000 },
        Event::CheckDue { now: T0 + 17_000 },
        Event::CheckReplied { check: Check::NothingLearned, now: T0 + 17_000 },
        Event::CheckReplied { check: Check::NotReceived, now: T0 + 17_000 },
        Event::CheckReplied { check: Check::InProgress, now: T0 + 17_000 },
        Event::CheckReplied { check: Check::NotReceived, now: T0 + 200_000 },
        Event::CheckReplied { check: paid.clone(), now: T0 + 17_000 },
        Event::AbandonReplied { check: failed, now: T0 + 30_000 },
        Event::AbandonReplied { check: paid, now: T0 + 30_000 },
        Event::AbandonReplied { check: Check::InProgress, now: T0 + 30_000 },
        Event::AbandonReplied { check: Check::NothingLearned, now: T0 + 30_000 },
    ]
}

/// Every configuration of the flow that any sequence of these events reaches,
/// whatever its length (a search over the flow's states and the two facts about
/// the path to them that matter: attempt persisted, confirm sent): at most one
/// POST, and it is always preceded by persisting the attempt.
#[test]
fn no_sequence_of_events_sends_a_second_confirm() {
    // The shipped window, and a short one (two checks, extended by nothing).
    let short = PageConfig {
        confirm_wait_ms: 15_000,
        check_interval_ms: 2_000,
        max_checks: 2,
        server_max_processing_ms: 1_000,
        check_wait_ms: 2_000,
        ..PageConfig::DEFAULT
    };
    for timings in [timings(), short] {
        let explored = explore(timings);
        assert!(explored > 50, "explored {explored} configurations");
    }
}

/// Searches every configuration reachable from a fresh flow, checking each step;
/// returns how many it found.
fn explore(timings: PageConfig) -> usize {
    let events = all_events();
    let mut seen = std::collections::HashSet::new();
    let mut names = std::collections::BTreeSet::new();
    let mut closed = false;
    // (flow, attempt persisted on this path, confirm sent on this path)
    let mut queue = std::collections::VecDeque::from([(Flow::new(timings), false, false)]);
    while let Some((flow, persisted, sent)) = queue.pop_front() {
        for event in &events {
            let mut next = flow.clone();
            let effects = next.handle(event.clone());
            let mut persisted_now = persisted;
            let mut sent_now = sent;
            for effect in &effects {
                match effect {
                    Effect::PersistAttempt(_) => persisted_now = true,
                    Effect::SendConfirm { .. } => {
                        assert!(persisted_now, "persist before send");
                        assert!(!sent_now, "a second confirm: {flow:?} then {event:?}");
                        sent_now = true;
                    }
                    _ => {}
                }
            }
            names.insert(next.state().name());
            closed |= matches!(next.state(), State::Closing { .. });
            if seen.insert(format!("{next:?} {persisted_now} {sent_now}")) {
                queue.push_back((next, persisted_now, sent_now));
            }
        }
    }
    let every_name =
        ["starting", "submitting", "checking", "paid", "refunded", "failed", "unresolved", "elsewhere", "invalid"];
    assert_eq!(names, every_name.into_iter().collect(), "every state is reached");
    assert!(closed, "closing the order is reached");
    seen.len()
}

#[test]
fn success_parameters_are_read_from_the_redirect_or_refused() {
    let query = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| pairs.iter().find(|(key, _)| *key == name).map(|(_, value)| value.to_string())
    };
    assert_eq!(
        SuccessParams::from_query(query(&[("paymentKey", "pk_1"), ("orderId", "ord_1"), ("amount", "12900")])),
        Ok(params())
    );
    assert!(SuccessParams::from_query(query(&[("orderId", "ord_1"), ("amount", "12900")])).is_err());
    assert!(SuccessParams::from_query(query(&[("paymentKey", " "), ("orderId", "ord_1"), ("amount", "1")])).is_err());
    let bad_amount = SuccessParams::from_query(query(&[("paymentKey", "pk"), ("orderId", "o"), ("amount", "12,900")]));
    assert_eq!(bad_amount.unwrap_err(), InvalidLink::Amount("12,900".into()));
}

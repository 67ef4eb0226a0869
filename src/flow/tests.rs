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
    Event::Opened { params: Ok(params()), stored, new_key: "key-new".into(), now: T0 }
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
        failure: (status == OrderStatus::Failed)
            .then(|| Failure { code: "REJECT_CARD_PAYMENT".into(), message: "Declined.".into() }),
    }
}

fn response(status: u16, body: impl serde::Serialize) -> ConfirmReply {
    ConfirmReply::Response { status, body: serde_json::to_string(&body).unwrap() }
}

fn error_body(code: &str, order: Option<Order>) -> ApiErrorBody {
    ApiErrorBody { code: code.into(), message: "the reason".into(), order }
}

fn submitting() -> Flow {
    let mut flow = Flow::new(timings());
    flow.handle(opened(None));
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

#[test]
fn opening_persists_the_attempt_then_sends_once_and_starts_the_wait() {
    let mut flow = Flow::new(timings());
    let effects = flow.handle(opened(None));

    let attempt = StoredAttempt {
        order_id: "ord_1".into(),
        idempotency_key: "key-new".into(),
        payment_key: "pk_1".into(),
        amount: 12_900,
        started_at: T0,
        outcome: None,
    };
    assert_eq!(
        effects,
        vec![
            Effect::LockNavigation,
            Effect::PersistAttempt(attempt),
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
    let effects = flow.handle(Event::Opened {
        params: Err("missing orderId".into()),
        stored: None,
        new_key: "k".into(),
        now: T0,
    });
    assert!(effects.is_empty());
    assert_eq!(flow.state().name(), "invalid");
}

#[test]
fn a_reload_with_a_pending_attempt_resumes_checking_without_sending() {
    let stored = StoredAttempt {
        order_id: "ord_1".into(),
        idempotency_key: "key-old".into(),
        payment_key: "pk_1".into(),
        amount: 12_900,
        started_at: T0 - 20_000,
        outcome: None,
    };
    let mut flow = Flow::new(timings());
    let effects = flow.handle(opened(Some(stored)));

    assert_eq!(sends(&effects), 0);
    assert!(effects.contains(&Effect::LockNavigation));
    assert!(effects.contains(&Effect::SchedulePoll { after_ms: 2_000 }));
    assert_eq!(flow.state().name(), "checking");
}

#[test]
fn a_reload_after_the_outcome_shows_it_without_sending_or_checking() {
    for (outcome, name) in [
        (Outcome::Paid, "paid"),
        (Outcome::Failed { failure: Failure { code: "X".into(), message: "m".into() } }, "failed"),
    ] {
        let stored = StoredAttempt {
            order_id: "ord_1".into(),
            idempotency_key: "key-old".into(),
            payment_key: "pk_1".into(),
            amount: 12_900,
            started_at: T0 - 60_000,
            outcome: Some(outcome),
        };
        let mut flow = Flow::new(timings());
        assert!(flow.handle(opened(Some(stored))).is_empty());
        assert_eq!(flow.state().name(), name);
    }
}

#[test]
fn an_attempt_stored_for_another_order_is_not_this_one() {
    let stored = StoredAttempt {
        order_id: "ord_other".into(),
        idempotency_key: "key-old".into(),
        payment_key: "pk_9".into(),
        amount: 1,
        started_at: T0,
        outcome: Some(Outcome::Paid),
    };
    let mut flow = Flow::new(timings());
    assert_eq!(sends(&flow.handle(opened(Some(stored)))), 1);
}

#[test]
fn definitive_replies_settle_and_unlock() {
    let cases = [
        (response(200, order(OrderStatus::Paid)), "paid"),
        (response(200, order(OrderStatus::Failed)), "failed"),
        (response(409, error_body("ORDER_ALREADY_PAID", Some(order(OrderStatus::Paid)))), "paid"),
        (response(409, error_body("ORDER_ALREADY_FAILED", Some(order(OrderStatus::Failed)))), "failed"),
        (response(400, error_body("AMOUNT_MISMATCH", None)), "failed"),
        (response(404, error_body("ORDER_NOT_FOUND", None)), "failed"),
    ];
    for (reply, expected) in cases {
        let mut flow = submitting();
        let effects = flow.handle(Event::ConfirmReplied { reply: reply.clone(), now: T0 + 500 });
        assert_eq!(flow.state().name(), expected, "{reply:?}");
        assert!(effects.contains(&Effect::UnlockNavigation));
        assert!(effects.iter().any(|effect| matches!(effect, Effect::RecordOutcome { .. })));
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
fn the_wait_ends_at_confirm_wait_with_an_abort_and_the_first_check_one_interval_later() {
    let mut flow = submitting();
    let effects = flow.handle(Event::ConfirmWaitElapsed { now: T0 + 15_000 });
    assert_eq!(effects, vec![Effect::AbortConfirm, Effect::SchedulePoll { after_ms: 2_000 }]);
    assert_eq!(
        flow.state(),
        &State::Checking { started_at: T0, polls_done: 0, polls_total: 25, window_ends_at: T0 + 65_000 }
    );
}

#[test]
fn checking_polls_every_interval_and_gives_up_after_the_last_check() {
    let mut flow = checking();
    for check in 1..=25 {
        assert_eq!(flow.handle(Event::PollDue { now: 0 }), vec![Effect::Poll { order_id: "ord_1".into() }]);
        let effects = flow.handle(Event::PollReplied { check: Check::InProgress, now: 0 });
        if check < 25 {
            assert_eq!(effects, vec![Effect::SchedulePoll { after_ms: 2_000 }], "check {check}");
            assert!(matches!(flow.state(), State::Checking { polls_done, .. } if *polls_done == check));
        } else {
            assert_eq!(effects, vec![Effect::UnlockNavigation]);
        }
    }
    assert_eq!(flow.state(), &State::Unresolved { order_id: "ord_1".into() });
}

#[test]
fn a_final_check_settles_the_flow() {
    for (status, expected) in [(OrderStatus::Paid, "paid"), (OrderStatus::Failed, "failed")] {
        let mut flow = checking();
        flow.handle(Event::PollDue { now: 0 });
        let check = classify_poll(&order(status));
        let effects = flow.handle(Event::PollReplied { check, now: 0 });
        assert_eq!(flow.state().name(), expected);
        assert!(effects.contains(&Effect::UnlockNavigation));
    }
}

#[test]
fn checks_tell_a_confirm_in_progress_from_one_never_received() {
    assert_eq!(classify_poll(&order(OrderStatus::Created)), Check::NotReceived);
    assert_eq!(classify_poll(&order(OrderStatus::Pending)), Check::InProgress);
    assert_eq!(classify_poll(&order(OrderStatus::Unknown)), Check::InProgress);
    assert_eq!(classify_poll(&order(OrderStatus::Paid)), Check::Settled(Verdict::Paid { amount: 12_900 }));
}

fn run_checks(flow: &mut Flow, checks: &[Check]) -> Vec<Effect> {
    let mut effects = vec![];
    for check in checks {
        flow.handle(Event::PollDue { now: 0 });
        effects = flow.handle(Event::PollReplied { check: check.clone(), now: 0 });
    }
    effects
}

#[test]
fn a_confirm_the_server_never_received_fails_as_not_charged_when_the_window_ends() {
    let mut flow = checking();
    let effects = run_checks(&mut flow, &vec![Check::NotReceived; 25]);
    let State::Failed { failure, .. } = flow.state().clone() else { panic!("{:?}", flow.state()) };
    assert_eq!(failure.code, NOT_RECEIVED);
    assert!(failure.message.contains("You have not been charged"));
    assert!(effects.contains(&Effect::UnlockNavigation));
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
    flow.handle(Event::PollDue { now: 0 });
    flow.handle(Event::PollReplied { check: Check::NothingLearned, now: window_ends_at - 1 });
    assert_eq!(flow.state().name(), "checking");
    flow.handle(Event::PollDue { now: 0 });
    flow.handle(Event::PollReplied { check: Check::NothingLearned, now: window_ends_at });
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
    let State::Checking { polls_total, window_ends_at, .. } = flow.state().clone() else { panic!() };
    assert_eq!(polls_total, 31, "ceil(62s / 2s)");
    assert!(window_ends_at >= T0 + 63_000);
    assert!(effects.iter().any(|effect| matches!(effect, Effect::Log(_))), "the extension is explained");
}

#[test]
fn a_window_shorter_than_the_servers_processing_is_extended() {
    let short = PageConfig {
        confirm_wait_ms: 15_000,
        poll_interval_ms: 2_000,
        poll_attempts: 10,
        server_max_processing_ms: 63_000,
    };
    let mut flow = Flow::new(short);
    flow.handle(opened(None));
    let effects = flow.handle(Event::ConfirmWaitElapsed { now: T0 + 15_000 });
    let State::Checking { polls_total, window_ends_at, .. } = flow.state().clone() else { panic!() };
    assert_eq!(polls_total, 24, "ceil((63s - 15s) / 2s)");
    assert!(window_ends_at >= T0 + 63_000);
    assert!(effects.iter().any(|effect| matches!(effect, Effect::Log(message) if message.contains("24"))));
}

#[test]
fn a_window_that_covers_the_server_is_not_extended() {
    let mut flow = checking();
    let State::Checking { polls_total, .. } = flow.state().clone() else { panic!() };
    assert_eq!(polls_total, 25);
    assert!(flow.handle(Event::PollDue { now: 0 }).iter().all(|effect| !matches!(effect, Effect::Log(_))));
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
fn busy_states_are_exactly_submitting_and_checking() {
    assert!(submitting().state().is_busy());
    assert!(checking().state().is_busy());
    assert!(!State::Paid { order_id: "o".into(), amount: 1 }.is_busy());
    assert!(!State::Unresolved { order_id: "o".into() }.is_busy());
    assert!(!State::Starting.is_busy());
}

fn all_events() -> Vec<Event> {
    let stored = StoredAttempt {
        order_id: "ord_1".into(),
        idempotency_key: "key-old".into(),
        payment_key: "pk_1".into(),
        amount: 12_900,
        started_at: T0,
        outcome: None,
    };
    vec![
        opened(None),
        opened(Some(stored)),
        Event::ConfirmReplied { reply: ConfirmReply::NoResponse { detail: "x".into() }, now: T0 + 1 },
        Event::ConfirmReplied { reply: response(500, ""), now: T0 + 1 },
        Event::ConfirmReplied { reply: response(202, order(OrderStatus::Unknown)), now: T0 + 1 },
        Event::ConfirmReplied { reply: response(200, order(OrderStatus::Paid)), now: T0 + 1 },
        Event::ConfirmWaitElapsed { now: T0 + 15_000 },
        Event::PollDue { now: T0 + 17_000 },
        Event::PollReplied { check: Check::NothingLearned, now: T0 + 17_000 },
        Event::PollReplied { check: Check::NotReceived, now: T0 + 17_000 },
        Event::PollReplied { check: Check::Settled(Verdict::Paid { amount: 12_900 }), now: T0 + 17_000 },
    ]
}

/// Every sequence of up to six events, from a fresh flow: at most one POST, and
/// it is always preceded by persisting the attempt.
#[test]
fn no_sequence_of_events_sends_a_second_confirm() {
    let events = all_events();
    let mut sequences = 0;
    // (flow, events so far, attempt persisted on this path, confirm sent on this path)
    let mut stack: Vec<(Flow, usize, bool, bool)> = vec![(Flow::new(timings()), 0, false, false)];
    while let Some((flow, depth, persisted, sent)) = stack.pop() {
        if depth == 6 {
            continue;
        }
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
                        assert!(!sent_now, "a second confirm after {depth} events");
                        sent_now = true;
                    }
                    _ => {}
                }
            }
            sequences += 1;
            stack.push((next, depth + 1, persisted_now, sent_now));
        }
    }
    assert!(sequences > 1_000_000, "explored {sequences} sequences");
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
    assert!(bad_amount.unwrap_err().contains("12,900"));
}

//! The settlement protocol keeps its promises in every interleaving the
//! bounded model reaches, and the checker is able to fail: each old rule,
//! switched back on, is reported with a counterexample.

use payonce_model::properties::{
    EVERY_PAYMENT_SETTLES, FAILED_ONLY_IF_NOTHING_CHARGED, LEDGER_AGREES, ONE_APPROVE_WITHOUT_KEYS, PAGE_TRUTHFUL,
    RECONCILIATION_AGREES, REFUNDED_AS_ASKED, SHOP_TOLD_TRUTHFULLY,
};
use payonce_model::{Bounds, OldRule, Protocol, Report, check, find};
use payonce_rules::settlement::Resending;
use stateright::Expectation;

/// One thread: the test command's tests keep both cores busy, and one thread
/// explores with about a third less CPU than two (no contention on the map of
/// states seen), which the other tests are waiting for.
const THREADS: usize = 1;

fn assert_keeps_its_promises(bounds: Bounds) -> Report {
    assert_holds(&Protocol::new(bounds), &format!("{bounds:?}"))
}

/// Every property of `protocol` holds, and every `sometimes` is reached.
/// Explored depth first, which takes less CPU than breadth first: a
/// counterexample found would not be the shortest (`scripts/model.sh` finds
/// that one), and none is expected.
fn assert_holds(protocol: &Protocol, what: &str) -> Report {
    let report = find(protocol, THREADS);
    println!("{what}: {}", report.summary());
    if let Some(finding) = report.broken().next() {
        panic!("{:?} broken within {what}:\n{}", finding.property, finding.trace.as_deref().unwrap_or("never reached"));
    }
    report
}

#[test]
fn every_interleaving_with_two_faults_and_a_worker_per_server_keeps_the_promises() {
    // Without the refund, and one recovery pass between two ticks: a third of
    // the time the refund's bound takes, which scripts/model.sh runs (the
    // refund's two-fault double key is also the old-rule test below).
    let report = assert_keeps_its_promises(Bounds { faults: 2, passes: 1, workers: 1, refunds: false, tabs: 1 });
    assert!(report.unique_states > 5_000_000, "the model explores what it says: {}", report.summary());
}

#[test]
fn every_interleaving_with_a_fault_and_two_workers_per_server_keeps_the_promises() {
    assert_keeps_its_promises(Bounds { faults: 1, passes: 2, workers: 2, refunds: true, tabs: 1 });
}

#[test]
fn every_interleaving_with_two_tabs_paying_keeps_the_promises() {
    // Without the refund: with it, the two tabs' interleavings are more than
    // the test command's budget (scripts/model.sh runs them).
    assert_keeps_its_promises(Bounds { tabs: 2, refunds: false, ..SMALL });
}

/// Every property of the protocol at a PG without keys (KakaoPay: its
/// approve, lookups, cancels and refund lookups, each read with its own
/// tables; it may refuse to cancel the payment at any cancel) holds.
fn assert_keeps_its_promises_without_keys(bounds: Bounds) -> Report {
    assert_holds(&Protocol::new(bounds).without_idempotency_keys(), &format!("{bounds:?} without idempotency keys"))
}

#[test]
fn every_interleaving_at_a_pg_without_keys_with_two_faults_keeps_the_promises() {
    // The same bounds as Toss's two-fault run above.
    assert_keeps_its_promises_without_keys(Bounds { faults: 2, passes: 1, workers: 1, refunds: false, tabs: 1 });
}

#[test]
fn every_interleaving_at_a_pg_without_keys_with_two_workers_per_server_keeps_the_promises() {
    assert_keeps_its_promises_without_keys(Bounds { faults: 1, passes: 2, workers: 2, refunds: true, tabs: 1 });
}

#[test]
fn every_interleaving_at_a_pg_without_keys_with_two_tabs_paying_keeps_the_promises() {
    assert_keeps_its_promises_without_keys(Bounds { tabs: 2, refunds: false, ..SMALL });
}

#[test]
fn every_interleaving_with_409s_unreadable_answers_and_failed_connections_keeps_the_promises() {
    // Within 1 fault and 1 worker per server: the PG may also answer a confirm
    // 409 (its key's first request still processing), answer a body that
    // cannot be read, or never get it (the connection failed), at both PGs.
    assert_holds_at_both_pgs(Protocol::with_wire_faults, "with wire faults", 800_000);
}

#[test]
fn every_interleaving_through_an_outage_at_the_servers_breaker_threshold_keeps_the_promises() {
    // One fault is an outage: no lookup is answered until a server's breaker
    // could open at five failures in a row and its probe fail once more.
    // Elsewhere the model's breaker opens at the first failure, so that one
    // or two faults reach every phase; here it opens as the server's does.
    assert_holds_at_both_pgs(Protocol::with_outage, "through an outage", 1_000_000);
}

/// Every property of the small bound, made `more` of, holds at Toss's PG and
/// at one without keys, each exploring more than `at_least` states.
fn assert_holds_at_both_pgs(more: fn(Protocol) -> Protocol, what: &str, at_least: usize) {
    for protocol in [Protocol::new(SMALL), Protocol::new(KEYLESS).without_idempotency_keys()] {
        let protocol = more(protocol);
        let report = assert_holds(&protocol, &format!("{SMALL:?} {what}, keys: {}", !protocol.keyless_pg));
        assert!(report.unique_states > at_least, "the model explores what it says: {}", report.summary());
    }
}

#[test]
fn a_resend_at_a_pg_without_idempotency_keys_is_caught() {
    // Toss's rule (send again under the same key once a lookup shows no
    // confirm) at a PG that has no keys sends a second approve.
    let toss_rules = Protocol::new(KEYLESS).without_idempotency_keys().resending(Resending::UnderTheSameKey);
    let report = check(&toss_rules.only(ONE_APPROVE_WITHOUT_KEYS), THREADS);
    let trace =
        report.finding(ONE_APPROVE_WITHOUT_KEYS).trace.as_deref().expect("a second approve is found").to_owned();
    println!("Toss's resend at a PG without keys:\n{trace}");
    assert!(trace.matches("the PG processes").count() >= 2, "the trace shows both confirms processed:\n{trace}");
}

const KEYLESS: Bounds = SMALL;

const SMALL: Bounds = Bounds { faults: 1, passes: 2, workers: 1, refunds: true, tabs: 1 };

/// The old rule, back on, breaks `property`: the checker reports it with a
/// trace that shows `cause`, and then `makes`, the step that makes the
/// counterexample (see `assert_made_by`).
fn assert_caught(rule: OldRule, property: &'static str, cause: &str, makes: &[&str]) {
    assert_caught_within(SMALL, rule, property, cause, makes);
}

fn assert_caught_within(bounds: Bounds, rule: OldRule, property: &'static str, cause: &str, makes: &[&str]) {
    assert_caught_in(&Protocol::new(bounds), rule, property, cause, makes);
}

/// As `assert_caught`, of `protocol` (its bounds, its PG).
fn assert_caught_in(protocol: &Protocol, rule: OldRule, property: &'static str, cause: &str, makes: &[&str]) {
    let small = protocol.bounds == SMALL;
    let with_rule = protocol.clone().with_old_rule(rule).only(property);
    let report = if small { check(&with_rule, THREADS) } else { find(&with_rule, THREADS) };
    let finding = report.finding(property);
    let trace = finding.trace.as_deref().unwrap_or_else(|| panic!("{rule:?} was not caught ({})", report.summary()));
    println!("{rule:?} breaks {property:?}:\n{trace}");
    assert_made_by(trace, &finding.expectation, cause, makes);
    // That the fix holds within the same bounds is the wire faults' test above
    // (the small bound with more answers at both PGs: every path of the small
    // bound is one of its paths, and ends where it ends) and the outage's.
}

/// The trace's numbered steps, in order.
fn steps(trace: &str) -> Vec<&str> {
    trace
        .lines()
        .filter(|line| line.trim_start().split_once(". ").is_some_and(|(n, _)| n.parse::<u32>().is_ok()))
        .collect()
}

/// The shop's status after a step, as its line ends: `| shop UNKNOWN, ...`.
fn shop_after(step: &str) -> &str {
    step.rsplit_once("| shop ").map_or("", |(_, after)| after.split(',').next().unwrap_or(""))
}

/// `cause` comes first, then the step that makes the counterexample, one of
/// `makes` (interleavings of one length differ in which of two racing steps
/// comes last): for a promise that must always hold, the last step, whose
/// state breaks it; for one that must come true in the end, the last time it
/// happens, after which the order never moves again (the steps that follow
/// only go round).
fn assert_made_by(trace: &str, expectation: &Expectation, cause: &str, makes: &[&str]) {
    let steps = steps(trace);
    let caused = steps.iter().position(|step| step.contains(cause));
    let made = steps.iter().rposition(|step| makes.iter().any(|making| step.contains(making)));
    let (Some(caused), Some(made)) = (caused, made) else {
        panic!("the trace should show {cause:?}, then the step that makes it, {makes:?}:\n{trace}")
    };
    assert!(caused <= made, "{cause:?} comes before the step that makes it, {makes:?}:\n{trace}");
    match expectation {
        Expectation::Always => {
            assert_eq!(made, steps.len() - 1, "the counterexample ends at the step that makes it, {makes:?}:\n{trace}");
        }
        Expectation::Eventually | Expectation::Sometimes => {
            let stuck = shop_after(steps[made]);
            assert!(
                steps[made..].iter().all(|step| shop_after(step) == stuck),
                "after {makes:?} the order stays {stuck}:\n{trace}"
            );
        }
    }
}

#[test]
fn a_confirm_task_that_stores_a_failure_without_its_lease_is_caught() {
    // The 429 was not stored against the key; a resend went through meanwhile.
    let (rule, not_stored, stores) = (
        OldRule::ConfirmSettlesWithoutLease,
        "with a 429 (not stored)",
        &["stores the outcome", "confirm: Approved"][..],
    );
    assert_caught(rule, FAILED_ONLY_IF_NOTHING_CHARGED, not_stored, stores);
    // The page said what the server had stored, and then the resend charged.
    assert_caught(
        rule,
        PAGE_TRUTHFUL,
        "the page checks the order",
        &["the page checks the order", "confirm: Approved"],
    );
    // And the shop is told it failed, of a payment that was charged.
    assert_caught(rule, SHOP_TOLD_TRUTHFULLY, not_stored, stores);
}

#[test]
fn a_probe_lost_to_a_breaker_half_open_forever_is_caught() {
    // Through an outage, at the server's threshold of five: the pass asks the
    // breaker for the probe it holds and never sends, and no call goes again.
    let outage = Protocol::new(SMALL).with_outage();
    assert_caught_in(&outage, OldRule::HalfOpenForever, EVERY_PAYMENT_SETTLES, "the PG goes out", &["'s breaker"]);
}

#[test]
fn an_attempt_resent_forever_past_its_session_is_caught() {
    // Past the session the resend gets its key's stored 5xx again, for ever.
    assert_caught(OldRule::NoAgeRule, EVERY_PAYMENT_SETTLES, "with a 5xx it stores", &["confirm: ServerError"]);
}

#[test]
fn a_partial_refund_recorded_without_its_amount_is_caught() {
    assert_caught(
        OldRule::PartialRefundWithoutAmount,
        LEDGER_AGREES,
        "cancelled at the PG's console",
        &["acts on the answer"],
    );
}

#[test]
fn tasks_of_one_server_sharing_a_lease_name_are_caught() {
    assert_caught(
        OldRule::OneLeaseNamePerServer,
        FAILED_ONLY_IF_NOTHING_CHARGED,
        "claims the attempt",
        &["stores the outcome", "confirm: Approved"],
    );
    // A stale PROVIDER_ERROR gives the refund a new key while its current one
    // is still at the PG: the PG refunds twice.
    let two_faults = Bounds { faults: 2, ..SMALL };
    assert_caught_within(
        two_faults,
        OldRule::OneLeaseNamePerServer,
        REFUNDED_AS_ASKED,
        "PROVIDER_ERROR",
        &["Refunded {"],
    );
}

#[test]
fn a_key_of_another_order_looked_up_by_key_only_is_caught() {
    // The lookup by key shows another order's payment, and no lookup by the order follows.
    assert_caught(OldRule::LookupByKeyOnly, EVERY_PAYMENT_SETTLES, "OtherOrder", &["(ByKey): OtherOrder"]);
}

#[test]
fn a_refusal_of_a_cancel_sent_again_retried_at_a_pg_without_keys_is_caught() {
    // The first cancel's answer is lost; the lookup shows the balance as it
    // was, the cancel goes again and KakaoPay refuses it (-784); read as "not
    // known yet", the refund is looked up, sent and refused for ever.
    assert_caught_in(
        &Protocol::new(KEYLESS).without_idempotency_keys(),
        OldRule::RefusalOfAResendRetried,
        EVERY_PAYMENT_SETTLES,
        "refusing every cancel of the payment",
        &["ProviderError"],
    );
}

#[test]
fn a_late_refusal_settled_without_the_refunds_lease_at_a_pg_without_keys_is_caught() {
    // The refund's first cancel is held up past its lease; recovery's cancel
    // goes through; KakaoPay then refuses the first (the balance moved), and
    // the refund is stored refused though the PG refunded it.
    assert_caught_in(
        &Protocol::new(KEYLESS).without_idempotency_keys(),
        OldRule::RefusalSettledWithoutLease,
        RECONCILIATION_AGREES,
        "freezes past its lease",
        &["request task acts on the answer"],
    );
}

/// The test above that puts each old rule back: a match without a wildcard,
/// so that a new old rule does not compile until it has a test of its own.
fn test_of(rule: OldRule) -> (&'static str, fn()) {
    match rule {
        OldRule::ConfirmSettlesWithoutLease => (
            "a_confirm_task_that_stores_a_failure_without_its_lease_is_caught",
            a_confirm_task_that_stores_a_failure_without_its_lease_is_caught,
        ),
        OldRule::HalfOpenForever => (
            "a_probe_lost_to_a_breaker_half_open_forever_is_caught",
            a_probe_lost_to_a_breaker_half_open_forever_is_caught,
        ),
        OldRule::NoAgeRule => (
            "an_attempt_resent_forever_past_its_session_is_caught",
            an_attempt_resent_forever_past_its_session_is_caught,
        ),
        OldRule::PartialRefundWithoutAmount => (
            "a_partial_refund_recorded_without_its_amount_is_caught",
            a_partial_refund_recorded_without_its_amount_is_caught,
        ),
        OldRule::OneLeaseNamePerServer => {
            ("tasks_of_one_server_sharing_a_lease_name_are_caught", tasks_of_one_server_sharing_a_lease_name_are_caught)
        }
        OldRule::LookupByKeyOnly => (
            "a_key_of_another_order_looked_up_by_key_only_is_caught",
            a_key_of_another_order_looked_up_by_key_only_is_caught,
        ),
        OldRule::RefusalSettledWithoutLease => (
            "a_late_refusal_settled_without_the_refunds_lease_at_a_pg_without_keys_is_caught",
            a_late_refusal_settled_without_the_refunds_lease_at_a_pg_without_keys_is_caught,
        ),
        OldRule::RefusalOfAResendRetried => (
            "a_refusal_of_a_cancel_sent_again_retried_at_a_pg_without_keys_is_caught",
            a_refusal_of_a_cancel_sent_again_retried_at_a_pg_without_keys_is_caught,
        ),
    }
}

#[test]
fn every_old_rule_has_a_test_above() {
    // Each old rule its own test, and every one of them listed in `ALL` (which
    // the command line and the mutation record read) once.
    let tests: std::collections::BTreeSet<&str> = OldRule::ALL.iter().map(|rule| test_of(*rule).0).collect();
    assert_eq!(tests.len(), OldRule::ALL.len(), "{tests:?}");
    let source = include_str!("checker.rs");
    for name in &tests {
        assert!(source.contains(&format!("#[test]\nfn {name}()")), "{name} is a test of this file");
    }
}

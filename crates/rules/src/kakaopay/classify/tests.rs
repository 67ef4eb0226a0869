//! The tables read as KakaoPay documents them, one call at a time.

use std::collections::HashSet;

use super::approve::{APPROVE_CODES, APPROVE_VERDICTS, OUTCOME_UNKNOWN_AT_THE_CARD_COMPANY};
use super::cancel::{CANCEL_CODES, CANCEL_VERDICTS, REFUND_LOOKUP_VERDICTS};
use super::order::STATUS_VERDICTS;
use super::*;
use crate::kakaopay::wire::{Amount, Approval, Cancellation, Order, Status};
use crate::settlement::{CancelVerdict, ConfirmVerdict, RefundLookupVerdict, StatusVerdict};
use ApproveAnswer as A;
use CancelAnswer as C;
use CancelVerdict as K;
use ConfirmVerdict as V;
use StatusAnswer as S;
use StatusVerdict as Q;

const EXPECTED: Expected<'static> = Expected { tid: "T1", order_id: "ord", amount: 12_900 };

fn error<T>(http_status: u16, error_code: i32) -> KakaoPayReply<T> {
    KakaoPayReply::Error { http_status, error_code, method_result_code: None, message: "KakaoPay's message".into() }
}

fn approval(tid: &str, order_id: &str, total: u64) -> KakaoPayReply<Approval> {
    let amount = Amount { total, tax_free: 0 };
    KakaoPayReply::Body {
        http_status: 200,
        body: Approval { aid: "A1".into(), tid: tid.into(), partner_order_id: order_id.into(), amount },
    }
}

fn order(status: Status, left: u64) -> KakaoPayReply<Order> {
    KakaoPayReply::Body {
        http_status: 200,
        body: Order {
            tid: "T1".into(),
            status,
            partner_order_id: "ord".into(),
            amount: Amount { total: 12_900, tax_free: 0 },
            canceled_amount: Some(Amount { total: 12_900 - left, tax_free: 0 }),
            cancel_available_amount: Some(Amount { total: left, tax_free: 0 }),
        },
    }
}

fn unique<T: Eq + std::hash::Hash>(items: impl IntoIterator<Item = T>) -> bool {
    let mut seen = HashSet::new();
    items.into_iter().all(|item| seen.insert(item))
}

#[test]
fn each_approve_answer_has_one_verdict_and_each_code_one_kind() {
    assert!(unique(APPROVE_VERDICTS.iter().map(|(kind, _)| *kind)));
    assert!(unique(APPROVE_CODES.iter().map(|(code, _)| *code)));
    for (_, kind) in APPROVE_CODES {
        assert!(APPROVE_VERDICTS.iter().any(|(answer, _)| *answer == kind), "{kind:?} has a verdict");
    }
}

#[test]
fn an_approve_is_paid_only_with_this_attempts_approval() {
    let kind = |answer: &KakaoPayReply<Approval>| approve_answer(answer, EXPECTED);
    assert_eq!(kind(&approval("T1", "ord", 12_900)), A::Approved);
    for other in [approval("T2", "ord", 12_900), approval("T1", "ord2", 12_900), approval("T1", "ord", 100)] {
        assert_eq!(kind(&other), A::NotThisApproval, "{other:?}");
        assert_eq!(approve_verdict(kind(&other)), V::Unknown, "another approval proves nothing: a lookup decides");
    }
    let paid: Vec<_> = APPROVE_VERDICTS.iter().filter(|(_, verdict)| *verdict == V::Paid).collect();
    assert_eq!(paid, [&(A::Approved, V::Paid)]);
}

#[test]
fn an_approve_fails_only_on_a_documented_refusal() {
    #[rustfmt::skip]
    let table: [(KakaoPayReply<Approval>, ApproveAnswer, ConfirmVerdict); 17] = [
        (error(400, -780), A::Declined, V::Failed),
        (error(400, -708), A::Declined, V::Failed),
        (error(400, -704), A::Declined, V::Failed),
        (error(400, -701), A::Declined, V::Failed),
        (error(400, -797), A::Declined, V::Failed),
        (error(400, -723), A::SessionGone, V::Failed),
        (error(400, -721), A::SessionGone, V::Failed),
        (error(401, -401), A::TurnedAway, V::Failed),
        (error(400, -429), A::TurnedAway, V::Failed),
        (error(400, -702), A::NotThisRequest, V::Unknown),
        (error(400, -783), A::NotThisRequest, V::Unknown),
        (error(400, -785), A::NotThisRequest, V::Unknown),
        (error(500, -500), A::ServerError, V::Unknown),
        (error(502, -9999), A::ServerError, V::Unknown),
        (error(400, -9999), A::Undocumented, V::Unknown),
        (KakaoPayReply::NoReply { detail: "read timeout".into(), timed_out: true }, A::NoReply, V::Unknown),
        (KakaoPayReply::NotSent { detail: "connection refused".into() }, A::NotSent, V::Unreachable),
    ];
    for (answer, kind, verdict) in table {
        assert_eq!(approve_answer(&answer, EXPECTED), kind, "{answer:?}");
        assert_eq!(approve_verdict(kind), verdict, "{kind:?}");
    }
}

#[test]
fn a_refusal_under_a_server_errors_status_leaves_the_approve_to_a_lookup() {
    for (code, _) in APPROVE_CODES.iter().filter(|(_, kind)| approve_verdict(*kind) == V::Failed) {
        for http_status in [500, 502, 503] {
            let kind = approve_answer(&error(http_status, *code), EXPECTED);
            assert_eq!(approve_verdict(kind), V::Unknown, "{code} with {http_status}: {kind:?}");
        }
    }
    let declined = KakaoPayReply::<Approval>::Error {
        http_status: 500,
        error_code: -780,
        method_result_code: Some("USER_LOCKED".into()),
        message: "approval failure!".into(),
    };
    assert_eq!(approve_answer(&declined, EXPECTED), A::ServerError, "-780 with a 500 is looked up, never failed");
}

#[test]
fn a_card_company_that_does_not_know_its_outcome_leaves_the_approve_unknown() {
    let unknown = KakaoPayReply::<Approval>::Error {
        http_status: 400,
        error_code: -780,
        method_result_code: Some(OUTCOME_UNKNOWN_AT_THE_CARD_COMPANY.into()),
        message: "approval failure!".into(),
    };
    assert_eq!(approve_answer(&unknown, EXPECTED), A::OutcomeUnknown);
    assert_eq!(approve_verdict(A::OutcomeUnknown), V::Unknown);
    let declined = KakaoPayReply::<Approval>::Error {
        http_status: 400,
        error_code: -780,
        method_result_code: Some("USER_LOCKED".into()),
        message: "approval failure!".into(),
    };
    assert_eq!(approve_verdict(approve_answer(&declined, EXPECTED)), V::Failed);
}

#[test]
fn an_unreadable_body_is_a_server_error_only_with_a_server_errors_status() {
    let unreadable = |http_status| approve_answer(&KakaoPayReply::Unparsable { http_status }, EXPECTED);
    assert_eq!(unreadable(502), A::ServerError);
    assert_eq!(unreadable(429), A::ServerError);
    assert_eq!(unreadable(200), A::Undocumented);
}

#[test]
fn every_status_is_read_once_and_only_success_is_paid() {
    let statuses = [
        Status::Ready,
        Status::SendTms,
        Status::OpenPayment,
        Status::SelectMethod,
        Status::ArsWaiting,
        Status::AuthPassword,
        Status::IssuedSid,
        Status::SuccessPayment,
        Status::PartCancelPayment,
        Status::CancelPayment,
        Status::FailAuthPassword,
        Status::QuitPayment,
        Status::FailPayment,
        Status::Unrecognised,
    ];
    assert!(unique(STATUS_VERDICTS.iter().map(|(kind, _)| *kind)));
    for status in statuses {
        assert_eq!(STATUS_VERDICTS.iter().filter(|(kind, _)| *kind == S::Payment(status)).count(), 1, "{status:?}");
    }
    #[rustfmt::skip]
    let table = [
        (Status::SuccessPayment, Q::Paid),
        (Status::PartCancelPayment, Q::PartiallyRefunded),
        (Status::CancelPayment, Q::Canceled),
        (Status::FailAuthPassword, Q::Failed),
        (Status::QuitPayment, Q::Failed),
        (Status::FailPayment, Q::Failed),
        (Status::Ready, Q::NotConfirmed),
        (Status::OpenPayment, Q::NotConfirmed),
        (Status::AuthPassword, Q::NotConfirmed),
        (Status::IssuedSid, Q::Nothing),
        (Status::Unrecognised, Q::Nothing),
    ];
    for (status, verdict) in table {
        assert_eq!(status_verdict(status_answer(&order(status, 12_900), EXPECTED)), verdict, "{status:?}");
    }
}

#[test]
fn a_lookup_of_another_payment_or_an_unavailable_kakaopay_settles_nothing() {
    let other = |expected| status_verdict(status_answer(&order(Status::SuccessPayment, 12_900), expected));
    // No lookup by the order's id at KakaoPay: another payment is an operator's.
    assert_eq!(other(Expected { tid: "T2", ..EXPECTED }), Q::Nothing);
    assert_eq!(other(Expected { order_id: "ord2", ..EXPECTED }), Q::Nothing);
    assert_eq!(other(Expected { amount: 1, ..EXPECTED }), Q::Nothing);
    for unavailable in [error(500, -500), error(400, -503), error(429, -429)] {
        assert_eq!(status_verdict(status_answer(&unavailable, EXPECTED)), Q::Retry, "{unavailable:?}");
    }
    let timed_out = KakaoPayReply::NoReply { detail: "timeout".into(), timed_out: true };
    assert_eq!(status_verdict(status_answer(&timed_out, EXPECTED)), Q::Retry);
    assert_eq!(status_verdict(status_answer(&error(400, -721), EXPECTED)), Q::NotConfirmed, "no such tid");
    assert_eq!(status_verdict(status_answer(&error(400, -2), EXPECTED)), Q::Nothing);
    assert_eq!(refunded_total(&order(Status::PartCancelPayment, 10_000)), Some(2_900));
    assert_eq!(refunded_total(&error(500, -500)), None);
}

const REFUND: ExpectedRefund<'static> = ExpectedRefund { tid: "T1", balance_before: 12_900, amount: 2_900 };

fn cancellation(status: Status, left: u64) -> KakaoPayReply<Cancellation> {
    KakaoPayReply::Body {
        http_status: 200,
        body: Cancellation {
            tid: "T1".into(),
            status,
            approved_cancel_amount: Some(Amount { total: 2_900, tax_free: 0 }),
            canceled_amount: Some(Amount { total: 12_900 - left, tax_free: 0 }),
            cancel_available_amount: Some(Amount { total: left, tax_free: 0 }),
        },
    }
}

#[test]
fn a_cancels_answer_says_what_is_refunded_in_all_and_a_refusal_keeps_kakaopays_code() {
    assert_eq!(canceled_total(&cancellation(Status::PartCancelPayment, 10_000)), Some(2_900));
    assert_eq!(canceled_total(&cancellation(Status::CancelPayment, 0)), Some(12_900));
    assert_eq!(canceled_total(&error(400, -710)), None, "a refusal shows no total");
    assert_eq!(refusal_code(&error(400, -784)), "KAKAOPAY_784");
    assert_eq!(refusal_code(&error(400, -710)), "KAKAOPAY_710");
    assert_eq!(refusal_code(&KakaoPayReply::<Cancellation>::Unparsable { http_status: 400 }), "KAKAOPAY_REFUSED");
}

#[test]
fn each_cancel_answer_has_one_row_and_only_a_first_sends_refusal_ends_a_refund() {
    assert!(unique(CANCEL_VERDICTS.iter().map(|(kind, _, _)| *kind)));
    assert!(unique(CANCEL_CODES.iter().map(|(code, _)| *code)));
    for (kind, first, again) in CANCEL_VERDICTS {
        assert_eq!(cancel_verdict(kind, Sent::First), first);
        assert_eq!(cancel_verdict(kind, Sent::Again), again);
        assert_ne!(again, K::Refused, "{kind:?}: a refusal of a cancel sent again may hide the first's refund");
        assert_ne!(first, K::NewKey, "{kind:?}: KakaoPay has no keys");
    }
    #[rustfmt::skip]
    let table: [(KakaoPayReply<Cancellation>, CancelAnswer, CancelVerdict, CancelVerdict); 10] = [
        (cancellation(Status::PartCancelPayment, 10_000), C::Refunded, K::Refunded, K::Refunded),
        (cancellation(Status::PartCancelPayment, 7_100), C::NotThisRefund, K::Retry, K::Retry),
        (cancellation(Status::SuccessPayment, 10_000), C::NotThisRefund, K::Retry, K::Retry),
        (error(400, -710), C::Refused, K::Refused, K::RefusedUnlessDone),
        (error(400, -784), C::Refused, K::Refused, K::RefusedUnlessDone),
        (error(500, -784), C::ServerError, K::Retry, K::Retry),
        (error(400, -781), C::MethodRefused, K::Retry, K::Retry),
        (error(400, -785), C::Duplicate, K::Retry, K::Retry),
        (error(500, -500), C::ServerError, K::Retry, K::Retry),
        (error(400, -9999), C::Undocumented, K::Retry, K::Retry),
    ];
    for (answer, kind, first, again) in table {
        assert_eq!(cancel_answer(&answer, REFUND), kind, "{answer:?}");
        assert_eq!((cancel_verdict(kind, Sent::First), cancel_verdict(kind, Sent::Again)), (first, again), "{kind:?}");
    }
    let full = ExpectedRefund { balance_before: 12_900, amount: 12_900, ..REFUND };
    assert_eq!(cancel_answer(&cancellation(Status::CancelPayment, 0), full), C::Refunded);
}

#[test]
fn a_refund_is_sent_again_only_when_the_balance_is_as_before_it() {
    assert!(unique(REFUND_LOOKUP_VERDICTS.iter().map(|(kind, _)| *kind)));
    let looked = |answer: &KakaoPayReply<Order>| refund_lookup_verdict(refund_lookup(answer, REFUND));
    assert_eq!(looked(&order(Status::PartCancelPayment, 10_000)), RefundLookupVerdict::Refunded);
    assert_eq!(looked(&order(Status::SuccessPayment, 12_900)), RefundLookupVerdict::Send);
    assert_eq!(looked(&order(Status::PartCancelPayment, 5_000)), RefundLookupVerdict::Nothing, "refunded elsewhere");
    assert_eq!(looked(&error(500, -500)), RefundLookupVerdict::Retry);
    assert_eq!(looked(&error(400, -721)), RefundLookupVerdict::Nothing);
}

#[test]
fn every_code_in_the_tables_is_kakaopays_negative_one() {
    let codes = APPROVE_CODES.iter().map(|(code, _)| *code).chain(CANCEL_CODES.iter().map(|(code, _)| *code));
    for code in codes {
        assert!(code < 0, "KakaoPay's error codes are negative: {code}");
    }
}

#[test]
fn unreadable_bodies_and_unknown_codes_are_unavailable_only_with_a_server_errors_status() {
    fn unreadable<T>(http_status: u16) -> KakaoPayReply<T> {
        KakaoPayReply::Unparsable { http_status }
    }
    assert_eq!(cancel_answer(&unreadable(502), REFUND), C::ServerError);
    assert_eq!(cancel_answer(&unreadable(200), REFUND), C::Undocumented);
    assert_eq!(cancel_answer(&error(502, -9999), REFUND), C::ServerError);
    assert_eq!(refund_lookup(&unreadable(502), REFUND), RefundLookup::Unavailable);
    assert_eq!(refund_lookup(&unreadable(200), REFUND), RefundLookup::Other);
    assert_eq!(status_answer(&unreadable(502), EXPECTED), S::Unavailable);
    assert_eq!(status_answer(&unreadable(200), EXPECTED), S::Unexpected);
}

#[test]
fn a_refund_lookup_of_another_payment_sends_nothing() {
    let KakaoPayReply::Body { body, .. } = order(Status::SuccessPayment, 12_900) else { unreachable!() };
    let other = KakaoPayReply::Body { http_status: 200, body: Order { tid: "T2".into(), ..body } };
    assert_eq!(refund_lookup(&other, REFUND), RefundLookup::Other);
}

#[test]
fn an_answer_is_described_in_one_line_with_the_methods_result() {
    assert_eq!(describe(&approval("T1", "ord", 12_900)), "HTTP 200");
    assert_eq!(describe(&error::<Approval>(400, -702)), "HTTP 400 -702");
    let with_method = KakaoPayReply::<Approval>::Error {
        http_status: 400,
        error_code: -780,
        method_result_code: Some("USER_LOCKED".into()),
        message: String::new(),
    };
    assert_eq!(describe(&with_method), "HTTP 400 -780 (USER_LOCKED)");
    assert_eq!(
        describe(&KakaoPayReply::<Approval>::Unparsable { http_status: 502 }),
        "HTTP 502 with an unreadable body"
    );
    assert_eq!(describe(&KakaoPayReply::<Approval>::NotSent { detail: "refused".into() }), "not sent: refused");
    assert_eq!(
        describe(&KakaoPayReply::<Approval>::NoReply { detail: "timeout".into(), timed_out: true }),
        "no answer: timeout"
    );
}

//! The tables read as documented, one operation at a time.

use std::collections::HashSet;

use super::cancel::{CANCEL_VERDICTS, REFUND_LOOKUP_VERDICTS};
use super::confirm::{CONFIRM_VERDICTS, row};
use super::lookup::STATUS_VERDICTS;
use super::*;
use payonce_api::ErrorCode;

use crate::settlement::{CancelVerdict, ConfirmVerdict, RefundLookupVerdict, StatusVerdict};
use crate::toss::wire::{ErrorBody, PaymentStatus};
use CancelAnswer as C;
use CancelVerdict as K;
use ConfirmAnswer as A;
use ConfirmVerdict as V;
use PaymentStatus as P;
use RefundLookup as L;
use RefundLookupVerdict as R;
use StatusAnswer as S;
use StatusVerdict as Q;

const EXPECTED: Expected<'static> = Expected { payment_key: "pk", order_id: "ord", amount: 1000 };

fn payment(status: PaymentStatus) -> TossReply {
    TossReply::Payment {
        http_status: 200,
        payment: Payment {
            payment_key: "pk".into(),
            order_id: "ord".into(),
            status,
            total_amount: 1000,
            balance_amount: Some(1000),
            failure: None,
            is_partial_cancelable: Some(true),
        },
    }
}

fn error(http_status: u16, code: &str) -> TossReply {
    TossReply::Error { http_status, code: code.into(), message: "PG message".into() }
}

/// An answer of each kind, as the wire brings it.
fn confirm_example(kind: ConfirmAnswer) -> Vec<TossReply> {
    match kind {
        A::Approved => vec![payment(P::Done)],
        A::NotAnApproval => vec![payment(P::InProgress), payment(P::Canceled), {
            let TossReply::Payment { payment, .. } = payment(P::Done) else { unreachable!() };
            TossReply::Payment { http_status: 200, payment: Payment { order_id: "other".into(), ..payment } }
        }],
        A::Declined => vec![
            error(403, "REJECT_CARD_PAYMENT"),
            error(400, "INVALID_CARD_EXPIRATION"),
            error(400, "INVALID_REQUEST"),
            error(403, "EXCEED_MAX_AUTH_COUNT"),
        ],
        A::SessionGone => vec![error(404, "NOT_FOUND_PAYMENT_SESSION"), error(404, "NOT_FOUND_PAYMENT")],
        A::TurnedAway => vec![
            error(429, "TOO_MANY_REQUESTS"),
            error(429, "ANYTHING"),
            error(403, "FORBIDDEN_CONSECUTIVE_REQUEST"),
            error(401, "UNAUTHORIZED_KEY"),
        ],
        A::StillProcessing => vec![error(409, "IDEMPOTENT_REQUEST_PROCESSING")],
        A::AlreadyProcessed => vec![error(400, "ALREADY_PROCESSED_PAYMENT"), error(400, "DUPLICATED_ORDER_ID")],
        A::ServerError => vec![
            error(500, "FAILED_INTERNAL_SYSTEM_PROCESSING"),
            error(502, "REJECT_CARD_PAYMENT"),
            error(400, "PROVIDER_ERROR"),
            TossReply::Unparsable { http_status: 503 },
        ],
        A::Undocumented => vec![
            error(400, "SOMETHING_NEW"),
            error(400, "REJECT_SOMETHING_NEW"),
            error(403, "EXCEED_SOMETHING_NEW"),
            TossReply::Unparsable { http_status: 200 },
            TossReply::Unparsable { http_status: 400 },
        ],
        A::NotSent => vec![TossReply::NotSent { detail: "connection refused".into() }],
        A::NoReply => vec![TossReply::NoReply { detail: "read timeout".into(), timed_out: true }],
    }
}

fn check_confirm_row(kind: ConfirmAnswer, first: ConfirmVerdict, resend: ConfirmVerdict) {
    let (_, table_first, table_resend) = row(kind);
    assert_eq!((table_first, table_resend), (first, resend), "{kind:?}");
    for answer in confirm_example(kind) {
        assert_eq!(confirm_answer(&answer, EXPECTED), kind, "{answer:?}");
    }
}

#[test]
fn confirm_approved_is_paid_on_either_call() {
    check_confirm_row(A::Approved, V::Paid, V::Paid);
}

#[test]
fn confirm_declined_fails_on_either_call() {
    check_confirm_row(A::Declined, V::Failed, V::Failed);
}

#[test]
fn confirm_session_gone_fails_on_either_call() {
    check_confirm_row(A::SessionGone, V::Failed, V::Failed);
}

#[test]
fn confirm_turned_away_fails_the_first_call_and_says_nothing_on_a_resend() {
    check_confirm_row(A::TurnedAway, V::Failed, V::Nothing);
}

#[test]
fn confirm_not_sent_is_unreachable_first_and_nothing_on_a_resend() {
    check_confirm_row(A::NotSent, V::Unreachable, V::Nothing);
}

#[test]
fn confirm_still_processing_is_unknown() {
    check_confirm_row(A::StillProcessing, V::Unknown, V::Nothing);
}

#[test]
fn confirm_already_processed_is_unknown() {
    check_confirm_row(A::AlreadyProcessed, V::Unknown, V::Nothing);
}

#[test]
fn confirm_server_errors_are_unknown_whatever_their_code() {
    check_confirm_row(A::ServerError, V::Unknown, V::Nothing);
}

#[test]
fn confirm_no_answer_is_unknown() {
    check_confirm_row(A::NoReply, V::Unknown, V::Nothing);
}

#[test]
fn confirm_a_payment_that_is_not_this_approval_is_unknown() {
    check_confirm_row(A::NotAnApproval, V::Unknown, V::Nothing);
}

#[test]
fn confirm_undocumented_codes_are_unknown_whatever_their_prefix() {
    check_confirm_row(A::Undocumented, V::Unknown, V::Nothing);
}

#[test]
fn the_confirm_table_has_one_row_per_answer_and_a_test_above_per_row() {
    let kinds: HashSet<_> = CONFIRM_VERDICTS.iter().map(|(kind, _, _)| *kind).collect();
    assert_eq!(kinds.len(), CONFIRM_VERDICTS.len(), "one row per kind");
    assert_eq!(kinds.len(), 11, "a new kind needs a row, and a test of its own above");
}

fn status_example(kind: StatusAnswer) -> Vec<TossReply> {
    match kind {
        S::Payment(status) => vec![payment(status)],
        S::NotFound => vec![error(404, "NOT_FOUND_PAYMENT"), error(404, "NOT_FOUND")],
        S::NotThisPayment => {
            let TossReply::Payment { payment, .. } = payment(P::Done) else { unreachable!() };
            vec![TossReply::Payment { http_status: 200, payment: Payment { payment_key: "pk-2".into(), ..payment } }]
        }
        S::Unavailable => vec![
            TossReply::NotSent { detail: String::new() },
            TossReply::NoReply { detail: String::new(), timed_out: false },
            error(500, "FAILED_INTERNAL_SYSTEM_PROCESSING"),
            error(429, "TOO_MANY_REQUESTS"),
            TossReply::Unparsable { http_status: 502 },
        ],
        // A 404 proves the payment absent only with the codes Toss documents for it.
        S::Unexpected => {
            vec![
                error(403, "FORBIDDEN_CONSECUTIVE_REQUEST"),
                error(400, "SOMETHING_NEW"),
                error(404, "NOT_FOUND_ROUTE"),
            ]
        }
    }
}

fn check_status_row(kind: StatusAnswer, verdict: StatusVerdict) {
    assert_eq!(status_verdict(kind), verdict, "{kind:?}");
    for answer in status_example(kind) {
        assert_eq!(status_answer(&answer, EXPECTED), kind, "{answer:?}");
    }
}

#[test]
fn status_done_is_paid() {
    check_status_row(S::Payment(P::Done), Q::Paid);
}

#[test]
fn status_aborted_is_failed() {
    check_status_row(S::Payment(P::Aborted), Q::Failed);
}

#[test]
fn status_expired_is_failed() {
    check_status_row(S::Payment(P::Expired), Q::Failed);
}

#[test]
fn status_canceled_is_canceled_not_paid() {
    check_status_row(S::Payment(P::Canceled), Q::Canceled);
}

#[test]
fn status_partial_canceled_is_partially_refunded() {
    check_status_row(S::Payment(P::PartialCanceled), Q::PartiallyRefunded);
}

#[test]
fn status_ready_is_not_confirmed() {
    check_status_row(S::Payment(P::Ready), Q::NotConfirmed);
}

#[test]
fn status_in_progress_is_not_confirmed() {
    check_status_row(S::Payment(P::InProgress), Q::NotConfirmed);
}

#[test]
fn status_not_found_is_not_confirmed() {
    check_status_row(S::NotFound, Q::NotConfirmed);
}

#[test]
fn status_waiting_for_deposit_settles_nothing() {
    check_status_row(S::Payment(P::WaitingForDeposit), Q::Nothing);
}

#[test]
fn status_unrecognised_settles_nothing() {
    check_status_row(S::Payment(P::Unrecognised), Q::Nothing);
}

#[test]
fn status_of_another_payment_settles_nothing() {
    check_status_row(S::NotThisPayment, Q::OtherPayment);
}

#[test]
fn status_unexpected_errors_settle_nothing() {
    check_status_row(S::Unexpected, Q::Nothing);
}

#[test]
fn status_unavailable_is_retried() {
    check_status_row(S::Unavailable, Q::Retry);
}

#[test]
fn the_status_table_has_one_row_per_answer() {
    let kinds: HashSet<_> = STATUS_VERDICTS.iter().map(|(kind, _)| *kind).collect();
    assert_eq!(kinds.len(), STATUS_VERDICTS.len());
    assert_eq!(kinds.len(), 13, "a new kind needs a row, and a test of its own above");
}

#[test]
fn failures_carry_the_pg_code_and_words_for_the_customer() {
    let declined = failure_of(&error(403, "REJECT_CARD_PAYMENT"));
    assert_eq!(declined.code, "REJECT_CARD_PAYMENT");
    assert!(declined.message.contains("not been charged"), "{}", declined.message);
    assert!(!declined.message.contains("PG message"));
    assert_eq!(failure_of(&TossReply::NotSent { detail: String::new() }).code, "PG_UNREACHABLE");
    assert_eq!(failure_of(&payment(P::Expired)).code, "EXPIRED_PAYMENT");
    let TossReply::Payment { payment: aborted, .. } = payment(P::Aborted) else { unreachable!() };
    let aborted =
        Payment { failure: Some(ErrorBody { code: "REJECT_CARD_COMPANY".into(), message: "m".into() }), ..aborted };
    assert_eq!(failure_of(&TossReply::Payment { http_status: 200, payment: aborted }).code, "REJECT_CARD_COMPANY");
}

/// A refund of 400 of the 1000 payment, from a balance of 1000.
const REFUND: ExpectedRefund<'static> = ExpectedRefund { payment: EXPECTED, balance_before: 1000, balance_after: 600 };

fn with_balance(status: PaymentStatus, balance: u64) -> TossReply {
    let TossReply::Payment { payment, .. } = payment(status) else { unreachable!() };
    TossReply::Payment { http_status: 200, payment: Payment { balance_amount: Some(balance), ..payment } }
}

fn cancel_example(kind: CancelAnswer) -> Vec<TossReply> {
    match kind {
        C::Refunded => vec![with_balance(P::PartialCanceled, 600)],
        C::NotThisRefund => vec![with_balance(P::Done, 1000), with_balance(P::Canceled, 0), {
            let TossReply::Payment { payment, .. } = with_balance(P::PartialCanceled, 600) else { unreachable!() };
            TossReply::Payment { http_status: 200, payment: Payment { payment_key: "pk-2".into(), ..payment } }
        }],
        C::NotCancelable => vec![
            error(403, "NOT_CANCELABLE_AMOUNT"),
            error(403, "NOT_CANCELABLE_PAYMENT"),
            error(404, "NOT_FOUND_PAYMENT"),
        ],
        C::AlreadyCanceled => vec![error(400, "ALREADY_CANCELED_PAYMENT")],
        C::ProviderRefused => vec![error(400, "PROVIDER_ERROR")],
        C::TurnedAway => vec![
            error(403, "FORBIDDEN_CONSECUTIVE_REQUEST"),
            error(429, "TOO_MANY_REQUESTS"),
            error(429, "ANYTHING"),
            error(401, "UNAUTHORIZED_KEY"),
        ],
        C::StillProcessing => vec![error(409, "IDEMPOTENT_REQUEST_PROCESSING")],
        C::ServerError => vec![
            error(500, "FAILED_INTERNAL_SYSTEM_PROCESSING"),
            error(500, "NOT_CANCELABLE_AMOUNT"),
            TossReply::Unparsable { http_status: 503 },
        ],
        C::Undocumented => vec![error(400, "SOMETHING_NEW"), TossReply::Unparsable { http_status: 400 }],
        C::NotSent => vec![TossReply::NotSent { detail: "connection refused".into() }],
        C::NoReply => vec![TossReply::NoReply { detail: "reset".into(), timed_out: false }],
    }
}

fn check_cancel_row(kind: CancelAnswer, verdict: CancelVerdict) {
    assert_eq!(cancel_verdict(kind), verdict, "{kind:?}");
    for answer in cancel_example(kind) {
        assert_eq!(cancel_answer(&answer, REFUND), kind, "{answer:?}");
    }
}

/// Toss's error table for `POST /v1/payments/{paymentKey}/cancel`, all thirty
/// codes with their statuses, and what each must mean for a refund.
#[rustfmt::skip]
const DOCUMENTED_CANCEL_CODES: [(u16, &str, CancelAnswer); 30] = [
    (400, "ALREADY_CANCELED_PAYMENT", C::AlreadyCanceled),
    (400, "INVALID_REFUND_ACCOUNT_INFO", C::NotCancelable),
    (400, "EXCEED_CANCEL_AMOUNT_DISCOUNT_AMOUNT", C::NotCancelable),
    (400, "INVALID_REQUEST", C::NotCancelable),
    (400, "INVALID_REFUND_ACCOUNT_NUMBER", C::NotCancelable),
    (400, "INVALID_BANK", C::NotCancelable),
    (400, "NOT_MATCHES_REFUNDABLE_AMOUNT", C::NotCancelable),
    (400, "PROVIDER_ERROR", C::ProviderRefused),
    (400, "REFUND_REJECTED", C::NotCancelable),
    (400, "ALREADY_REFUND_PAYMENT", C::AlreadyCanceled),
    (400, "FORBIDDEN_BANK_REFUND_REQUEST", C::NotCancelable),
    (401, "UNAUTHORIZED_KEY", C::TurnedAway),
    (403, "NOT_CANCELABLE_AMOUNT", C::NotCancelable),
    (403, "FORBIDDEN_CONSECUTIVE_REQUEST", C::TurnedAway),
    (403, "FORBIDDEN_REQUEST", C::NotCancelable),
    (403, "NOT_CANCELABLE_PAYMENT", C::NotCancelable),
    (403, "EXCEED_MAX_REFUND_DUE", C::NotCancelable),
    (403, "NOT_ALLOWED_PARTIAL_REFUND_WAITING_DEPOSIT", C::NotCancelable),
    (403, "NOT_ALLOWED_PARTIAL_REFUND", C::NotCancelable),
    (403, "NOT_AVAILABLE_BANK", C::ProviderRefused),
    (403, "INCORRECT_BASIC_AUTH_FORMAT", C::TurnedAway),
    (403, "NOT_CANCELABLE_PAYMENT_FOR_DORMANT_USER", C::NotCancelable),
    (403, "EXCEED_CANCEL_LIMIT", C::NotCancelable),
    (404, "NOT_FOUND_PAYMENT", C::NotCancelable),
    (500, "FAILED_INTERNAL_SYSTEM_PROCESSING", C::ServerError),
    (500, "FAILED_REFUND_PROCESS", C::ServerError),
    (500, "FAILED_METHOD_HANDLING_CANCEL", C::ServerError),
    (500, "FAILED_PARTIAL_REFUND", C::ServerError),
    (500, "COMMON_ERROR", C::ServerError),
    (500, "FAILED_PAYMENT_INTERNAL_SYSTEM_PROCESSING", C::ServerError),
];

#[test]
fn every_documented_cancel_code_has_a_meaning_and_none_is_retried_forever() {
    for (status, code, meaning) in DOCUMENTED_CANCEL_CODES {
        assert_eq!(cancel_answer(&error(status, code), REFUND), meaning, "{status} {code}");
    }
    // A refusal ends the refund whatever its status; only 5xx say nothing of the code.
    for code in ["EXCEED_MAX_REFUND_DUE", "REFUND_REJECTED", "INVALID_IDEMPOTENCY_KEY"] {
        assert_eq!(cancel_verdict(cancel_answer(&error(400, code), REFUND)), K::Refused, "{code}");
    }
}

#[test]
fn cancel_refunded_is_done() {
    check_cancel_row(C::Refunded, K::Refunded);
}

#[test]
fn cancel_documented_refusals_end_the_refund() {
    check_cancel_row(C::NotCancelable, K::Refused);
}

#[test]
fn cancel_refused_by_the_card_company_goes_again_under_a_new_key() {
    check_cancel_row(C::ProviderRefused, K::NewKey);
}

#[test]
fn cancel_already_canceled_is_settled_by_a_lookup() {
    check_cancel_row(C::AlreadyCanceled, K::Retry);
}

#[test]
fn cancel_a_payment_not_showing_this_refund_is_settled_by_a_lookup() {
    check_cancel_row(C::NotThisRefund, K::Retry);
}

#[test]
fn cancel_turned_away_is_sent_again() {
    check_cancel_row(C::TurnedAway, K::Retry);
}

#[test]
fn cancel_still_processing_is_sent_again() {
    check_cancel_row(C::StillProcessing, K::Retry);
}

#[test]
fn cancel_server_errors_are_sent_again_whatever_their_code() {
    check_cancel_row(C::ServerError, K::Retry);
}

#[test]
fn cancel_undocumented_codes_are_sent_again() {
    check_cancel_row(C::Undocumented, K::Retry);
}

#[test]
fn cancel_not_sent_is_sent_again() {
    check_cancel_row(C::NotSent, K::Retry);
}

#[test]
fn cancel_no_answer_is_sent_again() {
    check_cancel_row(C::NoReply, K::Retry);
}

#[test]
fn the_cancel_table_has_one_row_per_answer_and_a_test_above_per_row() {
    let kinds: HashSet<_> = CANCEL_VERDICTS.iter().map(|(kind, _)| *kind).collect();
    assert_eq!(kinds.len(), CANCEL_VERDICTS.len(), "one row per kind");
    assert_eq!(kinds.len(), 11, "a new kind needs a row, and a test of its own above");
}

#[test]
fn a_lookup_settles_a_refund_only_by_the_balance_it_leaves() {
    let cases = [
        (with_balance(P::PartialCanceled, 600), L::Shown, R::Refunded),
        (with_balance(P::Done, 1000), L::NotShown, R::Send),
        (with_balance(P::Canceled, 0), L::Unexpected, R::Nothing),
        (with_balance(P::PartialCanceled, 300), L::Unexpected, R::Nothing),
        (error(404, "NOT_FOUND_PAYMENT"), L::Unexpected, R::Nothing),
        (error(503, "FAILED_INTERNAL_SYSTEM_PROCESSING"), L::Unavailable, R::Retry),
        (TossReply::NoReply { detail: String::new(), timed_out: true }, L::Unavailable, R::Retry),
    ];
    for (answer, lookup, verdict) in cases {
        assert_eq!(refund_lookup(&answer, REFUND), lookup, "{answer:?}");
        assert_eq!(refund_lookup_verdict(lookup), verdict, "{lookup:?}");
    }
    let kinds: HashSet<_> = REFUND_LOOKUP_VERDICTS.iter().map(|(kind, _)| *kind).collect();
    assert_eq!(kinds.len(), 4, "a new kind needs a row, and a case above");
    assert_eq!(refunded_total(&with_balance(P::PartialCanceled, 600)), Some(400));
}

#[test]
fn a_refused_refund_keeps_the_pgs_code_or_ours_when_the_pg_gave_none() {
    assert_eq!(refusal_code(&error(403, "NOT_CANCELABLE_AMOUNT")), "NOT_CANCELABLE_AMOUNT");
    assert_eq!(refusal_code(&payment(P::Done)), ErrorCode::CancelRefused.as_str());
    assert_eq!(refusal_code(&TossReply::Unparsable { http_status: 400 }), ErrorCode::CancelRefused.as_str());
}

#[test]
fn operators_read_each_answer_in_one_line() {
    let lines: Vec<String> = [
        payment(P::Done),
        error(403, "REJECT_CARD_PAYMENT"),
        TossReply::Unparsable { http_status: 502 },
        TossReply::NotSent { detail: "connection refused".into() },
        TossReply::NoReply { detail: "operation timed out".into(), timed_out: true },
    ]
    .iter()
    .map(describe)
    .collect();
    assert_eq!(
        lines,
        [
            "HTTP 200 payment pk Done",
            "HTTP 403 REJECT_CARD_PAYMENT",
            "HTTP 502 with an unreadable body",
            "not sent: connection refused",
            "no answer: operation timed out",
        ]
    );
}

#[test]
fn a_lookup_by_the_orders_id_shows_this_orders_payment_whatever_its_key() {
    let TossReply::Payment { payment: done, .. } = payment(P::Done) else { unreachable!() };
    let shown = |payment: Payment| order_status_answer(&TossReply::Payment { http_status: 200, payment }, "ord", 1000);
    assert_eq!(shown(Payment { payment_key: "pk-of-another-tab".into(), ..done.clone() }), S::Payment(P::Done));
    assert_eq!(shown(Payment { order_id: "ord-2".into(), ..done.clone() }), S::NotThisPayment, "another order's");
    assert_eq!(shown(Payment { total_amount: 999, ..done.clone() }), S::NotThisPayment, "another amount");
    assert_eq!(order_status_answer(&error(404, "NOT_FOUND_PAYMENT"), "ord", 1000), S::NotFound);
    assert_eq!(order_status_answer(&error(503, "FAILED_INTERNAL_SYSTEM_PROCESSING"), "ord", 1000), S::Unavailable);
}

#[test]
fn a_listed_transaction_is_an_approval_a_cancel_or_no_money_moved() {
    let kinds: Vec<TransactionKind> =
        [P::Done, P::Canceled, P::PartialCanceled, P::WaitingForDeposit, P::Aborted, P::Expired, P::Ready]
            .into_iter()
            .map(transaction_kind)
            .collect();
    use TransactionKind::{Approval, Cancel, Other};
    assert_eq!(kinds, [Approval, Cancel, Cancel, Other, Other, Other, Other]);
}

#[test]
fn only_the_refunds_own_payment_saying_so_makes_it_refundable_only_in_full() {
    let partial_cancelable = |value: Option<bool>, payment_key: &str| {
        let TossReply::Payment { payment, .. } = payment(P::Done) else { unreachable!() };
        let payment = Payment { is_partial_cancelable: value, payment_key: payment_key.into(), ..payment };
        TossReply::Payment { http_status: 200, payment }
    };
    assert!(refunded_only_in_full(&partial_cancelable(Some(false), "pk"), EXPECTED));
    assert!(!refunded_only_in_full(&partial_cancelable(Some(true), "pk"), EXPECTED));
    assert!(!refunded_only_in_full(&partial_cancelable(None, "pk"), EXPECTED), "a PG that does not say");
    assert!(!refunded_only_in_full(&partial_cancelable(Some(false), "pk-2"), EXPECTED), "another payment");
    assert!(!refunded_only_in_full(&error(404, "NOT_FOUND_PAYMENT"), EXPECTED));
    assert!(!refunded_only_in_full(&TossReply::NoReply { detail: "timeout".into(), timed_out: true }, EXPECTED));
}

//! A confirm's, a lookup's and a refund's replies read as the server reads
//! them, with the real tables of the PG the model stands for: Toss's, or, at
//! a PG without idempotency keys, KakaoPay's (its approve's codes, its
//! `order` statuses, its cancel's codes and balances).
//! The model's PG behaves the same either way; what it answers is built as
//! that PG's wire reply, so that a wrong row of either table is explored.

use payonce_api::Failure;
use payonce_rules::kakaopay::classify as kakaopay;
use payonce_rules::pg_reply::PgReply;
use payonce_rules::settlement::{CancelVerdict, ConfirmVerdict, RefundLookupVerdict, Sent, Shown};
use payonce_rules::toss::classify as toss;

use super::spec::Protocol;
use crate::old_rules::OldRule;
use crate::pg::{self, CancelReply, Looked, Reply};
use crate::state::RefundRow;

/// What a confirm's reply means: its verdict, the failure it stores, what it
/// said (for traces), and whether it shows the PG unavailable (for the breaker).
pub(super) struct ConfirmRead {
    pub verdict: ConfirmVerdict,
    pub failure: Failure,
    pub described: String,
    pub unavailable: bool,
}

/// What a lookup by the payment's key shows, and whether it shows the PG unavailable.
pub(super) struct LookupRead {
    pub shown: Shown,
    pub described: String,
    pub unavailable: bool,
}

/// What a cancel's reply means (for the send it was), how much it shows
/// refunded in all, the code a refusal keeps, and whether it shows the PG
/// unavailable.
pub(super) struct CancelRead {
    pub verdict: CancelVerdict,
    pub refunded_total: Option<u64>,
    pub code: String,
    pub unavailable: bool,
}

/// What a lookup shows of a refund, how much refunded in all, and whether it
/// shows the PG unavailable.
pub(super) struct RefundLookupRead {
    pub verdict: RefundLookupVerdict,
    pub refunded_total: Option<u64>,
    pub unavailable: bool,
}

fn toss_refund(refund: &RefundRow) -> toss::ExpectedRefund<'static> {
    toss::ExpectedRefund {
        payment: pg::expected(false),
        balance_before: refund.balance_before,
        balance_after: refund.balance_before - refund.amount,
    }
}

fn kakaopay_refund(refund: &RefundRow) -> kakaopay::ExpectedRefund<'static> {
    kakaopay::ExpectedRefund { tid: pg::PAYMENT_KEY, balance_before: refund.balance_before, amount: refund.amount }
}

impl Protocol {
    /// A cancel's reply (`sent`: the refund's first, or one sent again) as the server reads it.
    pub(super) fn read_cancel(&self, reply: CancelReply, refund: &RefundRow, sent: Sent) -> CancelRead {
        if self.keyless_pg {
            let answer = pg::kakaopay_cancel_answer(reply);
            let verdict =
                match kakaopay::cancel_verdict(kakaopay::cancel_answer(&answer, kakaopay_refund(refund)), sent) {
                    // The old rule: a refusal of a send after the first proves nothing; look again later.
                    CancelVerdict::RefusedUnlessDone if self.old(OldRule::RefusalOfAResendRetried) => {
                        CancelVerdict::Retry
                    }
                    verdict => verdict,
                };
            return CancelRead {
                verdict,
                refunded_total: kakaopay::canceled_total(&answer),
                code: kakaopay::refusal_code(&answer),
                unavailable: answer.shows_pg_unavailable(),
            };
        }
        // Toss replays a key's first answer: a refusal proves the same on every send.
        let answer = pg::cancel_answer(reply);
        CancelRead {
            verdict: toss::cancel_verdict(toss::cancel_answer(&answer, toss_refund(refund))),
            refunded_total: toss::refunded_total(&answer),
            code: toss::refusal_code(&answer),
            unavailable: answer.shows_pg_unavailable(),
        }
    }

    /// A lookup of the payment for a refund as the server reads it.
    pub(super) fn read_refund_lookup(&self, looked: Looked, refund: &RefundRow) -> RefundLookupRead {
        if self.keyless_pg {
            let answer = pg::kakaopay_order_answer(looked);
            return RefundLookupRead {
                verdict: kakaopay::refund_lookup_verdict(kakaopay::refund_lookup(&answer, kakaopay_refund(refund))),
                refunded_total: kakaopay::refunded_total(&answer),
                unavailable: answer.shows_pg_unavailable(),
            };
        }
        let answer = pg::lookup_answer(looked);
        RefundLookupRead {
            verdict: toss::refund_lookup_verdict(toss::refund_lookup(&answer, toss_refund(refund))),
            refunded_total: toss::refunded_total(&answer),
            unavailable: answer.shows_pg_unavailable(),
        }
    }

    /// A confirm's reply (`sent`: the first, or a resend) as the server reads it.
    pub(super) fn read_confirm(&self, reply: Reply, names_other_order: bool, sent: Sent) -> ConfirmRead {
        if self.keyless_pg {
            let answer = pg::kakaopay_approve_answer(reply);
            let kind = kakaopay::approve_answer(&answer, pg::kakaopay_expected());
            // KakaoPay has no resend: one sent under Toss's rule is read as an approve.
            return ConfirmRead {
                verdict: kakaopay::approve_verdict(kind),
                failure: payonce_rules::kakaopay::messages::approve_failure(kind, &answer),
                described: answer.describe(),
                unavailable: answer.shows_pg_unavailable(),
            };
        }
        let answer = pg::confirm_answer(reply, names_other_order);
        let kind = toss::confirm_answer(&answer, pg::expected(names_other_order));
        let verdict = match sent {
            Sent::First => toss::first_call_verdict(kind),
            Sent::Again => toss::resend_verdict(kind),
        };
        ConfirmRead {
            verdict,
            failure: toss::failure_of(&answer),
            described: pg::describe(&answer),
            unavailable: answer.shows_pg_unavailable(),
        }
    }

    /// A lookup by the payment's key as the server reads it.
    pub(super) fn read_lookup(&self, looked: Looked, names_other_order: bool) -> LookupRead {
        if self.keyless_pg {
            let answer = pg::kakaopay_order_answer(looked);
            let verdict = kakaopay::status_verdict(kakaopay::status_answer(&answer, pg::kakaopay_expected()));
            return LookupRead {
                shown: Shown { verdict, refunded_total: kakaopay::refunded_total(&answer) },
                described: answer.describe(),
                unavailable: answer.shows_pg_unavailable(),
            };
        }
        let answer = pg::lookup_answer(looked);
        let verdict = toss::status_verdict(toss::status_answer(&answer, pg::expected(names_other_order)));
        LookupRead {
            shown: Shown { verdict, refunded_total: toss::refunded_total(&answer) },
            described: pg::describe(&answer),
            unavailable: answer.shows_pg_unavailable(),
        }
    }
}

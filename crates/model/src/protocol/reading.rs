//! A confirm's and a lookup's reply read as the server reads them, with the
//! real tables of the PG the model stands for: Toss's, or, at a PG without
//! idempotency keys, KakaoPay's (its approve's codes, its `order` statuses).
//! The model's PG behaves the same either way; what it answers is built as
//! that PG's wire reply, so that a wrong row of either table is explored.

use payonce_api::Failure;
use payonce_rules::kakaopay::classify as kakaopay;
use payonce_rules::pg_reply::PgReply;
use payonce_rules::settlement::{ConfirmVerdict, Sent, Shown};
use payonce_rules::toss::classify as toss;

use super::spec::Protocol;
use crate::pg::{self, Looked, Reply};

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

impl Protocol {
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

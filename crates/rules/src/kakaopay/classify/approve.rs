//! An approve's answer: its kind, and what it means. An approve goes out once
//! (no idempotency key), so this is the customer's first and only call.

use super::{Expected, unavailable};
use crate::kakaopay::KakaoPayReply;
use crate::kakaopay::wire::Approval;
use crate::settlement::ConfirmVerdict;

/// What one answer to an approve is, before it means anything for an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApproveAnswer {
    /// 200 with this attempt's approval: charged.
    Approved,
    /// 200 with another payment's approval (another tid, order or amount).
    NotThisApproval,
    /// A documented refusal after looking at the request or the card (wrong
    /// token, amount, order; the card company declined; over a limit):
    /// nothing was charged.
    Declined,
    /// The payment is unknown (-721) or its 15 minutes are over (-723):
    /// nothing was charged, and nothing will be.
    SessionGone,
    /// Refused before processing (credentials, the shop's registration, its
    /// quota): nothing was charged.
    TurnedAway,
    /// -702 (approved already), -783 (in a state that cannot be approved) or
    /// -785 (a request for it is being processed): something else happened
    /// to it; only a lookup tells what.
    NotThisRequest,
    /// -780 with the card company's own outcome unknown (`BANK_FIRM_UNKNOWN`).
    OutcomeUnknown,
    /// 5xx (a documented refusal included), or KakaoPay's internal error or
    /// maintenance.
    ServerError,
    /// A code KakaoPay does not document, or a body that is neither.
    Undocumented,
    /// The request never left.
    NotSent,
    /// The request left and no complete answer came back.
    NoReply,
}

use ApproveAnswer as A;
use ConfirmVerdict as V;

/// What each kind of approve answer means for the attempt.
pub const APPROVE_VERDICTS: [(ApproveAnswer, ConfirmVerdict); 11] = [
    (A::Approved, V::Paid),
    (A::Declined, V::Failed),
    (A::SessionGone, V::Failed),
    (A::TurnedAway, V::Failed),
    (A::NotSent, V::Unreachable),
    (A::NotThisRequest, V::Unknown),
    (A::OutcomeUnknown, V::Unknown),
    (A::ServerError, V::Unknown),
    (A::NoReply, V::Unknown),
    (A::NotThisApproval, V::Unknown),
    (A::Undocumented, V::Unknown),
];

/// The card company's code for an outcome it does not know (under -780).
pub const OUTCOME_UNKNOWN_AT_THE_CARD_COMPANY: &str = "BANK_FIRM_UNKNOWN";

/// Codes KakaoPay documents for `approve` (and for every API: credentials,
/// registration, quota, its own failures), with what each says.
pub const APPROVE_CODES: [(i32, ApproveAnswer); 31] = [
    (-701, A::Declined),       // approved before the customer finished authenticating
    (-702, A::NotThisRequest), // approved already
    (-703, A::Declined),       // the point amount is wrong
    (-704, A::Declined),       // the amount is wrong
    (-705, A::Declined),       // a method it does not support
    (-706, A::Declined),       // partner_order_id is not ready's
    (-707, A::Declined),       // partner_user_id is not ready's
    (-708, A::Declined),       // an invalid pg_token
    (-721, A::SessionGone),    // no such tid
    (-722, A::Declined),       // the amounts are wrong
    (-723, A::SessionGone),    // the payment's time is over
    (-724, A::Declined),       // the single-payment amount is wrong
    (-725, A::Declined),       // the total amount is wrong
    (-726, A::Declined),       // the order is wrong
    (-730, A::TurnedAway),     // the app's registration
    (-731, A::TurnedAway),     // the cid
    (-732, A::TurnedAway),     // the gid
    (-733, A::TurnedAway),     // the cid_secret
    (-780, A::Declined),       // the approval failed (see the method's result)
    (-783, A::NotThisRequest), // in a state that cannot be approved
    (-785, A::NotThisRequest), // a duplicate request
    (-797, A::Declined),       // over the per-payment limit
    (-798, A::TurnedAway),     // the caller's IP is not allowed
    (-799, A::TurnedAway),     // the domain is not the registered site's
    (-400, A::TurnedAway),     // no Authorization
    (-401, A::TurnedAway),     // a wrong secret key
    (-403, A::TurnedAway),     // the API is not enabled for the app
    (-429, A::TurnedAway),     // the quota is used up
    (-500, A::ServerError),    // KakaoPay's internal error
    (-503, A::ServerError),    // maintenance
    (-2, A::Declined),         // an invalid parameter
];

/// The kind of an approve's answer.
pub fn approve_answer(answer: &KakaoPayReply<Approval>, expected: Expected<'_>) -> ApproveAnswer {
    match answer {
        KakaoPayReply::Body { body, .. } if expected.matches(&body.tid, &body.partner_order_id, body.amount.total) => {
            A::Approved
        }
        KakaoPayReply::Body { .. } => A::NotThisApproval,
        KakaoPayReply::Error { error_code: -780, method_result_code: Some(method), .. }
            if method == OUTCOME_UNKNOWN_AT_THE_CARD_COMPANY =>
        {
            A::OutcomeUnknown
        }
        KakaoPayReply::Error { http_status, error_code, .. } => {
            match APPROVE_CODES.iter().find(|(code, _)| code == error_code) {
                // A refusal under a server error's status proves nothing:
                // KakaoPay (or what stands before it) failed while answering,
                // and the one approve may have gone through. A lookup decides.
                Some((_, kind)) if *http_status >= 500 && approve_verdict(*kind) == V::Failed => A::ServerError,
                Some((_, kind)) => *kind,
                None if unavailable(*http_status, *error_code) => A::ServerError,
                None => A::Undocumented,
            }
        }
        KakaoPayReply::Unparsable { http_status } if unavailable(*http_status, 0) => A::ServerError,
        KakaoPayReply::Unparsable { .. } => A::Undocumented,
        KakaoPayReply::NotSent { .. } => A::NotSent,
        KakaoPayReply::NoReply { .. } => A::NoReply,
    }
}

/// What an approve's answer means for the attempt.
pub fn approve_verdict(kind: ApproveAnswer) -> ConfirmVerdict {
    APPROVE_VERDICTS.iter().find(|(answer, _)| *answer == kind).map_or(V::Unknown, |(_, verdict)| *verdict)
}

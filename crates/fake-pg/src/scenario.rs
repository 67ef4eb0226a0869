//! The test-card scenarios of the payment window. A scenario chosen in the
//! window is stored with the paymentKey and decides that payment's fate,
//! overriding the global fault rates.

/// One test card. The ids are part of the interface: tests press the
/// window's buttons by them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// Approved after the configured latency.
    Approve,
    /// Approved after 40 s: longer than a page waits for the confirm answer.
    Approve40s,
    /// Approved after 70 s: longer than a 60 s PG read timeout.
    Approve70s,
    /// Declined with 403 `REJECT_CARD_PAYMENT`.
    DeclineRejectCard,
    /// Declined with 400 `INVALID_CARD_EXPIRATION`.
    DeclineInvalidExpiration,
    /// Charged, but the first confirm answers 500.
    Error500ThenCharge,
    /// Charged, then the connection is reset with no answer.
    ResetAfterCharge,
    /// Every confirm answers 429 `TOO_MANY_REQUESTS`; nothing is processed.
    RateLimited429,
    /// Every confirm answers 403 `FORBIDDEN_CONSECUTIVE_REQUEST`; nothing is processed.
    ForbiddenConsecutive403,
    /// The customer cancels in the window: back to failUrl.
    Cancel,
    /// Approved, on a card Toss cannot refund in part (a cash card, an escrow
    /// order): `isPartialCancelable` is false and a partial cancel answers
    /// 403 `NOT_ALLOWED_PARTIAL_REFUND`.
    ApproveNoPartialRefund,
    /// Approved, and its refund period is over at once: every cancel answers
    /// 403 `EXCEED_MAX_REFUND_DUE`.
    ApproveRefundPeriodOver,
}

impl Scenario {
    pub const ALL: [Scenario; 12] = [
        Scenario::Approve,
        Scenario::Approve40s,
        Scenario::Approve70s,
        Scenario::DeclineRejectCard,
        Scenario::DeclineInvalidExpiration,
        Scenario::Error500ThenCharge,
        Scenario::ResetAfterCharge,
        Scenario::RateLimited429,
        Scenario::ForbiddenConsecutive403,
        Scenario::Cancel,
        Scenario::ApproveNoPartialRefund,
        Scenario::ApproveRefundPeriodOver,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Scenario::Approve => "approve",
            Scenario::Approve40s => "approve_40s",
            Scenario::Approve70s => "approve_70s",
            Scenario::DeclineRejectCard => "decline_reject_card",
            Scenario::DeclineInvalidExpiration => "decline_invalid_expiration",
            Scenario::Error500ThenCharge => "error_500_then_charge",
            Scenario::ResetAfterCharge => "reset_after_charge",
            Scenario::RateLimited429 => "rate_limited_429",
            Scenario::ForbiddenConsecutive403 => "forbidden_consecutive_403",
            Scenario::Cancel => "cancel",
            Scenario::ApproveNoPartialRefund => "approve_no_partial_refund",
            Scenario::ApproveRefundPeriodOver => "approve_refund_period_over",
        }
    }

    /// Whether a payment approved under this scenario can be refunded in part.
    pub fn partially_cancelable(self) -> bool {
        self != Scenario::ApproveNoPartialRefund
    }

    pub fn parse(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|scenario| scenario.id() == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_are_unique() {
        for scenario in Scenario::ALL {
            assert_eq!(Scenario::parse(scenario.id()), Some(scenario));
        }
        let mut ids: Vec<_> = Scenario::ALL.iter().map(|s| s.id()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), Scenario::ALL.len());
        assert_eq!(Scenario::parse("APPROVE"), None);
    }
}

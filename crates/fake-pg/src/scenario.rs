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
}

impl Scenario {
    pub const ALL: [Scenario; 10] = [
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
        }
    }

    pub fn parse(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|scenario| scenario.id() == id)
    }

    /// The button's label.
    pub fn title(self) -> &'static str {
        match self {
            Scenario::Approve => "Approve",
            Scenario::Approve40s => "Approve slowly (40\u{a0}s)",
            Scenario::Approve70s => "Approve very slowly (70\u{a0}s)",
            Scenario::DeclineRejectCard => "Decline: card rejected",
            Scenario::DeclineInvalidExpiration => "Decline: invalid expiration date",
            Scenario::Error500ThenCharge => "Error 500, but charged",
            Scenario::ResetAfterCharge => "Connection reset after charging",
            Scenario::RateLimited429 => "Rate limited (429)",
            Scenario::ForbiddenConsecutive403 => "Consecutive request blocked (403)",
            Scenario::Cancel => "Cancel payment",
        }
    }

    /// One line under the label saying what the merchant's server will see.
    pub fn description(self) -> &'static str {
        match self {
            Scenario::Approve => "Charged after the normal processing time.",
            Scenario::Approve40s => "Charged; the confirm takes 40 seconds to answer.",
            Scenario::Approve70s => "Charged; the confirm takes 70 seconds, longer than a 60-second read timeout.",
            Scenario::DeclineRejectCard => "Not charged: 403 REJECT_CARD_PAYMENT.",
            Scenario::DeclineInvalidExpiration => "Not charged: 400 INVALID_CARD_EXPIRATION.",
            Scenario::Error500ThenCharge => {
                "Charged, but the first confirm answers 500; a retry with the same Idempotency-Key gets the payment."
            }
            Scenario::ResetAfterCharge => {
                "Charged, then the connection is reset with no answer; a retry with the same Idempotency-Key gets the payment."
            }
            Scenario::RateLimited429 => "Not charged: every confirm answers 429 TOO_MANY_REQUESTS.",
            Scenario::ForbiddenConsecutive403 => {
                "Not charged: every confirm answers 403 FORBIDDEN_CONSECUTIVE_REQUEST."
            }
            Scenario::Cancel => "Back to the shop with PAY_PROCESS_CANCELED.",
        }
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

//! What happens to a confirm or cancel: seeded random draws from the fault rates, or
//! the fixed plan of a window scenario.
//!
//! Every request draws the same number of values whatever the outcome, so a
//! seed gives the same sequence of decisions for the same sequence of
//! requests, however the rates are set.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::config::{Faults, RuntimeConfig, SlowTail};
use crate::error::PgError;
use crate::scenario::Scenario;

/// A fault met before any processing: nothing is charged or remembered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FrontDoorFault {
    ResetBeforeProcessing,
    Error500,
    RateLimit429,
    /// A 429 answered only once the payment has been processed by another
    /// request of the same key (a retry that went through meanwhile).
    RateLimit429Held,
    ForbiddenConsecutive,
}

impl FrontDoorFault {
    /// The answer a caller gets, or `None` for a reset (no answer at all).
    pub(crate) fn error(self) -> Option<PgError> {
        match self {
            FrontDoorFault::ResetBeforeProcessing => None,
            FrontDoorFault::Error500 => Some(PgError::FailedInternalSystemProcessing),
            FrontDoorFault::RateLimit429 | FrontDoorFault::RateLimit429Held => {
                Some(PgError::TooManyRequests("Too many requests; nothing was processed. Try again later.".to_owned()))
            }
            FrontDoorFault::ForbiddenConsecutive => Some(PgError::ForbiddenConsecutiveRequest),
        }
    }
}

/// What the first caller hears once a processing that charged is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// The payment, as normal.
    Respond,
    /// 500 although the charge went through.
    Error500,
    /// The connection is reset: no answer although the charge went through.
    Reset,
}

/// How one processing goes, decided when it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Before `time_scale`.
    pub(crate) latency_ms: u64,
    /// The card's decline, or `None` to charge.
    pub(crate) decline: Option<PgError>,
    pub(crate) delivery: Delivery,
}

/// The seeded source of fault decisions.
pub(crate) struct FaultRng {
    rng: StdRng,
}

impl FaultRng {
    pub(crate) fn seeded(seed: u64) -> Self {
        Self { rng: StdRng::seed_from_u64(seed) }
    }

    /// Whether a confirm or cancel that would start processing is turned away first.
    /// The order sets precedence when several rates are high at once.
    pub(crate) fn front_door(&mut self, faults: &Faults) -> Option<FrontDoorFault> {
        let draws = [
            (FrontDoorFault::ResetBeforeProcessing, faults.reset_before_processing),
            (FrontDoorFault::Error500, faults.error_500),
            (FrontDoorFault::RateLimit429, faults.rate_limit_429),
            (FrontDoorFault::RateLimit429Held, faults.rate_limit_429_held),
            (FrontDoorFault::ForbiddenConsecutive, faults.forbidden_consecutive),
        ]
        .map(|(fault, rate)| (fault, self.chance(rate)));
        draws.into_iter().find(|(_, hit)| *hit).map(|(fault, _)| fault)
    }

    /// Whether a confirm about to be processed fails inside the PG instead,
    /// with a 500 stored against its key.
    pub(crate) fn stored_error(&mut self, faults: &Faults) -> bool {
        self.chance(faults.error_500_stored)
    }

    /// The plan of a processing under the global configuration.
    pub(crate) fn plan(&mut self, config: &RuntimeConfig) -> Plan {
        let latency_ms = draw_latency_ms(&mut self.rng, config.latency_ms, &config.slow_tail);
        let decline = self.chance(config.faults.decline);
        let reset = self.chance(config.faults.reset_after_charge);
        let error_500 = self.chance(config.faults.error_500_after_charge);
        let delivery = match (reset, error_500) {
            (true, _) => Delivery::Reset,
            (false, true) => Delivery::Error500,
            (false, false) => Delivery::Respond,
        };
        Plan { latency_ms, decline: decline.then_some(PgError::RejectCardPayment), delivery }
    }

    fn chance(&mut self, rate: f64) -> bool {
        // `random` is in [0, 1): a rate of 0 never hits and 1 always does.
        self.rng.random::<f64>() < rate
    }
}

/// One latency draw: the slow tail's for a `fraction` share, else the usual.
pub(crate) fn draw_latency_ms(rng: &mut impl Rng, latency_ms: u64, slow_tail: &SlowTail) -> u64 {
    if rng.random::<f64>() < slow_tail.fraction { slow_tail.latency_ms } else { latency_ms }
}

/// The fault a scenario meets before processing.
pub(crate) fn scenario_front_door(scenario: Scenario) -> Option<FrontDoorFault> {
    match scenario {
        Scenario::RateLimited429 => Some(FrontDoorFault::RateLimit429),
        Scenario::ForbiddenConsecutive403 => Some(FrontDoorFault::ForbiddenConsecutive),
        Scenario::Approve
        | Scenario::Approve40s
        | Scenario::Approve70s
        | Scenario::DeclineRejectCard
        | Scenario::DeclineInvalidExpiration
        | Scenario::Error500ThenCharge
        | Scenario::ResetAfterCharge
        | Scenario::Cancel
        | Scenario::ApproveNoPartialRefund
        | Scenario::ApproveRefundPeriodOver => None,
    }
}

/// The plan of a processing under a scenario. Scenarios use the configured
/// latency unless the scenario is about latency, and no random faults.
pub(crate) fn scenario_plan(scenario: Scenario, config: &RuntimeConfig) -> Plan {
    let plan = |latency_ms, decline, delivery| Plan { latency_ms, decline, delivery };
    let usual = config.latency_ms;
    match scenario {
        Scenario::Approve40s => plan(40_000, None, Delivery::Respond),
        Scenario::Approve70s => plan(70_000, None, Delivery::Respond),
        Scenario::DeclineRejectCard => plan(usual, Some(PgError::RejectCardPayment), Delivery::Respond),
        Scenario::DeclineInvalidExpiration => plan(usual, Some(PgError::InvalidCardExpiration), Delivery::Respond),
        Scenario::Error500ThenCharge => plan(usual, None, Delivery::Error500),
        Scenario::ResetAfterCharge => plan(usual, None, Delivery::Reset),
        // These never reach processing (front door, or refused as canceled),
        // but a plan must exist for the match to be total.
        Scenario::Approve
        | Scenario::ApproveNoPartialRefund
        | Scenario::ApproveRefundPeriodOver
        | Scenario::RateLimited429
        | Scenario::ForbiddenConsecutive403
        | Scenario::Cancel => plan(usual, None, Delivery::Respond),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slow_share(seed: u64, fraction: f64, draws: usize) -> f64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let tail = SlowTail { fraction, latency_ms: 20_000 };
        let slow = (0..draws).filter(|_| draw_latency_ms(&mut rng, 300, &tail) == 20_000).count();
        slow as f64 / draws as f64
    }

    #[test]
    fn slow_tail_share_is_close_to_the_fraction_over_a_thousand_draws() {
        // Binomial(1000, 0.05) has a standard deviation of about 0.0069; four
        // of them is a tolerance no correct sampler exceeds for these seeds.
        for seed in [1, 2, 3, 42, 9_999] {
            let share = slow_share(seed, 0.05, 1_000);
            assert!((share - 0.05).abs() < 0.028, "seed {seed}: share {share}");
        }
        let share = slow_share(7, 0.5, 1_000);
        assert!((share - 0.5).abs() < 0.07, "share {share}");
    }

    #[test]
    fn slow_tail_extremes_are_exact() {
        assert_eq!(slow_share(1, 0.0, 1_000), 0.0);
        assert_eq!(slow_share(1, 1.0, 1_000), 1.0);
    }

    #[test]
    fn a_seed_repeats_its_decisions() {
        let mut config = RuntimeConfig::default();
        config.slow_tail.fraction = 0.3;
        config.faults.decline = 0.3;
        config.faults.error_500 = 0.2;
        let run = |seed| {
            let mut rng = FaultRng::seeded(seed);
            (0..200).map(|_| (rng.front_door(&config.faults), rng.plan(&config))).collect::<Vec<_>>()
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }

    #[test]
    fn rates_of_one_always_hit_and_zero_never() {
        let mut rng = FaultRng::seeded(1);
        let mut faults = Faults::default();
        assert!((0..100).all(|_| rng.front_door(&faults).is_none()));
        faults.forbidden_consecutive = 1.0;
        assert!((0..100).all(|_| rng.front_door(&faults) == Some(FrontDoorFault::ForbiddenConsecutive)));
        faults.reset_before_processing = 1.0;
        assert_eq!(rng.front_door(&faults), Some(FrontDoorFault::ResetBeforeProcessing));
    }

    #[test]
    fn scenarios_override_latency_and_outcome() {
        let config = RuntimeConfig::default();
        assert_eq!(scenario_plan(Scenario::Approve70s, &config).latency_ms, 70_000);
        assert_eq!(
            scenario_plan(Scenario::DeclineInvalidExpiration, &config).decline,
            Some(PgError::InvalidCardExpiration)
        );
        assert_eq!(scenario_plan(Scenario::ResetAfterCharge, &config).delivery, Delivery::Reset);
        assert_eq!(scenario_front_door(Scenario::RateLimited429), Some(FrontDoorFault::RateLimit429));
        assert_eq!(scenario_front_door(Scenario::Approve), None);
    }
}

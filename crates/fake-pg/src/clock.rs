//! Time: latencies scaled by `time_scale`, and timestamps in Korea's offset.

use std::time::{Duration, SystemTime};

/// Korea Standard Time has no daylight saving, so a fixed offset is exact.
const KST_OFFSET: Duration = Duration::from_secs(9 * 60 * 60);

/// Turns configured latencies into real waits. Every wait goes through it, so
/// one factor speeds a whole scenario up while keeping its ratios.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    time_scale: f64,
}

impl Clock {
    /// `time_scale` must be positive and finite (`Config::validate` checks it).
    pub(crate) fn new(time_scale: f64) -> Self {
        Self { time_scale }
    }

    pub(crate) fn time_scale(&self) -> f64 {
        self.time_scale
    }

    /// The real wait for a configured latency.
    pub(crate) fn scaled_ms(&self, latency_ms: u64) -> Duration {
        self.scaled(Duration::from_millis(latency_ms))
    }

    /// The real length of one of Toss's periods (ten minutes, fifteen days).
    pub(crate) fn scaled(&self, period: Duration) -> Duration {
        period.mul_f64(self.time_scale)
    }
}

/// Now, as Toss writes it: ISO 8601 with the `+09:00` offset, to the second.
pub(crate) fn now_kst() -> String {
    kst(SystemTime::now())
}

fn kst(time: SystemTime) -> String {
    // humantime formats UTC with a `Z`; shifting the instant by nine hours
    // and swapping the suffix gives the same wall clock Toss shows.
    let utc_shaped = humantime::format_rfc3339_seconds(time + KST_OFFSET).to_string();
    let wall = utc_shaped.trim_end_matches('Z');
    format!("{wall}+09:00")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_carry_the_korean_offset() {
        let epoch = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        // 2023-11-14T22:13:20Z is 07:13:20 the next morning in Seoul.
        assert_eq!(kst(epoch), "2023-11-15T07:13:20+09:00");
    }

    #[test]
    fn latencies_scale() {
        assert_eq!(Clock::new(0.1).scaled_ms(40_000), Duration::from_secs(4));
        assert_eq!(Clock::new(1.0).scaled_ms(300), Duration::from_millis(300));
    }
}

//! Time: latencies scaled by `time_scale`, and timestamps in Korea's offset.

use std::time::{Duration, SystemTime};

/// Korea Standard Time has no daylight saving, so a fixed offset is exact.
pub(crate) const KST_OFFSET: Duration = Duration::from_secs(9 * 60 * 60);

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

/// `time` as Toss writes it (see [`now_kst`]).
pub(crate) fn kst(time: SystemTime) -> String {
    // humantime formats UTC with a `Z`; shifting the instant by nine hours
    // and swapping the suffix gives the same wall clock Toss shows.
    let utc_shaped = humantime::format_rfc3339_seconds(time + KST_OFFSET).to_string();
    let wall = utc_shaped.trim_end_matches('Z');
    format!("{wall}+09:00")
}

/// A local date-time in Korea as Toss's listings take it, `2022-01-01T00:00:00`
/// with or without milliseconds (`.000`) and without an offset, as whole
/// seconds since the Unix epoch. `None` for anything else, or a date that does
/// not exist.
pub(crate) fn parse_kst_local(text: &str) -> Option<u64> {
    let bytes = text.as_bytes();
    let shaped = match bytes.len() {
        19 => true,
        23 => bytes[19] == b'.' && bytes[20..].iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !shaped || !text.is_ascii() || bytes[10] != b'T' {
        return None;
    }
    // humantime reads the wall clock as UTC; Korea's is nine hours ahead.
    let as_if_utc = humantime::parse_rfc3339_weak(&text[..19]).ok()?;
    let seconds = as_if_utc.duration_since(SystemTime::UNIX_EPOCH).ok()?.as_secs();
    seconds.checked_sub(KST_OFFSET.as_secs())
}

/// Whole seconds since the Unix epoch, the resolution `transactionAt` shows.
pub(crate) fn unix_seconds(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |since| since.as_secs())
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
    fn local_korean_date_times_parse_to_the_instant_they_name() {
        // 2023-11-15T07:13:20 in Seoul is 1_700_000_000 (see above).
        assert_eq!(parse_kst_local("2023-11-15T07:13:20"), Some(1_700_000_000));
        assert_eq!(parse_kst_local("2023-11-15T07:13:20.999"), Some(1_700_000_000));
        for bad in [
            "2023-11-15",
            "2023-11-15 07:13:20",
            "2023-11-15T07:13:20+09:00",
            "2023-11-15T07:13:20Z",
            "2023-02-30T00:00:00",
            "2023-11-15T25:00:00",
            "2023-11-15T07:13:20.5",
            "1970-01-01T00:00:00",
            "x",
        ] {
            assert_eq!(parse_kst_local(bad), None, "{bad}");
        }
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(parse_kst_local(kst(now).trim_end_matches("+09:00")), Some(unix_seconds(now)));
    }

    #[test]
    fn latencies_scale() {
        assert_eq!(Clock::new(0.1).scaled_ms(40_000), Duration::from_secs(4));
        assert_eq!(Clock::new(1.0).scaled_ms(300), Duration::from_millis(300));
    }
}

//! How long a worker holds an attempt. A lease covers the call under way and
//! a margin to store its answer, and is renewed before each call, so a worker
//! that dies (or freezes) loses its attempts soon after the call it was making
//! could have ended, and never while that call could still come back.

use std::time::Duration;

use payonce_rules::settlement::Deadlines;

use crate::config::ServerConfig;

/// The margin beyond a call's longest wait: time to store what it learned. A
/// tenth of the longest confirm, within 1 to 5 seconds.
pub fn margin(config: &ServerConfig) -> Duration {
    (config.max_processing() / 10).clamp(Duration::from_secs(1), Duration::from_secs(5))
}

/// While a confirm (the customer's, or a resend) is out.
pub fn for_confirm(config: &ServerConfig) -> Duration {
    config.max_processing() + margin(config)
}

/// While a lookup is out.
pub fn for_lookup(config: &ServerConfig) -> Duration {
    config.pg_transport().lookup_timeout() + margin(config)
}

/// Milliseconds, as leases are stored.
pub fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// A name for one holder of a lease: a confirm task, or one pass of a worker.
/// Each is its own, even on one server, so a worker whose lease lapsed cannot
/// renew, release or settle what another task of the same server took over.
pub fn holder(worker_id: &str) -> String {
    format!("{worker_id}/{}", uuid::Uuid::new_v4().simple())
}

/// An attempt's deadlines at a PG whose session lasts `session_lifetime`
/// (the rules say what each PG's are made of).
pub fn deadlines(config: &ServerConfig, session_lifetime: Duration) -> Deadlines {
    Deadlines { confirm_wait: for_confirm(config), session_lifetime }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leases_cover_the_call_and_a_margin_scaled_to_the_timeouts() {
        let shipped = ServerConfig::defaults();
        assert_eq!(margin(&shipped), Duration::from_secs(5));
        assert_eq!(for_confirm(&shipped), Duration::from_secs(68));
        assert_eq!(for_lookup(&shipped), Duration::from_secs(18));
        let mut quick = ServerConfig::defaults();
        quick.pg_connect_timeout = Duration::from_millis(300);
        quick.pg_read_timeout = Duration::from_secs(6);
        assert_eq!(margin(&quick), Duration::from_secs(1));
        assert_eq!(for_lookup(&quick), Duration::from_millis(7_300));
    }

    #[test]
    fn every_holder_is_its_own_even_on_one_server() {
        // Two tasks of one server under one name: a task whose lease lapsed
        // would still pass the holder's checks after the other took over (the
        // model checker's `one-lease-name-per-server`: a stale failure stored
        // over a charge).
        let (first, second) = (holder("server-1"), holder("server-1"));
        assert_ne!(first, second);
        assert!(first.starts_with("server-1/") && first.len() > "server-1/".len(), "{first}");
    }
}

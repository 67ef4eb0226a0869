//! How the server reaches a PG on the wire, the same for every PG's client:
//! its timeouts, and whether its calls share one HTTP/2 connection.

use std::time::Duration;

use reqwest::Url;

/// The wire settings every PG client is built with.
#[derive(Debug, Clone, Copy)]
pub struct PgTransport {
    /// Bounds the connection, which fails before anything is sent.
    pub connect_timeout: Duration,
    /// Bounds the wait for a confirm's (or a cancel's) answer once it is sent.
    pub read_timeout: Duration,
    /// Every call in flight shares one HTTP/2 connection, instead of an
    /// HTTP/1.1 connection each: thousands of calls at a slow PG hold one
    /// socket and its buffers rather than thousands.
    pub http2: bool,
}

/// A lookup is a read: it answers at once or not at all, so it waits far less
/// than a confirm, which may be processing at the card company.
const LOOKUP_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// With every call on one connection, a connection that died silently (a
/// balancer that forgot it) would hold them all until their read timeouts.
/// A ping unanswered this long ends it sooner: its calls are then unknown and
/// looked up, as after any lost answer.
const HTTP2_PING_INTERVAL: Duration = Duration::from_secs(10);
const HTTP2_PING_TIMEOUT: Duration = Duration::from_secs(5);

impl PgTransport {
    /// The longest a lookup takes: connecting, and a read far shorter than a confirm's.
    pub fn lookup_timeout(&self) -> Duration {
        self.connect_timeout + LOOKUP_READ_TIMEOUT.min(self.read_timeout)
    }

    /// A client builder for the PG at `base`, with these timeouts and this
    /// HTTP version; the caller adds what its PG's API needs.
    pub(crate) fn client_builder(&self, base: &Url) -> reqwest::ClientBuilder {
        let builder = reqwest::Client::builder()
            .connect_timeout(self.connect_timeout)
            .read_timeout(self.read_timeout)
            .timeout(self.connect_timeout + self.read_timeout);
        if !self.http2 {
            return builder.http1_only();
        }
        let builder = builder
            .http2_keep_alive_interval(HTTP2_PING_INTERVAL)
            .http2_keep_alive_timeout(HTTP2_PING_TIMEOUT)
            .http2_keep_alive_while_idle(true);
        // Over TLS the PG says in its handshake whether it speaks HTTP/2 (and
        // HTTP/1.1 is used if not). In the clear nothing can say so: the PG,
        // or the proxy in front of it, must speak it (h2c), as the fake PG does.
        if base.scheme() == "http" { builder.http2_prior_knowledge() } else { builder }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lookup_waits_far_less_than_a_confirm_but_never_longer() {
        let transport = PgTransport {
            connect_timeout: Duration::from_secs(3),
            read_timeout: Duration::from_secs(60),
            http2: false,
        };
        assert_eq!(transport.lookup_timeout(), Duration::from_secs(13));
        let quick = PgTransport { read_timeout: Duration::from_secs(2), ..transport };
        assert_eq!(quick.lookup_timeout(), Duration::from_secs(5));
    }
}

//! The client a request is from, also behind a load balancer. The TCP peer is
//! the client unless it is one of the shop's own proxies (`--trusted-proxies`):
//! then `X-Forwarded-For` says who the proxy served. Each proxy appends the
//! address it saw, so the list is read from its right end, past the shop's
//! own proxies, to the first address the shop does not run: everything left of
//! that was written by the client and proves nothing. Without a trusted proxy
//! configured, the header is never read, so a client cannot choose its own
//! rate-limit bucket by sending one.
//!
//! `axum-client-ip` was weighed: it takes the header from whatever peer sends
//! it (trust is all or nothing, by deployment), while here trust belongs to the
//! peer's address, which is what stops a forged header from an untrusted peer.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequestParts, Request};
use axum::http::HeaderMap;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::Response;
use ipnet::IpNet;

/// The header each proxy appends the address it served to (haproxy's `option forwardfor`).
pub const FORWARDED_FOR: &str = "x-forwarded-for";

/// The request's client, as [`identify`] found it; handlers and rate limits key on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientIp(pub IpAddr);

impl ClientIp {
    /// Who a request is from; one unspecified client when nothing identified it.
    pub fn of<T>(request: &axum::http::Request<T>) -> Self {
        Self::in_extensions(request.extensions())
    }

    fn in_extensions(extensions: &axum::http::Extensions) -> Self {
        extensions.get::<ClientIp>().copied().unwrap_or(ClientIp(IpAddr::V4(Ipv4Addr::UNSPECIFIED)))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for ClientIp {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Self::in_extensions(&parts.extensions))
    }
}

/// The shop's own proxies: the only peers whose `X-Forwarded-For` is believed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Arc<[IpNet]>);

impl TrustedProxies {
    pub fn new(networks: impl IntoIterator<Item = IpNet>) -> Self {
        Self(networks.into_iter().collect())
    }

    fn trusts(&self, address: IpAddr) -> bool {
        let address = canonical(address);
        self.0.iter().any(|network| network.contains(&address))
    }

    /// Who a request from `peer` with these headers is from.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        if !self.trusts(peer) {
            return canonical(peer);
        }
        // Header lines in order, each a comma-separated list: one list, left to right.
        let hops: Vec<&str> = headers
            .get_all(FORWARDED_FOR)
            .iter()
            .flat_map(|line| line.to_str().unwrap_or_default().split(','))
            .map(str::trim)
            .collect();
        let mut nearest = canonical(peer);
        for hop in hops.iter().rev() {
            let Ok(address) = hop.parse::<IpAddr>() else {
                // Garbled past this point: the nearest address a trusted proxy vouched for.
                return nearest;
            };
            nearest = canonical(address);
            if !self.trusts(address) {
                return nearest;
            }
        }
        nearest
    }
}

/// IPv4 reached over IPv6 (`::ffff:a.b.c.d`) is that IPv4 client: one bucket, not two.
fn canonical(address: IpAddr) -> IpAddr {
    address.to_canonical()
}

/// One `--trusted-proxies` entry: an address or a network (`10.0.0.0/8`).
pub fn parse_network(value: &str) -> Result<IpNet, String> {
    let value = value.trim();
    value
        .parse::<IpNet>()
        .or_else(|_| value.parse::<IpAddr>().map(IpNet::from))
        .map_err(|_| format!("{value:?} is neither an IP address nor a network such as 10.0.0.0/8"))
}

/// Middleware: puts the request's [`ClientIp`] in its extensions. Requests
/// served without a peer (in-process tests) are all one unspecified client.
pub async fn identify(trusted: TrustedProxies, mut request: Request, next: Next) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |ConnectInfo(peer)| peer.ip());
    let client = trusted.client(peer, request.headers());
    request.extensions_mut().insert(ClientIp(client));
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn forwarded(lines: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for line in lines {
            headers.append(FORWARDED_FOR, HeaderValue::from_str(line).unwrap());
        }
        headers
    }

    fn haproxy() -> TrustedProxies {
        TrustedProxies::new([parse_network("127.0.0.1").unwrap(), parse_network("10.0.0.0/8").unwrap()])
    }

    #[test]
    fn without_trusted_proxies_the_header_is_never_read() {
        let headers = forwarded(&["203.0.113.9"]);
        assert_eq!(TrustedProxies::default().client(ip("127.0.0.1"), &headers), ip("127.0.0.1"));
    }

    #[test]
    fn an_untrusted_peer_cannot_name_another_client() {
        let headers = forwarded(&["203.0.113.9"]);
        assert_eq!(haproxy().client(ip("198.51.100.7"), &headers), ip("198.51.100.7"));
    }

    #[test]
    fn behind_a_trusted_proxy_the_client_is_the_address_it_appended() {
        assert_eq!(haproxy().client(ip("127.0.0.1"), &forwarded(&["203.0.113.9"])), ip("203.0.113.9"));
    }

    #[test]
    fn what_the_client_wrote_itself_is_skipped_whether_in_one_line_or_many() {
        let forged_in_line = forwarded(&["192.0.2.1, 203.0.113.9"]);
        assert_eq!(haproxy().client(ip("127.0.0.1"), &forged_in_line), ip("203.0.113.9"));
        let forged_line = forwarded(&["192.0.2.1", "203.0.113.9"]);
        assert_eq!(haproxy().client(ip("127.0.0.1"), &forged_line), ip("203.0.113.9"));
    }

    #[test]
    fn a_chain_of_trusted_proxies_is_walked_to_the_first_untrusted_hop() {
        let headers = forwarded(&["192.0.2.1, 203.0.113.9, 10.1.2.3"]);
        assert_eq!(haproxy().client(ip("127.0.0.1"), &headers), ip("203.0.113.9"));
    }

    #[test]
    fn garbage_stops_the_walk_at_the_nearest_vouched_address() {
        assert_eq!(haproxy().client(ip("127.0.0.1"), &forwarded(&["not-an-address"])), ip("127.0.0.1"));
        let headers = forwarded(&["not-an-address, 203.0.113.9"]);
        assert_eq!(haproxy().client(ip("127.0.0.1"), &headers), ip("203.0.113.9"));
        assert_eq!(haproxy().client(ip("127.0.0.1"), &forwarded(&["10.9.9.9, bad"])), ip("127.0.0.1"));
    }

    #[test]
    fn a_trusted_peer_without_the_header_is_its_own_client() {
        assert_eq!(haproxy().client(ip("127.0.0.1"), &HeaderMap::new()), ip("127.0.0.1"));
    }

    #[test]
    fn ipv4_mapped_addresses_are_their_ipv4_client() {
        assert_eq!(haproxy().client(ip("::ffff:127.0.0.1"), &forwarded(&["::ffff:203.0.113.9"])), ip("203.0.113.9"));
    }

    #[test]
    fn an_entry_is_an_address_or_a_network() {
        assert_eq!(parse_network(" 10.0.0.0/8 ").unwrap().to_string(), "10.0.0.0/8");
        assert_eq!(parse_network("::1").unwrap().to_string(), "::1/128");
        assert!(parse_network("10.0.0.0/33").is_err());
        assert!(parse_network("haproxy").unwrap_err().contains("haproxy"));
    }
}

//! The client a request is from, also behind a load balancer. The TCP peer is
//! the client unless it is one of the shop's own proxies (`--trusted-proxies`):
//! then `X-Forwarded-For` says who the proxy served. Each proxy appends the
//! address it saw, so the list is read from its right end, past the shop's
//! own proxies, to the first address the shop does not run: everything left of
//! that was written by the client and proves nothing. Without a trusted proxy
//! configured, the header is never read, so a client cannot choose its own
//! rate-limit bucket by sending one. An IPv6 client is its /64 (a host is
//! given a whole one), or the prefix `--ipv6-client-prefix` says.
//!
//! `axum-client-ip` was weighed: it takes the header from whatever peer sends
//! it (trust is all or nothing, by deployment), while here trust belongs to the
//! peer's address, which is what stops a forged header from an untrusted peer.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
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

    pub fn trusts(&self, address: IpAddr) -> bool {
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
            let Some(address) = hop_address(hop) else {
                // Garbled past this point (or `unknown`: a proxy that hides its
                // client): the nearest address a trusted proxy vouched for.
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

/// The address of one `X-Forwarded-For` entry, as proxies write them: bare
/// (`203.0.113.9`, `2001:db8::1`), with the client's port (`203.0.113.9:41234`,
/// `[2001:db8::1]:41234`), or bracketed (`[2001:db8::1]`).
fn hop_address(hop: &str) -> Option<IpAddr> {
    hop.parse::<IpAddr>()
        .ok()
        .or_else(|| hop.parse::<SocketAddr>().ok().map(|address| address.ip()))
        .or_else(|| hop.strip_prefix('[')?.strip_suffix(']')?.parse::<Ipv6Addr>().ok().map(IpAddr::V6))
}

/// What one client is, for the limits: an IPv4 address, or the network of
/// `ipv6_prefix` bits an IPv6 address is in (its first address stands for it).
pub fn network_of(address: IpAddr, ipv6_prefix: u8) -> IpAddr {
    match canonical(address) {
        IpAddr::V6(address) => {
            IpAddr::V6(ipnet::Ipv6Net::new(address, ipv6_prefix).map_or(address, |network| network.network()))
        }
        v4 => v4,
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

/// Middleware: puts the request's [`ClientIp`] in its extensions: the client's
/// IPv4 address, or its IPv6 network of `ipv6_prefix` bits. Requests served
/// without a peer (in-process tests) are all one unspecified client.
pub async fn identify(trusted: TrustedProxies, ipv6_prefix: u8, mut request: Request, next: Next) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |ConnectInfo(peer)| peer.ip());
    let client = network_of(trusted.client(peer, request.headers()), ipv6_prefix);
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
    fn an_entry_with_the_clients_port_or_in_brackets_is_its_address() {
        for (entry, client) in [
            ("203.0.113.9:41234", "203.0.113.9"),
            ("[2001:db8::1]:41234", "2001:db8::1"),
            ("[2001:db8::1]", "2001:db8::1"),
            ("[::ffff:203.0.113.9]:443", "203.0.113.9"),
        ] {
            assert_eq!(haproxy().client(ip("127.0.0.1"), &forwarded(&[entry])), ip(client), "{entry}");
        }
        // A client's own entry with a port is still skipped when a proxy appended another.
        let headers = forwarded(&["192.0.2.1:80, 203.0.113.9:41234, 10.1.2.3:5000"]);
        assert_eq!(haproxy().client(ip("127.0.0.1"), &headers), ip("203.0.113.9"));
        // `unknown`, or a port without an address, says nothing of the client.
        for entry in ["unknown", "[unknown]:80", ":80", "203.0.113.9:port", "[203.0.113.9]"] {
            assert_eq!(haproxy().client(ip("127.0.0.1"), &forwarded(&[entry])), ip("127.0.0.1"), "{entry}");
        }
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
    fn an_ipv6_client_is_its_network_and_an_ipv4_client_its_address() {
        assert_eq!(network_of(ip("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), 64), ip("2001:db8:1:2::"));
        assert_eq!(network_of(ip("2001:db8:1:2::9"), 64), network_of(ip("2001:db8:1:2:ffff::1"), 64));
        assert_ne!(network_of(ip("2001:db8:1:2::9"), 64), network_of(ip("2001:db8:1:3::9"), 64));
        assert_eq!(network_of(ip("2001:db8:1:3::9"), 48), ip("2001:db8:1::"));
        assert_eq!(network_of(ip("2001:db8:1:3::9"), 128), ip("2001:db8:1:3::9"));
        assert_eq!(network_of(ip("203.0.113.9"), 64), ip("203.0.113.9"));
        assert_eq!(network_of(ip("::ffff:203.0.113.9"), 64), ip("203.0.113.9"), "IPv4 over IPv6 is its IPv4 client");
    }

    #[test]
    fn an_entry_is_an_address_or_a_network() {
        assert_eq!(parse_network(" 10.0.0.0/8 ").unwrap().to_string(), "10.0.0.0/8");
        assert_eq!(parse_network("::1").unwrap().to_string(), "::1/128");
        assert!(parse_network("10.0.0.0/33").is_err());
        assert!(parse_network("haproxy").unwrap_err().contains("haproxy"));
    }
}

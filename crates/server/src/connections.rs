//! How many connections the server holds open: in all, and per client (its
//! address; an IPv6 client's network, as the rate limits count it). A
//! connection from one of the shop's trusted proxies carries many clients, so
//! it counts in the total only. Past either cap a connection is answered at
//! once, before anything is read from it, with a 429 in the API's own shape,
//! and closed: a flood from one host holds at most its share of the server.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::client_address::{TrustedProxies, network_of};

/// How many connections each client holds now.
type HeldByClient = Arc<Mutex<HashMap<IpAddr, usize>>>;

/// The caps, and the connections each client holds now.
#[derive(Clone)]
pub struct ConnectionLimits {
    total: Arc<Semaphore>,
    per_client: usize,
    held: HeldByClient,
    trusted: TrustedProxies,
    ipv6_prefix: u8,
}

/// A connection the caps let in; dropping it gives its places back.
pub struct Admitted {
    _total: OwnedSemaphorePermit,
    client: Option<(IpAddr, HeldByClient)>,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        if let Some((client, held)) = &self.client {
            let mut held = held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(count) = held.get_mut(client) {
                *count -= 1;
                if *count == 0 {
                    held.remove(client);
                }
            }
        }
    }
}

/// Why a connection was turned away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnedAway {
    /// The client already holds its share.
    ClientFull,
    /// The server holds all it may.
    ServerFull,
}

impl TurnedAway {
    /// The whole answer, written before the request is read: HTTP/1.1, which
    /// every client speaking to this listener understands (browsers reach it
    /// through the shop's TLS proxy, as HTTP/1.1).
    pub fn answer(self) -> String {
        let message = match self {
            TurnedAway::ClientFull => {
                "This address holds as many connections to the shop as it may; close some, or try again in a second."
            }
            TurnedAway::ServerFull => "The shop holds as many connections as it can now; try again in a second.",
        };
        let body = serde_json::json!({ "code": "RATE_LIMITED", "message": message }).to_string();
        format!(
            "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\nretry-after: 1\r\n\
             cache-control: no-store\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
    }
}

impl ConnectionLimits {
    pub fn new(total: usize, per_client: usize, trusted: TrustedProxies, ipv6_prefix: u8) -> Self {
        Self { total: Arc::new(Semaphore::new(total)), per_client, held: Arc::default(), trusted, ipv6_prefix }
    }

    /// Lets a connection from `peer` in, or says why not.
    pub fn admit(&self, peer: IpAddr) -> Result<Admitted, TurnedAway> {
        let total = Arc::clone(&self.total).try_acquire_owned().map_err(|_| TurnedAway::ServerFull)?;
        if self.trusted.trusts(peer) {
            return Ok(Admitted { _total: total, client: None });
        }
        let client = network_of(peer, self.ipv6_prefix);
        let mut held = self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = held.entry(client).or_insert(0);
        if *count >= self.per_client {
            return Err(TurnedAway::ClientFull);
        }
        *count += 1;
        Ok(Admitted { _total: total, client: Some((client, Arc::clone(&self.held))) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn a_client_holds_its_share_and_gets_it_back_as_its_connections_close() {
        let limits = ConnectionLimits::new(10, 2, TrustedProxies::default(), 64);
        let first = limits.admit(ip("203.0.113.9")).unwrap();
        let _second = limits.admit(ip("203.0.113.9")).unwrap();
        assert_eq!(limits.admit(ip("203.0.113.9")).err(), Some(TurnedAway::ClientFull));
        let _other = limits.admit(ip("203.0.113.10")).expect("another client has its own share");
        drop(first);
        limits.admit(ip("203.0.113.9")).expect("a closed connection's place is free again");
    }

    #[test]
    fn an_ipv6_hosts_addresses_share_one_share() {
        let limits = ConnectionLimits::new(10, 1, TrustedProxies::default(), 64);
        let _held = limits.admit(ip("2001:db8:1:2::1")).unwrap();
        assert_eq!(limits.admit(ip("2001:db8:1:2::ffff")).err(), Some(TurnedAway::ClientFull));
        limits.admit(ip("2001:db8:1:3::1")).expect("another /64 is another client");
    }

    #[test]
    fn the_server_holds_its_total_and_a_trusted_proxy_counts_only_there() {
        let proxy = TrustedProxies::new(["127.0.0.1/32".parse().unwrap()]);
        let limits = ConnectionLimits::new(3, 1, proxy, 64);
        let _through_proxy: Vec<_> = (0..2).map(|_| limits.admit(ip("127.0.0.1")).unwrap()).collect();
        let _client = limits.admit(ip("203.0.113.9")).unwrap();
        assert_eq!(limits.admit(ip("203.0.113.10")).err(), Some(TurnedAway::ServerFull));
        assert_eq!(limits.admit(ip("127.0.0.1")).err(), Some(TurnedAway::ServerFull));
    }

    #[test]
    fn the_answer_is_a_429_in_the_apis_shape() {
        let answer = TurnedAway::ClientFull.answer();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 429 ") && head.contains("\r\nretry-after: 1"), "{head}");
        assert!(head.contains(&format!("content-length: {}", body.len())), "{head}");
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["code"], "RATE_LIMITED");
    }
}

//! Behind the project's own haproxy (`scripts/haproxy.sh`, as `scripts/cluster.sh`
//! runs it): the rate limits count the real client, named by haproxy in
//! `X-Forwarded-For`, and a header forged by the client or by a peer the shop
//! does not trust changes nothing. Clients get addresses of their own on the
//! loopback network (127.0.0.2, 127.0.0.3, ...), which all reach 127.0.0.1.

use crate::support;

use std::net::IpAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use reqwest::StatusCode;
use support::{FakePg, Server};
use tokio::process::{Child, Command};

const HAPROXY: &str = "/usr/sbin/haproxy";

/// haproxy in front of `server`, configured by the cluster script's own function.
struct Balancer {
    url: String,
    _process: Child,
    _dir: tempfile::TempDir,
}

/// How haproxy speaks to the servers.
#[derive(Clone, Copy)]
enum ToServers {
    Http1,
    /// `HAPROXY_SERVER_HTTP2=1`: customers' requests share connections to a server as streams.
    Http2,
}

impl Balancer {
    async fn start(server: &Server) -> Self {
        Self::start_speaking(server, ToServers::Http1).await
    }

    async fn start_speaking(server: &Server, to_servers: ToServers) -> Self {
        assert!(Path::new(HAPROXY).exists(), "{HAPROXY} is missing: scripts/setup.sh installs it");
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("haproxy.cfg");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts");
        let written = Command::new("bash")
            .env("HAPROXY_SERVER_HTTP2", if matches!(to_servers, ToServers::Http2) { "1" } else { "0" })
            .arg("-c")
            .arg(format!(
                "set -euo pipefail; source {0}/lib.sh; source {0}/haproxy.sh; haproxy_config {1} {port} {2}",
                scripts.display(),
                config.display(),
                server.url,
            ))
            .status()
            .await
            .unwrap();
        assert!(written.success(), "haproxy_config failed");
        let process = Command::new(HAPROXY)
            .arg("-db")
            .arg("-f")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let balancer = Self { url: format!("http://127.0.0.1:{port}"), _process: process, _dir: dir };
        balancer.wait_until_it_reaches_the_server().await;
        balancer
    }

    /// Until haproxy answers with the server's health (its check marks the server up first).
    async fn wait_until_it_reaches_the_server(&self) {
        let probe = reqwest::Client::new();
        for _ in 0..200 {
            let answer = probe.get(format!("{}/healthz", self.url)).send().await;
            if answer.is_ok_and(|answer| answer.status() == StatusCode::OK) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("haproxy on {} never reached the order server", self.url);
    }
}

/// A client (with cookies: one customer) whose connections come from `address`.
fn client_from(address: &str) -> reqwest::Client {
    let address: IpAddr = address.parse().unwrap();
    reqwest::Client::builder().cookie_store(true).local_address(address).build().unwrap()
}

/// The statuses of eight catalog reads by `client` at `base`, the nth sending
/// `forwarded_for(n)` as `X-Forwarded-For` if it says one.
async fn eight_reads(
    client: &reqwest::Client,
    base: &str,
    forwarded_for: impl Fn(usize) -> Option<String>,
) -> Vec<u16> {
    let mut statuses = Vec::new();
    for n in 0..8 {
        let mut request = client.get(format!("{base}/api/catalog"));
        if let Some(forged) = forwarded_for(n) {
            request = request.header("x-forwarded-for", forged);
        }
        statuses.push(request.send().await.unwrap().status().as_u16());
    }
    statuses
}

fn served(statuses: &[u16]) -> usize {
    statuses.iter().filter(|status| **status == 200).count()
}

/// A server trusting the balancer's address, with a small per-address read limit:
/// a burst of 5 (and no per-customer one, so only the address is counted).
async fn server_behind_haproxy(pg: &FakePg) -> Server {
    Server::start_with(&pg.url, |config| {
        config.rate_limit_address_reads = 20;
        config.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()];
    })
    .await
}

#[tokio::test]
async fn two_clients_behind_the_balancer_have_buckets_of_their_own() {
    let pg = FakePg::start().await;
    let server = server_behind_haproxy(&pg).await;
    let balancer = Balancer::start(&server).await;

    assert_each_client_has_a_bucket(&balancer, ["127.0.0.2", "127.0.0.3"]).await;
}

/// Over HTTP/2 many customers' requests share one connection to the server:
/// each is still counted as the client haproxy names, not as the connection.
#[tokio::test]
async fn speaking_http2_to_the_server_the_balancer_still_gives_each_client_its_own_bucket() {
    let pg = FakePg::start().await;
    let server = server_behind_haproxy(&pg).await;
    let balancer = Balancer::start_speaking(&server, ToServers::Http2).await;

    assert_each_client_has_a_bucket(&balancer, ["127.0.0.9", "127.0.0.10"]).await;
}

/// Two clients' bursts through `balancer`: each gets its own 5 reads, then 429.
async fn assert_each_client_has_a_bucket(balancer: &Balancer, [first, second]: [&str; 2]) {
    let first = eight_reads(&client_from(first), &balancer.url, |_| None).await;
    let second = eight_reads(&client_from(second), &balancer.url, |_| None).await;

    assert_eq!(served(&first), 5, "the first client's burst, then 429: {first:?}");
    assert_eq!(first.last(), Some(&429));
    assert_eq!(served(&second), 5, "the second client is not refused for the first one's reads: {second:?}");
}

#[tokio::test]
async fn a_client_naming_other_addresses_through_the_balancer_is_still_counted_as_itself() {
    let pg = FakePg::start().await;
    let server = server_behind_haproxy(&pg).await;
    let balancer = Balancer::start(&server).await;

    let forged = |n: usize| Some(format!("198.51.100.{n}"));
    let statuses = eight_reads(&client_from("127.0.0.4"), &balancer.url, forged).await;

    assert_eq!(served(&statuses), 5, "a new address in each header did not make new buckets: {statuses:?}");
}

#[tokio::test]
async fn a_forged_header_from_a_peer_the_shop_does_not_trust_changes_nothing() {
    let pg = FakePg::start().await;
    let server = server_behind_haproxy(&pg).await;

    // Straight to the server, from an address that is not the balancer's.
    let forged = |n: usize| Some(format!("198.51.100.{n}"));
    let statuses = eight_reads(&client_from("127.0.0.5"), &server.url, forged).await;

    assert_eq!(served(&statuses), 5, "{statuses:?}");
    let other = eight_reads(&client_from("127.0.0.6"), &server.url, |_| None).await;
    assert_eq!(served(&other), 5, "another peer keeps its own bucket: {other:?}");
}

#[tokio::test]
async fn without_trusted_proxies_every_client_behind_the_balancer_is_the_balancer() {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| config.rate_limit_address_reads = 20).await;
    let balancer = Balancer::start(&server).await;

    let first = eight_reads(&client_from("127.0.0.7"), &balancer.url, |_| None).await;
    let second = eight_reads(&client_from("127.0.0.8"), &balancer.url, |_| None).await;

    // What the flag is for: without it the header is ignored, and haproxy's one address shares one bucket.
    assert_eq!(served(&first) + served(&second), 5, "{first:?} {second:?}");
}

/// One host is routinely given a whole IPv6 /64: every address in it is one
/// client, so new addresses do not make new buckets. Sent by a trusted proxy
/// (the test, from the balancer's address) naming each client.
#[tokio::test]
async fn every_address_of_one_ipv6_64_is_one_client_and_other_networks_are_others() {
    let pg = FakePg::start().await;
    let server = server_behind_haproxy(&pg).await;
    let proxy = client_from("127.0.0.1");

    let one_host = eight_reads(&proxy, &server.url, |n| Some(format!("2001:db8:1:2::{}", n + 1))).await;
    assert_eq!(served(&one_host), 5, "eight addresses of one /64 share its burst: {one_host:?}");
    let other_hosts = eight_reads(&proxy, &server.url, |n| Some(format!("2001:db8:2:{}::1", n + 1))).await;
    assert_eq!(served(&other_hosts), 8, "each /64 has a bucket of its own: {other_hosts:?}");

    // A shop whose clients are sites (a /48 each) says so.
    let server = Server::start_with(&pg.url, |config| {
        config.rate_limit_address_reads = 20;
        config.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()];
        config.ipv6_client_prefix = 48;
    })
    .await;
    let one_site = eight_reads(&proxy, &server.url, |n| Some(format!("2001:db8:3:{}::1", n + 1))).await;
    assert_eq!(served(&one_site), 5, "eight /64s of one /48: {one_site:?}");
}

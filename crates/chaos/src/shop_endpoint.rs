//! The scripted shop's endpoint for events: a real HTTP listener in the
//! campaign's process, named in the shops file the servers start with
//! (`events_url`, and the secret in `events_secret_file`). It reads each
//! delivery, verifies it as a shop does, with the `standardwebhooks` crate
//! (not payonce's own signing code), keeps it as it came, and answers as the
//! campaign's schedule says at that moment: 200, or one of the endpoint's
//! faults (`EndpointFault`): not listening at all, 500, nothing until the
//! sender gives up, a reset after reading the event (the shop has it, payonce
//! cannot know, and sends it again), or 200 only after a while.
//!
//! What the shop makes of the deliveries (its view, one entry per event id)
//! and the verdict on them are `event_check`'s.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use payonce_api::Event;
use payonce_api::event::{WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use standardwebhooks::Webhook;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;

use crate::schedule::EndpointFault;

/// Where on its listener the shop takes events.
const PATH: &str = "/chaos-shop/events";
/// The most a delivery may bring, headers and body: an event is well under 1 KB.
const MOST_BYTES: usize = 64 * 1024;
/// A slow answer comes after this share of the servers' event timeout.
const SLOW_SHARE: f64 = 0.5;
/// A hang lasts until the sender closes the connection, or this many event timeouts.
const HANG_TIMEOUTS: u32 = 3;

/// How the endpoint answered one delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Answered {
    /// 200 at once.
    Ok,
    /// 200, after half the servers' event timeout.
    Slow,
    /// 500: the shop did not take it.
    Error500,
    /// Nothing, until the sender gave up: the shop did not take it.
    Hang,
    /// Read, kept, and the connection reset without an answer.
    ResetAfterReading,
    /// Read as the endpoint went down: reset, not kept.
    CutByOutage,
    /// 400: it did not verify, so the shop refused it (as a shop must).
    Refused,
}

impl Answered {
    /// How a delivery is answered during `fault`'s window; `None` for an
    /// endpoint that is down, which reads nothing.
    pub fn during(fault: EndpointFault) -> Option<Self> {
        match fault {
            EndpointFault::Down => None,
            EndpointFault::Error500 => Some(Answered::Error500),
            EndpointFault::Hang => Some(Answered::Hang),
            EndpointFault::ResetAfterReading => Some(Answered::ResetAfterReading),
            EndpointFault::Slow => Some(Answered::Slow),
        }
    }

    /// Whether the shop has the event from this delivery: it acted on it.
    pub fn took_it(self) -> bool {
        matches!(self, Answered::Ok | Answered::Slow | Answered::ResetAfterReading)
    }

    /// Whether payonce was answered 2xx, its word that the event is delivered.
    pub fn said_ok(self) -> bool {
        matches!(self, Answered::Ok | Answered::Slow)
    }

    /// As the report names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Answered::Ok => "ok",
            Answered::Slow => "slow",
            Answered::Error500 => "error_500",
            Answered::Hang => "hang",
            Answered::ResetAfterReading => "reset_after_reading",
            Answered::CutByOutage => "cut_by_outage",
            Answered::Refused => "refused_unverified",
        }
    }
}

/// One delivery as it came, and what the shop made of it.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// Its `webhook-id` header.
    pub webhook_id: String,
    pub timestamp: String,
    pub signature: String,
    pub body: String,
    /// The event, if the delivery verified: signed with the shop's secret
    /// within the tolerance, its body an event whose id is the `webhook-id`.
    pub event: Option<Event>,
    /// Why it did not, if it did not.
    pub problem: Option<String>,
    /// When the endpoint had read it (ms since the epoch).
    pub at_ms: i64,
    pub answered: Answered,
}

/// The running endpoint.
pub struct ShopEndpoint {
    /// `events_url`.
    pub url: String,
    /// The shop's secret (`whsec_…`), as its secret file holds it.
    pub secret: String,
    shared: Arc<Shared>,
    listening: tokio::task::JoinHandle<()>,
}

struct Shared {
    verifier: Webhook,
    /// The servers' `--event-timeout`: what "slow" and "hangs past it" are measured by.
    event_timeout: Duration,
    /// The fault now, if any.
    fault: watch::Sender<Option<EndpointFault>>,
    deliveries: Mutex<Vec<Delivery>>,
}

impl ShopEndpoint {
    /// Starts listening on a port of this machine, healthy, with a new secret.
    /// `event_timeout` is the servers' `--event-timeout`.
    pub async fn start(event_timeout: Duration) -> std::io::Result<Self> {
        Self::start_with(payonce_server::shops::new_events_secret(), event_timeout).await
    }

    /// The same, with `secret`.
    pub async fn start_with(secret: String, event_timeout: Duration) -> std::io::Result<Self> {
        let verifier = Webhook::new(&secret).map_err(|error| std::io::Error::other(error.to_string()))?;
        let listener = bind("127.0.0.1:0".parse().expect("an address"))?;
        let address = listener.local_addr()?;
        let (fault, _) = watch::channel(None);
        let shared = Arc::new(Shared { verifier, event_timeout, fault, deliveries: Mutex::new(Vec::new()) });
        let listening = tokio::spawn(listen(shared.clone(), listener, address));
        Ok(Self { url: format!("http://{address}{PATH}"), secret, shared, listening })
    }

    /// Fails `fault`'s way from now on; `None`: healthy again.
    pub fn set_fault(&self, fault: Option<EndpointFault>) {
        self.shared.fault.send_replace(fault);
    }

    /// How many deliveries it has answered `answered`'s way so far.
    pub fn answered(&self, answered: Answered) -> usize {
        let deliveries = self.shared.deliveries.lock().expect("the deliveries' lock");
        deliveries.iter().filter(|delivery| delivery.answered == answered).count()
    }

    /// Every delivery read so far, in the order they were read.
    pub fn deliveries(&self) -> Vec<Delivery> {
        self.shared.deliveries.lock().expect("the deliveries' lock").clone()
    }
}

impl Drop for ShopEndpoint {
    fn drop(&mut self) {
        self.listening.abort();
    }
}

/// A listener on `address`, which may be the port it had before an outage.
fn bind(address: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(1024)
}

/// Accepts connections, each served on its own; while the endpoint is down
/// there is no listener at all, so every connection is refused.
async fn listen(shared: Arc<Shared>, listener: TcpListener, address: SocketAddr) {
    let mut faults = shared.fault.subscribe();
    let mut listener = Some(listener);
    loop {
        if *faults.borrow_and_update() == Some(EndpointFault::Down) {
            listener = None;
            if faults.changed().await.is_err() {
                return;
            }
            continue;
        }
        let Some(open) = &listener else {
            match bind(address) {
                Ok(again) => listener = Some(again),
                // The port is let go of a moment after the listener is dropped.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
            continue;
        };
        tokio::select! {
            accepted = open.accept() => {
                if let Ok((stream, _)) = accepted {
                    tokio::spawn(serve(shared.clone(), stream));
                }
            }
            changed = faults.changed() => {
                if changed.is_err() {
                    return;
                }
            }
        }
    }
}

/// One connection, one delivery: read it, keep it, answer as the fault of the moment says.
async fn serve(shared: Arc<Shared>, mut stream: TcpStream) {
    let Some(request) = read_request(&mut stream).await else { return };
    let at_ms = crate::epoch_ms();
    let (event, problem) = verify(&shared.verifier, &request);
    let header = |name: &str| request.header(name).unwrap_or_default().to_owned();
    let answered = match *shared.fault.borrow() {
        _ if problem.is_some() => Answered::Refused,
        None => Answered::Ok,
        Some(fault) => Answered::during(fault).unwrap_or(Answered::CutByOutage),
    };
    let delivery = Delivery {
        webhook_id: header(WEBHOOK_ID_HEADER),
        timestamp: header(WEBHOOK_TIMESTAMP_HEADER),
        signature: header(WEBHOOK_SIGNATURE_HEADER),
        body: request.body,
        event,
        problem,
        at_ms,
        answered,
    };
    // Kept before it is answered: once payonce reads a 2xx, the shop has it.
    shared.deliveries.lock().expect("the deliveries' lock").push(delivery);
    match answered {
        Answered::Ok => reply(&mut stream, "200 OK").await,
        Answered::Slow => {
            tokio::time::sleep(shared.event_timeout.mul_f64(SLOW_SHARE)).await;
            reply(&mut stream, "200 OK").await;
        }
        Answered::Error500 => reply(&mut stream, "500 Internal Server Error").await,
        Answered::Refused => reply(&mut stream, "400 Bad Request").await,
        Answered::Hang => {
            // Until the sender gives up and closes its end (a read of nothing).
            let mut byte = [0u8; 1];
            let _ = tokio::time::timeout(shared.event_timeout * HANG_TIMEOUTS, stream.read(&mut byte)).await;
        }
        Answered::ResetAfterReading | Answered::CutByOutage => {
            // SO_LINGER 0: closing sends a reset, not an orderly end.
            let _ = socket2::SockRef::from(&stream).set_linger(Some(Duration::ZERO));
        }
    }
}

async fn reply(stream: &mut TcpStream, status: &str) {
    let reply = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    let _ = stream.write_all(reply.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// Verifies a delivery as the shop does: the signature over id, timestamp and
/// body with the shop's secret, then the body as an event with the `webhook-id`'s id.
fn verify(verifier: &Webhook, request: &Request) -> (Option<Event>, Option<String>) {
    let mut headers = HeaderMap::new();
    for (name, value) in &request.headers {
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            headers.append(name, value);
        }
    }
    if let Err(error) = verifier.verify(request.body.as_bytes(), &headers) {
        return (None, Some(format!("does not verify: {error}")));
    }
    let id = request.header(WEBHOOK_ID_HEADER).unwrap_or_default();
    match serde_json::from_str::<Event>(&request.body) {
        Err(error) => (None, Some(format!("its body is no event: {error}"))),
        Ok(event) if event.id != id => {
            (None, Some(format!("its webhook-id {id:?} is not its body's id {:?}", event.id)))
        }
        Ok(event) => (Some(event), None),
    }
}

/// One HTTP/1.1 request as read.
struct Request {
    headers: Vec<(String, String)>,
    body: String,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }
}

/// Reads one request: its header block, and its body by `content-length`.
async fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let header_end = loop {
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 || buffer.len() > MOST_BYTES {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(at) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..header_end]).into_owned();
    let headers: Vec<(String, String)> = head
        .lines()
        .skip(1)
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .collect();
    let request = Request { headers, body: String::new() };
    let length: usize = request.header("content-length").and_then(|value| value.parse().ok()).unwrap_or(0);
    if length > MOST_BYTES {
        return None;
    }
    while buffer.len() < header_end + length {
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    let body = String::from_utf8_lossy(&buffer[header_end..header_end + length]).into_owned();
    Some(Request { body, ..request })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

    fn body(id: &str) -> String {
        serde_json::json!({
            "id": id, "type": "checkout.paid", "timestamp": "2026-12-05T08:00:00.120Z",
            "data": {"checkout_id": "ord_shop_1", "reference": "r", "sequence": 1, "status": "PAID",
                     "amount": 7500, "amount_refunded": 0}
        })
        .to_string()
    }

    /// Sends a delivery as payonce does, signed with `secret` now; answers the HTTP status, if any.
    async fn send(url: &str, secret: &str, id: &str, body: &str, timeout: Duration) -> Option<u16> {
        let now = crate::epoch_ms() / 1000;
        let signature = Webhook::new(secret).unwrap().sign(id, now, body.as_bytes()).unwrap();
        let sent = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .unwrap()
            .post(url)
            .header(WEBHOOK_ID_HEADER, id)
            .header(WEBHOOK_TIMESTAMP_HEADER, now.to_string())
            .header(WEBHOOK_SIGNATURE_HEADER, signature)
            .body(body.to_owned())
            .send()
            .await;
        sent.ok().map(|response| response.status().as_u16())
    }

    #[tokio::test]
    async fn it_verifies_keeps_and_answers_each_delivery_as_its_fault_says() {
        let timeout = Duration::from_millis(400);
        let endpoint = ShopEndpoint::start_with(SECRET.to_owned(), timeout).await.unwrap();
        let url = endpoint.url.clone();
        assert_eq!(send(&url, SECRET, "evt_1", &body("evt_1"), timeout).await, Some(200));
        endpoint.set_fault(Some(EndpointFault::Error500));
        assert_eq!(send(&url, SECRET, "evt_2", &body("evt_2"), timeout).await, Some(500));
        endpoint.set_fault(Some(EndpointFault::ResetAfterReading));
        assert_eq!(send(&url, SECRET, "evt_3", &body("evt_3"), timeout).await, None);
        endpoint.set_fault(Some(EndpointFault::Hang));
        assert_eq!(send(&url, SECRET, "evt_4", &body("evt_4"), timeout).await, None);
        endpoint.set_fault(Some(EndpointFault::Slow));
        let started = std::time::Instant::now();
        assert_eq!(send(&url, SECRET, "evt_5", &body("evt_5"), timeout).await, Some(200));
        assert!(started.elapsed() >= timeout / 2, "slow, and under the timeout");
        endpoint.set_fault(Some(EndpointFault::Down));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(send(&url, SECRET, "evt_6", &body("evt_6"), timeout).await, None, "refused");
        endpoint.set_fault(None);
        let mut back = None;
        for _ in 0..100 {
            back = send(&url, SECRET, "evt_7", &body("evt_7"), timeout).await;
            if back.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(back, Some(200), "listening again on its port");
        let other = payonce_server::shops::new_events_secret();
        assert_eq!(send(&url, &other, "evt_8", &body("evt_8"), timeout).await, Some(400), "another secret's");
        assert_eq!(send(&url, SECRET, "evt_9", &body("evt_1"), timeout).await, Some(400), "another event's id");

        let deliveries = endpoint.deliveries();
        let answered: Vec<_> =
            deliveries.iter().map(|delivery| (delivery.webhook_id.as_str(), delivery.answered)).collect();
        assert_eq!(
            answered,
            [
                ("evt_1", Answered::Ok),
                ("evt_2", Answered::Error500),
                ("evt_3", Answered::ResetAfterReading),
                ("evt_4", Answered::Hang),
                ("evt_5", Answered::Slow),
                ("evt_7", Answered::Ok),
                ("evt_8", Answered::Refused),
                ("evt_9", Answered::Refused),
            ]
        );
        assert!(deliveries[..6].iter().all(|delivery| delivery.problem.is_none() && delivery.event.is_some()));
        assert!(deliveries[6].problem.as_deref().is_some_and(|problem| problem.contains("does not verify")));
        assert!(deliveries[7].problem.as_deref().is_some_and(|problem| problem.contains("not its body's id")));
        assert_eq!(deliveries[0].body, body("evt_1"), "kept as it came");
    }
}

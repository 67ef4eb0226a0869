//! A shop's endpoint for events, as a test needs one: a real HTTP listener
//! that keeps every delivery as it came (headers and body) and answers as
//! told: 200, another status, nothing until the sender gives up, or a
//! connection closed *after* the event was read (the shop has it; payonce
//! cannot know, and sends it again).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How the endpoint answers the next deliveries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Status(u16),
    /// Reads the event, then holds the connection open without a word.
    Hang,
    /// Reads the event, then closes the connection without a word.
    CloseAfterReading,
}

/// One delivery as it came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub id: String,
    pub timestamp: String,
    pub signature: String,
    pub body: String,
    /// What it was answered.
    pub answered: Answer,
}

#[derive(Debug)]
struct State {
    /// Answers for the next deliveries, in turn; `then` after them.
    script: Vec<Answer>,
    then: Answer,
    deliveries: Vec<Delivery>,
}

#[derive(Debug, Clone)]
pub struct Receiver {
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl Receiver {
    /// Starts an endpoint that answers 200.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/payonce/events", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State { script: vec![], then: Answer::Status(200), deliveries: vec![] }));
        let receiver = Self { url, state };
        let serving = receiver.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serving.clone().serve(stream));
            }
        });
        receiver
    }

    /// Answers the next deliveries with `script`, one each, then with `then`.
    pub fn answer(&self, script: &[Answer], then: Answer) {
        let mut state = self.state.lock().unwrap();
        state.script = script.iter().rev().copied().collect();
        state.then = then;
    }

    pub fn deliveries(&self) -> Vec<Delivery> {
        self.state.lock().unwrap().deliveries.clone()
    }

    /// Each connection carries one delivery, and is closed after it.
    async fn serve(self, mut stream: TcpStream) {
        let Some((headers, body)) = read_request(&mut stream).await else { return };
        let header = |name: &str| {
            headers
                .lines()
                .find_map(|line| line.split_once(':').filter(|(key, _)| key.trim().eq_ignore_ascii_case(name)))
                .map(|(_, value)| value.trim().to_owned())
                .unwrap_or_default()
        };
        let answered = {
            let mut state = self.state.lock().unwrap();
            let answered = state.script.pop().unwrap_or(state.then);
            state.deliveries.push(Delivery {
                id: header("webhook-id"),
                timestamp: header("webhook-timestamp"),
                signature: header("webhook-signature"),
                body,
                answered,
            });
            answered
        };
        match answered {
            Answer::Status(status) => {
                let reply = format!("HTTP/1.1 {status} Answer\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                let _ = stream.write_all(reply.as_bytes()).await;
            }
            Answer::Hang => tokio::time::sleep(Duration::from_secs(600)).await,
            Answer::CloseAfterReading => {}
        }
    }
}

/// Reads one HTTP/1.1 request: its header block, and its body by `content-length`.
async fn read_request(stream: &mut TcpStream) -> Option<(String, String)> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let header_end = loop {
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(at) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let headers = String::from_utf8_lossy(&buffer[..header_end]).into_owned();
    let length: usize = headers
        .lines()
        .find_map(|line| line.split_once(':').filter(|(key, _)| key.trim().eq_ignore_ascii_case("content-length")))
        .and_then(|(_, value)| value.trim().parse().ok())
        .unwrap_or(0);
    while buffer.len() < header_end + length {
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    Some((headers, String::from_utf8(buffer[header_end..header_end + length].to_vec()).ok()?))
}

//! The accept loop, ours rather than `axum::serve`'s, so that what a client
//! may send is bounded where hyper reads it: a connection must bring its first
//! request within the client timeout (whether it sends nothing, half of
//! HTTP/2's preface, or the preface and then nothing: hyper-util's auto builder
//! times none of these while it decides between HTTP/1 and HTTP/2), each request
//! head must arrive within the same timeout and fit in [`MAX_HEAD_BYTES`], the
//! connections held open are capped in all and per client
//! ([`crate::connections`]), and each request carries its peer's address for
//! the rate limits. Bodies are bounded by the routes (size, and the same timeout).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{ConnectInfo, Request};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tower::ServiceExt;

use crate::connections::{ConnectionLimits, TurnedAway};

/// The largest request head read (hyper may take up to one more read past it);
/// a browser sends a few hundred bytes.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;
/// The most headers in one request.
pub const MAX_HEADERS: usize = 64;

/// Serves `app` on `listener` until `shutdown` completes, then stops accepting
/// and lets open connections finish for at most `drain`.
pub async fn serve(
    app: Router,
    listener: TcpListener,
    limits: ConnectionLimits,
    head_timeout: Duration,
    shutdown: impl Future<Output = ()> + Send,
    drain: Duration,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
    let answering = Arc::new(Semaphore::new(MAX_ANSWERING));
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let admitted = match limits.admit(peer.ip()) {
                        Ok(admitted) => admitted,
                        Err(turned_away) => {
                            tracing::debug!(%peer, ?turned_away, "connection turned away");
                            // Past as many answers at once, closed unanswered: answers
                            // lingering for a flood must not hold every descriptor.
                            if let Ok(answering) = Arc::clone(&answering).try_acquire_owned() {
                                tokio::spawn(answer_and_close(stream, turned_away, head_timeout, answering));
                            }
                            continue;
                        }
                    };
                    // Told once the connection's first request arrives: until then, the
                    // client timeout runs (below).
                    let first_request = Arc::new(Notify::new());
                    let service = hyper::service::service_fn({
                        let (app, first_request) = (app.clone(), Arc::clone(&first_request));
                        move |mut request: Request<Incoming>| {
                            first_request.notify_one();
                            request.extensions_mut().insert(ConnectInfo(peer));
                            app.clone().oneshot(request)
                        }
                    });
                    let mut builder = auto::Builder::new(TokioExecutor::new());
                    builder
                        .http1()
                        .timer(TokioTimer::new())
                        .header_read_timeout(head_timeout)
                        .max_buf_size(MAX_HEAD_BYTES)
                        .max_headers(MAX_HEADERS);
                    let connection = builder.serve_connection(TokioIo::new(stream), service).into_owned();
                    let watched = graceful.watch(connection);
                    tokio::spawn(async move {
                        let _admitted = admitted;
                        let silent = async {
                            if tokio::time::timeout(head_timeout, first_request.notified()).await.is_ok() {
                                std::future::pending::<()>().await;
                            }
                        };
                        tokio::select! {
                            served = watched => if let Err(error) = served {
                                tracing::debug!(%error, %peer, "connection ended with an error");
                            },
                            // Dropping the connection closes it.
                            () = silent => tracing::debug!(%peer, "connection closed: no request within the client timeout"),
                        }
                    });
                }
                Err(error) => {
                    // Per-connection (an aborted handshake) or transient (out of descriptors).
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    if tokio::time::timeout(drain, graceful.shutdown()).await.is_err() {
        tracing::warn!("connections still open after the drain timeout; closing them");
    }
    Ok(())
}

/// Writes a turned-away connection its answer, and closes it.
async fn answer_and_close(
    mut stream: TcpStream,
    turned_away: TurnedAway,
    within: Duration,
    _answering: OwnedSemaphorePermit,
) {
    let answer = turned_away.answer();
    // A client that does not read its answer gets no more time than one that
    // sends nothing; nor, being over a cap, more than a second.
    let _ = tokio::time::timeout(within.min(LINGER), async {
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await?;
        // What the client sent meanwhile is read and dropped before closing: a
        // socket closed with unread bytes is reset, and a reset can discard the
        // answer before the client reads it.
        let mut discarded = [0; 4096];
        let mut left = LINGER_BYTES;
        while left > 0 {
            match stream.read(&mut discarded).await? {
                0 => break,
                read => left = left.saturating_sub(read),
            }
        }
        Ok::<_, std::io::Error>(())
    })
    .await;
}

/// The most turned-away connections being answered at once.
const MAX_ANSWERING: usize = 256;
/// How long a turned-away connection is kept to read what its client sent.
const LINGER: Duration = Duration::from_secs(1);
/// The most read from it meanwhile.
const LINGER_BYTES: usize = 64 * 1024;

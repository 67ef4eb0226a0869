//! The accept loop, ours rather than `axum::serve`'s, so that what a client
//! may send is bounded where hyper reads it: the request head must arrive
//! within the client timeout and fit in [`MAX_HEAD_BYTES`] (a slow or endless
//! header ends the connection, not a task held forever), and each request
//! carries its peer's address for the rate limits. Bodies are bounded by the
//! routes (size, and the same timeout).

use std::future::Future;
use std::time::Duration;

use axum::Router;
use axum::extract::{ConnectInfo, Request};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tower::ServiceExt;

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
    head_timeout: Duration,
    shutdown: impl Future<Output = ()> + Send,
    drain: Duration,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let service = hyper::service::service_fn({
                        let app = app.clone();
                        move |mut request: Request<Incoming>| {
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
                        if let Err(error) = watched.await {
                            tracing::debug!(%error, %peer, "connection ended with an error");
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

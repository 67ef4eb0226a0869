//! The accept loop, ours rather than `axum::serve`'s, because a fault must be
//! able to reset a call: the caller sees its call reset and no answer, as
//! when a PG's load balancer drops it.
//!
//! Over HTTP/1.1 a call is its connection. Each connection keeps a second
//! descriptor of its socket; to reset, the connection task sets `SO_LINGER` to
//! zero on that descriptor and closes both: the kernel then aborts the
//! connection with an RST instead of a FIN, and the caller sees ECONNRESET.
//!
//! Over HTTP/2 one connection carries many calls, and a front resets one
//! call's stream, not its neighbours': the call's future ends in an error,
//! which hyper answers with `RST_STREAM` (`INTERNAL_ERROR`).

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::http::Version;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use socket2::SockRef;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;
use tower::ServiceExt;

/// How long a shutdown waits for requests in progress before cutting them.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// A handle on the call a request came in on (its connection over HTTP/1.1,
/// its stream over HTTP/2), put in every request's extensions so a handler
/// can ask for a reset.
#[derive(Clone, Default)]
pub(crate) struct Connection {
    reset: Arc<Notify>,
}

impl Connection {
    /// Asks for the call to be reset. The handler should then never answer:
    /// its future is dropped with the call.
    pub(crate) fn reset(&self) {
        self.reset.notify_one();
    }
}

/// Serves `app` on `listener` until `shutdown` completes, then stops
/// accepting, tells processings to stop, and drains open connections.
pub(crate) async fn run(
    app: Router,
    listener: TcpListener,
    http2_max_streams: u32,
    shutdown: impl Future<Output = ()> + Send + 'static,
    stopping: watch::Sender<bool>,
) -> io::Result<()> {
    let graceful = GracefulShutdown::new();
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    connections.spawn(serve_connection(app.clone(), stream, http2_max_streams, graceful.watcher()));
                }
                Err(error) => {
                    // Accept errors are per connection (aborted handshakes) or
                    // transient (out of descriptors): back off, keep serving.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            () = &mut shutdown => break,
        }
        while connections.try_join_next().is_some() {}
    }
    drop(listener);
    // Stop processings first so confirms waiting on them answer and their
    // connections can drain.
    let _ = stopping.send(true);
    if tokio::time::timeout(DRAIN_TIMEOUT, graceful.shutdown()).await.is_err() {
        tracing::warn!("connections still open after the drain timeout; closing them");
    }
    connections.shutdown().await;
    Ok(())
}

async fn serve_connection(app: Router, stream: TcpStream, http2_max_streams: u32, watcher: Watcher) {
    let (stream, spare) = match with_spare_descriptor(stream) {
        Ok(pair) => pair,
        Err(error) => {
            tracing::warn!(%error, "cannot prepare the connection");
            return;
        }
    };
    let connection = Connection::default();
    let handle = connection.clone();
    let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
        let app = app.clone();
        let connection = handle.clone();
        async move {
            if request.version() != Version::HTTP_2 {
                request.extensions_mut().insert(connection);
                return app.oneshot(request).await.map_err(|never| match never {});
            }
            let stream = Connection::default();
            request.extensions_mut().insert(stream.clone());
            tokio::select! {
                answer = app.oneshot(request) => answer.map_err(|never| match never {}),
                () = stream.reset.notified() => {
                    Err(io::Error::new(io::ErrorKind::ConnectionReset, "a fault resets this call's stream"))
                }
            }
        }
    });
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http2().max_concurrent_streams(http2_max_streams);
    let serving = watcher.watch(builder.serve_connection(TokioIo::new(stream), service).into_owned());
    tokio::select! {
        result = serving => {
            if let Err(error) = result {
                tracing::debug!(%error, "connection ended with an error");
            }
        }
        () = connection.reset.notified() => {
            // Linger 0 applies to the socket, whichever descriptor closes
            // last; the spare is dropped last, below.
            if let Err(error) = SockRef::from(&spare).set_linger(Some(Duration::ZERO)) {
                tracing::warn!(%error, "cannot set SO_LINGER; the connection closes without RST");
            }
        }
    }
    drop(spare);
}

/// The stream for hyper, and a second descriptor of the same socket that
/// outlives it, so the socket can still be configured after hyper let go.
fn with_spare_descriptor(stream: TcpStream) -> io::Result<(TcpStream, std::net::TcpStream)> {
    let std_stream = stream.into_std()?;
    let spare = std_stream.try_clone()?;
    Ok((TcpStream::from_std(std_stream)?, spare))
}

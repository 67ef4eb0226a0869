//! The accept loop, ours rather than `axum::serve`'s, because a fault must be
//! able to reset a connection: the caller sees ECONNRESET and no answer, as
//! when a PG's load balancer drops it.
//!
//! Each connection keeps a second descriptor of its socket. To reset, the
//! connection task sets `SO_LINGER` to zero on that descriptor and closes
//! both: the kernel then aborts the connection with an RST instead of a FIN.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
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

/// A handle on the connection a request came in on, put in every request's
/// extensions so a handler can ask for a reset.
#[derive(Clone, Default)]
pub(crate) struct Connection {
    reset: Arc<Notify>,
}

impl Connection {
    /// Asks the connection task to reset the connection. The handler should
    /// then never answer: its future is dropped with the connection.
    pub(crate) fn reset(&self) {
        self.reset.notify_one();
    }
}

/// Serves `app` on `listener` until `shutdown` completes, then stops
/// accepting, tells processings to stop, and drains open connections.
pub(crate) async fn run(
    app: Router,
    listener: TcpListener,
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
                    connections.spawn(serve_connection(app.clone(), stream, graceful.watcher()));
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

async fn serve_connection(app: Router, stream: TcpStream, watcher: Watcher) {
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
        request.extensions_mut().insert(handle.clone());
        app.clone().oneshot(request)
    });
    let builder = auto::Builder::new(TokioExecutor::new());
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

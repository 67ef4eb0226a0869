//! Status changes across the servers of a cluster. A check waiting on one
//! server for its order must wake when another server commits the change, or
//! it would learn of it only when its wait ends. On PostgreSQL every status
//! change sends a notification inside the transaction that makes it (so it is
//! delivered if and only if the change commits), and each server listens and
//! wakes its own waiters. SQLite has one server: its local notice is enough.
//!
//! Notifications are a hint, never the truth: one lost while the listener was
//! reconnecting only makes a check answer at the end of its wait, as a plain
//! check would.

use std::sync::Arc;
use std::time::Duration;

use sqlx::AnyConnection;
use sqlx::postgres::PgListener;
use tokio::task::AbortHandle;

use super::OrderChanges;

/// The PostgreSQL channel the servers of one database announce changes on.
const CHANNEL: &str = "payonce_order_changed";
/// How long the listener waits before connecting again after a failure.
const RECONNECT_PAUSE: Duration = Duration::from_secs(1);

/// Announces, within `transaction`, that `order_id`'s status changed.
pub(super) async fn announce(transaction: &mut AnyConnection, order_id: &str) -> Result<(), sqlx::Error> {
    // The outer SELECT keeps pg_notify's `void` out of the result, which the
    // Any driver has no type for.
    sqlx::query("SELECT 1 FROM (SELECT pg_notify($1, $2)) AS announced")
        .bind(CHANNEL)
        .bind(order_id)
        .execute(transaction)
        .await?;
    Ok(())
}

/// Wakes this server's waiters for every change any server announces on the
/// database at `url`, until the returned guard is dropped (with the last
/// clone of the `Db` that holds it): the listener's connection closes then.
pub(super) fn listen(url: String, changes: Arc<OrderChanges>) -> Listening {
    let task = tokio::spawn(async move {
        loop {
            if let Err(error) = relay(&url, &changes).await {
                tracing::warn!(%error, "not hearing other servers' order changes; checks wait their whole wait until this reconnects");
            }
            tokio::time::sleep(RECONNECT_PAUSE).await;
        }
    });
    Listening(task.abort_handle())
}

/// Stops the listener when dropped.
#[derive(Debug)]
pub(super) struct Listening(AbortHandle);

impl Drop for Listening {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn relay(url: &str, changes: &OrderChanges) -> Result<(), sqlx::Error> {
    let mut listener = PgListener::connect(url).await?;
    listener.listen(CHANNEL).await?;
    loop {
        // Reconnects by itself after a lost connection; an error here is a failed reconnect.
        let notification = listener.recv().await?;
        changes.notify(notification.payload());
    }
}

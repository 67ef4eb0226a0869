//! Who is waiting for which order to change, and waking them. A check that
//! waits for its order (`GET /api/orders/:id?wait=2s`) subscribes here and
//! holds neither a database connection nor a thread: one watch channel per
//! order that someone is waiting on, removed when its last waiter leaves.
//!
//! The database layer notifies after every committed status change, so no
//! transition can be missed by a waiter of this server; on PostgreSQL the
//! other servers' changes arrive too, through `change_feed`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{Notify, watch};

/// The orders being waited on, each with its channel and number of waiters.
#[derive(Debug, Default)]
pub struct OrderChanges {
    watched: Mutex<HashMap<String, Watched>>,
    /// Told of every change, whoever waits: the delivery of shops' events
    /// looks for new ones when it is (see `events::delivery`).
    any: Notify,
}

#[derive(Debug)]
struct Watched {
    changed: watch::Sender<()>,
    waiters: usize,
}

impl OrderChanges {
    /// Starts listening for changes of `order_id`. Subscribe before reading the
    /// order: a change committed between the read and the wait then still wakes it.
    pub fn subscribe(self: &Arc<Self>, order_id: &str) -> Subscription {
        let mut watched = self.lock();
        let entry = watched
            .entry(order_id.to_owned())
            .or_insert_with(|| Watched { changed: watch::Sender::new(()), waiters: 0 });
        entry.waiters += 1;
        let receiver = entry.changed.subscribe();
        Subscription { changes: self.clone(), order_id: order_id.to_owned(), receiver }
    }

    /// Wakes everyone waiting on `order_id`. Called after a status change is committed.
    pub fn notify(&self, order_id: &str) {
        if let Some(entry) = self.lock().get(order_id) {
            entry.changed.send_replace(());
        }
        self.any.notify_one();
    }

    /// Returns after the next change (or at once, if one came since the last call).
    pub async fn any_change(&self) {
        self.any.notified().await;
    }

    /// How many orders have someone waiting on them.
    pub fn watched_orders(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Watched>> {
        // The map stays consistent even if a holder panicked: every update is one statement.
        self.watched.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn leave(&self, order_id: &str) {
        let mut watched = self.lock();
        if let Some(entry) = watched.get_mut(order_id) {
            entry.waiters -= 1;
            if entry.waiters == 0 {
                watched.remove(order_id);
            }
        }
    }
}

/// One waiter's interest in one order; dropping it stops listening.
#[derive(Debug)]
pub struct Subscription {
    changes: Arc<OrderChanges>,
    order_id: String,
    receiver: watch::Receiver<()>,
}

impl Subscription {
    /// Resolves at the first change committed after the subscription was made.
    pub async fn changed(&mut self) {
        // The sender lives as long as any subscription to it, so this cannot fail.
        let _ = self.receiver.changed().await;
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.changes.leave(&self.order_id);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_change_wakes_the_waiters_of_that_order_only() {
        let changes = Arc::new(OrderChanges::default());
        let mut mine = changes.subscribe("ord_a");
        let mut other = changes.subscribe("ord_b");
        changes.notify("ord_a");
        tokio::time::timeout(Duration::from_secs(1), mine.changed()).await.expect("woken");
        assert!(tokio::time::timeout(Duration::from_millis(20), other.changed()).await.is_err());
    }

    #[tokio::test]
    async fn a_change_made_before_the_wait_begins_is_not_lost() {
        let changes = Arc::new(OrderChanges::default());
        let mut waiter = changes.subscribe("ord_a");
        changes.notify("ord_a");
        // The waiter reads the order here, then waits: the change above still counts.
        tokio::time::timeout(Duration::from_secs(1), waiter.changed()).await.expect("woken");
    }

    #[test]
    fn an_order_is_forgotten_when_its_last_waiter_leaves() {
        let changes = Arc::new(OrderChanges::default());
        let first = changes.subscribe("ord_a");
        let second = changes.subscribe("ord_a");
        assert_eq!(changes.watched_orders(), 1);
        drop(first);
        assert_eq!(changes.watched_orders(), 1);
        drop(second);
        assert_eq!(changes.watched_orders(), 0);
        changes.notify("ord_a"); // nobody waiting: nothing to do
    }
}

//! Group commit for SQLite's one writer. SQLite commits one transaction at a
//! time, and each commit waits for the disk (`synchronous = FULL`): on this
//! project's machines about half a millisecond, against some 40 µs for a
//! statement. A payment writes three or four times (its order, its attempt,
//! the record of its PG call, its outcome); one commit each limits a server at
//! about 700 payments a second, which a flash sale passes (see the flash-sale
//! experiment, docs/measured-flash-sale.md).
//!
//! So the writes that arrive while the writer is busy are run together, in one
//! transaction, one after another, each deciding on what the ones before it
//! wrote, exactly as if it had had its own transaction. Each caller learns its
//! result only once the whole group is committed, so nothing is answered or
//! announced before it is on disk. When a write fails, the group is rolled back
//! and each of its writes is run again in a transaction of its own: a write
//! that fails leaves nothing behind, and the others stand.
//!
//! PostgreSQL takes commits side by side and groups their flushes itself:
//! there every write keeps its own transaction.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;

use futures::FutureExt;
use sqlx::AnyPool;
use tokio::sync::{mpsc, oneshot};

/// Most writes in one transaction: a group holds the writer while it runs.
const MOST_PER_GROUP: usize = 256;

pub(super) type Transaction = sqlx::Transaction<'static, sqlx::Any>;
type BoxFuture<'t, T> = Pin<Box<dyn Future<Output = T> + Send + 't>>;

/// One write's statements, run in the transaction given. It may run twice
/// (see above), each time on what the database holds then.
pub(super) type Work<R> = Box<dyn for<'t> Fn(&'t mut Transaction) -> BoxFuture<'t, Result<R, sqlx::Error>> + Send>;

/// The writes waiting for the writer, and the task that runs them in groups.
#[derive(Debug)]
pub(super) struct GroupCommit {
    waiting: mpsc::UnboundedSender<Box<dyn Job>>,
}

impl GroupCommit {
    /// Starts the task that runs the groups through `writer`; it ends with the last handle.
    pub(super) fn start(writer: AnyPool) -> Arc<Self> {
        let (waiting, jobs) = mpsc::unbounded_channel();
        tokio::spawn(run_groups(writer, jobs));
        Arc::new(Self { waiting })
    }

    /// Queues `work` now, to run with whatever other writes are waiting, and
    /// gives its result once committed: it is committed no later than any write
    /// queued after it (a later group commits later). A caller that stops
    /// waiting does not stop its write: it is committed or not with its group.
    pub(super) fn queue<R: Send + 'static>(
        &self,
        work: Work<R>,
    ) -> impl Future<Output = Result<R, sqlx::Error>> + Send + 'static {
        let (caller, told) = oneshot::channel();
        let queued = self.waiting.send(Box::new(Waiting { work, outcome: None, caller }));
        async move {
            queued.map_err(|_| sqlx::Error::PoolClosed)?;
            told.await.map_err(|_| sqlx::Error::WorkerCrashed)?
        }
    }
}

/// A write waiting for its group, whatever its result's type.
trait Job: Send {
    /// Runs the write in `transaction`; says whether it succeeded (a panic is a failure).
    fn run<'t>(&'t mut self, transaction: &'t mut Transaction) -> BoxFuture<'t, bool>;
    /// Tells the caller: its outcome if `committed` is, else why not.
    fn tell(self: Box<Self>, committed: Result<(), sqlx::Error>);
}

struct Waiting<R> {
    work: Work<R>,
    /// The last run's outcome; `None` before any run, or after one that panicked.
    outcome: Option<Result<R, sqlx::Error>>,
    caller: oneshot::Sender<Result<R, sqlx::Error>>,
}

impl<R: Send + 'static> Job for Waiting<R> {
    fn run<'t>(&'t mut self, transaction: &'t mut Transaction) -> BoxFuture<'t, bool> {
        Box::pin(async move {
            self.outcome = AssertUnwindSafe((self.work)(transaction)).catch_unwind().await.ok();
            matches!(self.outcome, Some(Ok(_)))
        })
    }

    fn tell(self: Box<Self>, committed: Result<(), sqlx::Error>) {
        let told = match (committed, self.outcome) {
            (_, Some(Err(error))) | (Err(error), Some(Ok(_)) | None) => Err(error),
            (Ok(()), Some(Ok(outcome))) => Ok(outcome),
            // It panicked, and the others were committed without it.
            (Ok(()), None) => Err(sqlx::Error::WorkerCrashed),
        };
        // A caller that gave up no longer listens.
        let _ = self.caller.send(told);
    }
}

async fn run_groups(writer: AnyPool, mut waiting: mpsc::UnboundedReceiver<Box<dyn Job>>) {
    let mut group = Vec::with_capacity(MOST_PER_GROUP);
    while waiting.recv_many(&mut group, MOST_PER_GROUP).await > 0 {
        run_group(&writer, std::mem::take(&mut group)).await;
    }
}

async fn run_group(writer: &AnyPool, mut jobs: Vec<Box<dyn Job>>) {
    if jobs.len() == 1 {
        return run_alone(writer, jobs.remove(0)).await;
    }
    // IMMEDIATE: the write lock at once, as for every other write (see `Db::begin_write`).
    let mut transaction = match writer.begin_with("BEGIN IMMEDIATE").await {
        Ok(transaction) => transaction,
        Err(error) => return jobs.into_iter().for_each(|job| job.tell(Err(shared(&error)))),
    };
    let mut all_succeeded = true;
    for job in &mut jobs {
        if !job.run(&mut transaction).await {
            all_succeeded = false;
            break;
        }
    }
    if all_succeeded {
        let committed = transaction.commit().await;
        for job in jobs {
            job.tell(committed.as_ref().map(|_| ()).map_err(shared));
        }
        return;
    }
    // Nothing of the group stays; each write again, alone.
    let _ = transaction.rollback().await;
    for job in jobs {
        run_alone(writer, job).await;
    }
}

async fn run_alone(writer: &AnyPool, mut job: Box<dyn Job>) {
    let mut transaction = match writer.begin_with("BEGIN IMMEDIATE").await {
        Ok(transaction) => transaction,
        Err(error) => return job.tell(Err(error)),
    };
    if job.run(&mut transaction).await {
        let committed = transaction.commit().await;
        job.tell(committed);
    } else {
        let _ = transaction.rollback().await;
        job.tell(Ok(()));
    }
}

/// The group's error, for each of its callers (`sqlx::Error` is not `Clone`):
/// the database being unavailable stays that, so each caller answers as it would alone.
fn shared(error: &sqlx::Error) -> sqlx::Error {
    match error {
        sqlx::Error::PoolTimedOut => sqlx::Error::PoolTimedOut,
        sqlx::Error::PoolClosed => sqlx::Error::PoolClosed,
        sqlx::Error::Io(io) => sqlx::Error::Io(std::io::Error::new(io.kind(), io.to_string())),
        other => sqlx::Error::Protocol(format!("a grouped write failed: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use sqlx::any::AnyPoolOptions;

    use super::*;
    use crate::db::DbLocation;

    /// A writer on a fresh SQLite file with a table of keys, and its group commit.
    async fn keys_table() -> (tempfile::TempDir, AnyPool, Arc<GroupCommit>) {
        sqlx::any::install_default_drivers();
        let dir = tempfile::tempdir().unwrap();
        let location = DbLocation::sqlite_file(&dir.path().join("group.db"));
        let writer = AnyPoolOptions::new().max_connections(1).connect(location.url()).await.unwrap();
        sqlx::query("CREATE TABLE keys (key TEXT PRIMARY KEY)").execute(&writer).await.unwrap();
        let group = GroupCommit::start(writer.clone());
        (dir, writer, group)
    }

    /// Inserts `key` unless it is there; says whether it did, as a payment's first write does.
    fn insert_once(key: &'static str) -> Work<bool> {
        Box::new(move |transaction| {
            Box::pin(async move {
                let inserted = sqlx::query("INSERT INTO keys (key) VALUES ($1) ON CONFLICT DO NOTHING")
                    .bind(key)
                    .execute(&mut **transaction)
                    .await?;
                Ok(inserted.rows_affected() == 1)
            })
        })
    }

    /// Inserts `key`, then fails: a write that breaks half-way.
    fn insert_then_fail(key: &'static str) -> Work<bool> {
        Box::new(move |transaction| {
            Box::pin(async move {
                sqlx::query("INSERT INTO keys (key) VALUES ($1)").bind(key).execute(&mut **transaction).await?;
                sqlx::query("INSERT INTO no_such_table VALUES (1)").execute(&mut **transaction).await?;
                Ok(true)
            })
        })
    }

    async fn keys(writer: &AnyPool) -> Vec<String> {
        sqlx::query_scalar("SELECT key FROM keys ORDER BY key").fetch_all(writer).await.unwrap()
    }

    /// Holds the writer until the returned sender is dropped, so that the writes
    /// queued meanwhile make one group.
    async fn hold_writer(writer: &AnyPool) -> oneshot::Sender<()> {
        let (release, released) = oneshot::channel::<()>();
        let connection = writer.acquire().await.unwrap();
        tokio::spawn(async move {
            let _ = released.await;
            drop(connection);
        });
        release
    }

    #[tokio::test]
    async fn writes_queued_together_each_decide_on_the_ones_before_them() {
        let (_dir, writer, group) = keys_table().await;
        let held = hold_writer(&writer).await;
        let first = group.queue(insert_once("a"));
        let second = group.queue(insert_once("a"));
        let other = group.queue(insert_once("b"));
        drop(held);
        assert!(first.await.unwrap(), "the first write of a key inserts it");
        assert!(!second.await.unwrap(), "the second sees the first, in the same group");
        assert!(other.await.unwrap());
        assert_eq!(keys(&writer).await, ["a", "b"]);
    }

    #[tokio::test]
    async fn a_write_that_fails_leaves_nothing_and_the_others_of_its_group_stand() {
        let (_dir, writer, group) = keys_table().await;
        let held = hold_writer(&writer).await;
        let before = group.queue(insert_once("before"));
        let broken = group.queue(insert_then_fail("half-written"));
        let after = group.queue(insert_once("after"));
        drop(held);
        assert!(before.await.unwrap());
        assert!(broken.await.is_err(), "its caller hears of its failure");
        assert!(after.await.unwrap());
        assert_eq!(keys(&writer).await, ["after", "before"], "nothing of the failed write is stored");
    }

    #[tokio::test]
    async fn a_write_that_panics_is_told_as_crashed_and_the_others_stand() {
        let (_dir, writer, group) = keys_table().await;
        let held = hold_writer(&writer).await;
        let before = group.queue(insert_once("before"));
        let panicking: Work<bool> = Box::new(|_| Box::pin(async { panic!("a write that panics") }));
        let crashed = group.queue(panicking);
        let after = group.queue(insert_once("after"));
        drop(held);
        assert!(before.await.unwrap());
        assert!(matches!(crashed.await, Err(sqlx::Error::WorkerCrashed)));
        assert!(after.await.unwrap());
        assert_eq!(keys(&writer).await, ["after", "before"]);
        assert!(group.queue(insert_once("later")).await.unwrap(), "the writer goes on");
    }

    #[tokio::test]
    async fn a_caller_hears_nothing_before_its_write_is_committed() {
        let (_dir, writer, group) = keys_table().await;
        let held = hold_writer(&writer).await;
        let mut queued = Box::pin(group.queue(insert_once("a")));
        let early = tokio::time::timeout(std::time::Duration::from_millis(100), &mut queued).await;
        assert!(early.is_err(), "no answer while the writer is held");
        drop(held);
        assert!(queued.await.unwrap());
        assert_eq!(keys(&writer).await, ["a"]);
    }

    #[tokio::test]
    async fn a_closed_database_fails_every_write_of_the_group_as_unavailable() {
        let (_dir, writer, group) = keys_table().await;
        writer.close().await;
        let failed = group.queue(insert_once("a")).await;
        assert!(matches!(failed, Err(sqlx::Error::PoolClosed)), "{failed:?}");
    }
}

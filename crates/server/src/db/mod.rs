//! Storage: SQLite (one file, WAL mode) for one server, PostgreSQL for a
//! cluster. The only module that writes SQL, and the only one that knows which
//! engine it talks to. Queries are one set where the dialects agree (`$N`
//! binds, `ON CONFLICT`, `RETURNING`); the few places they do not are marked.

mod attempts;
mod change_feed;
mod changes;
mod checkouts;
mod group_commit;
mod history;
mod kakaopay;
mod leases;
mod location;
mod operator;
mod orders;
mod pg_calls;
mod pg_places;
mod reconcile;
mod refunds;
mod shop_events;
mod signing_keys;
mod status;
mod stock;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::future::Either;
use sqlx::any::AnyPoolOptions;
use sqlx::{AnyConnection, AnyPool, Executor};

pub use attempts::{Attempt, NewAttempt};
pub use changes::{OrderChanges, Subscription};
pub use checkouts::{CheckoutRow, CheckoutStored, Claim, NewCheckout, unclaimed_customer};
use group_commit::{GroupCommit, Work};
pub use history::{Actor, HistoryLine, PaymentSummary};
pub use kakaopay::KakaoPayReady;
pub use leases::JobKind;
pub use location::{DbLocation, DbLocationError, Engine};
pub use operator::{AttemptDetail, OperatorOrderRow};
pub use orders::NewOrder;
pub use pg_calls::{KEPT_PER_ORDER, NewPgCall, PgCallKind, PgCallRow, PgCaller};
pub use pg_places::{LearnedLimitRow, PlaceClaim, PlaceTerms};
pub use reconcile::{NewOrphanRefund, OrphanRefund, RECONCILE_JOB, ShopPayment, StoredRun};
pub use refunds::{AuditEntry, AuditLine, NewRefund, Refund, RefundOutcome, RefundStatus, RequestedBy, Stored};
pub use shop_events::{AfterSend, EVENT_POSITION_LOCK, EventRow, EventSend, EventToSend, SendRow};
pub use signing_keys::CUSTOMER_COOKIE_KEY;
pub use status::{Lease, Writer};
pub use stock::StockLine;

/// How long a request waits for a connection before it is told the database is unavailable.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// A handle to the database; cheap to clone.
///
/// SQLite lets one writer in at a time. Writes go through a pool of one
/// connection, so a burst of them queues in the pool instead of holding every
/// connection while it waits for the lock; reads have a pool of their own
/// (WAL mode lets them run beside the writer), so a customer checking an order
/// never waits behind a burst of writes. PostgreSQL takes writers side by side:
/// there both are one pool.
#[derive(Debug, Clone)]
pub struct Db {
    engine: Engine,
    pool: AnyPool,
    writer: AnyPool,
    /// For the cluster's shared PG places (see `pg_places`): on PostgreSQL, connections
    /// that do not wait for their commits to reach the disk.
    places_pool: AnyPool,
    /// Told of every status change this server commits, for the checks
    /// waiting on an order (see `changes`).
    changes: Arc<OrderChanges>,
    /// On PostgreSQL, the other servers' changes for `changes`; ends with the last clone.
    _change_feed: Option<Arc<change_feed::Listening>>,
    /// On SQLite, the writes that share a transaction (see `group_commit`).
    group_commit: Option<Arc<GroupCommit>>,
}

/// What a pool's connections are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
    Payments,
    Places,
}

impl Db {
    /// Connects (creating a SQLite file if needed) and brings the schema up to
    /// date. `max_connections` is the pool size (for SQLite, the readers'; the
    /// writer has one more).
    pub async fn open(location: &DbLocation, max_connections: u32) -> Result<Self, sqlx::Error> {
        sqlx::any::install_default_drivers();
        let engine = location.engine();
        let options = |purpose| {
            AnyPoolOptions::new()
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .after_connect(move |connection, _| Box::pin(prepare_connection(engine, purpose, connection)))
        };
        let pool = options(Purpose::Payments).max_connections(max_connections).connect(location.url()).await?;
        let (writer, places_pool) = match engine {
            Engine::Sqlite => {
                let writer = options(Purpose::Payments).max_connections(1).connect(location.url()).await?;
                (writer.clone(), writer)
            }
            Engine::Postgres => {
                // As many as for payments, opened at start: a burst of confirms
                // takes places side by side, without first waiting for connections.
                let places_pool = options(Purpose::Places)
                    .min_connections(max_connections)
                    .max_connections(max_connections)
                    .connect(location.url())
                    .await?;
                (pool.clone(), places_pool)
            }
        };
        match engine {
            Engine::Sqlite => sqlx::migrate!("./migrations/sqlite").run(&writer).await?,
            Engine::Postgres => sqlx::migrate!("./migrations/postgres").run(&writer).await?,
        }
        let changes = Arc::<OrderChanges>::default();
        let change_feed = (engine == Engine::Postgres)
            .then(|| Arc::new(change_feed::listen(location.url().to_owned(), changes.clone())));
        let group_commit = (engine == Engine::Sqlite).then(|| GroupCommit::start(writer.clone()));
        Ok(Self { engine, pool, writer, places_pool, changes, _change_feed: change_feed, group_commit })
    }

    /// A write transaction that takes the write lock at once. On SQLite a
    /// transaction that reads before it writes would otherwise start as a
    /// reader, and could not become a writer if another connection (another
    /// server on the same file) committed in between: it would fail busy
    /// instead of waiting its turn.
    async fn begin_write(&self) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
        match self.engine {
            Engine::Sqlite => self.writer.begin_with("BEGIN IMMEDIATE").await,
            Engine::Postgres => self.writer.begin().await,
        }
    }

    /// Runs `work` in a write transaction and gives its result once committed.
    /// On SQLite the write joins the others arriving meanwhile in one
    /// transaction (see `group_commit`), queued before this returns: a write
    /// made after it is committed with it or later. On PostgreSQL it has a
    /// transaction of its own. Either way a failed `work` leaves nothing behind.
    fn write<R: Send + 'static>(&self, work: Work<R>) -> impl Future<Output = Result<R, sqlx::Error>> + Send + 'static {
        match &self.group_commit {
            Some(group) => Either::Left(group.queue(work)),
            None => {
                let db = self.clone();
                Either::Right(async move {
                    let mut transaction = db.begin_write().await?;
                    let result = work(&mut transaction).await?;
                    transaction.commit().await?;
                    Ok(result)
                })
            }
        }
    }

    /// Whether other order servers may share this database (and so the PG's
    /// places under the PG's limit must be kept in it, not in one server's memory).
    pub fn shared_by_servers(&self) -> bool {
        self.engine == Engine::Postgres
    }

    /// Closes every connection; for tests that take the database away.
    pub async fn close(&self) {
        self.pool.close().await;
        self.writer.close().await;
        self.places_pool.close().await;
    }

    /// Returns once every write queued before it is committed (or failed):
    /// at shutdown, the records no caller waits for (see `group_commit`).
    pub async fn finish_writes(&self) {
        if let Some(group) = &self.group_commit {
            let _ = group.queue(Box::new(|_| Box::pin(async { Ok(()) }))).await;
        }
    }

    /// Where a check subscribes to wait for its order to change.
    pub fn changes(&self) -> &Arc<OrderChanges> {
        &self.changes
    }
}

/// Per-connection settings. SQLite's are per connection, not per file.
async fn prepare_connection(
    engine: Engine,
    purpose: Purpose,
    connection: &mut AnyConnection,
) -> Result<(), sqlx::Error> {
    match (engine, purpose) {
        (Engine::Sqlite, _) => {
            // A committed payment transition must survive a power cut, not only a crash.
            connection
                .execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000")
                .await?;
        }
        // A place under the PG limit is a lease that lapses by itself, never a
        // payment's state: its commits need not wait for the disk (a tenth of
        // the time). A database crash may forget the places taken in its last
        // moments; the cluster may then go over its limit by those for one call.
        (Engine::Postgres, Purpose::Places) => {
            connection.execute("SET synchronous_commit = off").await?;
        }
        (Engine::Postgres, Purpose::Payments) => {}
    }
    Ok(())
}

/// The tables the digest covers, each with the key its rows are read in.
const DIGESTED_TABLES: [(&str, &str); 8] = [
    ("orders", "order_id"),
    ("payment_attempts", "order_id"),
    ("payment_events", "id"),
    ("refunds", "refund_id"),
    ("audit_log", "id"),
    ("orphan_refunds", "payment_key"),
    ("reconcile_runs", "id"),
    ("pg_calls", "id"),
];

impl Db {
    /// A digest of everything stored about orders and payments (every row of
    /// every table, in key order), to prove that a request changed nothing.
    pub async fn digest(&self) -> Result<String, sqlx::Error> {
        use sha2::{Digest, Sha256};
        // Dialects differ: how to list a table's columns, and how to quote a value.
        let (columns_query, quote) = match self.engine {
            Engine::Sqlite => ("SELECT name FROM pragma_table_info($1) ORDER BY cid", "quote"),
            Engine::Postgres => (
                "SELECT CAST(column_name AS TEXT) FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
                "quote_nullable",
            ),
        };
        let mut hasher = Sha256::new();
        for (table, key) in DIGESTED_TABLES {
            // Table and column names come from the schema, never from input.
            let columns: Vec<String> = sqlx::query_scalar(columns_query).bind(table).fetch_all(&self.pool).await?;
            let row_text =
                columns.iter().map(|column| format!("{quote}(\"{column}\")")).collect::<Vec<_>>().join(" || ',' || ");
            let rows: Vec<String> = sqlx::query_scalar(&format!("SELECT {row_text} FROM {table} ORDER BY {key}"))
                .fetch_all(&self.pool)
                .await?;
            hasher.update(table.as_bytes());
            for row in rows {
                hasher.update(row.as_bytes());
                hasher.update(b"\n");
            }
        }
        Ok(format!("{:x}", hasher.finalize()))
    }
}

/// Milliseconds since the Unix epoch, the unit every timestamp is stored in.
pub fn now_ms() -> i64 {
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
}

/// RFC 3339 in UTC, as the API shows timestamps.
pub fn rfc3339(ms: i64) -> String {
    let time = UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or_default());
    humantime::format_rfc3339_millis(time).to_string()
}

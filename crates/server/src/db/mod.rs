//! Storage: SQLite in WAL mode, one file, migrations at start. The only module
//! that writes SQL. Queries are plain SQL with binds so a PostgreSQL backend can
//! follow the same shape.

mod attempts;
mod events;
mod orders;

use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

pub use attempts::{Attempt, NewAttempt, Transition};
pub use events::{Actor, PaymentEvent, PaymentSummary};
pub use orders::NewOrder;

/// A handle to the database; cheap to clone.
///
/// SQLite lets one writer in at a time. Writes go through a pool of one
/// connection, so a burst of them queues in the pool instead of holding every
/// connection while it waits for the lock; reads have a pool of their own
/// (WAL mode lets them run beside the writer), so a customer checking an order
/// never waits behind a burst of writes.
#[derive(Debug, Clone)]
pub struct Db {
    pool: SqlitePool,
    writer: SqlitePool,
}

impl Db {
    /// Opens (creating if needed) the database file and brings its schema up to date.
    /// `max_connections` is the readers' pool size; the writer has one more.
    pub async fn open(path: &Path, max_connections: u32) -> Result<Self, sqlx::Error> {
        let options = SqliteConnectOptions::from_str("sqlite:")?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // A committed payment transition must survive a power cut, not only a crash.
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(Duration::from_secs(5))
            .foreign_keys(true);
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(5))
            .connect_with(options.clone())
            .await?;
        sqlx::migrate!("./migrations").run(&writer).await?;
        let pool = SqlitePoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(Duration::from_secs(5))
            .connect_with(options)
            .await?;
        Ok(Self { pool, writer })
    }
}

impl Db {
    /// A digest of everything stored (every row of every table, in key order),
    /// to prove that a request changed nothing.
    pub async fn digest(&self) -> Result<String, sqlx::Error> {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        for table in ["orders", "payment_attempts", "payment_events"] {
            // Table and column names come from the schema, never from input.
            let columns: Vec<String> = sqlx::query_scalar("SELECT name FROM pragma_table_info(?) ORDER BY cid")
                .bind(table)
                .fetch_all(&self.pool)
                .await?;
            let row_text =
                columns.iter().map(|column| format!("quote(\"{column}\")")).collect::<Vec<_>>().join(" || ',' || ");
            let rows: Vec<String> = sqlx::query_scalar(&format!("SELECT {row_text} FROM {table} ORDER BY rowid"))
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

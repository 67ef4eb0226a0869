//! Storage: SQLite in WAL mode, one file, migrations at start. The only module
//! that writes SQL. Queries are plain SQL with binds so a PostgreSQL backend can
//! follow the same shape.

mod attempts;
mod changes;
mod events;
mod orders;

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

pub use attempts::{Attempt, NewAttempt, Transition};
pub use changes::{OrderChanges, Subscription};
pub use events::{Actor, PaymentEvent};
pub use orders::NewOrder;

/// A handle to the database; cheap to clone.
#[derive(Debug, Clone)]
pub struct Db {
    pool: SqlitePool,
    /// Told of every committed status change, for the checks waiting on an order.
    changes: Arc<OrderChanges>,
}

impl Db {
    /// Opens (creating if needed) the database file and brings its schema up to date.
    pub async fn open(path: &Path, max_connections: u32) -> Result<Self, sqlx::Error> {
        let options = SqliteConnectOptions::from_str("sqlite:")?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // A committed payment transition must survive a power cut, not only a crash.
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(Duration::from_secs(5))
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(Duration::from_secs(5))
            .connect_with(options)
            .await?;
        sqlx::migrate!("./migrations").run(&pool).await?;
        Ok(Self { pool, changes: Arc::default() })
    }

    /// Where a check subscribes to wait for its order to change.
    pub fn changes(&self) -> &Arc<OrderChanges> {
        &self.changes
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

//! A PostgreSQL server the campaign can take away and bring back: one run by
//! `scripts/postgres.sh` under a name, on a Unix socket of its own (so no
//! other PostgreSQL on this machine can take a port it freed while it is
//! stopped, and the servers find their database gone, not another one).

use std::path::PathBuf;

use tokio::process::Command;

/// Why `scripts/postgres.sh` could not do what was asked.
#[derive(Debug, thiserror::Error)]
#[error("scripts/postgres.sh {args}: {reason}")]
pub struct PostgresError {
    args: String,
    reason: String,
}

/// The PostgreSQL server `scripts/postgres.sh` runs under `name`.
#[derive(Debug, Clone)]
pub struct Postgres {
    pub name: String,
}

impl Postgres {
    pub fn named(name: &str) -> Self {
        Self { name: name.to_owned() }
    }

    fn script() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/postgres.sh")
    }

    async fn run(args: &[&str]) -> Result<String, PostgresError> {
        let error = |reason: String| PostgresError { args: args.join(" "), reason };
        let output =
            Command::new("bash").arg(Self::script()).args(args).output().await.map_err(|e| error(e.to_string()))?;
        if !output.status.success() {
            return Err(error(String::from_utf8_lossy(&output.stderr).trim().to_owned()));
        }
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }

    /// Takes the database away: the server stops (fast shutdown, its clients cut off).
    pub async fn stop(&self) -> Result<(), PostgresError> {
        Self::run(&["stop", &self.name]).await.map(drop)
    }

    /// Brings it back, with its data, on the same socket.
    pub async fn resume(&self) -> Result<(), PostgresError> {
        Self::run(&["resume", &self.name]).await.map(drop)
    }
}

/// A fresh PostgreSQL server of the caller's own, removed (stopped, its data
/// deleted) when this is dropped, also when a campaign panics.
#[derive(Debug)]
pub struct OwnPostgres {
    pub postgres: Postgres,
    /// The URL of its `postgres` database.
    pub url: String,
}

impl OwnPostgres {
    /// Starts one named `name`, with fsync off (its data is thrown away).
    pub async fn start(name: &str) -> Result<Self, PostgresError> {
        let mut own = Self { postgres: Postgres::named(name), url: String::new() };
        // Removed on the way out if it does not start, half made.
        own.url = Postgres::run(&["start", name, "", "fast", "socket"]).await?;
        Ok(own)
    }

    /// The URL of database `database` on it.
    pub fn url_of(&self, database: &str) -> String {
        match self.url.split_once("/postgres?") {
            Some((base, query)) => format!("{base}/{database}?{query}"),
            None => self.url.replacen("/postgres", &format!("/{database}"), 1),
        }
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let _ =
            std::process::Command::new("bash").arg(Postgres::script()).args(["remove", &self.postgres.name]).output();
    }
}

//! Where the database is, as given by `--db`: a SQLite file (a path, or a
//! `sqlite:` URL) or a PostgreSQL server (`postgres://` or `postgresql://`).

use std::fmt;
use std::str::FromStr;

/// Which engine a database runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// One file, one server: the embedded default.
    Sqlite,
    /// A server of its own, shared by every order server of a cluster.
    Postgres,
}

/// A parsed `--db` value.
#[derive(Clone, PartialEq, Eq)]
pub struct DbLocation {
    engine: Engine,
    /// The URL sqlx connects to.
    url: String,
}

impl DbLocation {
    pub fn engine(&self) -> Engine {
        self.engine
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// A SQLite file at `path`, created if missing.
    pub fn sqlite_file(path: &std::path::Path) -> Self {
        // Percent-encoded so that a `?` or `#` in a folder name stays part of the path.
        let encoded = percent_encoding::utf8_percent_encode(&path.to_string_lossy(), PATH_SET).to_string();
        Self { engine: Engine::Sqlite, url: format!("sqlite://{encoded}?mode=rwc") }
    }
}

/// What a path must not carry raw inside a `sqlite:` URL.
const PATH_SET: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS.add(b'%').add(b'?').add(b'#');

/// Why a `--db` value was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DbLocationError {
    #[error("--db is empty: give a SQLite file path, a sqlite: URL or a postgres:// URL")]
    Empty,
    #[error("--db {0:?} is a URL of an engine payonce does not speak: use a SQLite file path or postgres://")]
    UnknownScheme(String),
}

impl FromStr for DbLocation {
    type Err = DbLocationError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text.is_empty() {
            return Err(DbLocationError::Empty);
        }
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            return Ok(Self { engine: Engine::Postgres, url: text.to_owned() });
        }
        if text.starts_with("sqlite:") {
            // Created if missing, like a plain path, unless the URL says otherwise.
            let url = if text.contains("mode=") {
                text.to_owned()
            } else if text.contains('?') {
                format!("{text}&mode=rwc")
            } else {
                format!("{text}?mode=rwc")
            };
            return Ok(Self { engine: Engine::Sqlite, url });
        }
        if let Some((scheme, _)) = text.split_once("://") {
            return Err(DbLocationError::UnknownScheme(scheme.to_owned()));
        }
        Ok(Self::sqlite_file(std::path::Path::new(text)))
    }
}

/// Shows the location without its password, for logs and the start-up line.
impl fmt::Display for DbLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match url::Url::parse(&self.url) {
            Ok(mut url) if url.password().is_some() => {
                let _ = url.set_password(Some("***"));
                write!(f, "{url}")
            }
            _ => f.write_str(&self.url),
        }
    }
}

impl fmt::Debug for DbLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DbLocation({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_a_sqlite_file_created_if_missing() {
        let location: DbLocation = "data/payonce.db".parse().unwrap();
        assert_eq!((location.engine(), location.url()), (Engine::Sqlite, "sqlite://data/payonce.db?mode=rwc"));
        let odd: DbLocation = "/tmp/a?b#c/payonce.db".parse().unwrap();
        assert_eq!(odd.url(), "sqlite:///tmp/a%3Fb%23c/payonce.db?mode=rwc");
    }

    #[test]
    fn sqlite_urls_keep_their_mode() {
        let plain: DbLocation = "sqlite:payonce.db".parse().unwrap();
        assert_eq!(plain.url(), "sqlite:payonce.db?mode=rwc");
        let read_only: DbLocation = "sqlite:payonce.db?mode=ro".parse().unwrap();
        assert_eq!(read_only.url(), "sqlite:payonce.db?mode=ro");
    }

    #[test]
    fn postgres_urls_select_postgres_and_never_show_their_password() {
        let location: DbLocation = "postgres://shop:s3cret@db.internal:5432/payonce".parse().unwrap();
        assert_eq!(location.engine(), Engine::Postgres);
        assert_eq!(location.to_string(), "postgres://shop:***@db.internal:5432/payonce");
        assert!(!format!("{location:?}").contains("s3cret"));
    }

    #[test]
    fn other_engines_and_nothing_are_refused() {
        assert_eq!("".parse::<DbLocation>(), Err(DbLocationError::Empty));
        assert_eq!(
            "mysql://localhost/payonce".parse::<DbLocation>(),
            Err(DbLocationError::UnknownScheme("mysql".into()))
        );
    }
}

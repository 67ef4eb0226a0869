//! What is given as files: the PG's keys, the database's URL, the operators'
//! token and file, the keys that sign customers' cookies, the shops and the
//! catalog, read into their settings.

use secrecy::{ExposeSecret, SecretString};

use super::checks::ConfigError;
use super::flags::{CustomerKeyFiles, ServerConfig};
use crate::catalog::Catalog;
use crate::operators::Operators;
use crate::shops::Shops;

impl ServerConfig {
    /// Reads the secrets given as files (`--pg-secret-key-file`,
    /// `--admin-token-file`) into their settings.
    pub fn read_secret_files(&mut self) -> Result<(), ConfigError> {
        if let Some(path) = &self.pg_secret_key_file {
            self.pg_secret_key = read_secret("pg-secret-key-file", path)?;
        }
        if let Some(path) = &self.kakaopay_secret_key_file {
            self.kakaopay_secret_key = read_secret("kakaopay-secret-key-file", path)?;
        }
        if let Some(path) = &self.db_url_file {
            let url = read_secret("db-url-file", path)?;
            self.db = url.expose_secret().parse().map_err(|error: crate::db::DbLocationError| {
                ConfigError::SecretFile { flag: "db-url-file", path: path.clone(), reason: error.to_string() }
            })?;
        }
        if let Some(path) = &self.pg_webhook_secret_file {
            let secret = read_secret("pg-webhook-secret-file", path)?;
            crate::operators::check_strength(secret.expose_secret()).map_err(|reason| ConfigError::SecretFile {
                flag: "pg-webhook-secret-file",
                path: path.clone(),
                reason,
            })?;
            self.pg_webhook_secret = Some(secret);
        }
        if let Some(path) = &self.admin_token_file {
            self.admin_token = Some(read_secret("admin-token-file", path)?);
        }
        if let Some(path) = &self.operators_file {
            let failed =
                |reason: String| ConfigError::SecretFile { flag: "operators-file", path: path.clone(), reason };
            let text = std::fs::read_to_string(path).map_err(|error| failed(error.to_string()))?;
            self.operators =
                Operators::parse(&text).map_err(|error| ConfigError::OperatorsFile { path: path.clone(), error })?;
        }
        if let Some(path) = &self.shops_file {
            self.shops = Shops::read(path, &self.order_id_prefix)
                .map_err(|error| ConfigError::ShopsFile { path: path.clone(), error })?;
        }
        if let Some(path) = &self.catalog_file {
            self.catalog =
                Catalog::load(path).map_err(|error| ConfigError::CatalogFile { path: path.clone(), error })?;
        }
        if let Some(path) = &self.customer_key_file {
            let previous = match (&self.customer_key_previous_file, self.customer_key_previous_until) {
                (Some(path), Some(until)) => Some((read_key("customer-key-previous-file", path)?, until)),
                _ => None,
            };
            self.customer_keys = Some(CustomerKeyFiles { current: read_key("customer-key-file", path)?, previous });
        }
        Ok(())
    }
}

/// A secret from a file: its first line, without the line's end.
fn read_secret(flag: &'static str, path: &std::path::Path) -> Result<SecretString, ConfigError> {
    let failed = |reason: String| ConfigError::SecretFile { flag, path: path.to_owned(), reason };
    let text = std::fs::read_to_string(path).map_err(|error| failed(error.to_string()))?;
    let secret = text.lines().next().unwrap_or_default().trim();
    if secret.is_empty() {
        return Err(failed("it is empty".to_owned()));
    }
    Ok(SecretString::from(secret.to_owned()))
}

/// The shortest key that signs customers' cookies: what HMAC-SHA256's key
/// derivation takes as 256 bits.
pub const CUSTOMER_KEY_MIN: usize = 32;

/// A signing key from a file: its first line, at least `CUSTOMER_KEY_MIN`
/// bytes, and not one an attacker could guess (`aaaa…`, `1234…`: the
/// operators' tokens' strength check).
fn read_key(flag: &'static str, path: &std::path::Path) -> Result<SecretString, ConfigError> {
    let key = read_secret(flag, path)?;
    let failed = |reason: String| ConfigError::SecretFile { flag, path: path.to_owned(), reason };
    if key.expose_secret().len() < CUSTOMER_KEY_MIN {
        return Err(failed(format!("it is shorter than {CUSTOMER_KEY_MIN} characters (try `openssl rand -hex 32`)")));
    }
    crate::operators::check_strength(key.expose_secret()).map_err(failed)?;
    Ok(key)
}

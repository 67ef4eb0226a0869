//! Keys the server signs with, kept in the database when no key file is given:
//! made once, by whichever server needs one first, and then the same for every
//! server on the database and across restarts.

use rand::RngCore;

use super::Db;

/// The key of customers' cookies.
pub const CUSTOMER_COOKIE_KEY: &str = "customer-cookie";

impl Db {
    /// The key named `name`, made now (32 random bytes from a generator
    /// seeded by the operating system) if there is none yet; a server racing this one to make it
    /// gets the same key as this one.
    pub async fn signing_key(&self, name: &str) -> Result<Vec<u8>, sqlx::Error> {
        let mut fresh = [0u8; 32];
        rand::rng().fill_bytes(&mut fresh);
        sqlx::query("INSERT INTO signing_keys (name, key_hex) VALUES ($1, $2) ON CONFLICT DO NOTHING")
            .bind(name)
            .bind(hex(&fresh))
            .execute(&self.writer)
            .await?;
        let key_hex: String = sqlx::query_scalar("SELECT key_hex FROM signing_keys WHERE name = $1")
            .bind(name)
            .fetch_one(&self.writer)
            .await?;
        Ok(key_hex.into_bytes())
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

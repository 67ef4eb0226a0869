//! The one-time part of a checkout's `next_url`: an HMAC-SHA256 of the
//! checkout's id under a key of the server's, so the server stores nothing to
//! check it, and answers the same link to a shop that creates the same
//! checkout again. It travels in the URL's fragment, which browsers never send
//! to a server: it reaches payonce only in the body of the page's claim, and
//! so no access log, proxy or Referer ever holds it.

use std::time::SystemTime;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use secrecy::ExposeSecret;
use sha2::Sha256;

use crate::config::ServerConfig;
use crate::db::Db;

type HmacSha256 = Hmac<Sha256>;

/// The key's name in the database, when no key file is given.
const LINK_KEY: &str = "checkout-link";
/// What a key from the cookie key files is turned into a link key with: a
/// key used for one thing only.
const FROM_FILE_LABEL: &[u8] = b"payonce checkout links";

/// The keys that sign checkout links: the current one, and the one before it
/// (links it signed still open until the rotation's end, as its cookies do).
#[derive(Clone)]
pub struct CheckoutLinks {
    current: Vec<u8>,
    previous: Option<(Vec<u8>, SystemTime)>,
}

impl std::fmt::Debug for CheckoutLinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckoutLinks").field("previous", &self.previous.is_some()).finish_non_exhaustive()
    }
}

impl CheckoutLinks {
    /// From the cookie key files when given (every server of the shop has
    /// them), else from a key kept in the database.
    pub async fn load(config: &ServerConfig, db: &Db) -> Result<Self, sqlx::Error> {
        Ok(match &config.customer_keys {
            Some(files) => Self {
                current: derive(files.current.expose_secret().as_bytes()),
                previous: files.previous.as_ref().map(|(key, until)| (derive(key.expose_secret().as_bytes()), *until)),
            },
            None => Self { current: db.signing_key(LINK_KEY).await?, previous: None },
        })
    }

    /// A key of its own, for a server that was given none (tests).
    pub fn random() -> Self {
        Self { current: uuid::Uuid::new_v4().as_bytes().repeat(2), previous: None }
    }

    /// The token of checkout `order_id`'s link.
    pub fn token(&self, order_id: &str) -> String {
        URL_SAFE_NO_PAD.encode(sign(&self.current, order_id))
    }

    /// Whether `token` is checkout `order_id`'s, under the current key or the
    /// one before it; compared in constant time.
    pub fn opens(&self, order_id: &str, token: &str) -> bool {
        let Ok(given) = URL_SAFE_NO_PAD.decode(token.as_bytes()) else { return false };
        let verifies = |key: &[u8]| mac(key, order_id).verify_slice(&given).is_ok();
        let previous = self.previous.as_ref().filter(|(_, until)| SystemTime::now() <= *until);
        verifies(&self.current) | previous.is_some_and(|(key, _)| verifies(key))
    }
}

fn derive(key: &[u8]) -> Vec<u8> {
    let mut mac = HmacSha256::new_from_slice(key).unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
    mac.update(FROM_FILE_LABEL);
    mac.finalize().into_bytes().to_vec()
}

fn mac(key: &[u8], order_id: &str) -> HmacSha256 {
    let mut mac = HmacSha256::new_from_slice(key).unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
    mac.update(order_id.as_bytes());
    mac
}

fn sign(key: &[u8], order_id: &str) -> Vec<u8> {
    mac(key, order_id).finalize().into_bytes().to_vec()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_token_opens_its_own_checkout_only() {
        let links = CheckoutLinks::random();
        let token = links.token("ord_books_1");
        assert_eq!(token.len(), 43, "256 bits, base64url");
        assert!(links.opens("ord_books_1", &token));
        assert!(!links.opens("ord_books_2", &token));
        assert!(!links.opens("ord_books_1", ""));
        assert!(!links.opens("ord_books_1", &token[..42]));
        assert!(!CheckoutLinks::random().opens("ord_books_1", &token), "another server's key");
    }

    #[test]
    fn a_link_signed_before_a_rotation_opens_until_the_rotations_end() {
        let old = CheckoutLinks::random();
        let rotated = |until| CheckoutLinks {
            current: CheckoutLinks::random().current,
            previous: Some((old.current.clone(), until)),
        };
        let during = rotated(SystemTime::now() + Duration::from_secs(3_600));
        assert!(during.opens("ord_1", &old.token("ord_1")));
        assert_ne!(during.token("ord_1"), old.token("ord_1"));
        let after = rotated(SystemTime::now() - Duration::from_secs(1));
        assert!(
            !after.opens("ord_1", &old.token("ord_1")),
            "past its end, a link only the old key signed opens nothing"
        );
        assert!(after.opens("ord_1", &after.token("ord_1")));
    }
}

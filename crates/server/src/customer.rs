//! Customers: a random id in a cookie the server signs (HMAC-SHA256, by
//! `axum-extra`'s signed cookies), set on first contact. Orders are looked up
//! by (customer, order id), so another customer's order is a 404. A cookie the
//! shop's key did not sign (one made up, another customer's id copied in, a
//! signature tampered with) is no customer: the request gets a new one, never
//! anybody's orders.
//!
//! Over https the cookie is `__Host-` prefixed, so a browser takes it only from
//! this host, over https, for the whole site: a sibling subdomain or a
//! plain-http answer cannot plant one. Keys rotate: a cookie signed with the
//! previous key is still its customer's until the rotation's end, and is signed
//! again with the current one; after it, it names nobody.
//!
//! The cookie carries when it was signed (`<id>.<unix seconds>`), and is
//! signed again when its customer comes back a day later or more: a customer
//! the server has not seen for a year is forgotten, whatever a browser keeps.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum_extra::extract::CookieJar;
use axum_extra::extract::cookie::{Cookie, Key, SameSite, SignedCookieJar};
use secrecy::ExposeSecret;
use uuid::Uuid;

use crate::config::ServerConfig;
use crate::db::{CUSTOMER_COOKIE_KEY, Db};
use crate::error::AppError;

const COOKIE_NAME: &str = "payonce_customer";
/// The name over https: the browser keeps such a cookie to this host and https.
const SECURE_COOKIE_NAME: &str = "__Host-payonce_customer";

/// The customer making the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Customer(pub String);

/// The request came without a cookie the shop signed: its customer was made
/// for it (`rate_limits::limit_new_customers` counts these per address).
#[derive(Debug, Clone, Copy)]
pub struct NewCustomer;

/// A customer the server has not seen for this long is forgotten.
const FORGOTTEN_AFTER_SECS: u64 = 365 * 24 * 60 * 60;
/// A cookie signed longer ago than this is signed again when its customer
/// comes back, so the year counts from their last visit (to within a day).
const SIGNED_AGAIN_AFTER_SECS: u64 = 24 * 60 * 60;

/// How customers' cookies are named, signed and verified: an empty signed
/// jar per key, made once, to verify a request's cookie and sign a new one.
#[derive(Clone)]
pub struct CustomerCookies {
    secure: bool,
    current: SignedCookieJar,
    /// The previous key's jar, and until when (unix seconds) its cookies count.
    previous: Option<(SignedCookieJar, u64)>,
}

impl std::fmt::Debug for CustomerCookies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CustomerCookies")
            .field("secure", &self.secure)
            .field("previous_until", &self.previous.as_ref().map(|(_, until)| until))
            .finish_non_exhaustive()
    }
}

/// Whether a customer's cookie is signed again on this answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SignAgain {
    No,
    /// Signed with the previous key, or a day ago or more (or before cookies
    /// carried their time).
    Yes,
}

impl CustomerCookies {
    /// The keys of the key files, or the key kept in the database when there
    /// are none; `secure` when the shop is served over https.
    pub async fn load(config: &ServerConfig, db: &Db) -> Result<Self, sqlx::Error> {
        let secure = config.served_over_https();
        Ok(match &config.customer_keys {
            Some(files) => Self::new(
                secure,
                files.current.expose_secret().as_bytes(),
                files.previous.as_ref().map(|(key, until)| (key.expose_secret().as_bytes(), unix_secs(*until))),
            ),
            None => Self::new(secure, &db.signing_key(CUSTOMER_COOKIE_KEY).await?, None),
        })
    }

    /// Cookies signed with `current` (at least 32 bytes), and also accepted
    /// when signed with `previous` until its time (unix seconds).
    pub fn new(secure: bool, current: &[u8], previous: Option<(&[u8], u64)>) -> Self {
        let jar = |key: &[u8]| SignedCookieJar::new(Key::derive_from(key));
        Self { secure, current: jar(current), previous: previous.map(|(key, until)| (jar(key), until)) }
    }

    fn name(&self) -> &'static str {
        if self.secure { SECURE_COOKIE_NAME } else { COOKIE_NAME }
    }

    /// The customer whose cookie the request carries at `now` (unix seconds),
    /// if a key of ours signed it, its previous key is not past its time, and
    /// it was signed within the last year.
    fn customer_in(&self, jar: &CookieJar, now: u64) -> Option<(String, SignAgain)> {
        let cookie = jar.get(self.name())?.clone().into_owned();
        let previous = self.previous.as_ref().filter(|(_, until)| now <= *until).map(|(jar, _)| jar);
        let jars = [(Some(&self.current), SignAgain::No), (previous, SignAgain::Yes)];
        jars.into_iter().find_map(|(jar, by_key)| {
            let verified = jar?.verify(cookie.clone())?;
            let (id, signed_at) = match verified.value().split_once('.') {
                Some((id, signed_at)) => (id, Some(signed_at.parse::<u64>().ok()?)),
                // Signed before cookies carried their time: taken once, and signed again with it.
                None => (verified.value(), None),
            };
            let id = Uuid::parse_str(id).ok()?;
            let age = signed_at.map(|signed_at| now.saturating_sub(signed_at));
            if age.is_some_and(|age| age > FORGOTTEN_AFTER_SECS) {
                return None;
            }
            let stale = age.is_none_or(|age| age >= SIGNED_AGAIN_AFTER_SECS);
            Some((id.to_string(), if stale { SignAgain::Yes } else { by_key }))
        })
    }

    /// The cookie that names `id`, signed with the current key at `now`.
    fn issue(&self, id: &str, now: u64) -> SignedCookieJar {
        let cookie = Cookie::build((self.name(), format!("{id}.{now}")))
            .path("/")
            .http_only(true)
            .same_site(SameSite::Lax)
            .secure(self.secure)
            .max_age(time::Duration::days(365))
            .build();
        self.current.clone().add(cookie)
    }
}

/// Makes sure every API request has a customer: the one its signed cookie
/// names, or a new one with a cookie of its own.
pub async fn identify(cookies: Arc<CustomerCookies>, jar: CookieJar, mut request: Request, next: Next) -> Response {
    let now = unix_secs(SystemTime::now());
    let (id, sign_again) = match cookies.customer_in(&jar, now) {
        Some(known) => known,
        None => {
            request.extensions_mut().insert(NewCustomer);
            (Uuid::new_v4().to_string(), SignAgain::Yes)
        }
    };
    request.extensions_mut().insert(Customer(id.clone()));
    let response = next.run(request).await;
    if sign_again == SignAgain::No {
        return response;
    }
    (cookies.issue(&id, now), response).into_response()
}

fn unix_secs(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs())
}

impl<S: Send + Sync> FromRequestParts<S> for Customer {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Customer>()
            .cloned()
            .ok_or_else(|| AppError::Internal("the customer middleware did not run".to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue, header};

    use super::*;

    const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";
    const OLD_KEY: &[u8] = b"fedcba9876543210fedcba9876543210";

    fn jar(cookie: &str) -> CookieJar {
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, HeaderValue::from_str(cookie).unwrap());
        CookieJar::from_headers(&headers)
    }

    /// The `name=value` a browser sends back for the cookie `issued`.
    fn sent_back(issued: SignedCookieJar) -> String {
        let response = issued.into_response();
        let set_cookie = response.headers().get(header::SET_COOKIE).unwrap().to_str().unwrap();
        set_cookie.split(';').next().unwrap().to_owned()
    }

    const NOW: u64 = 1_800_000_000;
    const DAY: u64 = 24 * 60 * 60;

    #[test]
    fn a_cookie_the_shop_signed_names_its_customer_and_nothing_else_does() {
        let cookies = CustomerCookies::new(false, KEY, None);
        let id = Uuid::new_v4().to_string();
        let signed = sent_back(cookies.issue(&id, NOW));
        assert_eq!(cookies.customer_in(&jar(&signed), NOW), Some((id.clone(), SignAgain::No)));

        assert_eq!(cookies.customer_in(&jar(&format!("payonce_customer={id}")), NOW), None, "an id alone, unsigned");
        let tampered = signed.replace(&id, &Uuid::new_v4().to_string());
        assert_eq!(cookies.customer_in(&jar(&tampered), NOW), None, "another id under this signature");
        let other_shop = sent_back(CustomerCookies::new(false, OLD_KEY, None).issue(&id, NOW));
        assert_eq!(cookies.customer_in(&jar(&other_shop), NOW), None, "signed with a key not ours");
    }

    #[test]
    fn a_cookie_signed_with_the_previous_key_is_its_customers_and_is_signed_again_until_the_rotations_end() {
        let before = CustomerCookies::new(false, OLD_KEY, None);
        let until = NOW + 30 * DAY;
        let after = CustomerCookies::new(false, KEY, Some((OLD_KEY, until)));
        let id = Uuid::new_v4().to_string();
        let old_cookie = sent_back(before.issue(&id, NOW));
        assert_eq!(after.customer_in(&jar(&old_cookie), NOW), Some((id.clone(), SignAgain::Yes)));
        assert_eq!(after.customer_in(&jar(&old_cookie), until), Some((id.clone(), SignAgain::Yes)), "to its very end");
        let new_cookie = sent_back(after.issue(&id, NOW));
        assert_eq!(after.customer_in(&jar(&new_cookie), NOW), Some((id.clone(), SignAgain::No)));
        // Past it, a cookie only the previous key signed (a leaked key's forgery
        // too) names nobody, and nothing signs it again.
        assert_eq!(after.customer_in(&jar(&old_cookie), until + 1), None);
        let signed_at_the_end = sent_back(after.issue(&id, until));
        assert_eq!(after.customer_in(&jar(&signed_at_the_end), until + 1), Some((id.clone(), SignAgain::No)));
        assert_eq!(CustomerCookies::new(false, KEY, None).customer_in(&jar(&old_cookie), NOW), None, "once dropped");
    }

    #[test]
    fn a_customer_not_seen_for_a_year_is_forgotten_and_one_who_comes_back_is_signed_again_daily() {
        let cookies = CustomerCookies::new(false, KEY, None);
        let id = Uuid::new_v4().to_string();
        let cookie = sent_back(cookies.issue(&id, NOW));
        assert_eq!(cookies.customer_in(&jar(&cookie), NOW + DAY - 1), Some((id.clone(), SignAgain::No)));
        assert_eq!(cookies.customer_in(&jar(&cookie), NOW + DAY), Some((id.clone(), SignAgain::Yes)), "a day on");
        assert_eq!(cookies.customer_in(&jar(&cookie), NOW + 365 * DAY), Some((id.clone(), SignAgain::Yes)));
        assert_eq!(cookies.customer_in(&jar(&cookie), NOW + 365 * DAY + 1), None, "a year unseen: nobody");
        // A cookie from before cookies carried their time is taken, and signed again with it.
        let undated = cookies.current.clone().add(Cookie::new(COOKIE_NAME, id.clone()));
        assert_eq!(cookies.customer_in(&jar(&sent_back(undated)), NOW), Some((id.clone(), SignAgain::Yes)));
        let garbled = cookies.current.clone().add(Cookie::new(COOKIE_NAME, format!("{id}.soon")));
        assert_eq!(cookies.customer_in(&jar(&sent_back(garbled)), NOW), None, "a time that is not one");
    }

    #[test]
    fn over_https_the_cookie_is_host_prefixed_and_secure() {
        let cookies = CustomerCookies::new(true, KEY, None);
        let response = cookies.issue(&Uuid::new_v4().to_string(), NOW).into_response();
        let set_cookie = response.headers().get(header::SET_COOKIE).unwrap().to_str().unwrap();
        assert!(set_cookie.starts_with("__Host-payonce_customer="), "{set_cookie}");
        for part in ["Secure", "HttpOnly", "SameSite=Lax", "Path=/"] {
            assert!(set_cookie.contains(part), "{part}: {set_cookie}");
        }
        assert!(!set_cookie.contains("Domain"), "a __Host- cookie names no domain: {set_cookie}");
        let plain = sent_back(cookies.issue(&Uuid::new_v4().to_string(), NOW)).replacen("__Host-", "", 1);
        assert_eq!(cookies.customer_in(&jar(&plain), NOW), None, "over https only the prefixed cookie counts");
    }
}

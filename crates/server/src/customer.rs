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
//! previous key is still its customer's, and is signed again with the current
//! one.

use std::sync::Arc;

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

/// How customers' cookies are named, signed and verified: an empty signed
/// jar per key, made once, to verify a request's cookie and sign a new one.
#[derive(Clone)]
pub struct CustomerCookies {
    secure: bool,
    current: SignedCookieJar,
    previous: Option<SignedCookieJar>,
}

impl std::fmt::Debug for CustomerCookies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CustomerCookies")
            .field("secure", &self.secure)
            .field("previous", &self.previous.is_some())
            .finish_non_exhaustive()
    }
}

/// Which key signed a customer's cookie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SignedWith {
    Current,
    Previous,
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
                files.previous.as_ref().map(|key| key.expose_secret().as_bytes()),
            ),
            None => Self::new(secure, &db.signing_key(CUSTOMER_COOKIE_KEY).await?, None),
        })
    }

    /// Cookies signed with `current` (at least 32 bytes), and also accepted
    /// when signed with `previous`.
    pub fn new(secure: bool, current: &[u8], previous: Option<&[u8]>) -> Self {
        let jar = |key: &[u8]| SignedCookieJar::new(Key::derive_from(key));
        Self { secure, current: jar(current), previous: previous.map(jar) }
    }

    fn name(&self) -> &'static str {
        if self.secure { SECURE_COOKIE_NAME } else { COOKIE_NAME }
    }

    /// The customer whose cookie the request carries, if a key of ours signed it.
    fn customer_in(&self, jar: &CookieJar) -> Option<(String, SignedWith)> {
        let cookie = jar.get(self.name())?.clone().into_owned();
        let jars = [(Some(&self.current), SignedWith::Current), (self.previous.as_ref(), SignedWith::Previous)];
        jars.into_iter().find_map(|(jar, signed_with)| {
            let verified = jar?.verify(cookie.clone())?;
            let id = Uuid::parse_str(verified.value()).ok()?;
            Some((id.to_string(), signed_with))
        })
    }

    /// The cookie that names `id`, signed with the current key.
    fn issue(&self, id: String) -> SignedCookieJar {
        let cookie = Cookie::build((self.name(), id))
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
    let (id, sign_again) = match cookies.customer_in(&jar) {
        Some((id, SignedWith::Current)) => (id, false),
        Some((id, SignedWith::Previous)) => (id, true),
        None => (Uuid::new_v4().to_string(), true),
    };
    request.extensions_mut().insert(Customer(id.clone()));
    let response = next.run(request).await;
    if !sign_again {
        return response;
    }
    (cookies.issue(id), response).into_response()
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

    #[test]
    fn a_cookie_the_shop_signed_names_its_customer_and_nothing_else_does() {
        let cookies = CustomerCookies::new(false, KEY, None);
        let id = Uuid::new_v4().to_string();
        let signed = sent_back(cookies.issue(id.clone()));
        assert_eq!(cookies.customer_in(&jar(&signed)), Some((id.clone(), SignedWith::Current)));

        assert_eq!(cookies.customer_in(&jar(&format!("payonce_customer={id}"))), None, "an id alone, unsigned");
        let tampered = signed.replace(&id, &Uuid::new_v4().to_string());
        assert_eq!(cookies.customer_in(&jar(&tampered)), None, "another id under this signature");
        let other_shop = sent_back(CustomerCookies::new(false, OLD_KEY, None).issue(id));
        assert_eq!(cookies.customer_in(&jar(&other_shop)), None, "signed with a key not ours");
    }

    #[test]
    fn a_cookie_signed_with_the_previous_key_is_its_customers_and_is_signed_again() {
        let before = CustomerCookies::new(false, OLD_KEY, None);
        let after = CustomerCookies::new(false, KEY, Some(OLD_KEY));
        let id = Uuid::new_v4().to_string();
        let old_cookie = sent_back(before.issue(id.clone()));
        assert_eq!(after.customer_in(&jar(&old_cookie)), Some((id.clone(), SignedWith::Previous)));
        let new_cookie = sent_back(after.issue(id.clone()));
        assert_eq!(after.customer_in(&jar(&new_cookie)), Some((id.clone(), SignedWith::Current)));
        assert_eq!(CustomerCookies::new(false, KEY, None).customer_in(&jar(&old_cookie)), None, "once dropped");
    }

    #[test]
    fn over_https_the_cookie_is_host_prefixed_and_secure() {
        let cookies = CustomerCookies::new(true, KEY, None);
        let response = cookies.issue(Uuid::new_v4().to_string()).into_response();
        let set_cookie = response.headers().get(header::SET_COOKIE).unwrap().to_str().unwrap();
        assert!(set_cookie.starts_with("__Host-payonce_customer="), "{set_cookie}");
        for part in ["Secure", "HttpOnly", "SameSite=Lax", "Path=/"] {
            assert!(set_cookie.contains(part), "{part}: {set_cookie}");
        }
        assert!(!set_cookie.contains("Domain"), "a __Host- cookie names no domain: {set_cookie}");
        let plain = sent_back(cookies.issue(Uuid::new_v4().to_string())).replacen("__Host-", "", 1);
        assert_eq!(cookies.customer_in(&jar(&plain)), None, "over https only the prefixed cookie counts");
    }
}

//! Anonymous customers: a random id in an HttpOnly cookie, set on first contact.
//! Orders are looked up by (customer, order id), so another customer's order is a 404.

use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum_extra::extract::CookieJar;
use axum_extra::extract::cookie::{Cookie, SameSite};
use uuid::Uuid;

use crate::error::AppError;

const COOKIE_NAME: &str = "payonce_customer";

/// The customer making the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Customer(pub String);

/// Makes sure every API request has a customer, issuing a cookie when it has none.
/// `secure` marks the cookie HTTPS-only when the shop is served over HTTPS.
pub async fn identify(secure: bool, jar: CookieJar, mut request: Request, next: Next) -> Response {
    let existing =
        jar.get(COOKIE_NAME).and_then(|cookie| Uuid::parse_str(cookie.value()).ok()).map(|id| id.to_string());
    let (id, issued) = match existing {
        Some(id) => (id, false),
        None => (Uuid::new_v4().to_string(), true),
    };
    request.extensions_mut().insert(Customer(id.clone()));
    let response = next.run(request).await;
    if !issued {
        return response;
    }
    let cookie = Cookie::build((COOKIE_NAME, id))
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(secure)
        .max_age(time::Duration::days(365))
        .build();
    (CookieJar::new().add(cookie), response).into_response()
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

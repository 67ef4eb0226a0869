//! Who is asking, on the admin listener: the host name the request was sent
//! to (only this machine's names, IP addresses, and `--admin-hosts`: a page
//! that rebinds its own DNS name to the listener is refused), then the
//! operator whose bearer token it carries, and whether their role allows the
//! method. Wrong tokens are logged, counted, and limited per client address;
//! a request without a token is logged and refused, never counted.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::AppError;
use crate::operators::Role;
use crate::state::AppState;

/// The operator a request signed in as: the name the audit log records.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub name: String,
    pub role: Role,
}

/// Refuses a request for a host the admin listener does not answer to.
pub async fn check_host(State(state): State<AppState>, request: Request, next: Next) -> Result<Response, AppError> {
    let host = request
        .uri()
        .authority()
        .map(|authority| authority.host().to_owned())
        .or_else(|| request.headers().get(header::HOST).and_then(|value| value.to_str().ok()).map(host_of))
        .unwrap_or_default();
    if !answers_to(&host, &state.config.admin_hosts) {
        tracing::warn!(host, peer = %peer(&request), "admin listener: a request for a host it does not answer to");
        return Err(AppError::UnknownAdminHost { host });
    }
    Ok(next.run(request).await)
}

/// The host of a `Host` header: without its port; an IPv6 address keeps its brackets.
fn host_of(value: &str) -> String {
    match value.parse::<axum::http::uri::Authority>() {
        Ok(authority) => authority.host().to_owned(),
        Err(_) => value.to_owned(),
    }
}

/// An IP address, `localhost`, or one of `allowed` (any case).
fn answers_to(host: &str, allowed: &[String]) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.parse::<IpAddr>().is_ok()
        || host.eq_ignore_ascii_case("localhost")
        || allowed.iter().any(|name| name.eq_ignore_ascii_case(host))
}

/// Lets a request through only with an operator's token, and a POST only for
/// an operator who may act; the request then carries [`SignedIn`].
pub async fn require_operator(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Result<Response, Response> {
    if state.operators.is_empty() {
        return Err(AppError::OperatorApiOff.into_response());
    }
    // An IPv6 guesser is its whole network, as a customer is.
    let peer = crate::client_address::network_of(peer(&request), state.config.ipv6_client_prefix);
    // Past its failures an address is refused before its token is looked at:
    // a guesser learns nothing, however many it sends.
    if let Some(wait) = state.sign_in_failures.refused(peer) {
        crate::metrics::operator_sign_in_failed("throttled");
        return Err(too_many(wait));
    }
    let given = bearer(&request);
    let Some(operator) = state.operators.signed_in(given) else {
        let token_sent = !given.is_empty();
        tracing::warn!(%peer, token_sent, path = request.uri().path(), "operators' API: a wrong or missing token");
        // Only a wrong token counts against the address. A request without one
        // guesses nothing, and any web page an operator visits can make their
        // browser send it (a no-cors fetch, which carries no Authorization):
        // counted, it would lock every operator on that host out.
        if token_sent && let Some(wait) = state.sign_in_failures.failed(peer) {
            crate::metrics::operator_sign_in_failed("throttled");
            return Err(too_many(wait));
        }
        crate::metrics::operator_sign_in_failed("unauthorized");
        return Err(AppError::Unauthorized.into_response());
    };
    let reads = matches!(*request.method(), Method::GET | Method::HEAD);
    if !reads && !operator.role.may_act() {
        tracing::warn!(
            operator = operator.name,
            method = %request.method(),
            path = request.uri().path(),
            "operators' API: refused to a read-only operator"
        );
        return Err(AppError::OperatorNotAllowed { operator: operator.name.clone() }.into_response());
    }
    let signed_in = SignedIn { name: operator.name.clone(), role: operator.role };
    request.extensions_mut().insert(signed_in);
    Ok(next.run(request).await)
}

/// What says how the shop runs (its metrics, the operators' API's description)
/// is open on the admin listener while the operators' API is off, and needs an
/// operator's token (any role) once there is one.
pub async fn require_operator_when_set(state: State<AppState>, request: Request, next: Next) -> Response {
    if state.operators.is_empty() {
        return next.run(request).await;
    }
    require_operator(state, request, next).await.unwrap_or_else(|refused| refused)
}

/// The TCP peer (the admin listener believes no proxy); one unspecified
/// address for requests served without one (in-process tests).
fn peer(request: &Request) -> IpAddr {
    request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |ConnectInfo(address)| address.ip())
}

/// The token of `Authorization: Bearer <token>`, or nothing.
pub(super) fn bearer(request: &Request) -> &str {
    request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default()
}

/// 429 `RATE_LIMITED` with `Retry-After` in whole seconds, at least one.
pub(super) fn too_many(wait: Duration) -> Response {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let seconds = seconds.max(1);
    let mut response = AppError::RateLimited { retry_after_s: seconds }.into_response();
    response.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(seconds));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listener_answers_to_addresses_localhost_and_the_names_it_is_given() {
        let allowed = ["ops.shop.internal".to_owned()];
        for host in
            ["127.0.0.1", "10.0.0.5", "[::1]", "localhost", "LocalHost", "ops.shop.internal", "OPS.shop.internal"]
        {
            assert!(answers_to(host, &allowed), "{host}");
        }
        for host in ["", "attacker.example", "localhost.attacker.example", "ops.shop.internal.evil", "127.0.0.1.nip.io"]
        {
            assert!(!answers_to(host, &allowed), "{host}");
        }
        assert_eq!(host_of("127.0.0.1:3001"), "127.0.0.1");
        assert_eq!(host_of("[::1]:3001"), "[::1]");
        assert_eq!(host_of("localhost"), "localhost");
    }
}

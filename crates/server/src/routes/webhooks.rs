use std::num::NonZeroU32;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use payonce_api::ApiErrorBody;
use payonce_rules::toss::webhook::WebhookEvent;
use secrecy::ExposeSecret;
use serde::Serialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::config::WebhookDoor;
use crate::error::{AppError, Json};
use crate::payment::webhook::{self, Hinted};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(webhooks_toss))
}

/// The same events at their secret path (`--pg-webhook-secret-file`), which
/// the API's description does not publish.
pub fn secret_route() -> axum::routing::MethodRouter<AppState> {
    axum::routing::post(webhooks_toss)
}

/// The webhook door: lets the PG's events through at their path, and answers
/// everyone else's sends 404 under a small limit of their own, so that no
/// guess spends the limit the PG's events go under.
pub struct Door {
    entry: Entry,
    strangers: DefaultDirectRateLimiter,
}

/// Which path the PG's events come to.
enum Entry {
    /// The bare path.
    Open,
    /// The secret path, known by its SHA-256 (compared in constant time).
    Secret([u8; 32]),
    /// None.
    Closed,
}

/// What strangers may send a minute, all together, before they are answered 429.
const STRANGERS_PER_MINUTE: u32 = 60;

impl Door {
    pub fn new(door: &WebhookDoor) -> Self {
        let quota = Quota::per_minute(NonZeroU32::new(STRANGERS_PER_MINUTE).expect("not zero"));
        let entry = match door {
            WebhookDoor::Open => Entry::Open,
            WebhookDoor::Secret(secret) => Entry::Secret(Sha256::digest(secret.expose_secret().as_bytes()).into()),
            WebhookDoor::Closed => Entry::Closed,
        };
        Self { entry, strangers: RateLimiter::direct(quota) }
    }

    /// Whether a request to `path` (`/webhooks/toss` or `/webhooks/toss/<secret>`) is the PG's.
    fn lets_in(&self, path: &str) -> bool {
        let Some(rest) = path.strip_prefix(WEBHOOK_PATH) else {
            return false;
        };
        match (&self.entry, rest.strip_prefix('/')) {
            (Entry::Open, None) => rest.is_empty(),
            (Entry::Secret(secret), Some(given)) => {
                let given: [u8; 32] = Sha256::digest(given.as_bytes()).into();
                bool::from(given.ct_eq(secret))
            }
            _ => false,
        }
    }
}

const WEBHOOK_PATH: &str = "/webhooks/toss";

pub async fn door(State(door): State<Arc<Door>>, request: Request, next: Next) -> Response {
    if door.lets_in(request.uri().path()) {
        return next.run(request).await;
    }
    match door.strangers.check() {
        Ok(()) => AppError::NotFound.into_response(),
        Err(_) => AppError::RateLimited { retry_after_s: 60 }.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use secrecy::SecretString;

    use super::*;

    #[test]
    fn the_door_lets_in_its_own_path_only() {
        let secret = "0123456789abcdef0123456789abcdef";
        let door = Door::new(&WebhookDoor::Secret(SecretString::from(secret.to_owned())));
        assert!(door.lets_in(&format!("/webhooks/toss/{secret}")));
        for path in [
            "/webhooks/toss".to_owned(),
            "/webhooks/toss/".to_owned(),
            format!("/webhooks/toss/{secret}x"),
            format!("/webhooks/toss/{}", &secret[1..]),
            format!("/webhooks/toss{secret}"),
            format!("/webhooks/toss/{secret}/"),
        ] {
            assert!(!door.lets_in(&path), "{path}");
        }
        let open = Door::new(&WebhookDoor::Open);
        assert!(open.lets_in("/webhooks/toss") && !open.lets_in(&format!("/webhooks/toss/{secret}")));
        let closed = Door::new(&WebhookDoor::Closed);
        assert!(!closed.lets_in("/webhooks/toss") && !closed.lets_in("/webhooks/toss/anything"));
    }
}

/// The answer to a webhook: 200 as soon as it is read, whatever it names.
#[derive(Debug, Serialize, ToSchema)]
struct Received {
    /// Whether it brought a lookup of an open payment forward.
    looking_up: bool,
}

/// Toss's webhook events (register this URL in Toss's developer centre; with
/// `--pg-webhook-secret-file`, at `/api/webhooks/toss/<secret>` only). An
/// event is a hint: a payment it names that is still being settled is looked
/// up at once; nothing in the event is believed. Answered 200 fast, so Toss
/// does not send it again; the same event again changes nothing.
#[utoipa::path(
    post,
    path = "/webhooks/toss",
    tag = "payments",
    request_body(content = Object, description = "`{eventType, createdAt, data}` as Toss sends it"),
    responses(
        (status = 200, description = "Read; `looking_up` says whether an open payment is being looked up now", body = Received),
        (status = 400, description = "INVALID_REQUEST: not JSON, or no eventType", body = ApiErrorBody),
        (status = 429, description = "RATE_LIMITED", body = ApiErrorBody),
    )
)]
async fn webhooks_toss(
    State(state): State<AppState>,
    Json(event): Json<WebhookEvent>,
) -> Result<axum::Json<Received>, AppError> {
    let hinted = webhook::received(&state, &event).await?;
    Ok(axum::Json(Received { looking_up: hinted == Hinted::LookingUp }))
}

use axum::extract::State;
use payonce_api::ApiErrorBody;
use payonce_rules::toss::webhook::WebhookEvent;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{AppError, Json};
use crate::payment::webhook::{self, Hinted};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(webhooks_toss))
}

/// The answer to a webhook: 200 as soon as it is read, whatever it names.
#[derive(Debug, Serialize, ToSchema)]
struct Received {
    /// Whether it brought a lookup of an open payment forward.
    looking_up: bool,
}

/// Toss's webhook events (register this URL in Toss's developer centre). An
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

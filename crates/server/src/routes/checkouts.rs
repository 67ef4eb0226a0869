//! A shop's checkout as its customer's page sees it: opening the link (the
//! token from `next_url`'s fragment, in the body), and reading it again.

use axum::extract::State;
use payonce_api::{ApiErrorBody, ClaimRequest, CustomerCheckout};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::order_id::OrderIdPath;
use crate::checkouts;
use crate::customer::Customer;
use crate::error::{AppError, Json};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(checkout_claim)).routes(routes!(checkout_show))
}

/// Opens the checkout's link: the first browser becomes its customer, and may
/// come back; any other is refused and sees nothing of it.
#[utoipa::path(
    post,
    path = "/checkouts/{order_id}/claim",
    tag = "checkouts",
    request_body = ClaimRequest,
    params(("order_id" = String, Path, description = "The checkout's id")),
    responses(
        (status = 200, body = CustomerCheckout),
        (status = 404, description = "ORDER_NOT_FOUND: no such checkout, or not its token", body = ApiErrorBody),
        (status = 409, description = "CHECKOUT_LINK_USED: another browser opened it first", body = ApiErrorBody),
    )
)]
async fn checkout_claim(
    State(state): State<AppState>,
    customer: Customer,
    OrderIdPath(order_id): OrderIdPath,
    Json(request): Json<ClaimRequest>,
) -> Result<Json<CustomerCheckout>, AppError> {
    Ok(Json(checkouts::claim(&state, &state.checkout_links, &customer, &order_id, &request.token).await?))
}

/// The customer's own checkout.
#[utoipa::path(
    get,
    path = "/checkouts/{order_id}",
    tag = "checkouts",
    params(("order_id" = String, Path, description = "The checkout's id")),
    responses((status = 200, body = CustomerCheckout), (status = 404, body = ApiErrorBody))
)]
async fn checkout_show(
    State(state): State<AppState>,
    customer: Customer,
    OrderIdPath(order_id): OrderIdPath,
) -> Result<Json<CustomerCheckout>, AppError> {
    Ok(Json(checkouts::show_to_customer(&state, &customer, &order_id).await?))
}

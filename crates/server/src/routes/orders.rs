use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use payonce_api::{CreateOrderRequest, CreatedOrder, Order};

use crate::customer::Customer;
use crate::error::{AppError, Json};
use crate::orders;
use crate::payment::abandon::abandon;
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/orders", get(orders_list).post(orders_create))
        .route("/orders/recent", get(orders_recent))
        .route("/orders/{order_id}", get(orders_show))
        .route("/orders/{order_id}/abandon", post(orders_abandon))
}

async fn orders_create(
    State(state): State<AppState>,
    customer: Customer,
    Json(request): Json<CreateOrderRequest>,
) -> Result<(StatusCode, Json<CreatedOrder>), AppError> {
    let created = orders::create(&state, &customer, &request).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

async fn orders_list(State(state): State<AppState>, customer: Customer) -> Result<Json<Vec<Order>>, AppError> {
    Ok(Json(orders::list(&state, &customer).await?))
}

async fn orders_recent(State(state): State<AppState>, customer: Customer) -> Result<Json<Option<Order>>, AppError> {
    Ok(Json(orders::recent_payment(&state, &customer).await?))
}

async fn orders_show(
    State(state): State<AppState>,
    customer: Customer,
    Path(order_id): Path<String>,
) -> Result<Json<Order>, AppError> {
    Ok(Json(orders::show(&state, &customer, &order_id).await?))
}

/// The page's checking window ended without the server having the confirm:
/// close the order if it still has none, and answer with the order as stored.
async fn orders_abandon(
    State(state): State<AppState>,
    customer: Customer,
    Path(order_id): Path<String>,
) -> Result<Json<Order>, AppError> {
    Ok(Json(abandon(&state, &customer, &order_id).await?))
}

use axum::extract::State;
use payonce_api::{Pg, ShopConfig};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::Json;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(config_show))
}

/// The page's timings, so it waits at least as long as this server can take,
/// the PG's SDK the page opens the payment window with, whether the cart
/// may offer KakaoPay, and whether payments here are tests in public.
#[utoipa::path(get, path = "/config", tag = "shop", responses((status = 200, body = ShopConfig)))]
async fn config_show(State(state): State<AppState>) -> Json<ShopConfig> {
    Json(ShopConfig {
        timings: state.config.page_config(),
        payment_sdk: state.config.payment_sdk(),
        kakaopay: state.pgs.takes(Pg::KakaoPay),
        test_payments: state.config.test_payments_in_public(),
    })
}

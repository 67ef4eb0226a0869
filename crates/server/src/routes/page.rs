//! The built page: static files with a fallback to `index.html` for client-side
//! routes, and `cart.html` for `/`: the cart alone, so a first visit downloads
//! the small bundle (a build without it serves the whole app there too).
//! Trunk names assets with a content hash, so those can be cached forever; the
//! HTML must be revalidated so a deploy is picked up at once.

use std::path::{Path, PathBuf};

use axum::Router;
use axum::extract::Request;
use axum::http::HeaderValue;
use axum::http::header::CACHE_CONTROL;
use axum::middleware::{self, Next};
use axum::response::Response;
use tower_http::services::{ServeDir, ServeFile};

use crate::state::AppState;

pub fn router(dir: &Path) -> Router<AppState> {
    let files = ServeDir::new(dir).precompressed_br().precompressed_gzip().fallback(html(dir.join("index.html")));
    let cart = dir.join("cart.html");
    let router = if cart.is_file() { Router::new().route_service("/", html(cart)) } else { Router::new() };
    router.fallback_service(files).layer(middleware::from_fn(cache_control))
}

/// `scripts/build.sh` writes .br and .gz beside each file at the highest levels.
fn html(path: PathBuf) -> ServeFile {
    ServeFile::new(path).precompressed_br().precompressed_gzip()
}

async fn cache_control(request: Request, next: Next) -> Response {
    let immutable = is_hashed_asset(request.uri().path());
    let mut response = next.run(request).await;
    let policy = if immutable { "public, max-age=31536000, immutable" } else { "no-cache" };
    response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static(policy));
    response
}

/// Trunk's output names look like `payonce-page-5f3a9c0e1b2d4f67_bg.wasm`.
fn is_hashed_asset(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or_default();
    let Some((stem, _extension)) = name.rsplit_once('.') else {
        return false;
    };
    let stem = stem.strip_suffix("_bg").unwrap_or(stem);
    stem.rsplit_once('-').is_some_and(|(_, hash)| hash.len() == 16 && hash.bytes().all(|byte| byte.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::is_hashed_asset;

    #[test]
    fn hashed_assets_are_told_from_routes_and_index() {
        assert!(is_hashed_asset("/payonce-page-5f3a9c0e1b2d4f67_bg.wasm"));
        assert!(is_hashed_asset("/payonce-page-5f3a9c0e1b2d4f67.js"));
        assert!(is_hashed_asset("/style-0123456789abcdef.css"));
        assert!(!is_hashed_asset("/index.html"));
        assert!(!is_hashed_asset("/"));
        assert!(!is_hashed_asset("/orders/ord_3f0b1c9e6a0e4a8e"));
        assert!(!is_hashed_asset("/orders/ord-3f0b1c9e6a0e4a8e"));
        assert!(!is_hashed_asset("/favicon.ico"));
        assert!(!is_hashed_asset("/pay/success"));
    }
}

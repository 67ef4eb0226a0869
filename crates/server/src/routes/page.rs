//! The built page: static files with a fallback to `index.html` for client-side
//! routes; `cart.html` for `/`, the cart alone, and `checkout.html` for
//! `/checkout/{id}`, a shop's checkout alone, so that either first visit
//! downloads a small bundle (a build without them serves the whole app there too).
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
    pages(dir)
}

fn pages<S: Clone + Send + Sync + 'static>(dir: &Path) -> Router<S> {
    let files = ServeDir::new(dir).precompressed_br().precompressed_gzip().fallback(html(dir.join("index.html")));
    let mut router = Router::new();
    for (path, page) in [("/", "cart.html"), ("/checkout/{id}", "checkout.html")] {
        let page = dir.join(page);
        if page.is_file() {
            router = router.route_service(path, html(page));
        }
    }
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

/// Trunk's output names look like `payonce-page-5f3a9c0e1b2d4f67_bg.wasm`: a
/// 64-bit hash in hex, without its leading zeros (`payonce-page-ad6338ae139fece.js`).
fn is_hashed_asset(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or_default();
    let Some((stem, _extension)) = name.rsplit_once('.') else {
        return false;
    };
    let stem = stem.strip_suffix("_bg").unwrap_or(stem);
    stem.rsplit_once('-')
        .is_some_and(|(_, hash)| (8..=16).contains(&hash.len()) && hash.bytes().all(|byte| byte.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use axum::body::{Body, to_bytes};
    use axum::http::Request;
    use tower::ServiceExt;

    use super::*;

    /// The body `router` answers a GET of `path` with.
    async fn page_at(router: &Router, path: &str) -> String {
        let response = router.clone().oneshot(Request::get(path).body(Body::empty()).unwrap()).await.unwrap();
        String::from_utf8(to_bytes(response.into_body(), 1 << 20).await.unwrap().to_vec()).unwrap()
    }

    #[tokio::test]
    async fn the_cart_and_a_checkout_get_their_own_pages_and_every_other_route_the_whole_app() {
        let dir = tempfile::tempdir().unwrap();
        for page in ["index.html", "cart.html", "checkout.html"] {
            std::fs::write(dir.path().join(page), page).unwrap();
        }
        let router = pages(dir.path());
        assert_eq!(page_at(&router, "/").await, "cart.html");
        assert_eq!(page_at(&router, "/checkout/ord_books_0193f1c2").await, "checkout.html");
        for path in ["/orders", "/orders/ord_1", "/pay/success?orderId=ord_1", "/checkout", "/checkout/a/b", "/nowhere"]
        {
            assert_eq!(page_at(&router, path).await, "index.html", "{path}");
        }
    }

    #[tokio::test]
    async fn a_build_without_the_small_pages_serves_the_whole_app_for_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.html"), "index.html").unwrap();
        let router = pages(dir.path());
        for path in ["/", "/checkout/ord_books_0193f1c2"] {
            assert_eq!(page_at(&router, path).await, "index.html", "{path}");
        }
    }

    #[test]
    fn hashed_assets_are_told_from_routes_and_index() {
        assert!(is_hashed_asset("/payonce-page-5f3a9c0e1b2d4f67_bg.wasm"));
        assert!(is_hashed_asset("/payonce-page-5f3a9c0e1b2d4f67.js"));
        assert!(is_hashed_asset("/style-0123456789abcdef.css"));
        assert!(is_hashed_asset("/payonce-page-ad6338ae139fece.js"), "a hash with a leading zero");
        assert!(!is_hashed_asset("/index.html"));
        assert!(!is_hashed_asset("/"));
        assert!(!is_hashed_asset("/orders/ord_3f0b1c9e6a0e4a8e"));
        assert!(!is_hashed_asset("/orders/ord-3f0b1c9e6a0e4a8e"));
        assert!(!is_hashed_asset("/favicon.ico"));
        assert!(!is_hashed_asset("/pay/success"));
    }
}

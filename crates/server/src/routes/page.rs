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
use axum::response::{Html, Response};
use axum::routing::{MethodRouter, get};
use tower_http::services::{ServeDir, ServeFile};

use crate::state::AppState;

/// The page's files; with `test_payments`, each HTML page says at its top
/// that payments here are tests (`--allow-test-keys` at an https address).
pub fn router(dir: &Path, test_payments: bool) -> Router<AppState> {
    if test_payments { pages_of_a_test_shop(dir) } else { pages(dir) }
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

/// What a shop taking test payments in public shows first on every page, in
/// both languages (before the app, so even a page that fails to run says it).
const TEST_PAYMENTS_NOTE: &str = "<aside class=\"test-payments\" data-testid=\"test-payments\">\
    <p lang=\"en\">Test payments: no money moves at this shop.</p>\
    <p lang=\"ko\">테스트 결제: 이 가게에서는 돈이 오가지 않습니다.</p></aside>";

/// The same files, each HTML page read once and served with the note after
/// its `<body>` (so not precompressed: about a kilobyte each).
fn pages_of_a_test_shop<S: Clone + Send + Sync + 'static>(dir: &Path) -> Router<S> {
    let marked = |page: &str| {
        let html = std::fs::read_to_string(dir.join(page)).ok()?;
        let body = html.find("<body")?;
        let end = body + html[body..].find('>')? + 1;
        Some(Html(format!("{}{TEST_PAYMENTS_NOTE}{}", &html[..end], &html[end..])))
    };
    let Some(index) = marked("index.html") else {
        return pages(dir);
    };
    let mut router = Router::new().route("/index.html", serve(index.clone()));
    for (paths, page) in [(["/", "/cart.html"], "cart.html"), (["/checkout/{id}", "/checkout.html"], "checkout.html")] {
        let page = marked(page).unwrap_or_else(|| index.clone());
        for path in paths {
            router = router.route(path, serve(page.clone()));
        }
    }
    let files = ServeDir::new(dir).precompressed_br().precompressed_gzip().fallback(serve::<()>(index));
    router.fallback_service(files).layer(middleware::from_fn(cache_control))
}

/// Answers a GET with `page`.
fn serve<S: Clone + Send + Sync + 'static>(page: Html<String>) -> MethodRouter<S> {
    get(move || std::future::ready(page.clone()))
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

    #[tokio::test]
    async fn a_shop_taking_test_payments_says_so_on_every_page_and_nowhere_else() {
        let dir = tempfile::tempdir().unwrap();
        for page in ["index.html", "cart.html", "checkout.html"] {
            std::fs::write(dir.path().join(page), format!("<html><body class=\"x\"><p>{page}</p></body></html>"))
                .unwrap();
        }
        std::fs::write(dir.path().join("payonce-page-5f3a9c0e1b2d4f67.js"), "<body>").unwrap();
        let router: Router = pages_of_a_test_shop(dir.path());
        let note = |page: &str| format!("<html><body class=\"x\">{TEST_PAYMENTS_NOTE}<p>{page}</p></body></html>");
        for (path, page) in [
            ("/", "cart.html"),
            ("/cart.html", "cart.html"),
            ("/checkout/ord_books_0193f1c2", "checkout.html"),
            ("/checkout.html", "checkout.html"),
            ("/index.html", "index.html"),
            ("/orders/ord_1", "index.html"),
            ("/pay/success?orderId=ord_1", "index.html"),
        ] {
            assert_eq!(page_at(&router, path).await, note(page), "{path}");
        }
        assert_eq!(page_at(&router, "/payonce-page-5f3a9c0e1b2d4f67.js").await, "<body>", "only pages are marked");
        let usual = pages::<()>(dir.path());
        assert!(!page_at(&usual, "/").await.contains("test-payments"), "a shop taking money says nothing");
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

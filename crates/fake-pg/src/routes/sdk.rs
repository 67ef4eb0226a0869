//! `GET /v2/standard`: the payment SDK a shop's page loads, as it loads
//! Toss's from `https://js.tosspayments.com/v2/standard`. It knows this PG's
//! address and client key, so a wrong key fails in the page, as with Toss.

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::config::WindowMode;
use crate::state::AppState;

/// The script, with its placeholders: the PG's address, its client key, the window mode.
const SDK: &str = include_str!("../sdk.js");

pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/v2/standard", get(sdk_script))
}

async fn sdk_script(State(state): State<AppState>) -> Response {
    let mode = match state.store.config().window_mode {
        WindowMode::Redirect => "redirect",
        WindowMode::Toss => "toss",
    };
    let script = sdk_for(&state.settings.base_url, &state.settings.client_key).replace("__WINDOW_MODE__", mode);
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            // A shop on another origin loads it with a plain <script>; nothing here is secret.
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        script,
    )
        .into_response()
}

fn sdk_for(base_url: &str, client_key: &str) -> String {
    SDK.replace("__PG_URL__", &js_string(base_url)).replace("__CLIENT_KEY__", &js_string(client_key))
}

/// Text safe inside a double-quoted JavaScript string in a script file.
fn js_string(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '\\' | '<' | '>' | '\n' | '\r' | '\u{2028}' | '\u{2029}' => format!("\\u{:04x}", u32::from(c)),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_carries_this_pgs_address_and_key_and_no_placeholder() {
        let script = sdk_for("http://127.0.0.1:9090", "test_ck_x");
        assert!(script.contains(r#"var PG = "http://127.0.0.1:9090";"#));
        assert!(script.contains(r#"var CLIENT_KEY = "test_ck_x";"#));
        assert!(!script.contains("__PG_URL__") && !script.contains("__CLIENT_KEY__"));
    }

    #[test]
    fn quotes_cannot_end_the_string() {
        assert_eq!(js_string(r#"a"b\</script>"#), r"a\u0022b\u005c\u003c/script\u003e");
    }
}

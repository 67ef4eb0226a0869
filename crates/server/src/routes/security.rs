//! Security headers on every public response. The page's Content-Security-Policy
//! lets its own scripts and WebAssembly run (`'wasm-unsafe-eval'`), the PG's
//! SDK from the SDK's origin and what the SDK needs from the origins configured
//! for it (frames, connections, images, style sheets), and the inline scripts
//! of the built HTML by their hashes, computed from the files served, and
//! nothing else inline; nothing may frame the shop.

use std::path::Path;

use axum::http::{HeaderName, HeaderValue, header};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};
use tower_http::set_header::SetResponseHeaderLayer;

use crate::config::SdkOrigins;

/// How long a browser that reached the shop over https keeps to https (two
/// years, the HSTS preload list's floor); subdomains are left to their owners.
const HSTS: &str = "max-age=63072000";

/// What no cache may keep: answers about a customer's orders, and everything
/// the operators' listener says.
pub const NO_STORE: &str = "no-store";

/// Strict-Transport-Security, for a shop served over https only: over plain
/// http (a developer's machine) the header would mean nothing.
pub fn hsts(public_url: &str) -> Option<SetResponseHeaderLayer<HeaderValue>> {
    public_url
        .starts_with("https://")
        .then(|| SetResponseHeaderLayer::overriding(header::STRICT_TRANSPORT_SECURITY, HeaderValue::from_static(HSTS)))
}

/// Headers on every answer of the operators' listener: nothing cached, no
/// referrer sent from the console, nothing sniffed.
pub fn admin_layers() -> [SetResponseHeaderLayer<HeaderValue>; 3] {
    [
        SetResponseHeaderLayer::if_not_present(header::CACHE_CONTROL, HeaderValue::from_static(NO_STORE)),
        SetResponseHeaderLayer::overriding(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
        SetResponseHeaderLayer::overriding(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
    ]
}

/// The HTML files whose inline scripts the policy allows.
const PAGES: [&str; 3] = ["index.html", "cart.html", "checkout.html"];

/// The layers that add the headers, given the built page's folder (if served)
/// and the origins of the PG's SDK.
pub fn layers(static_dir: Option<&Path>, sdk: &SdkOrigins) -> [SetResponseHeaderLayer<HeaderValue>; 4] {
    let hashes = static_dir.map(inline_script_hashes).unwrap_or_default();
    let policy = content_security_policy(sdk, hashes);
    let header = |name: HeaderName, value: &str| {
        SetResponseHeaderLayer::overriding(name, HeaderValue::from_str(value).expect("a valid header value"))
    };
    [
        header(header::CONTENT_SECURITY_POLICY, &policy),
        header(header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        header(header::REFERRER_POLICY, "strict-origin-when-cross-origin"),
        header(header::X_FRAME_OPTIONS, "DENY"),
    ]
}

/// The policy: the shop's own origin for everything, WebAssembly allowed to
/// compile, the SDK's origin for scripts, the PG's window origins for frames
/// (Toss's SDK opens its window in an iframe on a PC; on a phone it navigates,
/// which needs nothing more), the SDK's configured origins for connections,
/// images and style sheets, inline scripts only by hash, nothing framing the
/// shop, no plugins.
pub fn content_security_policy(sdk: &SdkOrigins, script_hashes: Vec<String>) -> String {
    let mut scripts = vec!["'self'".to_owned(), "'wasm-unsafe-eval'".to_owned()];
    scripts.extend(sdk.script.clone());
    scripts.extend(script_hashes.into_iter().map(|hash| format!("'sha256-{hash}'")));
    let frames = if sdk.frames.is_empty() { "'none'".to_owned() } else { sdk.frames.join(" ") };
    let sources = |own: &[&str], sdk: &[String]| {
        own.iter().map(|source| (*source).to_owned()).chain(sdk.iter().cloned()).collect::<Vec<_>>().join(" ")
    };
    format!(
        "default-src 'self'; script-src {}; style-src {}; img-src {}; connect-src {}; \
         frame-src {frames}; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
        scripts.join(" "),
        sources(&["'self'"], &sdk.styles),
        sources(&["'self'", "data:"], &sdk.images),
        sources(&["'self'"], &sdk.connections),
    )
}

/// The base64 SHA-256 of every inline `<script>` in the built HTML pages.
fn inline_script_hashes(dir: &Path) -> Vec<String> {
    let mut hashes = Vec::new();
    for page in PAGES {
        let Ok(html) = std::fs::read_to_string(dir.join(page)) else { continue };
        for script in inline_scripts(&html) {
            let hash = STANDARD.encode(Sha256::digest(script.as_bytes()));
            if !hashes.contains(&hash) {
                hashes.push(hash);
            }
        }
    }
    hashes
}

/// The text of each `<script>` without a `src`, exactly as the browser hashes it.
fn inline_scripts(html: &str) -> Vec<&str> {
    let mut scripts = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<script") {
        let after = &rest[start..];
        let Some(open_end) = after.find('>') else { break };
        let open_tag = &after[..open_end];
        let body_and_rest = &after[open_end + 1..];
        let Some(close) = body_and_rest.find("</script>") else { break };
        if !open_tag.contains("src=") {
            scripts.push(&body_and_rest[..close]);
        }
        rest = &body_and_rest[close..];
    }
    scripts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_scripts_are_found_without_their_tags_and_external_ones_are_skipped() {
        let html = r#"<head><script type="module">
import init from '/a.js';
</script><script src="/b.js"></script><script>go()</script></head>"#;
        assert_eq!(inline_scripts(html), ["\nimport init from '/a.js';\n", "go()"]);
    }

    fn toss() -> SdkOrigins {
        SdkOrigins {
            script: Some("https://js.tosspayments.com".to_owned()),
            frames: vec!["https://js.tosspayments.com".to_owned(), "https://pay.toss.im".to_owned()],
            ..SdkOrigins::default()
        }
    }

    #[test]
    fn the_policy_allows_wasm_and_hashed_scripts_and_no_framing() {
        let policy = content_security_policy(&toss(), vec!["abc=".to_owned()]);
        assert!(
            policy.contains("script-src 'self' 'wasm-unsafe-eval' https://js.tosspayments.com 'sha256-abc='"),
            "{policy}"
        );
        assert!(policy.contains("connect-src 'self';"), "the SDK's origin is for scripts only: {policy}");
        assert!(policy.contains("frame-src https://js.tosspayments.com https://pay.toss.im;"), "{policy}");
        assert!(policy.contains("frame-ancestors 'none'"));
        assert!(!policy.contains("unsafe-inline"));
        let no_pg = content_security_policy(&SdkOrigins::default(), vec![]);
        assert!(no_pg.contains("frame-src 'none';"), "no PG, no frames");
    }

    #[test]
    fn the_sdks_connections_images_and_styles_come_from_configuration() {
        let sdk = SdkOrigins {
            connections: vec!["https://log.tosspayments.com".to_owned()],
            images: vec!["https://static.toss.im".to_owned()],
            styles: vec!["https://static.toss.im".to_owned(), "https://fonts.example".to_owned()],
            ..toss()
        };
        let policy = content_security_policy(&sdk, vec![]);
        assert!(policy.contains("connect-src 'self' https://log.tosspayments.com;"), "{policy}");
        assert!(policy.contains("img-src 'self' data: https://static.toss.im;"), "{policy}");
        assert!(policy.contains("style-src 'self' https://static.toss.im https://fonts.example;"), "{policy}");
        assert!(policy.contains("script-src 'self' 'wasm-unsafe-eval' https://js.tosspayments.com;"), "{policy}");
    }

    #[test]
    fn a_script_hash_is_the_base64_sha256_of_its_text() {
        // The value browsers print in their CSP errors for `<script>alert(1)</script>`.
        assert_eq!(STANDARD.encode(Sha256::digest(b"alert(1)")), "bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI=");
    }
}

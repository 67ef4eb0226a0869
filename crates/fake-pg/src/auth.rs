//! The merchant's Basic authentication: `Authorization: Basic base64(secretKey + ":")`.

use axum::http::{HeaderMap, header::AUTHORIZATION};
use base64::Engine;
use base64::alphabet::STANDARD;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

use crate::error::PgError;

/// Clients differ on whether they pad the base64 (`...Og==` or `...Og`), and
/// Toss accepts both, so padding is optional here too.
const LENIENT_BASE64: GeneralPurpose = GeneralPurpose::new(
    &STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Succeeds when the request carries the merchant's secret key.
pub(crate) fn authorize(headers: &HeaderMap, secret_key: &str) -> Result<(), PgError> {
    let value = headers.get(AUTHORIZATION).and_then(|value| value.to_str().ok()).ok_or(PgError::UnauthorizedKey)?;
    match basic_credentials(value) {
        Some(credentials) if credentials == format!("{secret_key}:").as_bytes() => Ok(()),
        // Toss tells a key sent without its colon apart from a wrong key.
        Some(credentials) if !credentials.contains(&b':') => Err(PgError::IncorrectBasicAuthFormat),
        _ => Err(PgError::UnauthorizedKey),
    }
}

/// The decoded credentials of a `Basic` header value, if it is one.
fn basic_credentials(value: &str) -> Option<Vec<u8>> {
    let (scheme, encoded) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    LENIENT_BASE64.decode(encoded.trim()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    const KEY: &str = "test_sk_payonce_fake_pg_0000";

    fn headers(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        headers
    }

    fn encoded(credentials: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(credentials)
    }

    #[test]
    fn accepts_the_key_with_and_without_padding() {
        let padded = encoded(&format!("{KEY}:"));
        assert!(padded.ends_with('='), "the test key must need padding");
        let unpadded = padded.trim_end_matches('=');
        assert_eq!(authorize(&headers(&format!("Basic {padded}")), KEY), Ok(()));
        assert_eq!(authorize(&headers(&format!("Basic {unpadded}")), KEY), Ok(()));
        assert_eq!(authorize(&headers(&format!("basic {padded}")), KEY), Ok(()));
    }

    #[test]
    fn rejects_missing_wrong_and_malformed_credentials() {
        let unauthorized = Err(PgError::UnauthorizedKey);
        assert_eq!(authorize(&HeaderMap::new(), KEY), unauthorized);
        let wrong = encoded("test_sk_someone_else:");
        assert_eq!(authorize(&headers(&format!("Basic {wrong}")), KEY), unauthorized);
        let no_colon = encoded(KEY);
        assert_eq!(authorize(&headers(&format!("Basic {no_colon}")), KEY), Err(PgError::IncorrectBasicAuthFormat));
        let right = encoded(&format!("{KEY}:"));
        assert_eq!(authorize(&headers(&format!("Bearer {right}")), KEY), unauthorized);
        assert_eq!(authorize(&headers("Basic !!!not-base64"), KEY), unauthorized);
        assert_eq!(authorize(&headers("Basic"), KEY), unauthorized);
    }
}

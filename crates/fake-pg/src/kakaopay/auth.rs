//! The merchant's secret key, in KakaoPay's scheme.

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;

use super::errors::KakaoError;

/// `Authorization: SECRET_KEY <key>`, or `DEV_SECRET_KEY <key>` as KakaoPay
/// also accepts for a development key. Missing is -400, anything else -401.
pub(super) fn authorize(headers: &HeaderMap, secret_key: &str) -> Result<(), KakaoError> {
    let value = headers.get(AUTHORIZATION).ok_or_else(KakaoError::missing_authorization)?;
    let value = value.to_str().map_err(|_| KakaoError::invalid_key())?;
    match value.trim().split_once(' ') {
        Some(("SECRET_KEY" | "DEV_SECRET_KEY", key)) if key.trim() == secret_key => Ok(()),
        _ => Err(KakaoError::invalid_key()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn the_secret_key_goes_in_kakaopays_scheme() {
        assert_eq!(authorize(&headers("SECRET_KEY sk"), "sk"), Ok(()));
        assert_eq!(authorize(&headers("DEV_SECRET_KEY sk"), "sk"), Ok(()));
        assert_eq!(authorize(&HeaderMap::new(), "sk").unwrap_err().code, -400);
        for wrong in ["SECRET_KEY other", "KakaoAK sk", "Basic sk", "sk", "SECRET_KEY"] {
            assert_eq!(authorize(&headers(wrong), "sk").unwrap_err().code, -401, "{wrong}");
        }
    }
}

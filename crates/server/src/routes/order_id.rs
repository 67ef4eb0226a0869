//! The `{order_id}` of a route. Only ids the server could have issued reach
//! the database: anything else (a NUL byte, a thousand characters, a path
//! trick) is simply an order that does not exist.

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;

use crate::error::AppError;

/// The longest order id: what Toss accepts as an orderId.
const MAX_LEN: usize = 64;

/// An order id of the shape the server issues: 1 to 64 of `[A-Za-z0-9_-]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderIdPath(pub String);

fn well_formed(id: &str) -> bool {
    (1..=MAX_LEN).contains(&id.len()) && payonce_api::is_order_id_text(id)
}

impl<S: Send + Sync> FromRequestParts<S> for OrderIdPath {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Path(id) = Path::<String>::from_request_parts(parts, state).await.map_err(|_| AppError::OrderNotFound)?;
        if well_formed(&id) { Ok(Self(id)) } else { Err(AppError::OrderNotFound) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ids_the_server_could_issue_are_well_formed() {
        assert!(well_formed("ord_0190a1b2c3d4e5f60718293a4b5c6d7e"));
        assert!(well_formed(&"a".repeat(64)));
        for bad in ["", "\0", "ord\u{0}1", "../etc", "a b", "주문", &"a".repeat(65)] {
            assert!(!well_formed(bad), "{bad:?}");
        }
    }
}

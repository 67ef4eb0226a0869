//! `GET /v1/transactions?startDate&endDate&startingAfter&limit`: every
//! approval and cancel in a range of Korean local date-times, a page at a
//! time, for reconciling the shop's records with the PG's.

use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::routing::get;
use axum::{Json, Router};

use crate::auth;
use crate::clock::parse_kst_local;
use crate::error::PgError;
use crate::routes::payments::lookup_latency;
use crate::state::AppState;
use crate::transactions::{DEFAULT_LIMIT, MAX_LIMIT, Query, Transaction, UnknownKey};

pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/v1/transactions", get(transactions_list))
}

async fn transactions_list(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Result<Json<Vec<Transaction>>, PgError> {
    auth::authorize(&headers, &state.settings.secret_key)?;
    let query = parse_query(query.as_deref().unwrap_or_default())?;
    // A page of the ledger is read as lookups are, once their latency has passed.
    lookup_latency(&state).await;
    state
        .store
        .transactions(&query)
        .map(Json)
        .map_err(|UnknownKey| PgError::InvalidTransactionKey(query.starting_after.unwrap_or_default()))
}

/// The listing's query: both dates required, as `2022-01-01T00:00:00`
/// (optionally `.000`), Korean local time.
fn parse_query(query: &str) -> Result<Query, PgError> {
    let fields: Vec<(String, String)> = serde_urlencoded::from_str(query)
        .map_err(|error| PgError::InvalidRequest(format!("The query string cannot be read: {error}.")))?;
    let field = |name: &str| fields.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str());
    let date = |name: &str| -> Result<u64, PgError> {
        let text = field(name).ok_or_else(|| PgError::InvalidRequest(format!("{name} is required.")))?;
        parse_kst_local(text).ok_or_else(|| {
            PgError::InvalidDate(format!(
                "{name} must be a date-time such as 2022-01-01T00:00:00 (Korean time, no offset), got {text:?}."
            ))
        })
    };
    let (start, end) = (date("startDate")?, date("endDate")?);
    if end < start {
        return Err(PgError::InvalidDate("endDate must not be before startDate.".to_owned()));
    }
    let limit = match field("limit") {
        None => DEFAULT_LIMIT,
        Some(text) => text.parse::<usize>().ok().filter(|limit| (1..=MAX_LIMIT).contains(limit)).ok_or_else(|| {
            PgError::InvalidRequest(format!("limit must be a whole number from 1 to {MAX_LIMIT}, got {text:?}."))
        })?,
    };
    let starting_after = field("startingAfter").filter(|key| !key.is_empty()).map(str::to_owned);
    Ok(Query { start, end, starting_after, limit })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_required_local_date_times_in_order() {
        let query = parse_query("startDate=2023-11-15T07:13:20&endDate=2023-11-15T07:13:21.999").unwrap();
        assert_eq!(
            (query.start, query.end, query.limit, query.starting_after),
            (1_700_000_000, 1_700_000_001, 100, None)
        );
        let code = |text: &str| parse_query(text).unwrap_err().code().to_owned();
        assert_eq!(code("endDate=2023-11-15T07:13:20"), "INVALID_REQUEST");
        assert_eq!(code("startDate=2023-11-15&endDate=2023-11-16T00:00:00"), "INVALID_DATE");
        assert_eq!(code("startDate=2023-11-15T00:00:00%2B09:00&endDate=2023-11-16T00:00:00"), "INVALID_DATE");
        assert_eq!(code("startDate=2023-11-16T00:00:00&endDate=2023-11-15T00:00:00"), "INVALID_DATE");
    }

    #[test]
    fn limit_defaults_to_100_and_is_at_most_10000() {
        let with = |limit: &str| {
            parse_query(&format!("startDate=2023-01-01T00:00:00&endDate=2023-01-02T00:00:00&limit={limit}"))
        };
        assert_eq!(with("10000").unwrap().limit, 10_000);
        for bad in ["0", "10001", "-1", "ten"] {
            assert_eq!(with(bad).unwrap_err().code(), "INVALID_REQUEST", "{bad}");
        }
    }
}

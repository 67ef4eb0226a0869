//! The payment window the customer's browser visits: `GET /v1/window` shows
//! it and issues a paymentKey, `POST /v1/window` takes the chosen test card
//! and redirects back to the shop; `GET /v1/receipt/{paymentKey}` is the receipt.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

use crate::clock::now_kst;
use crate::error::PgError;
use crate::html::{self, WindowView};
use crate::scenario::Scenario;
use crate::state::AppState;
use crate::store::{AmountMismatch, Submitted, WindowRequest};
use crate::window_text::Lang;

const MAX_ORDER_NAME_CHARS: usize = 100;
const MAX_ORDER_ID_CHARS: usize = 64;

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/window", get(window_show).post(window_submit))
        .route("/v1/receipt/{payment_key}", get(receipt_show))
}

async fn window_show(State(state): State<AppState>, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    let query = query.unwrap_or_default();
    let lang = Lang::choose(query_field(&query, "lang").as_deref(), accept_language(&headers));
    let request = match window_request(&query, &state.settings.client_key) {
        Ok(request) => request,
        Err(problems) => return bad_request(lang.text().cannot_start, &problems, lang),
    };
    let checkout_url = format!("{}/v1/window?{query}", state.settings.base_url);
    let payment_key = match state.store.open_window(request.clone(), checkout_url, now_kst()) {
        Ok(payment_key) => payment_key,
        Err(AmountMismatch { opened_with }) => {
            tracing::info!(order_id = request.order_id, amount = request.amount, opened_with, "window amount mismatch");
            return see_other(&append_query(
                &request.fail_url,
                &[
                    ("code", "PAY_PROCESS_ABORTED"),
                    ("message", "결제 진행 중 승인에 실패하여 결제가 중단되었습니다."),
                    ("orderId", &request.order_id),
                ],
            ));
        }
    };
    let config = state.store.config();
    let page = html::window_page(&WindowView {
        payment_key: &payment_key,
        order_id: &request.order_id,
        order_name: &request.order_name,
        amount: request.amount,
        time_scale: state.settings.clock.time_scale(),
        latency: state.settings.clock.scaled_ms(config.latency_ms),
        lang,
        embedded: query_field(&query, "embedded").as_deref() == Some("1"),
    });
    // A window is single-use: its paymentKey must not come back from a cache.
    ([(header::CACHE_CONTROL, "no-store")], Html(page)).into_response()
}

async fn window_submit(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let fields: Vec<(String, String)> = serde_urlencoded::from_bytes(&body).unwrap_or_default();
    let field = |name: &str| fields.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str());
    let lang = Lang::choose(field("lang"), accept_language(&headers));
    let text = lang.text();
    let Some(payment_key) = field("paymentKey").filter(|key| !key.is_empty()) else {
        return bad_request(text.cannot_go_on, &["paymentKey is missing.".to_owned()], lang);
    };
    let Some(scenario) = field("scenario").and_then(Scenario::parse) else {
        return bad_request(text.cannot_go_on, &[text.choose_a_card.to_owned()], lang);
    };
    match state.store.submit_window(payment_key, scenario) {
        Ok(submitted) => {
            tracing::info!(
                payment_key,
                order_id = %submitted.order_id,
                scenario = scenario.id(),
                "window submitted"
            );
            see_other(&redirect_target(&submitted))
        }
        Err(error) => {
            let status = error.status();
            (status, Html(html::error_page(text.cannot_go_on, &[error.to_string()], lang))).into_response()
        }
    }
}

async fn receipt_show(State(state): State<AppState>, headers: HeaderMap, Path(payment_key): Path<String>) -> Response {
    let lang = Lang::choose(None, accept_language(&headers));
    match state.store.payment(&payment_key) {
        Some(payment) => Html(html::receipt_page(&payment, lang)).into_response(),
        None => {
            let error = PgError::NotFoundPayment(format!("paymentKey {payment_key}"));
            let page = html::error_page("No such payment", &[error.to_string()], lang);
            (StatusCode::NOT_FOUND, Html(page)).into_response()
        }
    }
}

fn accept_language(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::ACCEPT_LANGUAGE).and_then(|value| value.to_str().ok())
}

fn query_field(query: &str, name: &str) -> Option<String> {
    let fields: Vec<(String, String)> = serde_urlencoded::from_str(query).ok()?;
    fields.into_iter().find(|(key, _)| key == name).map(|(_, value)| value)
}

/// The window's query, with every problem found rather than the first. A
/// `clientKey` (the SDK always sends one) must be this PG's.
fn window_request(query: &str, client_key: &str) -> Result<WindowRequest, Vec<String>> {
    let fields: Vec<(String, String)> = serde_urlencoded::from_str(query)
        .map_err(|error| vec![format!("The query string cannot be read: {error}.")])?;
    let field = |name: &str| {
        fields.iter().find(|(key, _)| key == name).map(|(_, value)| value.trim()).filter(|value| !value.is_empty())
    };
    let mut problems = Vec::new();
    let mut required = |name: &str| {
        let value = field(name);
        if value.is_none() {
            problems.push(format!("{name} is required."));
        }
        value.unwrap_or_default().to_owned()
    };
    let order_id = required("orderId");
    let amount = required("amount");
    let order_name = required("orderName");
    let success_url = required("successUrl");
    let fail_url = required("failUrl");
    if field("clientKey").is_some_and(|given| given != client_key) {
        problems.push("clientKey is not this PG's client key (INVALID_CLIENT_KEY).".to_owned());
    }

    if !order_id.is_empty()
        && (order_id.chars().count() > MAX_ORDER_ID_CHARS
            || !order_id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '=')))
    {
        problems.push(format!("orderId must be at most {MAX_ORDER_ID_CHARS} letters, digits, '-', '_' or '='."));
    }
    let parsed_amount = amount.parse::<u64>().ok().filter(|amount| *amount > 0);
    if !amount.is_empty() && parsed_amount.is_none() {
        problems.push(format!("amount must be a positive whole number of won, got {amount:?}."));
    }
    if order_name.chars().count() > MAX_ORDER_NAME_CHARS {
        problems.push(format!("orderName must be at most {MAX_ORDER_NAME_CHARS} characters."));
    }
    for (name, url) in [("successUrl", &success_url), ("failUrl", &fail_url)] {
        if !(url.is_empty() || url.starts_with("http://") || url.starts_with("https://")) {
            problems.push(format!("{name} must be an absolute http(s) URL, got {url:?}."));
        }
    }
    match parsed_amount {
        Some(amount) if problems.is_empty() => {
            Ok(WindowRequest { order_id, order_name, amount, success_url, fail_url })
        }
        _ => Err(problems),
    }
}

/// Where the browser goes after the window, as Toss sends it: successUrl
/// with paymentKey, orderId and amount; failUrl with code, message, orderId.
fn redirect_target(submitted: &Submitted) -> String {
    if submitted.canceled {
        append_query(
            &submitted.window.fail_url,
            &[
                ("code", "PAY_PROCESS_CANCELED"),
                ("message", "The customer canceled the payment."),
                ("orderId", &submitted.order_id),
            ],
        )
    } else {
        append_query(
            &submitted.window.success_url,
            &[
                ("paymentKey", &submitted.payment_key),
                ("orderId", &submitted.order_id),
                ("amount", &submitted.amount.to_string()),
            ],
        )
    }
}

/// `url` with `pairs` added to its query, before any fragment.
fn append_query(url: &str, pairs: &[(&str, &str)]) -> String {
    let (base, fragment) = match url.split_once('#') {
        Some((base, fragment)) => (base, Some(fragment)),
        None => (url, None),
    };
    let separator = match base.find('?') {
        None => "?",
        Some(_) if base.ends_with('?') || base.ends_with('&') => "",
        Some(_) => "&",
    };
    let encoded = serde_urlencoded::to_string(pairs).unwrap_or_default();
    let mut target = format!("{base}{separator}{encoded}");
    if let Some(fragment) = fragment {
        target.push('#');
        target.push_str(fragment);
    }
    target
}

fn see_other(location: &str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, location.to_owned())]).into_response()
}

fn bad_request(title: &str, problems: &[String], lang: Lang) -> Response {
    (StatusCode::BAD_REQUEST, Html(html::error_page(title, problems, lang))).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_is_appended_with_the_right_separator() {
        let pairs = [("paymentKey", "pk"), ("amount", "100")];
        assert_eq!(append_query("http://shop/pay/success", &pairs), "http://shop/pay/success?paymentKey=pk&amount=100");
        assert_eq!(append_query("http://shop/ok?order=1", &pairs), "http://shop/ok?order=1&paymentKey=pk&amount=100");
        assert_eq!(append_query("http://shop/ok?", &pairs), "http://shop/ok?paymentKey=pk&amount=100");
        assert_eq!(append_query("http://shop/ok#top", &pairs), "http://shop/ok?paymentKey=pk&amount=100#top");
        assert_eq!(append_query("http://shop/fail", &[("message", "a b&c")]), "http://shop/fail?message=a+b%26c");
    }

    #[test]
    fn window_requests_list_every_problem() {
        let problems =
            window_request("amount=abc&successUrl=/relative&clientKey=test_ck_other", "test_ck_mine").unwrap_err();
        let all = problems.join(" ");
        for expected in
            ["orderId", "orderName", "failUrl", "amount must be", "successUrl must be", "INVALID_CLIENT_KEY"]
        {
            assert!(all.contains(expected), "{expected} missing from {all}");
        }
        let ok = window_request(
            "orderId=ord_1&amount=12900&orderName=Tee%20x2&successUrl=http://s/ok&failUrl=http://s/fail",
            "test_ck_mine",
        )
        .unwrap();
        assert_eq!((ok.amount, ok.order_name.as_str()), (12_900, "Tee x2"));
    }
}

//! `/pay/fail`: where the PG window sends the customer when they cancel or the
//! window fails. Anyone can write this URL, so the page explains only the codes it
//! knows, in its own words, and shows no text from the URL. Whether anything was
//! charged is the server's to say: with an order in the URL, the page asks the
//! server to close it (it does only if it never received a confirm) and says that
//! nothing was charged only when the server answers that the order failed.

use std::time::Duration;

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use payonce_api::{Order, OrderStatus};

use crate::api::{self, ApiError};
use crate::i18n::{Texts, use_locale};
use crate::loader::Loaded;
use crate::page_title::name_the_tab;

/// Longest wait for the server's answer about the order.
const ABANDON_WAIT: Duration = Duration::from_secs(5);

/// The codes the PG window sends that the page explains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reason {
    Cancelled,
    Aborted,
    Rejected,
    Expiration,
    Session,
    /// Any other code, or none: nothing from the URL is shown.
    Unknown,
}

impl Reason {
    fn of(code: &str) -> Reason {
        match code {
            // KakaoPay's cancel_url and fail_url carry the server's codes.
            "PAY_PROCESS_CANCELED" | "KAKAOPAY_QUIT" => Reason::Cancelled,
            "PAY_PROCESS_ABORTED" | "KAKAOPAY_FAILED" => Reason::Aborted,
            "REJECT_CARD_PAYMENT" | "REJECT_CARD_COMPANY" => Reason::Rejected,
            "INVALID_CARD_EXPIRATION" => Reason::Expiration,
            "NOT_FOUND_PAYMENT_SESSION" => Reason::Session,
            _ => Reason::Unknown,
        }
    }

    /// Its title and text.
    fn words(self, t: &'static Texts) -> (&'static str, &'static str) {
        match self {
            Reason::Cancelled => (t.fail_cancelled_title, t.fail_cancelled),
            Reason::Aborted => (t.fail_not_through_title, t.fail_aborted),
            Reason::Rejected => (t.fail_not_through_title, t.fail_rejected),
            Reason::Expiration => (t.fail_not_through_title, t.fail_expiration),
            Reason::Session => (t.fail_not_through_title, t.fail_session),
            Reason::Unknown => (t.fail_not_through_title, t.fail_unknown),
        }
    }
}

#[component]
pub fn PayFailPage() -> impl IntoView {
    let locale = use_locale();
    let query = use_query_map().get_untracked();
    let code = query.get("code").unwrap_or_default().trim().to_owned();
    let reason = Reason::of(&code);
    let known_code = (reason != Reason::Unknown).then_some(code);
    let order_id = query.get("orderId").filter(|order_id| !order_id.trim().is_empty());
    let closed = order_id.clone().map(|order_id| {
        Loaded::new(move || {
            let order_id = order_id.clone();
            async move { api::abandon(&order_id, ABANDON_WAIT).await }
        })
    });
    let said = move || reason.words(locale.texts());
    name_the_tab(move || said().0.to_owned());
    view! {
        <section class="card" aria-labelledby="fail-title" data-testid="pay-fail">
            <div class="outcome-icon failed" aria-hidden="true">"!"</div>
            <h1 id="fail-title">{move || said().0}</h1>
            <p>{move || said().1}</p>
            {closed.map(|closed| view! {
                <p data-testid="charge-status" role="status" aria-live="polite">
                    {move || charge_status(closed.get(), locale.texts())}
                </p>
            })}
            {known_code.map(|code| view! { <p class="muted small">{move || locale.texts().reason_code} " " <code>{code}</code></p> })}
            <div class="actions">
                <a href="/" class="button primary">{move || locale.texts().try_again}</a>
                {order_id.map(|order_id| view! {
                    <a href=format!("/orders/{}", String::from(js_sys::encode_uri_component(&order_id)))
                        class="button secondary">{move || locale.texts().view_the_order}</a>
                })}
            </div>
        </section>
    }
}

/// What the server's answer about the order says about a charge.
fn charge_status(closed: Option<Result<Order, ApiError>>, t: &'static Texts) -> &'static str {
    let Some(answer) = closed else { return t.checking_order };
    match answer.map(|order| order.status) {
        Ok(OrderStatus::Failed) => t.nothing_charged,
        Ok(
            OrderStatus::Paid | OrderStatus::Canceled | OrderStatus::PartiallyRefunded | OrderStatus::CancelRequested,
        ) => t.paid_meanwhile,
        Ok(OrderStatus::Pending | OrderStatus::Unknown | OrderStatus::Created) => t.still_processing,
        Err(ApiError::Server { status: 404, .. }) => t.other_browser,
        Err(_) => t.could_not_check,
    }
}

//! `/pay/fail`: where the PG window sends the customer when they cancel or the
//! window fails. Anyone can write this URL, so the page explains only the codes it
//! knows, in its own words, and shows no text from the URL. Whether anything was
//! charged is the server's to say: with an order in the URL, the page asks the
//! server to close it (it does only if it never received a confirm) and says that
//! nothing was charged only when the server answers that the order failed. It
//! closes it at once only for an order this browser sent to a payment window; a
//! link naming any other order (one a stranger sent the customer) closes
//! nothing until the customer presses "Close the order".
//! An order that is a shop's checkout is not tried again in payonce's cart: the
//! page offers the way back to the shop instead.

use std::time::Duration;

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use payonce_api::{Order, OrderStatus};
use payonce_screens::navigation::retry_from;

use crate::api::{self, ApiError};
use crate::components::back_to_shop::BackToShopLink;
use crate::i18n::{Texts, use_locale};
use crate::loader::Loaded;
use crate::page_title::name_the_tab;
use crate::storage;

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

    /// Its title and text; a shop's checkout has no cart to speak of.
    fn words(self, t: &'static Texts, checkout: bool) -> (&'static str, &'static str) {
        match self {
            Reason::Cancelled if checkout => (t.fail_cancelled_title, t.fail_cancelled_checkout),
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
    // Closed at once only when this browser sent the order to the window.
    let close_asked = RwSignal::new(order_id.as_deref().is_some_and(storage::opened_payment_window));
    let closed = order_id.clone().map(|order_id| {
        Loaded::new(move || {
            let order_id = order_id.clone();
            let asked = close_asked.get();
            async move { if asked { Some(api::abandon(&order_id, ABANDON_WAIT).await) } else { None } }
        })
    });
    // The server's answer about the order, once it came: a shop's checkout carries the way back.
    let answer = move || closed.and_then(|closed| closed.get()).flatten();
    let answered = move || answer().and_then(Result::ok);
    let back = move || answered().and_then(|order| order.back);
    let retry = move || retry_from(answered().as_ref());
    let said = move || reason.words(locale.texts(), back().is_some());
    let order_id_given = order_id.is_some();
    name_the_tab(move || said().0.to_owned());
    view! {
        <section class="card" aria-labelledby="fail-title" data-testid="pay-fail">
            <div class="outcome-icon failed" aria-hidden="true">"!"</div>
            <h1 id="fail-title">{move || said().0}</h1>
            <p>{move || said().1}</p>
            {order_id.is_some().then(|| view! {
                <p data-testid="charge-status" role="status" aria-live="polite">
                    {move || if close_asked.get() {
                        charge_status(answer(), locale.texts())
                    } else {
                        locale.texts().close_order_prompt
                    }}
                </p>
            })}
            {known_code.map(|code| view! { <p class="muted small">{move || locale.texts().reason_code} " " <code>{code}</code></p> })}
            <div class="actions">
                {move || (order_id_given && !close_asked.get()).then(|| view! {
                    <button type="button" class="button secondary" on:click=move |_| close_asked.set(true)>
                        {move || locale.texts().close_order}
                    </button>
                })}
                // A full page load (`rel="external"`): the checkout page's header is drawn for it.
                {move || retry().map(|href| view! {
                    <a href=href.clone() rel=href.starts_with("/checkout/").then_some("external") class="button primary">
                        {move || locale.texts().try_again}
                    </a>
                })}
                {move || back().map(|back| view! { <BackToShopLink back=back primary=retry().is_none()/> })}
                {order_id.map(|order_id| view! {
                    <a href=format!("/orders/{}", String::from(js_sys::encode_uri_component(&order_id)))
                        class="button secondary">{move || locale.texts().view_the_order}</a>
                })}
            </div>
        </section>
    }
}

/// What the server's answer about the order says about a charge (`None`
/// while it has not come).
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

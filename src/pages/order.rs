use std::time::Duration;

use leptos::html::Dialog;
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_params_map;
use payonce_api::{ErrorCode, Order, OrderStatus, PageConfig};
use payonce_screens::order::cancel_offered;

use crate::api::{self, ApiError};
use crate::components::back_to_shop::BackToShopLink;
use crate::components::status_badge::StatusBadge;
use crate::focus::KeptFocus;
use crate::format::date_time;
use crate::i18n::{Lang, Locale, fill, use_locale, won};
use crate::loader::Loaded;
use crate::page_title::name_the_tab;
use crate::tr;

/// How long the page waits for its timings before it goes by the defaults.
const CONFIG_WAIT: Duration = Duration::from_secs(5);

/// How often an order still being settled is asked for again.
const REFRESH: Duration = Duration::from_secs(2);

/// `/orders/:id`: one order; while its payment is unsettled it refreshes itself.
#[component]
pub fn OrderPage() -> impl IntoView {
    let locale = use_locale();
    let t = move || locale.texts();
    let params = use_params_map();
    let order_id = move || params.read().get("id").unwrap_or_default();
    let order = Loaded::new(move || {
        let order_id = order_id();
        async move { api::order(&order_id).await }
    });
    order.reload_every_while(REFRESH, |loaded| {
        loaded.as_ref().is_ok_and(|order| order.status.is_in_progress() || order.status.is_refund_in_progress())
    });
    // The customer's cancel window, as the server keeps it.
    let config = Loaded::new(|| async { api::page_config(CONFIG_WAIT).await.unwrap_or_default() });
    let cancel_window_ms = move || config.get().unwrap_or(PageConfig::DEFAULT).cancel_window_ms;
    let reload = Callback::new(move |()| order.reload());
    let change_said = said_when_the_status_changes(order, locale);
    name_the_tab(move || match order.get() {
        Some(Err(ApiError::Server { status: 404, .. })) => t().order_not_found_title.to_owned(),
        Some(Ok(order)) => format!("{} — {}", order.order_name, t().order_title),
        _ => t().order_title.to_owned(),
    });
    let region = NodeRef::<leptos::html::Section>::new();
    let kept = KeptFocus::new("order-title", move || {
        locale.get();
        order.get();
    });
    view! {
        <section class="card" aria-labelledby="order-title" node_ref=region
            on:focusin=move |event| kept.entered(event)
            on:focusout=move |event| if let Some(region) = region.get_untracked() { kept.left(event, &region) }>
            // The language is read here too, so a switch redraws the order in it.
            {move || match (locale.get(), order.get()).1 {
                None => view! { <p class="muted" aria-busy="true">{t().loading_order}</p> }.into_any(),
                Some(Err(ApiError::Server { status: 404, .. })) => view! {
                    <h1 id="order-title" tabindex="-1">{t().order_not_found_title}</h1>
                    <p>{t().order_not_found}</p>
                    <div class="actions"><a href="/orders" class="button secondary">{t().see_your_orders}</a></div>
                }.into_any(),
                Some(Err(error)) => view! {
                    <h1 id="order-title" tabindex="-1">{t().order_title}</h1>
                    <p class="notice error" role="alert">{error.message(locale.get())}</p>
                }.into_any(),
                Some(Ok(order)) => view! {
                    <OrderDetails order=order cancel_window_ms=cancel_window_ms() on_changed=reload/>
                }.into_any(),
            }}
        </section>
        // In the page from the start, so a screen reader hears a change of status
        // (a refund going out) while the page refreshes itself, and not the first load.
        <p class="visually-hidden" role="status" data-testid="announced-order-change">{move || change_said.get()}</p>
    }
}

/// What the order page says when the order's status is no longer the one it
/// opened with: the new status's explanation, once per change.
fn said_when_the_status_changes(order: Loaded<Result<Order, ApiError>>, locale: Locale) -> Memo<Option<String>> {
    let first_seen = StoredValue::new(None::<OrderStatus>);
    Memo::new(move |_| {
        let status = order.get()?.ok()?.status;
        let mut first = status;
        first_seen.update_value(|seen| first = *seen.get_or_insert(status));
        (status != first).then(|| explanation(status, locale.get()).to_owned())
    })
}

/// What a status means for the customer, in the page's words.
pub(crate) fn explanation(status: OrderStatus, lang: Lang) -> &'static str {
    match status {
        OrderStatus::Created => tr!(lang, explain_created),
        OrderStatus::Pending | OrderStatus::Unknown => tr!(lang, explain_in_progress),
        OrderStatus::Paid => tr!(lang, explain_paid),
        OrderStatus::Failed => tr!(lang, explain_failed),
        OrderStatus::Canceled => tr!(lang, explain_canceled),
        OrderStatus::PartiallyRefunded => tr!(lang, explain_partially_refunded),
        OrderStatus::CancelRequested => tr!(lang, explain_cancel_requested),
    }
}

#[component]
fn OrderDetails(order: Order, cancel_window_ms: u64, on_changed: Callback<()>) -> impl IntoView {
    let lang = use_locale().get();
    let t = lang.texts();
    let explanation = explanation(order.status, lang);
    view! {
        <div class="order-head" data-order-status=order.status.as_str()>
            // The cart's order names are made by the server in English, whatever the
            // page's language; a shop's checkout is named by the shop, in its own.
            <h1 id="order-title" tabindex="-1" lang=order.back.is_none().then_some("en")>{order.order_name.clone()}</h1>
            <StatusBadge status=order.status/>
        </div>
        <div>
            <p>{explanation}</p>
            {order.failure.clone().map(|failure| view! {
                <p data-testid="failure-message">{t.reasons.for_code(&failure.code)}</p>
                <p class="muted small">{t.reason_code} " " <code>{failure.code}</code></p>
            })}
            {order.refund_refusal.clone().map(|refusal| view! {
                <div class="notice error" data-testid="refund-refusal">
                    <p><strong>{t.refund_refusals.title}</strong> " " {t.refund_refusals.for_code(&refusal.code)}</p>
                    <p>{t.refund_refusals.what_now}</p>
                    <p class="muted small">{t.reason_code} " " <code>{refusal.code}</code></p>
                </div>
            })}
        </div>
        <table class="items">
            <caption class="visually-hidden">{t.items_caption}</caption>
            <thead><tr><th scope="col">{t.item}</th><th scope="col">{t.quantity}</th><th scope="col">{t.price}</th></tr></thead>
            <tbody>
                {order.items.iter().map(|item| view! {
                    <tr>
                        <td>{item.name.clone()}</td>
                        <td>{item.quantity}</td>
                        <td>{won(item.unit_price * u64::from(item.quantity), lang)}</td>
                    </tr>
                }).collect_view()}
            </tbody>
            <tfoot><tr><th scope="row" colspan="2">{t.total}</th><td>{won(order.amount, lang)}</td></tr></tfoot>
        </table>
        <dl class="facts">
            <dt>{t.order_number}</dt><dd><code>{order.order_id.clone()}</code></dd>
            <dt>{t.placed}</dt><dd>{date_time(&order.created_at, lang)}</dd>
            <dt>{t.last_update}</dt><dd>{date_time(&order.updated_at, lang)}</dd>
            {(order.refunded_amount > 0).then(|| view! {
                <dt>{t.refunded}</dt><dd data-testid="refunded-amount">{won(order.refunded_amount, lang)}</dd>
            })}
        </dl>
        <div class="actions">
            {cancel_offered(&order, paid_at_ms(&order), cancel_window_ms, js_sys::Date::now()).then(|| view! {
                <CancelOrder order_id=order.order_id.clone() amount=order.amount - order.refunded_amount on_done=on_changed/>
            })}
            {order.back.clone().map(|back| view! { <BackToShopLink back=back/> })}
            <a href="/orders" class="button secondary">{t.all_orders}</a>
        </div>
    }
}

/// When the order was paid, in milliseconds since the epoch, as the browser reads it.
fn paid_at_ms(order: &Order) -> Option<f64> {
    order.paid_at.as_deref().map(js_sys::Date::parse).filter(|ms| ms.is_finite())
}

/// "Cancel order", asked again in a modal `<dialog>`; the cancel is sent only
/// for "Cancel and refund", with one key per page, so pressing twice is one refund.
#[component]
fn CancelOrder(order_id: String, amount: u64, on_done: Callback<()>) -> impl IntoView {
    let lang = use_locale().get();
    let dialog = NodeRef::<Dialog>::new();
    let error = RwSignal::new(None::<String>);
    let sending = RwSignal::new(false);
    let request_key = StoredValue::new(uuid::Uuid::new_v4().to_string());
    let order_id = StoredValue::new(order_id);
    let open = move |_| {
        if let Some(dialog) = dialog.get_untracked() {
            // A dialog keeps the value it last closed with: without this, Escape
            // on a dialog reopened after a refund that failed would refund again.
            dialog.set_return_value("");
            let _ = dialog.show_modal();
        }
    };
    let closed = move |_| {
        let confirmed = dialog.get_untracked().is_some_and(|dialog| dialog.return_value() == "refund");
        if !confirmed || sending.get_untracked() {
            return;
        }
        sending.set(true);
        error.set(None);
        spawn_local(async move {
            let answer = api::cancel_order(&order_id.get_value(), &request_key.get_value()).await;
            sending.set(false);
            match answer {
                Ok(_) => on_done.run(()),
                Err(ApiError::Server { code: Some(code), .. }) if code == ErrorCode::CancelWindowPassed => {
                    error.set(Some(tr!(lang, cancel_window_passed).to_owned()));
                }
                // Refused because it is cancelled or being cancelled already: the order shows how.
                Err(ApiError::Server { status: 409, .. }) => on_done.run(()),
                Err(other) => error.set(Some(other.message(lang))),
            }
        });
    };
    view! {
        <button type="button" class="button secondary" on:click=open disabled=move || sending.get() data-testid="cancel-order">
            {tr!(lang, cancel_order)}
        </button>
        {move || error.get().map(|message| view! { <p class="notice error" role="alert">{message}</p> })}
        <dialog node_ref=dialog class="dialog" aria-labelledby="cancel-title" aria-describedby="cancel-body" on:close=closed data-testid="cancel-dialog">
            <form method="dialog">
                <h2 id="cancel-title">{tr!(lang, cancel_dialog_title)}</h2>
                <p id="cancel-body">{fill(tr!(lang, cancel_dialog_body), &[&won(amount, lang)])}</p>
                <div class="dialog-actions">
                    <button value="keep" class="button secondary" autofocus>{tr!(lang, keep_order)}</button>
                    <button value="refund" class="button primary">{tr!(lang, cancel_and_refund)}</button>
                </div>
            </form>
        </dialog>
    }
}

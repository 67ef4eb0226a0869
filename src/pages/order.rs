use std::time::Duration;

use leptos::prelude::*;
use leptos_router::hooks::use_params_map;
use payonce_api::{Order, OrderStatus};

use crate::api::{self, ApiError};
use crate::components::status_badge::StatusBadge;
use crate::format::date_time;
use crate::i18n::{use_locale, won};
use crate::loader::Loaded;

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
    order.reload_every_while(REFRESH, |loaded| loaded.as_ref().is_ok_and(|order| order.status.is_in_progress()));
    view! {
        <section class="card" aria-labelledby="order-title">
            {move || match order.get() {
                None => view! { <p class="muted" aria-busy="true">{t().loading_order}</p> }.into_any(),
                Some(Err(ApiError::Server { status: 404, .. })) => view! {
                    <h1 id="order-title">{t().order_not_found_title}</h1>
                    <p>{t().order_not_found}</p>
                    <div class="actions"><a href="/orders" class="button secondary">{t().see_your_orders}</a></div>
                }.into_any(),
                Some(Err(error)) => view! {
                    <h1 id="order-title">{t().order_title}</h1>
                    <p class="notice error" role="alert">{error.message(locale.get())}</p>
                }.into_any(),
                Some(Ok(order)) => view! { <OrderDetails order=order/> }.into_any(),
            }}
        </section>
    }
}

#[component]
fn OrderDetails(order: Order) -> impl IntoView {
    let lang = use_locale().get();
    let t = lang.texts();
    let explanation = match order.status {
        OrderStatus::Created => t.explain_created,
        OrderStatus::Pending | OrderStatus::Unknown => t.explain_in_progress,
        OrderStatus::Paid => t.explain_paid,
        OrderStatus::Failed => t.explain_failed,
        OrderStatus::Canceled => t.explain_canceled,
        OrderStatus::PartiallyRefunded => t.explain_partially_refunded,
        OrderStatus::CancelRequested => t.explain_cancel_requested,
    };
    view! {
        <div class="order-head" data-order-status=order.status.as_str()>
            <h1 id="order-title">{order.order_name.clone()}</h1>
            <StatusBadge status=order.status/>
        </div>
        <div role="status" aria-live="polite">
            <p>{explanation}</p>
            {order.failure.clone().map(|failure| view! {
                <p data-testid="failure-message">{t.reasons.for_code(&failure.code)}</p>
                <p class="muted small">{t.reason_code} " " <code>{failure.code}</code></p>
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
        </dl>
        <div class="actions"><a href="/orders" class="button secondary">{t.all_orders}</a></div>
    }
}

use std::time::Duration;

use leptos::prelude::*;
use payonce_api::Order;

use crate::api;
use crate::components::status_badge::StatusBadge;
use crate::focus::KeptFocus;
use crate::format::date_time;
use crate::i18n::{use_locale, won};
use crate::loader::Loaded;
use crate::page_title::name_the_tab;

/// How often the list refreshes while an order in it is still being settled.
const REFRESH: Duration = Duration::from_secs(3);

/// `/orders`: the customer's orders, newest first.
#[component]
pub fn OrdersPage() -> impl IntoView {
    let locale = use_locale();
    let t = move || locale.texts();
    name_the_tab(move || t().orders_title.to_owned());
    let orders = Loaded::new(api::orders);
    orders.reload_every_while(REFRESH, |loaded| {
        loaded.as_ref().is_ok_and(|list| {
            list.iter().any(|order| order.status.is_in_progress() || order.status.is_refund_in_progress())
        })
    });
    let region = NodeRef::<leptos::html::Section>::new();
    let kept = KeptFocus::new("orders-title", move || {
        locale.get();
        orders.get();
    });
    view! {
        <section class="card" aria-labelledby="orders-title" node_ref=region
            on:focusin=move |event| kept.entered(event)
            on:focusout=move |event| if let Some(region) = region.get_untracked() { kept.left(event, &region) }>
            <h1 id="orders-title" tabindex="-1">{move || t().orders_title}</h1>
            {move || match orders.get() {
                None => view! { <p class="muted" aria-busy="true">{t().loading_orders}</p> }.into_any(),
                Some(Err(error)) => view! { <p class="notice error" role="alert">{error.message(locale.get())}</p> }.into_any(),
                Some(Ok(list)) if list.is_empty() => view! {
                    <p>{t().no_orders}</p>
                    <div class="actions"><a href="/" class="button primary">{t().go_to_cart}</a></div>
                }.into_any(),
                Some(Ok(list)) => view! {
                    <ul class="order-list">
                        {list.into_iter().map(|order| view! { <OrderRow order=order/> }).collect_view()}
                    </ul>
                }.into_any(),
            }}
        </section>
    }
}

/// One order in the list, linking to its page.
#[component]
fn OrderRow(order: Order) -> impl IntoView {
    let lang = use_locale().get();
    view! {
        <li>
            <a href=format!("/orders/{}", order.order_id) class="order-row" data-order-id=order.order_id.clone()>
                <span class="order-row-name" lang="en">{order.order_name.clone()}</span>
                <span class="muted small">{date_time(&order.created_at, lang)}</span>
                <span class="order-row-amount">{won(order.amount, lang)}</span>
                <StatusBadge status=order.status/>
            </a>
        </li>
    }
}

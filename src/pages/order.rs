use std::time::Duration;

use leptos::prelude::*;
use leptos_router::hooks::use_params_map;
use payonce_api::{Order, OrderStatus};

use crate::api::{self, ApiError};
use crate::components::status_badge::StatusBadge;
use crate::format::{date_time, format_krw};
use crate::loader::Loaded;

/// How often an order still being settled is asked for again.
const REFRESH: Duration = Duration::from_secs(2);

/// `/orders/:id`: one order; while its payment is unsettled it refreshes itself.
#[component]
pub fn OrderPage() -> impl IntoView {
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
                None => view! { <p class="muted" aria-busy="true">"Loading the order…"</p> }.into_any(),
                Some(Err(ApiError::Server { status: 404, .. })) => view! {
                    <h1 id="order-title">"Order not found"</h1>
                    <p>"This order does not exist, or it belongs to another browser."</p>
                    <div class="actions"><a href="/orders" class="button secondary">"See your orders"</a></div>
                }.into_any(),
                Some(Err(error)) => view! {
                    <h1 id="order-title">"Order"</h1>
                    <p class="notice error" role="alert">{error.message()}</p>
                }.into_any(),
                Some(Ok(order)) => view! { <OrderDetails order=order/> }.into_any(),
            }}
        </section>
    }
}

#[component]
fn OrderDetails(order: Order) -> impl IntoView {
    let explanation = match order.status {
        OrderStatus::Created => "This order has not been paid.",
        OrderStatus::Pending | OrderStatus::Unknown => {
            "We are confirming this payment with the payment provider. This page updates by itself, and you will not be charged twice."
        }
        OrderStatus::Paid => "Paid. Thank you.",
        OrderStatus::Failed => "The payment failed. You have not been charged.",
        OrderStatus::Canceled => {
            "This payment was cancelled after it went through; the whole amount is refunded to your card."
        }
        OrderStatus::PartiallyRefunded => "Paid, and part of the amount has been refunded to your card.",
    };
    view! {
        <div class="order-head" data-order-status=order.status.as_str()>
            <h1 id="order-title">{order.order_name.clone()}</h1>
            <StatusBadge status=order.status/>
        </div>
        <div role="status" aria-live="polite">
            <p>{explanation}</p>
            {order.failure.clone().map(|failure| view! {
                <p data-testid="failure-message">{failure.message}</p>
                <p class="muted small">"Reason code " <code>{failure.code}</code></p>
            })}
        </div>
        <table class="items">
            <caption class="visually-hidden">"Items in this order"</caption>
            <thead><tr><th scope="col">"Item"</th><th scope="col">"Qty"</th><th scope="col">"Price"</th></tr></thead>
            <tbody>
                {order.items.iter().map(|item| view! {
                    <tr>
                        <td>{item.name.clone()}</td>
                        <td>{item.quantity}</td>
                        <td>{format_krw(item.unit_price * u64::from(item.quantity))}</td>
                    </tr>
                }).collect_view()}
            </tbody>
            <tfoot><tr><th scope="row" colspan="2">"Total"</th><td>{format_krw(order.amount)}</td></tr></tfoot>
        </table>
        <dl class="facts">
            <dt>"Order number"</dt><dd><code>{order.order_id.clone()}</code></dd>
            <dt>"Placed"</dt><dd>{date_time(&order.created_at)}</dd>
            <dt>"Last update"</dt><dd>{date_time(&order.updated_at)}</dd>
        </dl>
        <div class="actions"><a href="/orders" class="button secondary">"All orders"</a></div>
    }
}

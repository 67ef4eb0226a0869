use leptos::html::Dialog;
use leptos::prelude::*;
use payonce_api::{Order, OrderStatus};

use crate::format::{date_time, format_krw};

/// Asks before a second purchase within minutes of the last one. A native modal
/// `<dialog>`: the rest of the page is inert, focus stays inside, Esc cancels.
/// `on_close` receives `true` only for "Pay anyway".
#[component]
pub fn RecentOrderDialog(order: Order, on_close: Callback<bool>) -> impl IntoView {
    let dialog = NodeRef::<Dialog>::new();
    Effect::new(move |_| {
        if let Some(dialog) = dialog.get() {
            let _ = dialog.show_modal();
        }
    });
    let closed = move |_| {
        let pay_anyway = dialog.get_untracked().is_some_and(|dialog| dialog.return_value() == "pay");
        on_close.run(pay_anyway);
    };
    let headline = if order.status == OrderStatus::Paid {
        "You paid for an order a few minutes ago"
    } else {
        "A payment of yours is still being processed"
    };
    view! {
        <dialog node_ref=dialog class="dialog" aria-labelledby="recent-title" aria-describedby="recent-body" on:close=closed data-testid="recent-order-dialog">
            <form method="dialog">
                <h2 id="recent-title">{headline}</h2>
                <p id="recent-body">
                    "Order " <strong>{order.order_name.clone()}</strong> " for " {format_krw(order.amount)}
                    " (" {date_time(&order.created_at)} "). "
                    "Paying again creates a second order, and a duplicate payment can be slow to refund."
                </p>
                <p><a href=format!("/orders/{}", order.order_id) target="_blank">"See that order"</a></p>
                <div class="dialog-actions">
                    <button value="cancel" class="button secondary" autofocus>"Cancel"</button>
                    <button value="pay" class="button primary">"Pay anyway"</button>
                </div>
            </form>
        </dialog>
    }
}

use leptos::html::Dialog;
use leptos::prelude::*;
use payonce_api::{OrderStatus, OrderSummary};

use crate::format::date_time;
use crate::i18n::{fill, use_locale, won};
use crate::tr;

/// Asks before a second purchase within minutes of the last one. A native modal
/// `<dialog>`: the rest of the page is inert, focus stays inside, Esc cancels.
/// `on_close` receives `true` only for "Pay anyway".
#[component]
pub fn RecentOrderDialog(order: OrderSummary, on_close: Callback<bool>) -> impl IntoView {
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
    // The dialog is open for a moment: it keeps the language it opened in.
    let lang = use_locale().get();
    let headline =
        if order.status == OrderStatus::Paid { tr!(lang, recent_paid) } else { tr!(lang, recent_in_progress) };
    // The order's name is the server's English: the sentence around it is filled
    // in the page's language and the name marked as English, so a screen reader
    // speaks each in its own voice.
    let (amount, when) = (won(order.amount, lang), date_time(&order.created_at, lang));
    let sentence = tr!(lang, recent_body);
    let (before_name, after_name) = sentence.split_once("{0}").unwrap_or((sentence, ""));
    let around_name = |part: &str| fill(part, &["", &amount, &when]);
    let (before_name, after_name) = (around_name(before_name), around_name(after_name));
    view! {
        <dialog node_ref=dialog class="dialog" aria-labelledby="recent-title" aria-describedby="recent-body" on:close=closed data-testid="recent-order-dialog">
            <form method="dialog">
                <h2 id="recent-title">{headline}</h2>
                <p id="recent-body">{before_name}<span lang="en">{order.order_name.clone()}</span>{after_name}</p>
                <p><a href=format!("/orders/{}", order.order_id) target="_blank">{tr!(lang, see_that_order)}</a></p>
                <div class="dialog-actions">
                    <button value="cancel" class="button secondary" autofocus>{tr!(lang, cancel)}</button>
                    <button value="pay" class="button primary">{tr!(lang, pay_anyway)}</button>
                </div>
            </form>
        </dialog>
    }
}

use leptos::prelude::*;
use payonce_api::OrderStatus;

use crate::i18n::{Lang, use_locale};
use crate::tr;

/// A word for an order's status.
pub fn label(status: OrderStatus, lang: Lang) -> &'static str {
    match status {
        OrderStatus::Created => tr!(lang, status_created),
        OrderStatus::Pending => tr!(lang, status_pending),
        OrderStatus::Paid => tr!(lang, status_paid),
        OrderStatus::Failed => tr!(lang, status_failed),
        OrderStatus::Unknown => tr!(lang, status_unknown),
        OrderStatus::Canceled => tr!(lang, status_canceled),
        OrderStatus::PartiallyRefunded => tr!(lang, status_partially_refunded),
        OrderStatus::CancelRequested => tr!(lang, status_cancel_requested),
    }
}

/// The order status as a badge, with a colour per status.
#[component]
pub fn StatusBadge(status: OrderStatus) -> impl IntoView {
    let locale = use_locale();
    let class = format!("badge badge-{}", status.as_str().to_lowercase());
    view! { <span class=class data-status=status.as_str()>{move || label(status, locale.get())}</span> }
}

use leptos::prelude::*;
use payonce_api::OrderStatus;

use crate::i18n::{Texts, use_locale};

/// A word for an order's status.
pub fn label(status: OrderStatus, t: &Texts) -> &'static str {
    match status {
        OrderStatus::Created => t.status_created,
        OrderStatus::Pending => t.status_pending,
        OrderStatus::Paid => t.status_paid,
        OrderStatus::Failed => t.status_failed,
        OrderStatus::Unknown => t.status_unknown,
        OrderStatus::Canceled => t.status_canceled,
        OrderStatus::PartiallyRefunded => t.status_partially_refunded,
        OrderStatus::CancelRequested => t.status_cancel_requested,
    }
}

/// The order status as a badge, with a colour per status.
#[component]
pub fn StatusBadge(status: OrderStatus) -> impl IntoView {
    let locale = use_locale();
    let class = format!("badge badge-{}", status.as_str().to_lowercase());
    view! { <span class=class data-status=status.as_str()>{move || label(status, locale.texts())}</span> }
}

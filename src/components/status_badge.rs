use leptos::prelude::*;
use payonce_api::OrderStatus;

/// A word and a colour for an order's status.
pub fn label(status: OrderStatus) -> &'static str {
    match status {
        OrderStatus::Created => "Not paid",
        OrderStatus::Pending => "Processing",
        OrderStatus::Paid => "Paid",
        OrderStatus::Failed => "Failed",
        OrderStatus::Unknown => "Confirming",
        OrderStatus::Canceled => "Refunded",
        OrderStatus::PartiallyRefunded => "Partly refunded",
    }
}

/// The order status as a badge.
#[component]
pub fn StatusBadge(status: OrderStatus) -> impl IntoView {
    let class = format!("badge badge-{}", status.as_str().to_lowercase());
    view! { <span class=class data-status=status.as_str()>{label(status)}</span> }
}

//! `/pay/fail`: where the PG window sends the customer when they cancel or the
//! window fails. Anyone can write this URL, so the page explains only the codes it
//! knows, in its own words, and shows no text from the URL. Whether anything was
//! charged is the server's to say: with an order in the URL, the page asks the
//! server to close it (it does only if it never received a confirm) and says that
//! nothing was charged only when the server answers that the order failed.

use std::time::Duration;

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use payonce_api::{Order, OrderStatus};

use crate::api::{self, ApiError};
use crate::loader::Loaded;

/// Longest wait for the server's answer about the order.
const ABANDON_WAIT: Duration = Duration::from_secs(5);

/// What the page says for a code the PG window sends.
struct Reason {
    code: &'static str,
    title: &'static str,
    text: &'static str,
}

const CANCELLED: &str = "You cancelled the payment";
const NOT_THROUGH: &str = "The payment did not go through";

const REASONS: [Reason; 5] = [
    Reason {
        code: "PAY_PROCESS_CANCELED",
        title: CANCELLED,
        text: "You closed the payment window before paying. Your cart is as you left it.",
    },
    Reason { code: "PAY_PROCESS_ABORTED", title: NOT_THROUGH, text: "The payment was stopped before it finished." },
    Reason {
        code: "REJECT_CARD_PAYMENT",
        title: NOT_THROUGH,
        text: "Your card company declined the payment. Try another card, or ask your card company why.",
    },
    Reason {
        code: "INVALID_CARD_EXPIRATION",
        title: NOT_THROUGH,
        text: "The card's expiry date was wrong, or the card has expired.",
    },
    Reason {
        code: "NOT_FOUND_PAYMENT_SESSION",
        title: NOT_THROUGH,
        text: "The payment session ran out before the payment was made. Please start again.",
    },
];

/// Any other code, or none.
const UNKNOWN_REASON: Reason =
    Reason { code: "", title: NOT_THROUGH, text: "The payment window could not complete the payment." };

fn reason(code: &str) -> &'static Reason {
    REASONS.iter().find(|reason| reason.code == code).unwrap_or(&UNKNOWN_REASON)
}

#[component]
pub fn PayFailPage() -> impl IntoView {
    let query = use_query_map().get_untracked();
    let reason = reason(query.get("code").unwrap_or_default().trim());
    let order_id = query.get("orderId").filter(|order_id| !order_id.trim().is_empty());
    let closed = order_id.clone().map(|order_id| {
        Loaded::new(move || {
            let order_id = order_id.clone();
            async move { api::abandon(&order_id, ABANDON_WAIT).await }
        })
    });
    view! {
        <section class="card" aria-labelledby="fail-title" data-testid="pay-fail">
            <div class="outcome-icon failed" aria-hidden="true">"!"</div>
            <h1 id="fail-title">{reason.title}</h1>
            <p>{reason.text}</p>
            {closed.map(|closed| view! {
                <p data-testid="charge-status" role="status" aria-live="polite">
                    {move || charge_status(closed.get())}
                </p>
            })}
            {(!reason.code.is_empty()).then(|| view! { <p class="muted small">"Reason code " <code>{reason.code}</code></p> })}
            <div class="actions">
                <a href="/" class="button primary">"Try again"</a>
                {order_id.map(|order_id| view! {
                    <a href=format!("/orders/{}", String::from(js_sys::encode_uri_component(&order_id)))
                        class="button secondary">"View the order"</a>
                })}
            </div>
        </section>
    }
}

/// What the server's answer about the order says about a charge.
fn charge_status(closed: Option<Result<Order, ApiError>>) -> &'static str {
    let Some(answer) = closed else { return "Checking your order…" };
    match answer.map(|order| order.status) {
        Ok(OrderStatus::Failed) => "Nothing was charged.",
        Ok(OrderStatus::Paid | OrderStatus::Canceled | OrderStatus::PartiallyRefunded) => {
            "This order has been paid in the meantime; its page has the details."
        }
        Ok(OrderStatus::Pending | OrderStatus::Unknown | OrderStatus::Created) => {
            "A payment for this order is still being processed; its page shows how it ends."
        }
        Err(ApiError::Server { status: 404, .. }) => {
            "This browser cannot see that order: open your orders in the browser you paid with."
        }
        Err(_) => "We could not check this order just now; its page shows whether it was paid.",
    }
}

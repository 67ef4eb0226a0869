use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

/// `/pay/fail`: the PG window sends the customer here when they cancel or the
/// window itself fails. No payment was confirmed, so nothing was charged.
#[component]
pub fn PayFailPage() -> impl IntoView {
    let query = use_query_map().get_untracked();
    let code = query.get("code").unwrap_or_default();
    let (title, explanation) = if code == "PAY_PROCESS_CANCELED" {
        ("You cancelled the payment", "Nothing was charged. Your cart is as you left it.".to_owned())
    } else {
        let detail = query.get("message").filter(|message| !message.trim().is_empty());
        let detail = detail.unwrap_or_else(|| "The payment window could not complete the payment.".to_owned());
        ("The payment did not go through", format!("{detail} Nothing was charged."))
    };
    let order_id = query.get("orderId");
    view! {
        <section class="card" aria-labelledby="fail-title" data-testid="pay-fail">
            <div class="outcome-icon failed" aria-hidden="true">"!"</div>
            <h1 id="fail-title">{title}</h1>
            <p>{explanation}</p>
            {(!code.is_empty()).then(|| view! { <p class="muted small">"Reason code " <code>{code.clone()}</code></p> })}
            <div class="actions">
                <a href="/" class="button primary">"Try again"</a>
                {order_id.map(|order_id| view! {
                    <a href=format!("/orders/{order_id}") class="button secondary">"View the order"</a>
                })}
            </div>
        </section>
    }
}

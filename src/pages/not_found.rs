use leptos::prelude::*;
use leptos_router::components::A;

/// Any path the page does not know.
#[component]
pub fn NotFoundPage() -> impl IntoView {
    view! {
        <section class="card" aria-labelledby="not-found-title">
            <h1 id="not-found-title">"Page not found"</h1>
            <p>"There is nothing at this address."</p>
            <div class="actions"><A href="/" attr:class="button primary">"Go to your cart"</A></div>
        </section>
    }
}

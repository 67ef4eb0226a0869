use leptos::prelude::*;

/// Any path the page does not know.
#[component]
pub fn NotFoundPage() -> impl IntoView {
    view! {
        <section class="card" aria-labelledby="not-found-title">
            <h1 id="not-found-title">"Page not found"</h1>
            <p>"There is nothing at this address."</p>
            <div class="actions"><a href="/" class="button primary">"Go to your cart"</a></div>
        </section>
    }
}

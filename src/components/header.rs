use leptos::prelude::*;
use leptos_router::components::A;

/// The shop's name and the way to past orders.
#[component]
pub fn SiteHeader() -> impl IntoView {
    view! {
        <header class="site-header">
            <a class="skip-link" href="#main">"Skip to content"</a>
            <A href="/" attr:class="brand">"payonce"<span class="brand-tag">" coffee"</span></A>
            <nav aria-label="Main">
                <A href="/">"Cart"</A>
                <A href="/orders">"Orders"</A>
            </nav>
        </header>
    }
}

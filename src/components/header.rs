use leptos::prelude::*;

use crate::i18n::use_locale;

/// The shop's name, the way to past orders, and the language switch.
/// `pathname` marks the current section; links are plain anchors, which the
/// router (where there is one) turns into in-app navigation.
#[component]
pub fn SiteHeader(#[prop(into)] pathname: Signal<String>) -> impl IntoView {
    let locale = use_locale();
    let t = move || locale.texts();
    let current = move |section: Section| section.contains(&pathname.read()).then_some("page");
    view! {
        <header class="site-header">
            <a class="skip-link" href="#main">{move || t().skip_to_content}</a>
            <a href="/" class="brand">"payonce"<span class="brand-tag">{move || t().brand_tag}</span></a>
            <nav aria-label=move || t().nav_label>
                <a href="/" aria-current=move || current(Section::Cart)>{move || t().nav_cart}</a>
                <a href="/orders" aria-current=move || current(Section::Orders)>{move || t().nav_orders}</a>
            </nav>
            <button class="lang-switch" data-testid="lang-switch" lang=move || locale.get().other().tag()
                aria-label=move || t().switch_label on:click=move |_| locale.set(locale.get().other())>
                {move || t().switch_to_other}
            </button>
        </header>
    }
}

#[derive(Clone, Copy)]
enum Section {
    Cart,
    Orders,
}

impl Section {
    fn contains(self, path: &str) -> bool {
        match self {
            Section::Cart => path == "/",
            Section::Orders => path == "/orders" || path.starts_with("/orders/"),
        }
    }
}

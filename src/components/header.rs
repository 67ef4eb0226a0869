use leptos::prelude::*;

/// The shop's name and the way to past orders. `pathname` marks the current
/// section; links are plain anchors, which the router (where there is one)
/// turns into in-app navigation.
#[component]
pub fn SiteHeader(#[prop(into)] pathname: Signal<String>) -> impl IntoView {
    let current = move |section: Section| section.contains(&pathname.read()).then_some("page");
    view! {
        <header class="site-header">
            <a class="skip-link" href="#main">"Skip to content"</a>
            <a href="/" class="brand">"payonce"<span class="brand-tag">" coffee"</span></a>
            <nav aria-label="Main">
                <a href="/" aria-current=move || current(Section::Cart)>"Cart"</a>
                <a href="/orders" aria-current=move || current(Section::Orders)>"Orders"</a>
            </nav>
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

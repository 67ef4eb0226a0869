use leptos::prelude::*;
use payonce_screens::navigation::on_a_checkout;

use crate::focus::focus_by_id;
use crate::i18n::use_locale;
use crate::tr;

/// The shop's name, the way to past orders, and the language switch.
/// `pathname` marks the current section; links are plain anchors, which the
/// router (where there is one) turns into in-app navigation. A page opened at
/// a shop's checkout (a full page load, from the shop's link) has no link to
/// payonce's own cart: its customer is the shop's. Decided once, as the header
/// is drawn: following it would cost the cart's bundle a reactive attribute.
#[component]
pub fn SiteHeader(#[prop(into)] pathname: Signal<String>) -> impl IntoView {
    let locale = use_locale();
    let current = move |section: Section| section.contains(&pathname.read()).then_some("page");
    view! {
        <header class="site-header">
            // Moves the focus itself: left to the router, the link would be a
            // navigation (refused while paying) that only scrolls.
            <a class="skip-link" href="#main" on:click=skip_to_main>{move || tr!(locale.get(), skip_to_content)}</a>
            <a href="/" class="brand">"payonce"<span class="brand-tag">{move || tr!(locale.get(), brand_tag)}</span></a>
            <nav aria-label=move || tr!(locale.get(), nav_label)>
                <a href="/" aria-current=move || current(Section::Cart) hidden=on_a_checkout(&pathname.get_untracked())>
                    {move || tr!(locale.get(), nav_cart)}
                </a>
                <a href="/orders" aria-current=move || current(Section::Orders)>{move || tr!(locale.get(), nav_orders)}</a>
            </nav>
            // Named by what it shows (a speech-recognition user says what they
            // see), after a hidden "Change language:" in the page's language;
            // only the other language's own name is marked as that language.
            <button class="lang-switch" data-testid="lang-switch" on:click=move |_| locale.set(locale.get().other())>
                <span class="visually-hidden">{move || tr!(locale.get(), switch_label)}" "</span>
                <span lang=move || locale.get().other().tag()>{move || tr!(locale.get(), switch_to_other)}</span>
            </button>
        </header>
    }
}

fn skip_to_main(event: leptos::ev::MouseEvent) {
    event.prevent_default();
    focus_by_id("main");
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

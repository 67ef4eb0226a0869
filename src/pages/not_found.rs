use leptos::prelude::*;

use crate::i18n::use_locale;
use crate::page_title::name_the_tab;

/// Any path the page does not know.
#[component]
pub fn NotFoundPage() -> impl IntoView {
    let locale = use_locale();
    let t = move || locale.texts();
    name_the_tab(move || t().page_not_found_title.to_owned());
    view! {
        <section class="card" aria-labelledby="not-found-title">
            <h1 id="not-found-title">{move || t().page_not_found_title}</h1>
            <p>{move || t().page_not_found}</p>
            <div class="actions"><a href="/" class="button primary">{move || t().go_to_cart}</a></div>
        </section>
    }
}

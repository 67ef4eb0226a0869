//! The tab's title: what the page shows, then the shop's name. A screen reader
//! reads it on arriving at a page, and a customer with many tabs finds the
//! payment by it. Each page names itself, in the page's language.

use leptos::prelude::*;

/// Keeps the tab's title on `title()`, following what it reads (the language, a
/// state). Belongs to the page that calls it, and goes with it.
pub fn name_the_tab(title: impl Fn() -> String + 'static) {
    Effect::new(move |_| document().set_title(&format!("{} — payonce", title())));
}

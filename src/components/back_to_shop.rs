//! "Back to <shop>": the way back to the shop whose checkout an order is,
//! wherever the payment journey ends. The link is the shop's `return_url` as
//! the server gives it, with nothing about the outcome added: the shop asks
//! payonce for that (a customer can type any address).

use leptos::prelude::*;
use payonce_api::{BackToShop, Names};
use payonce_screens::navigation::is_web_address;

use crate::i18n::{Lang, around_hole, back_to_shop_particle, name_in, use_locale};
use crate::tr;

/// `template` with the shop's name in its hole `{0}`, in the customer's
/// language or else the other (marked as such for screen readers), followed
/// by its Korean particle when `particle` says so. One element, so that a
/// flex container (a button) keeps the spaces around the name.
pub fn with_shop_name(template: &'static str, shop: &Names, lang: Lang, particle: bool) -> impl IntoView + use<> {
    let (name, name_lang) = name_in(shop, lang);
    let (before, after) = around_hole(template);
    let particle = if particle { back_to_shop_particle(name, lang) } else { "" };
    view! {
        <span>
            {before}<span lang=(name_lang != lang).then_some(name_lang.tag())>{name.to_owned()}</span>{particle}{after}
        </span>
    }
}

/// The link back to the shop, as the page's primary action or beside it.
#[component]
pub fn BackToShopLink(back: BackToShop, #[prop(optional)] primary: bool) -> impl IntoView {
    let locale = use_locale();
    let BackToShop { shop, url } = back;
    let class = if primary { "button primary" } else { "button secondary" };
    is_web_address(&url).then(move || {
        let label = move || {
            let lang = locale.get();
            with_shop_name(tr!(lang, back_to_shop), &shop, lang, true)
        };
        view! { <a href=url class=class data-testid="back-to-shop">{label}</a> }
    })
}

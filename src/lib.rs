//! The payonce checkout page: Leptos, client-side rendered, built by Trunk.
//!
//! # Layout
//!
//! - `flow`: the confirm page's payment flow, a pure state machine: the `payonce-flow`
//!   crate, which the chaos campaign and the experiments drive too.
//! - `cart`, `i18n`'s catalogs, and each page's small decisions: the `payonce-screens`
//!   crate, pure and tested natively.
//! - `api`: every HTTP call to the order server, with the shared `payonce_api` types;
//!   `fetch`: the browser's `fetch`, which they go through.
//! - `storage`: attempts and the cart in `localStorage`; `json`: JSON parsed by the browser.
//! - `nav_guard`: blocks back, in-app links and unload while a payment is in flight.
//! - `tab_claim`: which of the browser's tabs sends an order's confirm (Web Locks).
//! - `payment_sdk`: the PG's JavaScript SDK, loaded and called to open its window;
//!   `pay_window`: the PG's window opened for an order (the cart's, a checkout's).
//! - `loader`: data a page loads from the API, as a signal.
//! - `clock`, `format`: the time now, and dates as people read them.
//! - `focus`, `page_title`: where the focus goes when the page changes under it; the tab's title.
//! - `i18n`: the language in use, with the Korean and English catalogs.
//! - `components`: header, toasts, status badges, the recent-order dialog, the way back to a shop.
//! - `pages`: one module per route.

pub mod api;
pub mod clock;
pub mod components;
pub mod fetch;
pub mod focus;
pub mod format;
pub mod i18n;
pub mod js_fields;
pub mod json;
pub mod kakaopay_window;
pub mod loader;
pub mod nav_guard;
pub mod page_title;
pub mod pages;
pub mod pay_window;
pub mod payment_sdk;
pub mod storage;
pub mod tab_claim;

/// The payment flow, in its own crate so the harnesses run the page's own rules.
pub use payonce_flow as flow;
/// What the screens say and decide, in its own crate so that its tests need no browser.
pub use payonce_screens::{cart, tr};

use leptos::prelude::*;
use leptos_router::components::{FlatRoutes, Route, Router};
use leptos_router::hooks::use_location;
use leptos_router::path;

use crate::components::header::SiteHeader;
use crate::components::toast::{ToastRegion, Toaster};

/// The whole page: header, routes, and the toast region. Served for every
/// route but `/`, and for `/` too under `trunk serve`.
#[component]
pub fn App() -> impl IntoView {
    i18n::Locale::provide();
    provide_context(Toaster::new());
    view! {
        <Router>
            <RoutedHeader/>
            <main id="main" class="page" tabindex="-1">
                <FlatRoutes fallback=pages::not_found::NotFoundPage>
                    <Route path=path!("/") view=pages::cart::CartPage/>
                    <Route path=path!("/pay/success") view=pages::confirm::ConfirmPage/>
                    <Route path=path!("/pay/fail") view=pages::pay_fail::PayFailPage/>
                    <Route path=path!("/pay/kakaopay") view=pages::kakaopay::KakaoPayStepPage/>
                    <Route path=path!("/orders") view=pages::orders::OrdersPage/>
                    <Route path=path!("/orders/:id") view=pages::order::OrderPage/>
                    <Route path=path!("/checkout/:id") view=pages::checkout::CheckoutRoute/>
                </FlatRoutes>
            </main>
            <ToastRegion/>
        </Router>
    }
}

/// The cart on its own, the page a customer lands on at `/`. It has no router:
/// its links are full page loads into `App`, so the first visit downloads only
/// what the cart needs, about half of `App`'s wasm.
#[component]
pub fn CartApp() -> impl IntoView {
    i18n::Locale::provide();
    view! {
        <SiteHeader pathname=Signal::stored("/".to_owned())/>
        <main id="main" class="page" tabindex="-1">
            <pages::cart::CartPage/>
        </main>
    }
}

/// A shop's checkout on its own, the page a shop sends its customer to
/// (`/checkout/{id}`). As `CartApp`, it has no router: it reads the checkout's
/// id from the address, and its links are full page loads into `App`.
#[component]
pub fn CheckoutApp() -> impl IntoView {
    i18n::Locale::provide();
    let path = window().location().pathname().unwrap_or_default();
    let checkout_id =
        js_sys::decode_uri_component(pages::checkout::checkout_id_in(&path)).map(String::from).unwrap_or_default();
    view! {
        <SiteHeader pathname=Signal::stored(path)/>
        <main id="main" class="page" tabindex="-1">
            <pages::checkout::CheckoutPage checkout_id=checkout_id/>
        </main>
    }
}

/// The header, and the focus following an in-app navigation to the new page.
#[component]
fn RoutedHeader() -> impl IntoView {
    let pathname = use_location().pathname;
    focus::follow_navigation(pathname);
    view! { <SiteHeader pathname=pathname/> }
}

//! The payonce checkout page: Leptos, client-side rendered, built by Trunk.
//!
//! # Layout
//!
//! - `flow`: the confirm page's payment flow, a pure state machine (unit-tested natively).
//! - `cart`: the cart's quantities and total, pure.
//! - `api`: every HTTP call to the order server, with the shared `payonce_api` types.
//! - `storage`: attempts and the cart in `localStorage`.
//! - `nav_guard`: blocks back, in-app links and unload while a payment is in flight.
//! - `loader`: data a page loads from the API, as a signal.
//! - `clock`, `format`: the time now, and dates and amounts as people read them.
//! - `components`: header, toasts, status badges, the recent-order dialog.
//! - `pages`: one module per route.

pub mod api;
pub mod cart;
pub mod clock;
pub mod components;
pub mod flow;
pub mod format;
pub mod loader;
pub mod nav_guard;
pub mod pages;
pub mod storage;

use leptos::prelude::*;
use leptos_router::components::{FlatRoutes, Route, Router};
use leptos_router::hooks::use_location;
use leptos_router::path;

use crate::components::header::SiteHeader;
use crate::components::toast::{ToastRegion, Toaster};

/// The whole page: header, routes, and the toast region.
#[component]
pub fn App() -> impl IntoView {
    provide_context(Toaster::new());
    view! {
        <Router>
            <RoutedHeader/>
            <main id="main" class="page">
                <FlatRoutes fallback=pages::not_found::NotFoundPage>
                    <Route path=path!("/") view=pages::cart::CartPage/>
                    <Route path=path!("/pay/success") view=pages::confirm::ConfirmPage/>
                    <Route path=path!("/pay/fail") view=pages::pay_fail::PayFailPage/>
                    <Route path=path!("/orders") view=pages::orders::OrdersPage/>
                    <Route path=path!("/orders/:id") view=pages::order::OrderPage/>
                </FlatRoutes>
            </main>
            <ToastRegion/>
        </Router>
    }
}

#[component]
fn RoutedHeader() -> impl IntoView {
    view! { <SiteHeader pathname=use_location().pathname/> }
}

//! `/pay/kakaopay`: the step between Pay and KakaoPay's window, in the whole
//! app. The cart and a shop's checkout place the order and send the customer
//! here, so that their own first loads carry nothing of KakaoPay's (the whole
//! app is in the browser's cache by then, prefetched by either). The server
//! prepares the order's KakaoPay payment, and the page goes on to KakaoPay's
//! window in its own place in the history: Back from the window returns to the
//! cart or the checkout. When the window cannot be had, the page says why, and
//! offers to try again or to go back and pay another way.

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_query_map;
use payonce_screens::navigation::way_back;

use crate::i18n::use_locale;
use crate::page_title::name_the_tab;
use crate::pay_window::{self, PayProblem};
use crate::tr;

/// Where the cart (or, `from_checkout`, a shop's checkout) sends a customer who
/// chose KakaoPay for the order `order_id` (as the server wrote it).
pub fn step_url(order_id: &str, from_checkout: bool) -> String {
    let from = if from_checkout { "&from=checkout" } else { "" };
    format!("/pay/kakaopay?orderId={}{from}", String::from(js_sys::encode_uri_component(order_id)))
}

#[component]
pub fn KakaoPayStepPage() -> impl IntoView {
    let locale = use_locale();
    let query = use_query_map().get_untracked();
    let order_id = query.get("orderId").unwrap_or_default();
    let from_checkout = query.get("from").as_deref() == Some("checkout");
    let back = way_back(&order_id, from_checkout);
    // Why the window could not be had, once it could not.
    let problem = RwSignal::new(None::<PayProblem>);
    let open = move || {
        let order_id = order_id.clone();
        problem.set(None);
        spawn_local(async move {
            if let Err(why) = pay_window::open_kakaopay_window(&order_id, || {}).await {
                problem.set(Some(why));
            }
        });
    };
    open();
    name_the_tab(move || {
        let lang = locale.get();
        if problem.with(Option::is_some) { tr!(lang, kakaopay_not_opened) } else { tr!(lang, opening_window) }
            .to_owned()
    });
    let said = move |text: fn(crate::i18n::Lang) -> &'static str| move || text(locale.get());

    view! {
        <section class="card" aria-labelledby="kakaopay-title" data-testid="kakaopay-step">
            {move || match problem.get() {
                None => view! {
                    <h1 id="kakaopay-title" aria-busy="true">{said(|lang| tr!(lang, opening_window))}</h1>
                }.into_any(),
                Some(why) => {
                    let open = open.clone();
                    view! {
                        <h1 id="kakaopay-title" tabindex="-1">{said(|lang| tr!(lang, kakaopay_not_opened))}</h1>
                        <p class="notice error" role="alert" data-testid="pay-error">{move || why.message(locale.get())}</p>
                        <div class="actions">
                            <button class="button primary" on:click=move |_| open()>{said(|lang| tr!(lang, try_again))}</button>
                            // A full page load: the cart and the checkout are pages of their own.
                            <a href=back.clone() rel="external" class="button secondary">{said(|lang| tr!(lang, choose_another_way))}</a>
                        </div>
                    }.into_any()
                }
            }}
        </section>
    }
}

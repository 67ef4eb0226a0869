//! Opening the PG's window for an order that exists, a shop's checkout: Toss's
//! card window through its SDK, or KakaoPay's once the server has prepared its
//! payment (on `/pay/kakaopay`, for the cart's orders too); the customer's
//! choice between them; and what Pay says when the window did not open. The cart shares the last (`PayProblem`, `leave_for`)
//! and keeps its own steps and choice: shared, they made the first load of `/`
//! about 0.5 KB (gzip) heavier.

use leptos::prelude::*;
use payonce_api::{PaymentSdk, Pg, PlacedOrder};

use crate::api;
use crate::i18n::{Lang, fill, use_locale};
use crate::kakaopay_window;
use crate::payment_sdk;
use crate::storage;
use crate::tr;

/// Why Pay did not lead to the payment window.
#[derive(Debug, Clone)]
pub enum PayProblem {
    Api(api::ApiError),
    /// The SDK's error code: the window did not open.
    WindowNotOpened(String),
}

impl PayProblem {
    pub fn message(&self, lang: Lang) -> String {
        match self {
            PayProblem::Api(error) => error.message(lang),
            PayProblem::WindowNotOpened(code) => fill(tr!(lang, window_not_opened), &[code]),
        }
    }
}

/// `Ok` once the browser is on its way to the window (or to the fail page).
pub type Leaving = Result<(), PayProblem>;

/// Opens Toss's card window for `order`; `opening` runs just before.
pub async fn open_toss_window(sdk: &PaymentSdk, order: &PlacedOrder, opening: impl FnOnce()) -> Leaving {
    storage::remember_payment_window(&order.order_id);
    opening();
    // Returns only if the window did not open, or the customer closed it.
    let code = payment_sdk::pay(sdk, order).await;
    if payment_sdk::closed_by_customer(&code) {
        return leave_for(&payment_sdk::closed_window_url(&order.fail_url, &order.order_id), code);
    }
    Err(PayProblem::WindowNotOpened(code))
}

/// Has the server prepare the order's KakaoPay payment, then goes to KakaoPay's
/// window in this page's place in the history; `opening` runs once it is prepared.
pub async fn open_kakaopay_window(order_id: &str, opening: impl FnOnce()) -> Leaving {
    let window = api::prepare_kakaopay(order_id).await.map_err(PayProblem::Api)?;
    storage::remember_payment_window(order_id);
    opening();
    let address = kakaopay_window::address_for_this_device(&window);
    let on_its_way = web_sys::window().is_some_and(|window| window.location().replace(address).is_ok());
    if on_its_way { Ok(()) } else { Err(PayProblem::WindowNotOpened(payment_sdk::SDK_UNAVAILABLE.to_owned())) }
}

/// Sends the browser to `url`, or says the window did not open (with `code`).
pub fn leave_for(url: &str, code: String) -> Leaving {
    let on_its_way = web_sys::window().is_some_and(|window| window.location().assign(url).is_ok());
    if on_its_way { Ok(()) } else { Err(PayProblem::WindowNotOpened(code)) }
}

/// Runs `restored` when the page comes back from the back/forward cache (the
/// Back button from the PG window), where Pay would still be busy; for as
/// long as the calling component lives.
pub fn when_restored_from_cache(restored: impl Fn() + 'static) {
    let listener = window_event_listener(leptos::ev::pageshow, move |event| {
        if event.persisted() {
            restored();
        }
    });
    on_cleanup(move || listener.remove());
}

/// A PG's name as the choice shows it.
fn pg_name(pg: Pg, lang: Lang) -> &'static str {
    match pg {
        Pg::Toss => tr!(lang, pay_by_card),
        Pg::KakaoPay => tr!(lang, kakaopay),
    }
}

/// The PGs `offered`, cards first, as radio buttons: a keyboard moves between them with the
/// arrows and a screen reader names the group and the choice.
#[component]
pub fn PgChoice(pg: RwSignal<Pg>, offered: Vec<Pg>) -> impl IntoView {
    let locale = use_locale();
    let option = move |value: Pg| {
        view! {
            <label class="pg-option">
                <input type="radio" name="pg" checked=pg.get_untracked() == value
                    on:change=move |_| pg.set(value)/>
                {move || pg_name(value, locale.get())}
            </label>
        }
    };
    view! {
        <fieldset class="pg-choice" data-testid="pg-choice">
            <legend>{move || tr!(locale.get(), pay_with)}</legend>
            {offered.contains(&Pg::Toss).then(|| option(Pg::Toss))}
            {offered.contains(&Pg::KakaoPay).then(|| option(Pg::KakaoPay))}
        </fieldset>
    }
}

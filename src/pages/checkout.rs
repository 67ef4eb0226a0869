//! `/checkout/:id`: a shop's checkout, which the shop's own backend created
//! through the shop API and sent its customer to (its `next_url`). The link's
//! token is after its `#`, so no server ever logs it: the page reads it once,
//! takes it out of the address bar, and sends it in the body of the claim that
//! makes this browser the checkout's customer. Paying is the cart's: the PG's
//! window for the order, which returns to `/pay/success` or `/pay/fail`. Nothing
//! of payonce's own cart is here (no recent-order dialog, no way to its products).
//! A checkout that has moved on (paid, being paid, closed) is shown on its order
//! page, which tells its status, why it failed and the way back to the shop: a
//! page of the whole app, so that the checkout's own first load carries none of that.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_params_map;
use payonce_api::{CustomerCheckout, OrderStatus, Pg, PlacedOrder};
pub use payonce_screens::checkout::checkout_id_in;
use payonce_screens::checkout::{Claimed, Standing, checkout_name, line_amount, standing, token_of};
use wasm_bindgen::JsValue;

use crate::api;
use crate::clock::now_ms;
use crate::components::back_to_shop::{BackToShopLink, with_shop_name};
use crate::flow::Millis;
use crate::focus::focus_heading_on_change;
use crate::i18n::{Lang, fill, use_locale, won};
use crate::page_title::name_the_tab;
use crate::pages::kakaopay;
use crate::pay_window::{self, Leaving, PayProblem, PgChoice};
use crate::payment_sdk;
use crate::tr;

/// Where a token waits in this tab's `sessionStorage` until the server has answered its claim.
const TOKEN_KEY_PREFIX: &str = "payonce.checkout-token.";

/// The longest wait a browser's timer takes (2^31 - 1 ms, about 24 days).
const LONGEST_TIMER_MS: Millis = 2_147_483_647;

fn token_key(checkout_id: &str) -> String {
    format!("{TOKEN_KEY_PREFIX}{checkout_id}")
}

/// The token this page was opened with: the address's fragment, taken out of
/// the address bar at once (`replaceState`: left neither in the history nor in
/// an address copied from the bar). It waits in this tab's `sessionStorage`
/// until the server has answered its claim, so a reload after a claim that
/// never reached the server can still make it. None (a reopen, by the
/// customer's own browser) is an empty token: the server's cookie answers for it.
fn take_token(checkout_id: &str) -> String {
    let Some(window) = web_sys::window() else { return String::new() };
    let session = window.session_storage().ok().flatten();
    let location = window.location();
    let fragment = location.hash().unwrap_or_default();
    if fragment.is_empty() {
        return session
            .and_then(|session| session.get_item(&token_key(checkout_id)).ok().flatten())
            .unwrap_or_default();
    }
    if let (Ok(history), Ok(path), Ok(query)) = (window.history(), location.pathname(), location.search()) {
        let state = history.state().unwrap_or(JsValue::NULL);
        let _ = history.replace_state_with_url(&state, "", Some(&format!("{path}{query}")));
    }
    let token = token_of(&fragment).to_owned();
    if let Some(session) = session {
        let _ = session.set_item(&token_key(checkout_id), &token);
    }
    token
}

fn forget_token(checkout_id: &str) {
    if let Some(session) = web_sys::window().and_then(|window| window.session_storage().ok().flatten()) {
        let _ = session.remove_item(&token_key(checkout_id));
    }
}

/// `/checkout/:id` as a route of the whole app (under `trunk serve`, or where
/// the server has no checkout bundle to send).
#[component]
pub fn CheckoutRoute() -> impl IntoView {
    let checkout_id = use_params_map().read_untracked().get("id").unwrap_or_default();
    view! { <CheckoutPage checkout_id=checkout_id/> }
}

/// Claims the checkout `checkout_id` with the link's token, and shows it.
#[component]
pub fn CheckoutPage(checkout_id: String) -> impl IntoView {
    let locale = use_locale();
    let token = take_token(&checkout_id);
    // The claim's answer; then the checkout as a later look found it, once it has moved on.
    let shown = RwSignal::new(None::<Claimed>);
    // The time now, as far as the page needs it: moved on when the checkout's time runs out.
    let now = RwSignal::new(now_ms());
    let claim = move || {
        let (checkout_id, token) = (checkout_id.clone(), token.clone());
        spawn_local(async move {
            // A look first: a browser that is already the checkout's customer
            // needs no claim, and one that is not yet gets its cookie from this
            // answer, so that a claim whose answer is lost is sent again as the
            // same customer (a claim from a new one would find the link used).
            let claimed = match api::checkout(&checkout_id).await {
                Ok(mine) => Claimed::of(Ok(mine)),
                Err(_) => Claimed::of(api::claim_checkout(&checkout_id, &token).await),
            };
            if claimed.is_definitive() {
                forget_token(&checkout_id);
            }
            show(shown, claimed);
        });
    };
    claim();
    name_the_tab(move || {
        let lang = locale.get();
        shown.with(|shown| match shown {
            Some(Claimed::Open(checkout)) => checkout_name(&checkout.name, &checkout.order_name, lang).0,
            Some(Claimed::LinkUsed) => tr!(lang, link_used_title).to_owned(),
            Some(Claimed::NotFound) => tr!(lang, checkout_not_found_title).to_owned(),
            Some(Claimed::Problem(_)) | None => tr!(lang, checkout_title).to_owned(),
        })
    });
    // Which view is shown, and where an open checkout stands: the focus follows a change.
    focus_heading_on_change("checkout-title", move || {
        shown.with(|shown| {
            shown.as_ref().map(|shown| {
                let standing = match shown {
                    Claimed::Open(checkout) => {
                        Some(standing(checkout.status, expires_at_ms(&checkout.expires_at), now.get()))
                    }
                    Claimed::LinkUsed | Claimed::NotFound | Claimed::Problem(_) => None,
                };
                (shown.view(), standing)
            })
        })
    });
    let said = move |text: fn(Lang) -> &'static str| move || text(locale.get());

    view! {
        <section class="card checkout" aria-labelledby="checkout-title">
            {move || match shown.get() {
                None => view! {
                    <h1 id="checkout-title" tabindex="-1">{said(|lang| tr!(lang, checkout_title))}</h1>
                    <p class="muted" aria-busy="true">{said(|lang| tr!(lang, loading_checkout))}</p>
                }.into_any(),
                Some(Claimed::Open(checkout)) => view! { <OpenCheckout checkout=*checkout shown=shown now=now/> }.into_any(),
                Some(Claimed::LinkUsed) => view! {
                    <div data-testid="link-used">
                        <h1 id="checkout-title" tabindex="-1">{said(|lang| tr!(lang, link_used_title))}</h1>
                        <p class="notice error" role="alert">{said(|lang| tr!(lang, link_used))}</p>
                    </div>
                }.into_any(),
                Some(Claimed::NotFound) => view! {
                    <h1 id="checkout-title" tabindex="-1">{said(|lang| tr!(lang, checkout_not_found_title))}</h1>
                    <p data-testid="checkout-not-found">{said(|lang| tr!(lang, checkout_not_found))}</p>
                }.into_any(),
                Some(Claimed::Problem(error)) => {
                    let claim = claim.clone();
                    view! {
                        <h1 id="checkout-title" tabindex="-1">{said(|lang| tr!(lang, checkout_title))}</h1>
                        <div class="notice error" role="alert">
                            <p>{move || error.message(locale.get())}</p>
                            <button class="button secondary" data-testid="retry" on:click=move |_| claim()>
                                {said(|lang| tr!(lang, try_again))}
                            </button>
                        </div>
                    }.into_any()
                }
            }}
        </section>
    }
}

/// When the checkout expires, in milliseconds since the epoch, if the page can read it.
fn expires_at_ms(expires_at: &str) -> Option<Millis> {
    let ms = js_sys::Date::parse(expires_at);
    (ms.is_finite() && ms >= 0.0).then_some(ms as Millis)
}

/// The order page of a checkout that has moved on from being open to pay.
fn order_page(checkout: &CustomerCheckout) -> Option<String> {
    (checkout.status != OrderStatus::Created)
        .then(|| format!("/orders/{}", String::from(js_sys::encode_uri_component(&checkout.order_id))))
}

/// Shows what the claim or a look answered; a checkout that has moved on is
/// shown by its order page instead, which takes this page's place in the history.
fn show(shown: RwSignal<Option<Claimed>>, claimed: Claimed) {
    if let Claimed::Open(checkout) = &claimed
        && let Some(order_page) = order_page(checkout)
        && web_sys::window().is_some_and(|window| window.location().replace(&order_page).is_ok())
    {
        return;
    }
    shown.set(Some(claimed));
}

/// Shows the checkout as a look at it found it, if it has moved on from being
/// open to pay (paid in another tab, closed); whether it had.
fn moved_on(shown: RwSignal<Option<Claimed>>, looked: CustomerCheckout) -> bool {
    let moved = looked.status != OrderStatus::Created;
    if moved {
        show(shown, Claimed::Open(Box::new(looked)));
    }
    moved
}

/// The checkout: whose it is, what it is, and what the customer can do with it now.
#[component]
fn OpenCheckout(checkout: CustomerCheckout, shown: RwSignal<Option<Claimed>>, now: RwSignal<Millis>) -> impl IntoView {
    let locale = use_locale();
    let CustomerCheckout {
        order_id,
        status,
        amount,
        order_name,
        name,
        lines,
        pay_with,
        expires_at,
        back,
        success_url,
        fail_url,
        failure: _,
    } = checkout;
    let expires_at_ms = expires_at_ms(&expires_at);
    redraw_at(expires_at_ms, now);
    let order = PlacedOrder { order_id, amount, order_name: order_name.clone(), success_url, fail_url };
    let shop = back.shop.clone();
    let heading = move || checkout_name(&name, &order_name, locale.get());
    let heading_lang = heading.clone();
    let said = move |text: fn(Lang) -> &'static str| move || text(locale.get());
    let amount_said = move |amount: u64| move || won(amount, locale.get());

    view! {
        <p class="muted checkout-shop" data-testid="checkout-shop">
            {move || with_shop_name(tr!(locale.get(), sold_by), &shop, locale.get(), false)}
        </p>
        <div class="order-head" data-checkout-status=status.as_str()>
            <h1 id="checkout-title" tabindex="-1" lang=move || heading_lang().1.map(Lang::tag)>{move || heading().0}</h1>
        </div>
        <table class="items">
            <caption class="visually-hidden">{said(|lang| tr!(lang, items_caption))}</caption>
            <thead>
                <tr>
                    <th scope="col">{said(|lang| tr!(lang, item))}</th>
                    <th scope="col">{said(|lang| tr!(lang, quantity))}</th>
                    <th scope="col" class="amount">{said(|lang| tr!(lang, unit_price))}</th>
                    <th scope="col">{said(|lang| tr!(lang, price))}</th>
                </tr>
            </thead>
            <tbody>
                {lines.into_iter().map(|line| view! {
                    <tr>
                        <td>{line.name.clone()}</td>
                        <td>{line.quantity}</td>
                        <td class="amount">{amount_said(line.unit_amount)}</td>
                        <td>{amount_said(line_amount(&line))}</td>
                    </tr>
                }).collect_view()}
            </tbody>
            <tfoot>
                <tr>
                    <th scope="row" colspan="3">{said(|lang| tr!(lang, total))}</th>
                    <td data-testid="checkout-total">{amount_said(amount)}</td>
                </tr>
            </tfoot>
        </table>
        {move || match standing(status, expires_at_ms, now.get()) {
            Standing::Payable => view! {
                <CheckoutPay order=order.clone() pay_with=pay_with.clone() expires_at_ms=expires_at_ms now=now shown=shown/>
            }.into_any(),
            Standing::TimeUp => view! {
                <div class="notice error" role="alert" data-testid="checkout-expired">
                    <h2>{said(|lang| tr!(lang, checkout_expired_title))}</h2>
                    <p>{said(|lang| tr!(lang, checkout_expired))}</p>
                </div>
                <div class="actions"><BackToShopLink back=back.clone() primary=true/></div>
            }.into_any(),
            // Shown by its order page (see `show`), on its way there.
            Standing::InProgress | Standing::Over => view! {
                <p class="muted" aria-busy="true">{said(|lang| tr!(lang, loading_checkout))}</p>
            }.into_any(),
        }}
    }
}

/// Sets `now` once `at_ms` has passed, so a page left open redraws when its time is up.
fn redraw_at(at_ms: Option<Millis>, now: RwSignal<Millis>) {
    let Some(wait_ms) = at_ms.and_then(|at_ms| at_ms.checked_sub(now_ms())) else { return };
    if wait_ms > LONGEST_TIMER_MS {
        return;
    }
    // A little after: a timer may fire a millisecond before the clock reads `at_ms`.
    let wait = Duration::from_millis(wait_ms + 50);
    if let Ok(timer) = set_timeout_with_handle(move || now.set(now_ms()), wait) {
        on_cleanup(move || timer.clear());
    }
}

/// Where Pay is in its short journey to the PG's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PayStep {
    Idle,
    Opening,
}

/// The choice of PG (when there is one to make) and Pay.
#[component]
fn CheckoutPay(
    order: PlacedOrder,
    pay_with: Vec<Pg>,
    expires_at_ms: Option<Millis>,
    now: RwSignal<Millis>,
    shown: RwSignal<Option<Claimed>>,
) -> impl IntoView {
    let locale = use_locale();
    let step = RwSignal::new(PayStep::Idle);
    // The first the shop allows, cards first.
    let pg = RwSignal::new(if pay_with.contains(&Pg::Toss) {
        Pg::Toss
    } else {
        pay_with.first().copied().unwrap_or(Pg::Toss)
    });
    // Said in the language of the moment it is shown.
    let error = RwSignal::new(None::<PayProblem>);
    // Not a signal: re-renders cannot reset it, and it is set before anything awaits.
    let in_flight = Arc::new(AtomicBool::new(false));
    let amount = order.amount;
    let order_id = order.order_id.clone();

    let pay = {
        let in_flight = in_flight.clone();
        move |_| {
            if in_flight.swap(true, Ordering::SeqCst) {
                return;
            }
            error.set(None);
            step.set(PayStep::Opening);
            let (order, in_flight) = (order.clone(), in_flight.clone());
            spawn_local(async move {
                // A look first: the checkout may have been paid in another tab
                // meanwhile. If the look fails, paying is still allowed: the
                // server refuses a second payment of an order itself.
                if let Ok(looked) = api::checkout(&order.order_id).await
                    && moved_on(shown, looked)
                {
                    return;
                }
                let now_ms = now_ms();
                if standing(OrderStatus::Created, expires_at_ms, now_ms) == Standing::TimeUp {
                    now.set(now_ms);
                    return;
                }
                let leaving = match pg.get_untracked() {
                    Pg::Toss => pay_by_card(&order).await,
                    // Prepared on the whole app's `/pay/kakaopay`: this page's first load carries none of it.
                    Pg::KakaoPay => pay_window::leave_for(
                        &kakaopay::step_url(&order.order_id, true),
                        payment_sdk::SDK_UNAVAILABLE.to_owned(),
                    ),
                };
                // The button stays busy while the browser leaves.
                let Err(problem) = leaving else { return };
                error.set(Some(problem));
                step.set(PayStep::Idle);
                in_flight.store(false, Ordering::SeqCst);
            });
        }
    };
    // Back from the PG's window (the Back button): Pay is usable again, and the
    // checkout is looked at again, in case it was paid meanwhile.
    pay_window::when_restored_from_cache(move || {
        step.set(PayStep::Idle);
        in_flight.store(false, Ordering::SeqCst);
        let order_id = order_id.clone();
        spawn_local(async move {
            if let Ok(looked) = api::checkout(&order_id).await {
                moved_on(shown, looked);
            }
        });
    });

    view! {
        <div class="summary">
            {(pay_with.len() > 1).then(|| view! { <PgChoice pg=pg offered=pay_with/> })}
            {move || error.get().map(|problem| view! {
                <p class="notice error" role="alert" data-testid="pay-error">{problem.message(locale.get())}</p>
            })}
            <button class="button primary pay" data-testid="pay" on:click=pay
                aria-disabled=move || (step.get() != PayStep::Idle).to_string()>
                {move || {
                    let lang = locale.get();
                    match step.get() {
                        PayStep::Idle => fill(tr!(lang, pay), &[&won(amount, lang)]),
                        PayStep::Opening => tr!(lang, opening_window).to_owned(),
                    }
                }}
            </button>
            <p class="muted small">{move || tr!(locale.get(), pay_note)}</p>
        </div>
    }
}

/// Opens Toss's card window for the checkout's order.
async fn pay_by_card(order: &PlacedOrder) -> Leaving {
    let sdk = api::payment_options().await.map_err(PayProblem::Api)?.sdk;
    pay_window::open_toss_window(&sdk, order, || {}).await
}

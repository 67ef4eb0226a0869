use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use leptos::prelude::*;
use leptos::task::spawn_local;
use payonce_api::{CreateOrderRequest, OrderSummary, Pg, Product};

use crate::api;
use crate::cart::{Cart, MAX_QUANTITY};
use crate::components::recent_order_dialog::RecentOrderDialog;
use crate::i18n::{Lang, fill, use_locale, won};
use crate::loader::Loaded;
use crate::page_title::name_the_tab;
use crate::pages::kakaopay;
use crate::pay_window::{Leaving, PayProblem, leave_for};
use crate::payment_sdk;
use crate::storage;
use crate::tr;

/// Where the Pay button is in its short journey to the PG window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PayStep {
    Idle,
    CheckingRecent,
    AwaitingChoice,
    CreatingOrder,
    Redirecting,
}

impl PayStep {
    fn label(self, total: u64, lang: Lang) -> String {
        match self {
            PayStep::Idle | PayStep::AwaitingChoice => fill(tr!(lang, pay), &[&won(total, lang)]),
            PayStep::CheckingRecent | PayStep::CreatingOrder => tr!(lang, creating_order).to_owned(),
            PayStep::Redirecting => tr!(lang, opening_window).to_owned(),
        }
    }
}

/// The cart: products, quantities, total, and Pay.
#[component]
pub fn CartPage() -> impl IntoView {
    let locale = use_locale();
    name_the_tab(move || tr!(locale.get(), cart_title).to_owned());
    let catalog = Loaded::new(api::catalog);
    let cart = RwSignal::new(storage::load_cart().unwrap_or_else(Cart::starter));
    Effect::new(move |_| cart.with(storage::save_cart));
    Effect::new(move |_| {
        if let Some(Ok(products)) = catalog.get() {
            cart.update(|cart| cart.retain_known(&products));
        }
    });

    view! {
        <section class="card cart" aria-labelledby="cart-title">
            <h1 id="cart-title">{move || tr!(locale.get(), cart_title)}</h1>
            {move || match catalog.get() {
                None => view! { <p class="muted" aria-busy="true">{move || tr!(locale.get(), loading_products)}</p> }.into_any(),
                Some(Err(error)) => view! {
                    <div class="notice error" role="alert">
                        <p>{move || error.message(locale.get())}</p>
                        <button class="button secondary" on:click=move |_| catalog.reload()>{move || tr!(locale.get(), try_again)}</button>
                    </div>
                }.into_any(),
                Some(Ok(products)) => view! { <CartContents products=products cart=cart/> }.into_any(),
            }}
        </section>
    }
}

/// The product lines and the checkout summary.
#[component]
fn CartContents(products: Vec<Product>, cart: RwSignal<Cart>) -> impl IntoView {
    let lines = products.clone();
    let total = Memo::new(move |_| cart.with(|cart| cart.total(&products)));
    view! {
        <ul class="lines">
            {lines.into_iter().map(|product| view! { <CartLine product=product cart=cart/> }).collect_view()}
        </ul>
        <PaySummary cart=cart total=total/>
    }
}

fn product_name(product: &Product, lang: Lang) -> &str {
    match lang {
        Lang::En => &product.name,
        Lang::Ko => &product.name_ko,
    }
}

fn product_description(product: &Product, lang: Lang) -> &str {
    match lang {
        Lang::En => &product.description,
        Lang::Ko => &product.description_ko,
    }
}

/// One product with its quantity stepper.
#[component]
fn CartLine(product: Product, cart: RwSignal<Cart>) -> impl IntoView {
    let locale = use_locale();
    let sku = product.sku.clone();
    let quantity = Memo::new({
        let sku = sku.clone();
        move |_| cart.with(|cart| cart.quantity(&sku))
    });
    let change = move |delta: i64| {
        let sku = sku.clone();
        move |_| {
            cart.update(|cart| {
                let next = (i64::from(cart.quantity(&sku)) + delta).clamp(0, i64::from(MAX_QUANTITY));
                cart.set(&sku, next as u32);
            })
        }
    };
    let price = product.price;
    let sku_attribute = product.sku.clone();
    let product = StoredValue::new(product);
    // The product's name or description in the page's language.
    let said =
        move |part: fn(&Product, Lang) -> &str| product.with_value(|product| part(product, locale.get()).to_owned());
    let labelled = move |template: fn(Lang) -> &'static str| {
        let lang = locale.get();
        fill(template(lang), &[&said(product_name)])
    };
    view! {
        <li class="line" data-sku=sku_attribute>
            <div class="line-text">
                <h2 class="line-name">{move || said(product_name)}</h2>
                <p class="muted">{move || said(product_description)}</p>
                <p class="price">{move || won(price, locale.get())}</p>
            </div>
            // At a limit a step is aria-disabled, not disabled: a disabled button
            // drops the focus to the page's body; this one keeps it (and `change`
            // clamps, so pressing it does nothing).
            <div class="stepper" role="group" aria-label=move || labelled(|lang| tr!(lang, quantity_of))>
                <button class="step" aria-label=move || labelled(|lang| tr!(lang, one_fewer)) on:click=change(-1)
                    aria-disabled=move || (quantity.get() == 0).to_string()>"−"</button>
                <output class="quantity" aria-live="polite">{move || quantity.get()}</output>
                <button class="step" aria-label=move || labelled(|lang| tr!(lang, one_more)) on:click=change(1)
                    aria-disabled=move || (quantity.get() >= MAX_QUANTITY).to_string()>"+"</button>
            </div>
        </li>
    }
}

/// Places the order and opens Toss's card window.
async fn open_toss_window(request: CreateOrderRequest, step: RwSignal<PayStep>) -> Leaving {
    // The SDK is asked for before the order exists: without it there is nothing to pay with.
    let sdk = api::payment_options().await.map_err(PayProblem::Api)?.sdk;
    let created = api::create_order(&request).await.map_err(PayProblem::Api)?;
    storage::remember_payment_window(&created.order_id);
    step.set(PayStep::Redirecting);
    // Returns only if the window did not open, or the customer closed it.
    let code = payment_sdk::pay(&sdk, &created).await;
    if payment_sdk::closed_by_customer(&code) {
        return leave_for(&payment_sdk::closed_window_url(&created.fail_url, &created.order_id), code);
    }
    Err(PayProblem::WindowNotOpened(code))
}

/// Places the order and goes on to KakaoPay's window through the whole app's
/// `/pay/kakaopay`, which has the server prepare its KakaoPay payment.
async fn open_kakaopay_window(request: CreateOrderRequest, step: RwSignal<PayStep>) -> Leaving {
    let created = api::create_order(&request).await.map_err(PayProblem::Api)?;
    step.set(PayStep::Redirecting);
    leave_for(&kakaopay::step_url(&created.order_id, false), payment_sdk::SDK_UNAVAILABLE.to_owned())
}

/// The total and the Pay button, with the recent-order check before paying.
#[component]
fn PaySummary(cart: RwSignal<Cart>, total: Memo<u64>) -> impl IntoView {
    let locale = use_locale();
    let step = RwSignal::new(PayStep::Idle);
    // Card (Toss) unless the customer chooses KakaoPay, where the shop takes it.
    let pg = RwSignal::new(Pg::Toss);
    // Offered once the config says so; a config that cannot be read offers cards only.
    let kakaopay_offered = RwSignal::new(false);
    spawn_local(
        async move { kakaopay_offered.set(api::payment_options().await.is_ok_and(|options| options.kakaopay)) },
    );
    // Said in the language of the moment it is shown.
    let error = RwSignal::new(None::<PayProblem>);
    let recent = RwSignal::new(None::<OrderSummary>);
    // Not a signal: re-renders cannot reset it, and it is set before anything awaits.
    let in_flight = Arc::new(AtomicBool::new(false));

    let create_and_go = {
        let in_flight = in_flight.clone();
        move || {
            let in_flight = in_flight.clone();
            step.set(PayStep::CreatingOrder);
            let request = CreateOrderRequest { items: cart.get_untracked().to_request() };
            let through = pg.get_untracked();
            spawn_local(async move {
                let leaving = match through {
                    Pg::Toss => open_toss_window(request, step).await,
                    Pg::KakaoPay => open_kakaopay_window(request, step).await,
                };
                // The button stays busy while the browser leaves.
                let Err(problem) = leaving else { return };
                error.set(Some(problem));
                step.set(PayStep::Idle);
                in_flight.store(false, Ordering::SeqCst);
            });
        }
    };
    let pay = {
        let in_flight = in_flight.clone();
        let create_and_go = create_and_go.clone();
        move |_| {
            if cart.with_untracked(Cart::is_empty) || in_flight.swap(true, Ordering::SeqCst) {
                return;
            }
            error.set(None);
            step.set(PayStep::CheckingRecent);
            let create_and_go = create_and_go.clone();
            spawn_local(async move {
                // If the check itself fails, paying is still allowed: the warning is a courtesy.
                match api::recent_payment().await {
                    Ok(Some(order)) => {
                        step.set(PayStep::AwaitingChoice);
                        recent.set(Some(order));
                    }
                    Ok(None) | Err(_) => create_and_go(),
                }
            });
        }
    };
    let on_choice = {
        let in_flight = in_flight.clone();
        Callback::new(move |pay_anyway: bool| {
            recent.set(None);
            if pay_anyway {
                create_and_go();
            } else {
                step.set(PayStep::Idle);
                in_flight.store(false, Ordering::SeqCst);
            }
        })
    };
    // Coming back from the PG window with the Back button restores this page from
    // the back/forward cache with the button still busy; make it usable again.
    let restored = window_event_listener(leptos::ev::pageshow, move |event| {
        if event.persisted() {
            step.set(PayStep::Idle);
            in_flight.store(false, Ordering::SeqCst);
        }
    });
    on_cleanup(move || restored.remove());

    view! {
        <div class="summary">
            <p class="total">
                <span>{move || tr!(locale.get(), total)}</span>
                <strong data-testid="cart-total">{move || won(total.get(), locale.get())}</strong>
            </p>
            {move || kakaopay_offered.get().then(|| view! { <PgChoice pg=pg/> })}
            {move || error.get().map(|problem| view! {
                <p class="notice error" role="alert" data-testid="pay-error">{problem.message(locale.get())}</p>
            })}
            <button
                class="button primary pay"
                data-testid="pay"
                on:click=pay
                aria-disabled=move || (step.get() != PayStep::Idle).to_string()
                disabled=move || total.get() == 0
            >
                {move || step.get().label(total.get(), locale.get())}
            </button>
            <p class="muted small">{move || tr!(locale.get(), pay_note)}</p>
            {move || recent.get().map(|order| view! { <RecentOrderDialog order=order on_close=on_choice/> })}
        </div>
    }
}

/// Card or KakaoPay: radio buttons, so a keyboard moves between them with the
/// arrows and a screen reader names the group and the choice.
#[component]
fn PgChoice(pg: RwSignal<Pg>) -> impl IntoView {
    let locale = use_locale();
    let option = move |value: Pg, name: fn(Lang) -> &'static str| {
        view! {
            <label class="pg-option">
                <input type="radio" name="pg" checked=pg.get_untracked() == value
                    on:change=move |_| pg.set(value)/>
                {move || name(locale.get())}
            </label>
        }
    };
    view! {
        <fieldset class="pg-choice" data-testid="pg-choice">
            <legend>{move || tr!(locale.get(), pay_with)}</legend>
            {option(Pg::Toss, |lang| tr!(lang, pay_by_card))}
            {option(Pg::KakaoPay, |lang| tr!(lang, kakaopay))}
        </fieldset>
    }
}

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use leptos::prelude::*;
use leptos::task::spawn_local;
use payonce_api::{CreateOrderRequest, Order, Product};

use crate::api;
use crate::cart::{Cart, MAX_QUANTITY};
use crate::components::recent_order_dialog::RecentOrderDialog;
use crate::format::format_krw;
use crate::loader::Loaded;
use crate::storage;

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
    fn label(self, total: u64) -> String {
        match self {
            PayStep::Idle | PayStep::AwaitingChoice => format!("Pay {}", format_krw(total)),
            PayStep::CheckingRecent | PayStep::CreatingOrder => "Creating your order…".to_owned(),
            PayStep::Redirecting => "Opening the payment window…".to_owned(),
        }
    }
}

/// The cart: products, quantities, total, and Pay.
#[component]
pub fn CartPage() -> impl IntoView {
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
            <h1 id="cart-title">"Your cart"</h1>
            {move || match catalog.get() {
                None => view! { <p class="muted" aria-busy="true">"Loading products…"</p> }.into_any(),
                Some(Err(error)) => view! {
                    <div class="notice error" role="alert">
                        <p>{error.message()}</p>
                        <button class="button secondary" on:click=move |_| catalog.reload()>"Try again"</button>
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

/// One product with its quantity stepper.
#[component]
fn CartLine(product: Product, cart: RwSignal<Cart>) -> impl IntoView {
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
    let name = product.name.clone();
    view! {
        <li class="line" data-sku=product.sku.clone()>
            <div class="line-text">
                <h2 class="line-name">{product.name.clone()}</h2>
                <p class="muted">{product.description.clone()}</p>
                <p class="price">{format_krw(product.price)}</p>
            </div>
            <div class="stepper" role="group" aria-label=format!("Quantity of {name}")>
                <button class="step" aria-label=format!("One fewer {name}") on:click=change(-1)
                    disabled=move || { quantity.get() == 0 }>"−"</button>
                <output class="quantity" aria-live="polite">{move || quantity.get()}</output>
                <button class="step" aria-label=format!("One more {name}") on:click=change(1)
                    disabled=move || { quantity.get() >= MAX_QUANTITY }>"+"</button>
            </div>
        </li>
    }
}

/// The total and the Pay button, with the recent-order check before paying.
#[component]
fn PaySummary(cart: RwSignal<Cart>, total: Memo<u64>) -> impl IntoView {
    let step = RwSignal::new(PayStep::Idle);
    let error = RwSignal::new(None::<String>);
    let recent = RwSignal::new(None::<Order>);
    // Not a signal: re-renders cannot reset it, and it is set before anything awaits.
    let in_flight = Arc::new(AtomicBool::new(false));

    let create_and_go = {
        let in_flight = in_flight.clone();
        move || {
            let in_flight = in_flight.clone();
            step.set(PayStep::CreatingOrder);
            let request = CreateOrderRequest { items: cart.get_untracked().to_request() };
            spawn_local(async move {
                match api::create_order(&request).await {
                    Ok(created) => {
                        step.set(PayStep::Redirecting);
                        let _ = window().location().assign(&created.payment_window_url);
                    }
                    Err(failure) => {
                        error.set(Some(failure.message()));
                        step.set(PayStep::Idle);
                        in_flight.store(false, Ordering::SeqCst);
                    }
                }
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
                <span>"Total"</span>
                <strong data-testid="cart-total">{move || format_krw(total.get())}</strong>
            </p>
            {move || error.get().map(|message| view! { <p class="notice error" role="alert">{message}</p> })}
            <button
                class="button primary pay"
                data-testid="pay"
                on:click=pay
                aria-disabled=move || (step.get() != PayStep::Idle).to_string()
                disabled=move || total.get() == 0
            >
                {move || step.get().label(total.get())}
            </button>
            <p class="muted small">"You will choose a test card in the payment window."</p>
            {move || recent.get().map(|order| view! { <RecentOrderDialog order=order on_close=on_choice/> })}
        </div>
    }
}

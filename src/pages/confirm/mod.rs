//! `/pay/success`: where the PG window sends the customer back. Sends the confirm
//! POST once, waits, checks, and shows the outcome. The rules are in `flow`;
//! `runner` carries out its effects; this module only shows the state.

mod runner;

use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::{use_navigate, use_query_map};
use payonce_api::{Failure, PageConfig};

use self::runner::Runner;
use crate::api;
use crate::clock::now_ms;
use crate::components::toast::Toaster;
use crate::flow::{Event, Flow, Millis, State, SuccessParams};
use crate::format::{format_krw, seconds};
use crate::nav_guard::NavGuard;
use crate::storage;

/// Longest wait for `/api/config` before the compiled-in timings are used.
const CONFIG_WAIT: Duration = Duration::from_secs(3);
/// How often the elapsed time and the progress bar move.
const TICK: Duration = Duration::from_millis(500);
const STAY_MESSAGE: &str = "Your payment is being processed. Please stay on this page until it finishes.";

/// The confirm page.
#[component]
pub fn ConfirmPage() -> impl IntoView {
    let query = use_query_map().get_untracked();
    let params = SuccessParams::from_query(|name| query.get(name));
    let state = RwSignal::new(State::Starting);
    let now = RwSignal::new(now_ms());
    let toaster = expect_context::<Toaster>();
    let runner = StoredValue::new_local(None::<Rc<Runner>>);

    // Cleared when the page goes away: a customer who leaves while the timings load
    // has not started a payment, and none must start behind their back.
    let on_page = Arc::new(AtomicBool::new(true));
    let still_here = on_page.clone();
    spawn_local(async move {
        let timings = api::page_config(CONFIG_WAIT).await.unwrap_or_else(|error| {
            leptos::logging::warn!("using default timings: {error:?}");
            PageConfig::DEFAULT
        });
        if !still_here.load(Ordering::SeqCst) {
            return;
        }
        let guard = NavGuard::install(move || toaster.show(STAY_MESSAGE));
        let started = Runner::new(Flow::new(timings), state, guard);
        runner.set_value(Some(started.clone()));
        let stored = params.as_ref().ok().and_then(|params| storage::load_attempt(&params.order_id));
        started.dispatch(Event::Opened { params, stored, now: now_ms() });
    });

    let ticker = set_interval_with_handle(move || now.set(now_ms()), TICK).ok();
    on_cleanup(move || {
        on_page.store(false, Ordering::SeqCst);
        if let Some(ticker) = ticker {
            ticker.clear();
        }
        if let Some(runner) = runner.try_get_value().flatten() {
            runner.dispose();
        }
    });

    view! {
        <section class="card confirm" aria-labelledby="confirm-title" data-payment-state=move || state.with(State::name)>
            {move || state.with(|state| state_view(state, now))}
        </section>
    }
}

fn state_view(state: &State, now: RwSignal<Millis>) -> AnyView {
    match state.clone() {
        State::Starting | State::Verifying | State::Claiming => {
            busy_view("Preparing your payment", "One moment.", None).into_any()
        }
        State::Submitting { started_at } => busy_view(
            "Processing your payment",
            "Please keep this page open while your card is charged. This usually takes a few seconds.",
            Some((started_at, now)),
        )
        .into_any(),
        State::Checking { started_at, polls_done, polls_total, window_ends_at } => {
            checking_view(started_at, polls_done, polls_total, window_ends_at, now).into_any()
        }
        // The last check: the server is asked for its final word.
        State::Closing { started_at, polls_total, window_ends_at } => {
            checking_view(started_at, polls_total, polls_total, window_ends_at, now).into_any()
        }
        State::Paid { order_id, amount } => paid_view(order_id, amount).into_any(),
        State::Refunded { order_id, amount, partial } => refunded_view(order_id, amount, partial).into_any(),
        State::Failed { order_id, failure } => failed_view(order_id, failure).into_any(),
        State::Unresolved { order_id } => unresolved_view(order_id).into_any(),
        State::Elsewhere { order_id } => elsewhere_view(order_id).into_any(),
        State::Invalid { message } => view! {
            <div role="status" aria-live="polite">
                <h1 id="confirm-title">"This payment link is incomplete"</h1>
                <p>{message}</p>
                <p class="muted">"No payment was sent from this page."</p>
            </div>
            <div class="actions"><a href="/orders" class="button secondary">"See your orders"</a></div>
        }
        .into_any(),
    }
}

fn busy_view(title: &'static str, text: &'static str, waiting: Option<(Millis, RwSignal<Millis>)>) -> impl IntoView {
    view! {
        <div class="spinner" aria-hidden="true"></div>
        <div role="status" aria-live="polite">
            <h1 id="confirm-title">{title}</h1>
            <p>{text}</p>
        </div>
        {waiting.map(|(started_at, now)| view! {
            <p class="muted elapsed" data-testid="elapsed">
                {move || format!("Waiting {}", seconds(now.get().saturating_sub(started_at)))}
            </p>
        })}
    }
}

fn checking_view(
    started_at: Millis,
    polls_done: u32,
    polls_total: u32,
    window_ends_at: Millis,
    now: RwSignal<Millis>,
) -> impl IntoView {
    let progress = move || {
        let span = window_ends_at.saturating_sub(started_at).max(1);
        let spent = now.get().saturating_sub(started_at).min(span);
        spent * 100 / span
    };
    let check = (polls_done + 1).min(polls_total);
    view! {
        <div class="spinner" aria-hidden="true"></div>
        <div role="status" aria-live="polite">
            <h1 id="confirm-title">"Checking your payment"</h1>
            <p>"The payment provider is taking longer than usual. We are checking with them; you will not be charged twice."</p>
            <p class="check-count" data-testid="check-count">{format!("Check {check} of {polls_total}")}</p>
        </div>
        <div class="progress" role="progressbar" aria-label="Time spent checking" aria-valuemin="0" aria-valuemax="100"
            aria-valuenow=move || progress().to_string()>
            <div class="progress-bar" style:width=move || format!("{}%", progress())></div>
        </div>
        <p class="muted small">"Please keep this page open."</p>
    }
}

fn paid_view(order_id: String, amount: u64) -> impl IntoView {
    let said = view! { <p>"Thank you. You paid " <strong>{format_krw(amount)}</strong> "."</p> };
    charged_view(("paid", "✓"), "Payment complete", said, order_id)
}

fn refunded_view(order_id: String, amount: u64, partial: bool) -> impl IntoView {
    let (title, text) = if partial {
        ("Paid, partly refunded", "went through, and part of it has since been refunded to your card.")
    } else {
        ("Payment refunded", "went through and was then cancelled; the whole amount is refunded to your card.")
    };
    let said = view! { <p>"Your payment of " <strong>{format_krw(amount)}</strong> " " {text}</p> };
    charged_view(("refunded", "↺"), title, said, order_id)
}

/// An outcome in which the card was charged: what happened, and the way to the order.
fn charged_view(
    icon: (&'static str, &'static str),
    title: &'static str,
    said: impl IntoView,
    order_id: String,
) -> impl IntoView {
    view! {
        <div class=format!("outcome-icon {}", icon.0) aria-hidden="true">{icon.1}</div>
        <div role="status" aria-live="polite">
            <h1 id="confirm-title">{title}</h1>
            {said}
            <p class="muted">"Order " <code>{order_id.clone()}</code></p>
        </div>
        <div class="actions">
            <a href=format!("/orders/{order_id}") class="button primary">"View your order"</a>
            <a href="/" class="button secondary">"Continue shopping"</a>
        </div>
    }
}

fn failed_view(order_id: String, failure: Failure) -> impl IntoView {
    let navigate = use_navigate();
    view! {
        <div class="outcome-icon failed" aria-hidden="true">"!"</div>
        <div role="status" aria-live="polite">
            <h1 id="confirm-title">"Payment failed"</h1>
            <p data-testid="failure-message">{failure.message}</p>
            <p class="muted small">"Reason code " <code>{failure.code}</code></p>
        </div>
        <div class="actions">
            <button class="button primary" on:click=move |_| navigate("/", Default::default())>"Try again"</button>
            <a href=format!("/orders/{order_id}") class="button secondary">"View the order"</a>
        </div>
    }
}

fn elsewhere_view(order_id: String) -> impl IntoView {
    view! {
        <div class="outcome-icon unresolved" aria-hidden="true">"?"</div>
        <div role="status" aria-live="polite">
            <h1 id="confirm-title">"This order was placed in another browser"</h1>
            <p>"This browser cannot see order " <code>{order_id}</code> ", so this page cannot tell how its payment went. Open your orders in the browser you paid with: they show whether it was paid."</p>
        </div>
        <div class="actions"><a href="/orders" class="button secondary">"Orders in this browser"</a></div>
    }
}

fn unresolved_view(order_id: String) -> impl IntoView {
    view! {
        <div class="outcome-icon unresolved" aria-hidden="true">"…"</div>
        <div role="status" aria-live="polite">
            <h1 id="confirm-title">"We could not confirm your payment yet"</h1>
            <p>"It will be settled shortly, and you will not be charged twice. Your order page shows the result as soon as we know it."</p>
        </div>
        <div class="actions">
            <a href=format!("/orders/{order_id}") class="button primary">"See your order"</a>
        </div>
    }
}

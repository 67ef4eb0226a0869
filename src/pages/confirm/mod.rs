//! `/pay/success`: where the PG window sends the customer back. Sends the confirm
//! POST once, waits, checks, and shows the outcome. The rules are in `flow`
//! (what a PG's window sends back is read by `flow::returned`);
//! `runner` carries out its effects; this module only shows the state.

mod runner;

use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::{use_navigate, use_query_map};
use payonce_api::{BackToShop, Failure, PageConfig};

use self::runner::Runner;
use crate::api;
use crate::clock::now_ms;
use crate::components::back_to_shop::BackToShopLink;
use crate::components::toast::Toaster;
use crate::flow::{Event, Flow, InvalidLink, Millis, State, returned};
use crate::focus::focus_by_id;
use crate::i18n::{Locale, Texts, fill, use_locale, won};
use crate::nav_guard::NavGuard;
use crate::page_title::name_the_tab;
use crate::storage;

/// Longest wait for `/api/config` before the compiled-in timings are used.
const CONFIG_WAIT: Duration = Duration::from_secs(3);
/// How often the elapsed time and the progress bar move.
const TICK: Duration = Duration::from_millis(500);

/// The confirm page.
#[component]
pub fn ConfirmPage() -> impl IntoView {
    let query = use_query_map().get_untracked();
    let pg = returned::pg_of(|name| query.get(name));
    let params = returned::success_params(pg, |name| query.get(name));
    let state = RwSignal::new(State::Starting);
    let now = RwSignal::new(now_ms());
    let toaster = expect_context::<Toaster>();
    let locale = use_locale();
    let runner = StoredValue::new_local(None::<Rc<Runner>>);
    // Learned from the server's answers about the order.
    let way_back = RwSignal::new(None::<Option<BackToShop>>);
    learn_the_way_back_at_the_end(state, way_back);

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
        let guard = NavGuard::install(move || toaster.show(locale.texts().stay_on_page));
        let started = Runner::new(Flow::new(timings), pg, state, way_back, guard);
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

    let said = Memo::new(move |_| state.with(|state| announcement(state, locale)));
    name_the_tab(move || said.with(|said| said.title.clone()));
    focus_the_outcome(said);
    view! {
        <section class="card confirm" aria-labelledby="confirm-title" data-payment-state=move || state.with(State::name)>
            {move || state.with(|state| state_view(state, now, locale, way_back))}
        </section>
        // Always in the page, so a screen reader hears each change of their text
        // once: progress politely, the outcome at once.
        <p class="visually-hidden" role="status" data-testid="announced-progress">
            {move || said.with(|said| (!said.outcome).then(|| said.sentence()))}
        </p>
        <p class="visually-hidden" role="alert" data-testid="announced-outcome">
            {move || said.with(|said| said.outcome.then(|| said.sentence()))}
        </p>
    }
}

/// What a state says to someone who cannot see it: its heading and its first
/// sentence, and whether it is the outcome. The same for every check, so
/// checking is announced once, not every 2 s.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Announcement {
    title: String,
    text: String,
    outcome: bool,
}

impl Announcement {
    fn sentence(&self) -> String {
        format!("{} {}", self.title, self.text)
    }
}

fn announcement(state: &State, locale: Locale) -> Announcement {
    let t = locale.texts();
    let (title, text) = match state {
        State::Starting | State::Verifying | State::Claiming => (t.preparing, t.one_moment.to_owned()),
        State::Submitting { .. } => (t.processing, t.processing_text.to_owned()),
        State::Checking { .. } | State::Closing { .. } => (t.checking, t.checking_text.to_owned()),
        State::Paid { amount, .. } => (t.paid_title, fill(t.paid_text, &[&won(*amount, locale.get())])),
        State::Refunded { amount, partial: false, .. } => {
            (t.refunded_title, fill(t.refunded_text, &[&won(*amount, locale.get())]))
        }
        State::Refunded { amount, partial: true, .. } => {
            (t.refunded_partly_title, fill(t.refunded_partly_text, &[&won(*amount, locale.get())]))
        }
        State::Failed { failure, .. } => (t.failed_title, t.reasons.for_code(&failure.code).to_owned()),
        State::Unresolved { .. } => (t.unresolved_title, t.unresolved_text.to_owned()),
        State::Elsewhere { order_id } => (t.elsewhere_title, fill(t.elsewhere_text, &[order_id])),
        State::Invalid { .. } => (t.invalid_title, t.invalid_nothing_sent.to_owned()),
    };
    Announcement { title: title.to_owned(), text, outcome: state.is_final() }
}

/// Whether the order is a shop's checkout, and its way back to the shop: `None`
/// until an answer about the order came, `Some(None)` for the cart's own orders.
type WayBack = RwSignal<Option<Option<BackToShop>>>;

/// The order whose payment journey `state` ends, if it ends in one this
/// browser can see (not another browser's order, not a broken link).
fn ended_order(state: &State) -> Option<&str> {
    match state {
        State::Paid { order_id, .. }
        | State::Refunded { order_id, .. }
        | State::Failed { order_id, .. }
        | State::Unresolved { order_id } => Some(order_id),
        State::Starting
        | State::Verifying
        | State::Claiming
        | State::Submitting { .. }
        | State::Checking { .. }
        | State::Closing { .. }
        | State::Elsewhere { .. }
        | State::Invalid { .. } => None,
    }
}

/// At the end of the journey, asks for the order if no answer about it came
/// before (an outcome kept from an earlier visit, a check that failed): a
/// shop's checkout shows the way back to the shop.
fn learn_the_way_back_at_the_end(state: RwSignal<State>, way_back: WayBack) {
    Effect::new(move |_| {
        let Some(order_id) = state.with(|state| ended_order(state).map(str::to_owned)) else { return };
        if way_back.get_untracked().is_some() {
            return;
        }
        spawn_local(async move {
            // An order this page cannot read now offers what a cart order does.
            let learned = api::order(&order_id).await.ok().and_then(|order| order.back);
            if way_back.try_get_untracked().is_some_and(|known| known.is_none()) {
                way_back.set(Some(learned));
            }
        });
    });
}

/// The outcome, when it comes, takes the focus to its heading, so a keyboard
/// user is not left on a button that is gone.
fn focus_the_outcome(said: Memo<Announcement>) {
    Effect::new(move |was_outcome: Option<bool>| {
        let outcome = said.with(|said| said.outcome);
        // Once, as the outcome arrives: not again when the language changes.
        if outcome && was_outcome != Some(true) {
            // After this render: the heading is the new state's.
            request_animation_frame(|| {
                focus_by_id("confirm-title");
            });
        }
        outcome
    });
}

/// `way_back`: the way back to the shop, when the order is a shop's checkout.
fn state_view(state: &State, now: RwSignal<Millis>, locale: Locale, way_back: WayBack) -> AnyView {
    let t = locale.texts();
    match state.clone() {
        State::Starting | State::Verifying | State::Claiming => busy_view(t.preparing, t.one_moment, None).into_any(),
        State::Submitting { started_at } => {
            busy_view(t.processing, t.processing_text, Some((started_at, now, t.waiting_for))).into_any()
        }
        State::Checking { started_at, checks_done, checks_total, window_ends_at } => {
            checking_view(t, started_at, checks_done, checks_total, window_ends_at, now).into_any()
        }
        // The last check: the server is asked for its final word.
        State::Closing { started_at, checks_total, window_ends_at } => {
            checking_view(t, started_at, checks_total, checks_total, window_ends_at, now).into_any()
        }
        State::Paid { order_id, amount } => paid_view(locale, order_id, amount, way_back).into_any(),
        State::Refunded { order_id, amount, partial } => {
            refunded_view(locale, order_id, amount, partial, way_back).into_any()
        }
        State::Failed { order_id, failure } => failed_view(t, order_id, failure, way_back).into_any(),
        State::Unresolved { order_id } => unresolved_view(t, order_id, way_back).into_any(),
        State::Elsewhere { order_id } => elsewhere_view(t, order_id).into_any(),
        State::Invalid { reason } => {
            let message = match reason {
                InvalidLink::Missing => t.invalid_missing.to_owned(),
                InvalidLink::Amount(amount) => fill(t.invalid_amount, &[&format!("{amount:?}")]),
            };
            view! {
                <div>
                    <h1 id="confirm-title" tabindex="-1">{t.invalid_title}</h1>
                    <p>{message}</p>
                    <p class="muted">{t.invalid_nothing_sent}</p>
                </div>
                <div class="actions"><a href="/orders" class="button secondary">{t.see_your_orders}</a></div>
            }
            .into_any()
        }
    }
}

/// A step still under way; `waiting` shows the seconds since `started_at` (in `template`).
fn busy_view(
    title: &'static str,
    text: &'static str,
    waiting: Option<(Millis, RwSignal<Millis>, &'static str)>,
) -> impl IntoView {
    view! {
        <div class="spinner" aria-hidden="true"></div>
        <div>
            <h1 id="confirm-title" tabindex="-1">{title}</h1>
            <p>{text}</p>
        </div>
        {waiting.map(|(started_at, now, template)| view! {
            <p class="muted elapsed" data-testid="elapsed">
                {move || fill(template, &[&(now.get().saturating_sub(started_at) / 1000).to_string()])}
            </p>
        })}
    }
}

fn checking_view(
    t: &'static Texts,
    started_at: Millis,
    checks_done: u32,
    checks_total: u32,
    window_ends_at: Millis,
    now: RwSignal<Millis>,
) -> impl IntoView {
    let progress = move || {
        let span = window_ends_at.saturating_sub(started_at).max(1);
        let spent = now.get().saturating_sub(started_at).min(span);
        spent * 100 / span
    };
    let check = (checks_done + 1).min(checks_total);
    let count = fill(t.check_count, &[&check.to_string(), &checks_total.to_string()]);
    view! {
        <div class="spinner" aria-hidden="true"></div>
        <div>
            <h1 id="confirm-title" tabindex="-1">{t.checking}</h1>
            <p>{t.checking_text}</p>
            // Shown, not announced: said every 2 s it would drown the sentence above.
            <p class="check-count" data-testid="check-count" aria-hidden="true">{count.clone()}</p>
        </div>
        <div class="progress" role="progressbar" aria-label=t.checking_progress aria-valuemin="0" aria-valuemax="100"
            aria-valuenow=move || progress().to_string() aria-valuetext=count data-testid="check-progress">
            <div class="progress-bar" style:width=move || format!("{}%", progress())></div>
        </div>
        <p class="muted small">{t.keep_open}</p>
    }
}

fn paid_view(locale: Locale, order_id: String, amount: u64, way_back: WayBack) -> impl IntoView {
    let t = locale.texts();
    let said = view! { <p>{fill(t.paid_text, &[&won(amount, locale.get())])}</p> };
    charged_view(t, ("paid", "✓"), t.paid_title, said, order_id, way_back)
}

fn refunded_view(locale: Locale, order_id: String, amount: u64, partial: bool, way_back: WayBack) -> impl IntoView {
    let t = locale.texts();
    let (title, text) =
        if partial { (t.refunded_partly_title, t.refunded_partly_text) } else { (t.refunded_title, t.refunded_text) };
    let said = view! { <p>{fill(text, &[&won(amount, locale.get())])}</p> };
    charged_view(t, ("refunded", "↺"), title, said, order_id, way_back)
}

/// An outcome in which the card was charged: what happened, the way to the
/// order, and on to shopping: back to the shop for a shop's checkout.
fn charged_view(
    t: &'static Texts,
    icon: (&'static str, &'static str),
    title: &'static str,
    said: impl IntoView,
    order_id: String,
    way_back: WayBack,
) -> impl IntoView {
    view! {
        <div class=format!("outcome-icon {}", icon.0) aria-hidden="true">{icon.1}</div>
        <div>
            <h1 id="confirm-title" tabindex="-1">{title}</h1>
            {said}
            <p class="muted">{t.order_label} " " <code>{order_id.clone()}</code></p>
        </div>
        <div class="actions">
            <a href=format!("/orders/{order_id}") class="button primary">{t.view_your_order}</a>
            {move || match way_back.get().flatten() {
                Some(back) => view! { <BackToShopLink back=back/> }.into_any(),
                None => view! { <a href="/" class="button secondary">{t.continue_shopping}</a> }.into_any(),
            }}
        </div>
    }
}

/// A failure in the page's own words for its code; the server's message is not
/// shown. A shop's checkout is not tried again here: the shop starts a new one.
fn failed_view(t: &'static Texts, order_id: String, failure: Failure, way_back: WayBack) -> impl IntoView {
    let navigate = use_navigate();
    let try_again = move || {
        let navigate = navigate.clone();
        view! { <button class="button primary" on:click=move |_| navigate("/", Default::default())>{t.try_again}</button> }
    };
    view! {
        <div class="outcome-icon failed" aria-hidden="true">"!"</div>
        <div>
            <h1 id="confirm-title" tabindex="-1">{t.failed_title}</h1>
            <p data-testid="failure-message">{t.reasons.for_code(&failure.code)}</p>
            <p class="muted small">{t.reason_code} " " <code>{failure.code}</code></p>
        </div>
        <div class="actions">
            {move || match way_back.get().flatten() {
                Some(back) => view! { <BackToShopLink back=back primary=true/> }.into_any(),
                None => try_again().into_any(),
            }}
            <a href=format!("/orders/{order_id}") class="button secondary">{t.view_the_order}</a>
        </div>
    }
}

fn elsewhere_view(t: &'static Texts, order_id: String) -> impl IntoView {
    view! {
        <div class="outcome-icon unresolved" aria-hidden="true">"?"</div>
        <div>
            <h1 id="confirm-title" tabindex="-1">{t.elsewhere_title}</h1>
            <p>{fill(t.elsewhere_text, &[&order_id])}</p>
        </div>
        <div class="actions"><a href="/orders" class="button secondary">{t.orders_in_this_browser}</a></div>
    }
}

/// Not known yet: the order's page will say; a shop's checkout can go back to
/// the shop meanwhile (the shop asks payonce, which settles the payment on its own).
fn unresolved_view(t: &'static Texts, order_id: String, way_back: WayBack) -> impl IntoView {
    view! {
        <div class="outcome-icon unresolved" aria-hidden="true">"…"</div>
        <div>
            <h1 id="confirm-title" tabindex="-1">{t.unresolved_title}</h1>
            <p>{t.unresolved_text}</p>
        </div>
        <div class="actions">
            <a href=format!("/orders/{order_id}") class="button primary">{t.see_your_order}</a>
            {move || way_back.get().flatten().map(|back| view! { <BackToShopLink back=back/> })}
        </div>
    }
}

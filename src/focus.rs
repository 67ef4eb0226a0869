//! Where the keyboard's focus goes when the content under it changes. A
//! focused element that is removed leaves the focus on the page's body: a
//! keyboard user starts again from the top, and a screen reader loses its place.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// Focuses the element with `id`, if the page has one. Elements that are not
/// controls need `tabindex="-1"`.
pub fn focus_by_id(id: &str) -> bool {
    let Some(element) = document().get_element_by_id(id) else { return false };
    element.unchecked_into::<web_sys::HtmlElement>().focus().is_ok()
}

/// After an in-app navigation, the new page's content takes the focus, as it
/// does from the skip link: the link or button that navigated is gone with its
/// page. A full page load leaves the focus where the browser puts it.
pub fn follow_navigation(pathname: Memo<String>) {
    Effect::new(move |previous: Option<String>| {
        let path = pathname.get();
        if previous.is_some_and(|previous| previous != path) {
            request_animation_frame(|| {
                focus_by_id("main");
            });
        }
        path
    });
}

/// Whether the keyboard's focus is nowhere: on the page's body, as a page
/// loaded fresh has it, or as an element removed with its content leaves it.
fn focus_is_lost() -> bool {
    let document = document();
    let body: Option<web_sys::Element> = document.body().map(Into::into);
    document.active_element().is_none_or(|active| Some(active) == body)
}

/// A page whose content changes from one state to another (an error to what
/// a retry loaded, open to expired): after each change of what `state` reads,
/// once the new content is drawn, its heading `heading_id` takes the focus if
/// nothing has it, so a keyboard or screen reader user starts from what
/// replaced the control they were on. `state` is `None` while the page has
/// nothing to show yet: its first content leaves the focus where the page's
/// load put it. A focus the customer put elsewhere (the header's language
/// switch) stays where it is.
pub fn focus_heading_on_change<T: PartialEq + 'static>(
    heading_id: &'static str,
    state: impl Fn() -> Option<T> + 'static,
) {
    Effect::new(move |previous: Option<Option<T>>| {
        let now = state();
        if let Some(Some(previous)) = &previous
            && now.as_ref() != Some(previous)
        {
            request_animation_frame(move || {
                if focus_is_lost() {
                    focus_by_id(heading_id);
                }
            });
        }
        now
    });
}

/// A region that redraws itself (an order refreshing as its payment settles,
/// a list as its orders change). It remembers what in it had the focus; when a
/// redraw took that away, the same control in the new content gets it back,
/// or, if there is none (the cancel button of an order now cancelled), the
/// region's heading.
#[derive(Clone, Copy)]
pub struct KeptFocus {
    /// How to find the focused control again: `#id`, its test id or its link.
    focused: StoredValue<Option<String>>,
    heading_id: &'static str,
}

impl KeptFocus {
    /// Gives the focus back after every change of what `redrawn` reads.
    pub fn new(heading_id: &'static str, redrawn: impl Fn() + 'static) -> Self {
        let kept = Self { focused: StoredValue::new(None), heading_id };
        Effect::new(move |first_run: Option<()>| {
            redrawn();
            if first_run.is_some() {
                // After this render: the new content is in the page.
                request_animation_frame(move || kept.give_back());
            }
        });
        kept
    }

    /// For the region's `on:focusin`.
    pub fn entered(self, event: web_sys::FocusEvent) {
        let found_again = event
            .target()
            .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
            .and_then(|element| selector(&element));
        self.focused.set_value(found_again);
    }

    /// For the region's `on:focusout`: the focus went elsewhere on purpose. A
    /// removed element has nowhere it went to, so it is still remembered.
    pub fn left(self, event: web_sys::FocusEvent, region: &web_sys::Element) {
        let went_to = event.related_target().and_then(|target| target.dyn_into::<web_sys::Node>().ok());
        if went_to.is_some_and(|node| !region.contains(Some(&node))) {
            self.focused.set_value(None);
        }
    }

    fn give_back(self) {
        let Some(selector) = self.focused.get_value().filter(|_| focus_is_lost()) else { return };
        let again = document().query_selector(&format!("#main {selector}")).ok().flatten();
        match again {
            Some(control) => {
                let _ = control.unchecked_into::<web_sys::HtmlElement>().focus();
            }
            None => {
                focus_by_id(self.heading_id);
            }
        }
    }
}

/// A selector that finds `element` again in redrawn content.
fn selector(element: &web_sys::Element) -> Option<String> {
    let attribute = |name: &str| element.get_attribute(name).filter(|value| !value.is_empty());
    if let Some(id) = attribute("id") {
        return Some(format!("[id=\"{id}\"]"));
    }
    if let Some(test_id) = attribute("data-testid") {
        return Some(format!("[data-testid=\"{test_id}\"]"));
    }
    attribute("href").map(|href| format!("[href=\"{href}\"]"))
}

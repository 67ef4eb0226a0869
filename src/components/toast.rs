use std::time::Duration;

use leptos::prelude::*;

/// How long a toast stays.
const TOAST_FOR: Duration = Duration::from_secs(4);

/// Short notices any page can show, read out by screen readers.
#[derive(Clone, Copy)]
pub struct Toaster {
    message: RwSignal<Option<(u64, String)>>,
    /// Every toast gets a new id, so a repeated notice is a new one to a screen reader.
    shown: StoredValue<u64>,
}

impl Toaster {
    pub fn new() -> Self {
        Self { message: RwSignal::new(None), shown: StoredValue::new(0) }
    }

    /// Shows `text`, replacing any toast on screen.
    pub fn show(&self, text: impl Into<String>) {
        self.shown.update_value(|shown| *shown += 1);
        let id = self.shown.get_value();
        self.message.set(Some((id, text.into())));
        let message = self.message;
        set_timeout(
            move || {
                if message.get_untracked().is_some_and(|(current, _)| current == id) {
                    message.set(None);
                }
            },
            TOAST_FOR,
        );
    }
}

impl Default for Toaster {
    fn default() -> Self {
        Self::new()
    }
}

/// Where toasts appear: an alert (the one toast is a refused navigation while
/// paying), always in the page so each is heard as it comes.
#[component]
pub fn ToastRegion() -> impl IntoView {
    let toaster = expect_context::<Toaster>();
    view! {
        <div class="toast-region" role="alert">
            {move || toaster.message.get().map(|(id, text)| view! { <p class="toast" data-testid="toast" data-toast-id=id>{text}</p> })}
        </div>
    }
}

//! The language in use: Korean for browsers that prefer it
//! (`navigator.languages`), English otherwise; the switch in the header
//! overrides that and is remembered in `localStorage`. `<html lang>` follows,
//! so the PG's window (which the SDK tells the page's language) and screen
//! readers speak the same language. The catalogs, amounts and names as each
//! language writes them are `payonce_screens::words`, re-exported here.

use leptos::prelude::*;
pub use payonce_screens::words::*;

/// Where the customer's choice is kept.
const STORAGE_KEY: &str = "payonce.lang";

/// The page's language, shared through the context of `App` and `CartApp`.
#[derive(Debug, Clone, Copy)]
pub struct Locale(RwSignal<Lang>);

impl Locale {
    /// The remembered choice, or the browser's preference; sets `<html lang>`.
    pub fn provide() -> Locale {
        let locale = Locale(RwSignal::new(stored().unwrap_or_else(browser_preference)));
        Effect::new(move |_| set_document_lang(locale.0.get()));
        provide_context(locale);
        locale
    }

    /// The language now. Tracked: views that read it follow a switch.
    pub fn get(self) -> Lang {
        self.0.get()
    }

    pub fn texts(self) -> &'static Texts {
        self.get().texts()
    }

    /// Switches language and remembers it for the next visit.
    pub fn set(self, lang: Lang) {
        if let Some(storage) = window().local_storage().ok().flatten() {
            let _ = storage.set_item(STORAGE_KEY, lang.tag());
        }
        self.0.set(lang);
    }
}

/// The page's [`Locale`], from context.
pub fn use_locale() -> Locale {
    expect_context::<Locale>()
}

fn stored() -> Option<Lang> {
    let storage = window().local_storage().ok().flatten()?;
    Lang::from_tag(&storage.get_item(STORAGE_KEY).ok().flatten()?)
}

fn browser_preference() -> Lang {
    let navigator = window().navigator();
    let languages: Vec<String> = navigator.languages().iter().filter_map(|tag| tag.as_string()).collect();
    let fallback = navigator.language();
    Lang::from_preferences(languages.iter().map(String::as_str).chain(fallback.as_deref()))
}

fn set_document_lang(lang: Lang) {
    let document = document();
    if let Some(root) = document.document_element() {
        let _ = root.set_attribute("lang", lang.tag());
    }
}

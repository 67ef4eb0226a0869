//! Dates as people read them (amounts: `i18n::won`).

use crate::i18n::Lang;

/// An RFC 3339 timestamp in the page's language and the reader's time zone,
/// e.g. "30 Nov 2026, 13:05" or "2026. 11. 30. 오후 1:05".
pub fn date_time(rfc3339: &str, lang: Lang) -> String {
    let date = js_sys::Date::new(&rfc3339.into());
    if date.get_time().is_nan() {
        return rfc3339.to_owned();
    }
    let options = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&options, &"dateStyle".into(), &"medium".into());
    let _ = js_sys::Reflect::set(&options, &"timeStyle".into(), &"short".into());
    date.to_locale_string(lang.tag(), &options).into()
}

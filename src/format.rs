//! Amounts and dates as people read them.

pub use payonce_api::money::format_krw;

/// An RFC 3339 timestamp in the reader's locale and time zone, e.g. "30 Nov 2026, 13:05".
pub fn date_time(rfc3339: &str) -> String {
    let date = js_sys::Date::new(&rfc3339.into());
    if date.get_time().is_nan() {
        return rfc3339.to_owned();
    }
    let options = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&options, &"dateStyle".into(), &"medium".into());
    let _ = js_sys::Reflect::set(&options, &"timeStyle".into(), &"short".into());
    date.to_locale_string("default", &options).into()
}

/// Whole seconds, for "Processing… 12 s".
pub fn seconds(ms: u64) -> String {
    format!("{} s", ms / 1000)
}

//! The time now, as the flow measures it: `Date.now()`, so it survives reloads.

use crate::flow::Millis;

pub fn now_ms() -> Millis {
    js_sys::Date::now() as Millis
}

//! JSON through the browser's own `JSON.parse` and `JSON.stringify`, with serde
//! types converted by `serde-wasm-bindgen`: the page carries no JSON parser of
//! its own (serde_json was about a tenth of the cart's wasm; see ARCHITECTURE.md).

use serde::Serialize;
use serde::de::DeserializeOwned;
use wasm_bindgen::JsValue;

use crate::js_fields::FromJs;

/// A serde type where a [`FromJs`] is asked for: the API client reads the
/// cart's answers field by field (`js_fields`) and every other answer through serde.
pub struct Serde<T>(pub T);

impl<T> Serde<T> {
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T: DeserializeOwned> FromJs for Serde<T> {
    fn from_js(value: JsValue) -> Result<Self, String> {
        from_js(value).map(Serde)
    }
}

/// `value` as a plain JavaScript value: maps as objects, numbers as numbers.
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> Option<JsValue> {
    value.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).ok()
}

/// A JavaScript value (as `Response.json()` or `JSON.parse` give it) as `T`.
pub fn from_js<T: DeserializeOwned>(value: JsValue) -> Result<T, String> {
    serde_wasm_bindgen::from_value(value).map_err(|error| error.to_string())
}

pub fn stringify<T: Serialize + ?Sized>(value: &T) -> Option<String> {
    js_sys::JSON::stringify(&to_js(value)?).ok().map(String::from)
}

pub fn parse<T: DeserializeOwned>(text: &str) -> Option<T> {
    from_js(js_sys::JSON::parse(text).ok()?).ok()
}

//! HTTP calls through the browser's own `fetch`, with the few options the page
//! uses: a method, headers, a JSON body and an abort signal. gloo-net's
//! wrapper did the same and brought along, into every bundle, serde_json's
//! error messages, the `http` crate's methods and `wasm-streams`.
//!
//! A page's first data is asked for by its HTML while the wasm downloads
//! (`cart.html`, `checkout.html`): `window.payonceEarly` maps each URL asked to
//! the promise of its response, and the page's first GET of that URL takes it
//! (once) instead of asking again, so it costs no round trip after the wasm starts.

use std::future::Future;

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, Headers, RequestInit, Response};

/// A request being built; [`Call::send`] sends it.
pub struct Call {
    url: String,
    init: RequestInit,
    headers: Option<Headers>,
    /// A plain GET, which an early answer can stand for.
    plain_get: bool,
}

impl Call {
    pub fn get(url: &str) -> Self {
        Self { plain_get: true, ..Self::new("GET", url) }
    }

    pub fn post(url: &str) -> Self {
        Self::new("POST", url)
    }

    fn new(method: &str, url: &str) -> Self {
        let init = RequestInit::new();
        init.set_method(method);
        Self { url: url.to_owned(), init, headers: Headers::new().ok(), plain_get: false }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.plain_get = false;
        if let Some(headers) = &self.headers {
            // A header the browser refuses (a forbidden name) is left out, as fetch would.
            let _ = headers.set(name, value);
        }
        self
    }

    /// `json` as the body, said to be JSON.
    pub fn json(self, json: &str) -> Self {
        self.init.set_body(&JsValue::from_str(json));
        self.header("Content-Type", "application/json")
    }

    /// Aborting `signal` cuts the request off, as no response.
    pub fn signal(mut self, signal: &AbortSignal) -> Self {
        self.plain_get = false;
        self.init.set_signal(Some(signal));
        self
    }

    /// Sends the request now, and gives the future of its response (of any
    /// status), or why none came (offline, refused, aborted).
    pub fn send(self) -> impl Future<Output = Result<Response, String>> + use<> {
        if let Some(headers) = &self.headers {
            self.init.set_headers(headers);
        }
        let fetch = web_sys::window()
            .map(|window| {
                let early = if self.plain_get { early(&window, &self.url) } else { None };
                JsFuture::from(early.unwrap_or_else(|| window.fetch_with_str_and_init(&self.url, &self.init)))
            })
            .ok_or_else(|| "no window to fetch from".to_owned());
        async move {
            let response = fetch?.await.map_err(|error| why(&error))?;
            response.dyn_into::<Response>().map_err(|_| "fetch gave no response".to_owned())
        }
    }
}

/// The response the page's HTML asked for `url` before the wasm started, taken
/// out so that a second GET of it (a reload) asks the server again.
fn early(window: &web_sys::Window, url: &str) -> Option<js_sys::Promise> {
    let asked =
        js_sys::Reflect::get(window, &JsValue::from_str("payonceEarly")).ok()?.dyn_into::<js_sys::Object>().ok()?;
    let url = JsValue::from_str(url);
    let answer = js_sys::Reflect::get(&asked, &url).ok()?.dyn_into::<js_sys::Promise>().ok()?;
    js_sys::Reflect::delete_property(&asked, &url).ok()?;
    Some(answer)
}

/// The text of a response's body.
pub async fn text(response: &Response) -> Result<String, String> {
    let reading = response.text().map_err(|error| why(&error))?;
    let text = JsFuture::from(reading).await.map_err(|error| why(&error))?;
    text.as_string().ok_or_else(|| "the body is not text".to_owned())
}

/// What a rejected promise says: an error's message (`Failed to fetch`, an abort's).
fn why(error: &JsValue) -> String {
    match error.dyn_ref::<js_sys::Error>() {
        Some(error) => format!("{}: {}", String::from(error.name()), String::from(error.message())),
        None => error.as_string().unwrap_or_else(|| "fetch failed".to_owned()),
    }
}

//! A shop's checkout as its page reads it (`/api/checkouts/{id}` and its
//! claim), field by field as the cart's answers are: through serde, these
//! answers made the checkout page's first load about 10 KB (gzip) heavier.

use payonce_api::{BackToShop, CheckoutLine, ClaimRequest, CustomerCheckout, Failure, Names, OrderStatus, Pg};
use wasm_bindgen::JsValue;

use super::{Fields, FromJs, ToJs, object};

/// An optional field: missing or `null` is none, as serde's `Option` reads it.
fn optional<T: FromJs>(fields: &Fields, name: &str) -> Result<Option<T>, String> {
    let value = fields.get(name);
    if value.is_undefined() { Ok(None) } else { Option::<T>::from_js(value) }
}

impl FromJs for String {
    fn from_js(value: JsValue) -> Result<Self, String> {
        value.as_string().ok_or_else(|| "a text is not a string".to_owned())
    }
}

impl FromJs for Names {
    fn from_js(value: JsValue) -> Result<Self, String> {
        let names = Fields::of(value, "a name")?;
        Ok(Names { en: optional(&names, "en")?, ko: optional(&names, "ko")? })
    }
}

impl FromJs for CheckoutLine {
    fn from_js(value: JsValue) -> Result<Self, String> {
        let line = Fields::of(value, "a line")?;
        let quantity = line.whole_number("quantity")?;
        Ok(CheckoutLine {
            name: line.text("name")?,
            quantity: u32::try_from(quantity).map_err(|_| "quantity is too large".to_owned())?,
            unit_amount: line.whole_number("unit_amount")?,
        })
    }
}

impl FromJs for Pg {
    fn from_js(value: JsValue) -> Result<Self, String> {
        let name = String::from_js(value)?;
        Pg::parse(&name).ok_or_else(|| format!("{name} is not a PG"))
    }
}

impl FromJs for BackToShop {
    fn from_js(value: JsValue) -> Result<Self, String> {
        let back = Fields::of(value, "the way back")?;
        Ok(BackToShop { shop: Names::from_js(back.get("shop"))?, url: back.text("url")? })
    }
}

impl FromJs for Failure {
    fn from_js(value: JsValue) -> Result<Self, String> {
        let failure = Fields::of(value, "the failure")?;
        Ok(Failure { code: failure.text("code")?, message: failure.text("message")? })
    }
}

impl FromJs for CustomerCheckout {
    fn from_js(value: JsValue) -> Result<Self, String> {
        let fields = Fields::of(value, "the checkout")?;
        let status = fields.text("status")?;
        Ok(CustomerCheckout {
            order_id: fields.text("order_id")?,
            status: OrderStatus::parse(&status).ok_or_else(|| format!("{status} is not an order status"))?,
            amount: fields.whole_number("amount")?,
            order_name: fields.text("order_name")?,
            name: Names::from_js(fields.get("name"))?,
            lines: Vec::from_js(fields.get("lines"))?,
            pay_with: Vec::from_js(fields.get("pay_with"))?,
            expires_at: fields.text("expires_at")?,
            back: BackToShop::from_js(fields.get("back"))?,
            success_url: fields.text("success_url")?,
            fail_url: fields.text("fail_url")?,
            failure: optional(&fields, "failure")?,
        })
    }
}

impl ToJs for ClaimRequest {
    fn to_js(&self) -> JsValue {
        object(&[("token", self.token.as_str().into())])
    }
}

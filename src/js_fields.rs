//! JSON read and written field by field, for what the cart at `/` exchanges:
//! the catalog, the PG's SDK, the order it places, KakaoPay's window, the recent-order check,
//! an error's code and the saved cart; and for a shop's checkout (`checkout`).
//!
//! The rest of the page decodes through serde (`json`). serde's deserializers
//! bring their error messages, and with them the formatting of floating-point
//! numbers: with them the cart's first load was 17 KB (gzip) heavier than
//! without, which was most of the gap to its size target (see ARCHITECTURE.md).
//! Each type here is read with the same strictness serde's derive has: a missing
//! field or a field of the wrong type is an error naming the field.

mod checkout;

use js_sys::{Array, JSON, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};

use crate::cart::Cart;
use payonce_api::{CreateOrderRequest, OrderStatus, OrderSummary, PaymentSdk, PgWindow, PlacedOrder, Product};

/// A value read from a plain JavaScript value.
pub trait FromJs: Sized {
    fn from_js(value: JsValue) -> Result<Self, String>;
}

/// A value written as a plain JavaScript value.
pub trait ToJs {
    fn to_js(&self) -> JsValue;
}

/// `text` (JSON) as `T`; `None` if it is not JSON or not a `T`.
pub fn parse<T: FromJs>(text: &str) -> Option<T> {
    T::from_js(JSON::parse(text).ok()?).ok()
}

/// `value` as JSON text.
pub fn stringify<T: ToJs + ?Sized>(value: &T) -> Option<String> {
    JSON::stringify(&value.to_js()).ok().map(String::from)
}

/// The fields of a JavaScript object.
pub struct Fields(Object);

impl Fields {
    /// `value` if it is an object (not null, not an array); `what` names it in the error.
    pub fn of(value: JsValue, what: &str) -> Result<Self, String> {
        if value.is_object() && !Array::is_array(&value) {
            Ok(Self(value.unchecked_into()))
        } else {
            Err(format!("{what} is not an object"))
        }
    }

    /// The field as it is (`undefined` when missing), for a [`FromJs`] to read.
    pub fn get(&self, name: &str) -> JsValue {
        Reflect::get(&self.0, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
    }

    pub fn text(&self, name: &str) -> Result<String, String> {
        self.get(name).as_string().ok_or_else(|| format!("{name} is not a string"))
    }

    /// A whole number from 0 up to 2^53 - 1: what JavaScript counts exactly.
    pub fn whole_number(&self, name: &str) -> Result<u64, String> {
        whole_number(&self.get(name)).ok_or_else(|| format!("{name} is not a whole number"))
    }

    pub fn object(&self, name: &str) -> Result<Fields, String> {
        Fields::of(self.get(name), name)
    }

    /// Each field's name and value, in the object's order.
    pub fn entries(&self) -> impl Iterator<Item = (String, JsValue)> {
        Object::entries(&self.0).into_iter().filter_map(|entry| {
            let entry: Array = entry.unchecked_into();
            Some((entry.get(0).as_string()?, entry.get(1)))
        })
    }
}

fn whole_number(value: &JsValue) -> Option<u64> {
    const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
    let number = value.as_f64()?;
    (number.fract() == 0.0 && (0.0..=MAX_SAFE_INTEGER).contains(&number)).then_some(number as u64)
}

/// A plain object with these fields, in this order.
pub fn object(fields: &[(&str, JsValue)]) -> JsValue {
    let object = Object::new();
    for (name, value) in fields {
        // Setting a field of a fresh plain object cannot fail.
        let _ = Reflect::set(&object, &JsValue::from_str(name), value);
    }
    object.into()
}

/// A whole number as a JavaScript number (exact up to 2^53).
pub fn number(value: u64) -> JsValue {
    JsValue::from_f64(value as f64)
}

impl<T: FromJs> FromJs for Vec<T> {
    fn from_js(value: JsValue) -> Result<Self, String> {
        let list: Array = value.dyn_into().map_err(|_| "the answer is not a list".to_owned())?;
        list.into_iter().map(T::from_js).collect()
    }
}

/// `null` is none.
impl<T: FromJs> FromJs for Option<T> {
    fn from_js(value: JsValue) -> Result<Self, String> {
        if value.is_null() { Ok(None) } else { T::from_js(value).map(Some) }
    }
}

impl FromJs for Product {
    fn from_js(value: JsValue) -> Result<Self, String> {
        let fields = Fields::of(value, "a product")?;
        Ok(Product {
            sku: fields.text("sku")?,
            name: fields.text("name")?,
            description: fields.text("description")?,
            name_ko: fields.text("name_ko")?,
            description_ko: fields.text("description_ko")?,
            price: fields.whole_number("price")?,
        })
    }
}

impl FromJs for PaymentSdk {
    fn from_js(value: JsValue) -> Result<Self, String> {
        let sdk = Fields::of(value, "the payment SDK")?;
        Ok(PaymentSdk { url: sdk.text("url")?, client_key: sdk.text("client_key")? })
    }
}

impl FromJs for PgWindow {
    fn from_js(value: JsValue) -> Result<Self, String> {
        let window = Fields::of(value, "KakaoPay's window")?;
        Ok(PgWindow { pc_url: window.text("pc_url")?, mobile_url: window.text("mobile_url")? })
    }
}

impl FromJs for PlacedOrder {
    fn from_js(value: JsValue) -> Result<Self, String> {
        let fields = Fields::of(value, "the order")?;
        Ok(PlacedOrder {
            order_id: fields.text("order_id")?,
            amount: fields.whole_number("amount")?,
            order_name: fields.text("order_name")?,
            success_url: fields.text("success_url")?,
            fail_url: fields.text("fail_url")?,
        })
    }
}

impl FromJs for OrderSummary {
    fn from_js(value: JsValue) -> Result<Self, String> {
        let fields = Fields::of(value, "the order")?;
        let status = fields.text("status")?;
        Ok(OrderSummary {
            order_id: fields.text("order_id")?,
            status: OrderStatus::parse(&status).ok_or_else(|| format!("{status} is not an order status"))?,
            amount: fields.whole_number("amount")?,
            order_name: fields.text("order_name")?,
            created_at: fields.text("created_at")?,
        })
    }
}

impl ToJs for CreateOrderRequest {
    fn to_js(&self) -> JsValue {
        let items: Array = self
            .items
            .iter()
            .map(|item| object(&[("sku", item.sku.as_str().into()), ("quantity", item.quantity.into())]))
            .collect();
        object(&[("items", items.into())])
    }
}

/// Saved as `{"quantities": {"SKU": 2}}`. A saved line that is not a quantity
/// is dropped, not the whole cart.
impl FromJs for Cart {
    fn from_js(value: JsValue) -> Result<Self, String> {
        let quantities = Fields::of(value, "the cart")?.object("quantities")?;
        let mut cart = Cart::default();
        for (sku, quantity) in quantities.entries() {
            if let Some(quantity) = whole_number(&quantity).and_then(|quantity| u32::try_from(quantity).ok()) {
                cart.set(&sku, quantity);
            }
        }
        Ok(cart)
    }
}

impl ToJs for Cart {
    fn to_js(&self) -> JsValue {
        let quantities: Vec<(&str, JsValue)> =
            self.lines().map(|(sku, quantity)| (sku, JsValue::from(quantity))).collect();
        object(&[("quantities", object(&quantities))])
    }
}

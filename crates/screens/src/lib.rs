//! What the checkout page's screens say and decide, without a browser: the
//! page (`src/`, leptos in wasm) draws them and runs their effects; every rule
//! here is a plain function of what the server said, what the address holds
//! and the time, tested natively in a second.
//!
//! - `words`: the Korean and English catalogs, won amounts, names and particles;
//! - `cart`: the cart's quantities and total;
//! - `ApiError`: why a call to the server gave nothing usable, in the customer's words;
//! - `checkout`: a shop's checkout, its link's claim and where it stands;
//! - `order`: what an order's page offers;
//! - `navigation`: where links and buttons lead;
//! - `payment_window`: the PG's window, closed by the customer.
//!
//! The payment flow itself (send once, check, never resend) is `payonce-flow`'s.

mod api_error;
pub mod cart;
pub mod checkout;
pub mod navigation;
pub mod order;
pub mod payment_window;
pub mod words;

pub use api_error::ApiError;

//! Wire types shared by the checkout page and the order server.
//!
//! Everything that crosses `/api` is defined here once, so the page decodes
//! exactly what the server encodes. The crate depends on serde only: it must
//! build for `wasm32-unknown-unknown` and stay small in the page's bundle.
//!
//! # Layout
//!
//! - `order`: order status, order bodies, the create/confirm requests.
//! - `error`: the `{code, message}` error body and the codes both sides match on.
//! - `catalog`: the cart's products.
//! - `checkout`: shops' checkouts, as the shop API and the customer's page see them.
//! - `event`: what payonce tells a shop of its checkouts (webhooks and the feed).
//! - `config`: the page timings and the PG's SDK, published at `GET /api/config`.
//! - `money`: KRW amounts formatted the way people read them.

pub mod catalog;
pub mod checkout;
pub mod config;
pub mod error;
pub mod event;
pub mod money;
pub mod order;

pub use catalog::Product;
pub use checkout::{
    BackToShop, Checkout, CheckoutLine, CheckoutList, CheckoutPayment, CheckoutStatus, ClaimRequest,
    CreateCheckoutRequest, CustomerCheckout, Names, ShopRefundRequest, StatusChange,
};
pub use config::{MAX_CHECK_WAIT_MS, PageConfig, PaymentSdk, ShopConfig};
pub use error::{ApiErrorBody, ErrorCode};
pub use event::{Event, EventData, EventList, EventType};
pub use order::{
    AbandonRequest, ConfirmRequest, CreateOrderRequest, CreatedOrder, Failure, LineItem, OperatorCancelRequest, Order,
    OrderStatus, OrderSummary, Pg, PgWindow, PlacedOrder, RequestedItem, WindowRequest, is_order_id_text,
};

/// Header that carries the page's idempotency key on the confirm POST.
pub const IDEMPOTENCY_KEY_HEADER: &str = "Idempotency-Key";

/// Longest idempotency key accepted, the same bound the PG uses.
pub const IDEMPOTENCY_KEY_MAX_LEN: usize = 300;

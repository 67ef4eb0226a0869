//! Pieces shared by several pages.

pub mod back_to_shop;
pub mod header;
pub mod recent_order_dialog;
pub mod status_badge;
pub mod toast;

//! One module per route.

pub mod cart;
pub mod checkout;
pub mod confirm;
pub mod kakaopay;
pub mod not_found;
pub mod order;
pub mod orders;
pub mod pay_fail;

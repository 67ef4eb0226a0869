//! Telling shops of their checkouts. The status writer stores each event in
//! the transaction of its change (`db/shop_events.rs`); here the delivery
//! loop sends each to its shop's endpoint, signed as Standard Webhooks 1.0
//! (`signing`), again and again until the shop answers 2xx or the retry
//! window ends (`payonce_rules::delivery` decides which), a checkout's events
//! one after another, a few at a time per shop. The shop's feed (`GET
//! /v1/events`) lists the same events for a shop that takes none.

pub mod delivery;
pub mod feed;
pub mod operator;
mod shop_pace;
pub mod signing;

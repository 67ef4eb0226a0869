//! The fake PG's integration tests, one module per file beside this one, in
//! one test binary (each binary links the whole fake PG).
mod common;

mod admin;
mod cancel;
mod confirm;
mod faults;
mod hostile;
mod kakaopay;
mod sdk;
mod transactions;
mod webhooks;
mod window;

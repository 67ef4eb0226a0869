//! The order server's integration tests, one module per file beside this one.
//! They are one test binary, not one each: every binary links the whole
//! server, and 25 links took a third of the tests' build.
mod support;

mod api;
mod balancer;
mod closing;
mod cluster;
mod database_outage;
mod events;
mod exposure;
mod hostile;
mod interleavings;
mod kakaopay;
mod operators;
mod payments;
mod pg_calls;
mod pg_places;
mod process;
mod reconciliation;
mod refunds;
mod retry_budget;
mod settlement;
mod shops;
mod stock;
mod stranded;
mod waiting_checks;
mod waiting_holds_nothing;
mod webhooks;

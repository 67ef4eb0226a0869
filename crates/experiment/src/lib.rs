//! The timeout experiment: real order servers and a real fake PG, customers
//! who behave like the confirm page, under a PG brownout and under a slow
//! tail, comparing read timeouts and PG concurrency limits (fixed, or learned).
//!
//! # Layout
//!
//! - `scenario`: the experiments, their conditions, and how they are scaled.
//! - `run`: one condition's run: processes, customers, sampling, figures.
//! - `report`: the table, and what counts as broken.
//! - `chart`: the runs over time, as SVG.
//! - `webhooks`: how soon an UNKNOWN payment is settled once the PG finishes.
//! - `events`: how soon a shop hears of its payments, and what its outage costs.
//! - `flash_sale`: how many customers checking at once one server carries.

pub mod chart;
pub mod events;
pub mod flash_sale;
pub mod report;
pub mod run;
pub mod scenario;
pub mod webhooks;

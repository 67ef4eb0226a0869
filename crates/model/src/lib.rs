//! The settlement protocol as a model, explored exhaustively by Stateright.
//!
//! Every decision in the model is the server's own: the PG's answers are
//! built as the real `TossReply` values and read by the real classification
//! tables (`pg::classify`), what they lead to is the real settlement core
//! (`settlement`), a status is stored only where the real lifecycle
//! (`Transition::from`) and lease rule (`Transition::needs_lease`) let it,
//! and each server's breaker is the real `BreakerPhase`. What the model adds
//! is only what runs around them: tasks that interleave, a PG as Toss
//! documents it, and faults.
//!
//! - `lease`: the names leases are held under.
//! - `pg`: the PG, and its answers as the server reads them.
//! - `state`: the shop's database, the servers and their tasks, the page.
//! - `protocol`: the steps each actor can take (`stateright::Model`).
//! - `properties`: what must hold in every reachable state.
//! - `old_rules`: the rules as they were before the fixes, each of which the
//!   checker must catch (its tests switch them back on).
//! - `trace`: a counterexample, one line per step.
//! - `check`: one exploration, and what it found.

// Each step of an exploration clones a state: mimalloc allocates and frees
// them faster than the system allocator, and on several threads without its
// arena locks. Declared here, it serves the command line and the tests alike.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod check;
pub mod lease;
pub mod old_rules;
pub mod pg;
pub mod properties;
pub mod protocol;
pub mod state;
pub mod trace;

pub use check::{Finding, Report, check, find};
pub use old_rules::OldRule;
pub use protocol::{Bounds, Protocol};

//! The names leases are held under.

/// The name a lease is held under: the task's server and worker, and the
/// number of the claim (each claim is a holder of its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Holder {
    pub server: u8,
    pub worker: u8,
    pub serial: u8,
}

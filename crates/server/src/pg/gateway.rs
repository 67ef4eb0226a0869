//! The PG behind a concurrency cap. Every call, from a customer's confirm or
//! from recovery, holds a slot; the cap protects the PG contract and our sockets.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::client::PgClient;
use crate::metrics;

/// The PG client and the slots that bound calls to it.
#[derive(Debug, Clone)]
pub struct PgGateway {
    client: PgClient,
    slots: Arc<Semaphore>,
}

/// A held slot. The call it allows counts as in flight until the slot is dropped.
#[derive(Debug)]
pub struct PgSlot {
    _permit: OwnedSemaphorePermit,
}

impl PgGateway {
    pub fn new(client: PgClient, max_concurrency: u32) -> Self {
        let slots = Arc::new(Semaphore::new(max_concurrency as usize));
        Self { client, slots }
    }

    pub fn client(&self) -> &PgClient {
        &self.client
    }

    /// A slot now, or `None` when the cap is reached. Customers do not queue:
    /// a queued confirm would eat into the page's waiting time with nothing sent.
    pub fn try_slot(&self) -> Option<PgSlot> {
        self.slots.clone().try_acquire_owned().ok().map(PgSlot::new)
    }

    /// A slot, waiting for one. Used by recovery, which has time.
    pub async fn slot(&self) -> PgSlot {
        let permit = self.slots.clone().acquire_owned().await.expect("the semaphore is never closed");
        PgSlot::new(permit)
    }
}

impl PgSlot {
    fn new(permit: OwnedSemaphorePermit) -> Self {
        metrics::pg_in_flight(1.0);
        Self { _permit: permit }
    }
}

impl Drop for PgSlot {
    fn drop(&mut self) {
        metrics::pg_in_flight(-1.0);
    }
}

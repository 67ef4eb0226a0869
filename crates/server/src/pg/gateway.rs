//! The PG behind a concurrency limit. Every call, from a customer's confirm or
//! from recovery, holds a place under it; the limit protects the PG contract
//! and our sockets. Confirms tell the limit what they showed: taken, or refused
//! for load (see `limit`).

use std::sync::Arc;

use super::client::{PgAnswer, PgClient, PgConfirm};
use super::limit::{ConcurrencyLimit, Place, Policy};

/// The PG client and the limit on calls to it.
#[derive(Debug, Clone)]
pub struct PgGateway {
    client: PgClient,
    limit: Arc<ConcurrencyLimit>,
}

/// A held place under the limit. The call it allows counts as in flight until it is dropped.
pub type PgSlot = Place;

impl PgGateway {
    pub fn new(client: PgClient, policy: Policy) -> Self {
        Self { client, limit: ConcurrencyLimit::new(policy) }
    }

    pub fn client(&self) -> &PgClient {
        &self.client
    }

    /// The calls allowed at once now.
    pub fn limit(&self) -> u32 {
        self.limit.current()
    }

    /// A slot now, or `None` at the limit. Customers do not queue: a queued
    /// confirm would eat into the page's waiting time with nothing sent.
    pub fn try_slot(&self) -> Option<PgSlot> {
        self.limit.try_acquire()
    }

    /// A slot, waiting for one. Used by recovery, which has time.
    pub async fn slot(&self) -> PgSlot {
        self.limit.acquire().await
    }

    /// Sends a confirm under `slot` and tells the limit what it showed: taken
    /// (not refused within a moment, or answered), or refused for load.
    pub async fn confirm(&self, slot: &mut PgSlot, call: PgConfirm<'_>) -> PgAnswer {
        let sending = self.client.confirm(call);
        let answer = match self.limit.taken_after() {
            None => sending.await,
            Some(moment) => {
                tokio::pin!(sending);
                tokio::select! {
                    answer = &mut sending => answer,
                    () = tokio::time::sleep(moment) => {
                        slot.taken();
                        sending.await
                    }
                }
            }
        };
        if answer.shows_overload() {
            slot.overloaded();
        } else {
            slot.taken();
        }
        answer
    }
}

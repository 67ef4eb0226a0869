//! The calls about each payment that are open now, so that two clients asking
//! about one payment at once show in the stats (`overlapping_calls`).

use std::sync::Arc;

use crate::store::Store;

/// Open while a confirm, cancel or lookup about a payment is being answered; closed
/// when dropped, which is also what happens when the caller hangs up.
pub(crate) struct OpenCall {
    store: Arc<Store>,
    payment_key: String,
}

impl OpenCall {
    pub(crate) fn open(store: &Arc<Store>, payment_key: &str) -> Self {
        store.call_opened(payment_key);
        Self { store: store.clone(), payment_key: payment_key.to_owned() }
    }
}

impl Drop for OpenCall {
    fn drop(&mut self) {
        self.store.call_closed(&self.payment_key);
    }
}

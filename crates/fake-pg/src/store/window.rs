//! The payment window's sessions: opening one (a READY payment under a new
//! paymentKey, to be confirmed within ten minutes) and the customer's choice
//! in it.

use tokio::time::Instant;

use super::{CONFIRM_DEADLINE, Phase, Store, WindowReturn};
use crate::error::PgError;
use crate::payment::{self, Payment, PaymentStatus};
use crate::scenario::Scenario;

/// A payment window being opened.
#[derive(Clone, Debug)]
pub(crate) struct WindowRequest {
    pub(crate) order_id: String,
    pub(crate) order_name: String,
    pub(crate) amount: u64,
    pub(crate) success_url: String,
    pub(crate) fail_url: String,
}

/// A window request for an order whose window was opened for another amount.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AmountMismatch {
    pub(crate) opened_with: u64,
}

/// The result of a window submit.
#[derive(Clone, Debug)]
pub(crate) struct Submitted {
    pub(crate) payment_key: String,
    pub(crate) order_id: String,
    pub(crate) amount: u64,
    /// The customer canceled: go to failUrl.
    pub(crate) canceled: bool,
    pub(crate) window: WindowReturn,
}

impl Store {
    /// Opens a payment window: a new READY payment under a new paymentKey,
    /// to be confirmed within ten minutes. An order whose window was opened
    /// before for another amount is refused with that amount: the request
    /// does not describe the order the customer started paying for.
    pub(crate) fn open_window(
        &self,
        request: WindowRequest,
        checkout_url: String,
        now: String,
    ) -> Result<String, AmountMismatch> {
        if let Some(opened_with) = self.window_amount(&request.order_id).filter(|amount| *amount != request.amount) {
            return Err(AmountMismatch { opened_with });
        }
        let payment_key = payment::new_payment_key();
        let payment = Payment::ready(
            payment_key.clone(),
            request.order_id.clone(),
            request.order_name,
            request.amount,
            now,
            Some(checkout_url),
        );
        let confirm_by = Instant::now() + self.clock.scaled(CONFIRM_DEADLINE);
        let mut inner = self.lock();
        let window = WindowReturn { success_url: request.success_url, fail_url: request.fail_url };
        inner.insert(payment, Some(window), confirm_by);
        Ok(payment_key)
    }

    /// The amount of a window opened earlier for `order_id`, if any.
    fn window_amount(&self, order_id: &str) -> Option<u64> {
        let inner = self.lock();
        inner
            .payments
            .values()
            .find(|record| record.window.is_some() && record.payment.order_id == order_id)
            .map(|record| record.payment.total_amount)
    }

    /// The customer chose a scenario in the window. Once the payment is being
    /// confirmed the choice is fixed, so a late double submit changes nothing.
    pub(crate) fn submit_window(&self, payment_key: &str, scenario: Scenario) -> Result<Submitted, PgError> {
        let mut inner = self.lock();
        inner.expire_if_due(payment_key, Instant::now());
        let (record, window) = inner
            .payments
            .get_mut(payment_key)
            .and_then(|record| {
                let window = record.window.clone()?;
                Some((record, window))
            })
            .ok_or_else(|| {
                PgError::NotFoundPaymentSession(
                    "This payment window was never opened here, or the PG was reset since. \
                     Start the payment again from the shop."
                        .to_owned(),
                )
            })?;
        if record.payment.status == PaymentStatus::Expired {
            return Err(PgError::NotFoundPaymentSession(
                "This payment window expired: payments must be confirmed within 10 minutes. \
                 Start the payment again from the shop."
                    .to_owned(),
            ));
        }
        let open = record.phase == Phase::Open;
        if open {
            record.scenario = Some(scenario);
            record.payment.is_partial_cancelable = scenario.partially_cancelable();
            if scenario == Scenario::Cancel {
                record.payment.status = PaymentStatus::Ready;
                record.payment.method = None;
            } else {
                record.payment.authenticate();
            }
        }
        Ok(Submitted {
            payment_key: payment_key.to_owned(),
            order_id: record.payment.order_id.clone(),
            amount: record.payment.total_amount,
            canceled: open && scenario == Scenario::Cancel,
            window,
        })
    }
}

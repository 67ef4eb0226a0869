//! Confirming a payment: validate, store the attempt, then call the PG in a task
//! that outlives the request, and store what it learned.

use payonce_api::{ConfirmRequest, ErrorCode, Failure, IDEMPOTENCY_KEY_MAX_LEN, Order, OrderStatus};

use super::settle::{self, log_transition};
use crate::customer::Customer;
use crate::db::{NewAttempt, Transition};
use crate::error::AppError;
use crate::metrics;
use crate::pg::{PgConfirm, PgSlot, PgVerdict, customer_message, verdict_for};
use crate::state::AppState;

/// Longest payment key accepted (Toss keys are under 200 characters).
const PAYMENT_KEY_MAX_LEN: usize = 200;

/// Checks the `Idempotency-Key` header value.
pub fn validate_idempotency_key(key: Option<&str>) -> Result<&str, AppError> {
    let key = key.ok_or(AppError::InvalidIdempotencyKey("the Idempotency-Key header is missing"))?;
    if key.is_empty() {
        return Err(AppError::InvalidIdempotencyKey("the Idempotency-Key header is empty"));
    }
    if key.len() > IDEMPOTENCY_KEY_MAX_LEN {
        return Err(AppError::InvalidIdempotencyKey("the Idempotency-Key header is longer than 300 characters"));
    }
    if !key.bytes().all(|byte| byte.is_ascii_graphic()) {
        return Err(AppError::InvalidIdempotencyKey("the Idempotency-Key header must be printable ASCII"));
    }
    Ok(key)
}

fn validate_payment_key(payment_key: &str) -> Result<(), AppError> {
    let valid = !payment_key.is_empty()
        && payment_key.len() <= PAYMENT_KEY_MAX_LEN
        && payment_key.bytes().all(|byte| byte.is_ascii_graphic());
    if valid {
        Ok(())
    } else {
        Err(AppError::InvalidRequest {
            message: format!("payment_key must be 1 to {PAYMENT_KEY_MAX_LEN} printable ASCII characters"),
        })
    }
}

/// Confirms the customer's payment for an order. Returns the order as stored: final
/// (PAID or FAILED) or still unknown/pending when the PG gave no definitive answer.
pub async fn confirm(
    state: &AppState,
    customer: &Customer,
    order_id: &str,
    idempotency_key: &str,
    request: &ConfirmRequest,
) -> Result<Order, AppError> {
    validate_payment_key(&request.payment_key)?;
    let order = state.db.customer_order(&customer.0, order_id).await?.ok_or(AppError::OrderNotFound)?;
    if let Some(replay) = answer_existing(state, &order, idempotency_key).await? {
        return Ok(replay);
    }
    if request.amount != order.amount {
        return Err(AppError::AmountMismatch { confirmed: request.amount, expected: order.amount });
    }

    // Without a slot the attempt is stored as failed: it never reached the PG.
    let slot = state.pg.try_slot();
    let (status, failure) = match slot {
        Some(_) => (OrderStatus::Pending, None),
        None => (
            OrderStatus::Failed,
            Some(Failure { code: ErrorCode::PgBusy.as_str().to_owned(), message: customer_message("PG_BUSY", None) }),
        ),
    };
    let attempt = NewAttempt {
        order_id,
        idempotency_key,
        payment_key: &request.payment_key,
        amount: order.amount,
        status,
        failure: failure.as_ref(),
    };
    if !state.db.insert_attempt(&attempt).await? {
        // A concurrent confirm stored its attempt first: answer as if we came after it.
        return answer_existing(state, &order, idempotency_key)
            .await?
            .ok_or_else(|| AppError::Internal("an attempt insert lost a race to nothing".to_owned()));
    }
    let transition = Transition { to: status, failure, unknown_reason: None };
    log_transition(order_id, idempotency_key, OrderStatus::Created, &transition);

    let Some(slot) = slot else {
        metrics::pg_confirm_call("busy");
        return state.db.order(order_id).await?.ok_or(AppError::OrderNotFound);
    };
    // Detached: if the customer's browser gives up, the call and its bookkeeping go on.
    let call = PgCall {
        order_id: order_id.to_owned(),
        idempotency_key: idempotency_key.to_owned(),
        payment_key: request.payment_key.clone(),
        amount: order.amount,
    };
    let task = state.pg_tasks.spawn(call.send(state.clone(), slot));
    task.await.map_err(|error| AppError::Internal(format!("confirm task failed: {error}")))?
}

/// The answer when this key or this order already has an attempt, or `None` if neither has.
async fn answer_existing(state: &AppState, order: &Order, idempotency_key: &str) -> Result<Option<Order>, AppError> {
    if let Some(attempt) = state.db.attempt_by_key(idempotency_key).await? {
        if attempt.order_id != order.order_id {
            return Err(AppError::IdempotencyKeyReused);
        }
        let current = state.db.order(&order.order_id).await?.ok_or(AppError::OrderNotFound)?;
        return if current.status.is_final() {
            Ok(Some(current))
        } else {
            Err(AppError::PaymentInProgress { order: Box::new(current) })
        };
    }
    if state.db.attempt_for_order(&order.order_id).await?.is_none() {
        return Ok(None);
    }
    let current = Box::new(state.db.order(&order.order_id).await?.ok_or(AppError::OrderNotFound)?);
    Err(match current.status {
        OrderStatus::Paid => AppError::OrderAlreadyPaid { order: current },
        OrderStatus::Failed => AppError::OrderAlreadyFailed { order: current },
        OrderStatus::Pending | OrderStatus::Unknown | OrderStatus::Created => {
            AppError::PaymentInProgress { order: current }
        }
    })
}

/// One confirm call to the PG for a stored PENDING attempt.
struct PgCall {
    order_id: String,
    idempotency_key: String,
    payment_key: String,
    amount: u64,
}

impl PgCall {
    async fn send(self, state: AppState, slot: PgSlot) -> Result<Order, AppError> {
        let answer = state
            .pg
            .client()
            .confirm(PgConfirm {
                payment_key: &self.payment_key,
                order_id: &self.order_id,
                amount: self.amount,
                idempotency_key: &self.idempotency_key,
            })
            .await;
        drop(slot);
        let verdict = verdict_for(&answer, &self.order_id, self.amount);
        let (outcome, transition) = first_call_transition(verdict);
        metrics::pg_confirm_call(outcome);
        let to = transition.to;
        // Recovery may have given up on this call and marked it UNKNOWN meanwhile;
        // a definitive answer arriving late still settles it.
        let from = [OrderStatus::Pending, OrderStatus::Unknown];
        let order = settle::apply(&state, &self.order_id, &self.idempotency_key, &from, transition).await;
        if to == OrderStatus::Unknown {
            state.recovery_wake.notify_one();
        }
        order
    }
}

/// What the first confirm call's verdict means for the order, with the metric label.
fn first_call_transition(verdict: PgVerdict) -> (&'static str, Transition) {
    match verdict {
        PgVerdict::Charged => ("paid", Transition::paid()),
        PgVerdict::Declined(failure) | PgVerdict::TurnedAway(failure) => ("failed", Transition::failed(failure)),
        PgVerdict::NotSent => (
            "unreachable",
            Transition::failed(Failure {
                code: ErrorCode::PgUnreachable.as_str().to_owned(),
                message: customer_message("PG_UNREACHABLE", None),
            }),
        ),
        PgVerdict::StillProcessing => ("unknown", Transition::unknown("the PG is still processing this key")),
        PgVerdict::AlreadyProcessed => ("unknown", Transition::unknown("the PG already processed this payment")),
        PgVerdict::Unknown(reason) => ("unknown", Transition::unknown(reason)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idempotency_keys_are_checked_before_anything_else() {
        assert!(validate_idempotency_key(None).is_err());
        assert!(validate_idempotency_key(Some("")).is_err());
        assert!(validate_idempotency_key(Some("has space")).is_err());
        assert!(validate_idempotency_key(Some(&"k".repeat(301))).is_err());
        assert_eq!(validate_idempotency_key(Some(&"k".repeat(300))).unwrap().len(), 300);
        assert!(validate_idempotency_key(Some("3f0b1c9e-6a0e-4a8e-9a53-2d6f1f0e7b11")).is_ok());
    }

    #[test]
    fn the_first_call_maps_the_table_of_the_design() {
        let failure = Failure { code: "X".into(), message: "m".into() };
        let to = |verdict| first_call_transition(verdict).1.to;
        assert_eq!(to(PgVerdict::Charged), OrderStatus::Paid);
        assert_eq!(to(PgVerdict::Declined(failure.clone())), OrderStatus::Failed);
        assert_eq!(to(PgVerdict::TurnedAway(failure)), OrderStatus::Failed);
        assert_eq!(to(PgVerdict::NotSent), OrderStatus::Failed);
        assert_eq!(first_call_transition(PgVerdict::NotSent).1.failure.unwrap().code, "PG_UNREACHABLE");
        assert_eq!(to(PgVerdict::StillProcessing), OrderStatus::Unknown);
        assert_eq!(to(PgVerdict::AlreadyProcessed), OrderStatus::Unknown);
        assert_eq!(to(PgVerdict::Unknown("reset".into())), OrderStatus::Unknown);
    }
}

//! Confirming a payment: validate, store the attempt, then call the PG in a task
//! that outlives the request, and store what it learned.

use payonce_api::{ConfirmRequest, ErrorCode, Failure, IDEMPOTENCY_KEY_MAX_LEN, Order, OrderStatus, Pg};

use super::kakaopay;
use super::settle::{self, log_attempt_stored};
use crate::app::App;
use crate::customer::Customer;
use crate::db::{Actor, NewAttempt, PgCaller, Writer, now_ms};
use crate::error::AppError;
use crate::metrics;
use crate::pg::{
    Expected, KakaoPayApprove, PgPlace, TossConfirm, TossReply, confirm_answer, customer_message, describe, failure_of,
    first_call_verdict,
};
use crate::resilience::lease;
use payonce_rules::settlement::{ConfirmVerdict, Transition, after_first_call};

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

/// Longest `pg_token` accepted (KakaoPay's are 20 characters).
const PG_TOKEN_MAX_LEN: usize = 100;
/// Longest `ready` accepted (the server's are 32 characters).
const READY_MAX_LEN: usize = 64;

/// What the PG's window gave the customer: Toss's paymentKey, or KakaoPay's
/// `pg_token` (the order's KakaoPay payment is the one prepared for it).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Authorised {
    Toss { payment_key: String },
    KakaoPay { pg_token: String, ready: Option<String> },
}

impl Authorised {
    fn pg(&self) -> Pg {
        match self {
            Authorised::Toss { .. } => Pg::Toss,
            Authorised::KakaoPay { .. } => Pg::KakaoPay,
        }
    }
}

fn validate_token(field: &str, value: &str, max: usize) -> Result<(), AppError> {
    let valid = !value.is_empty() && value.len() <= max && value.bytes().all(|byte| byte.is_ascii_graphic());
    if valid {
        Ok(())
    } else {
        Err(AppError::InvalidRequest { message: format!("{field} must be 1 to {max} printable ASCII characters") })
    }
}

/// The window's proof of authorisation in the request: one of the two, never both.
fn authorised(request: &ConfirmRequest) -> Result<Authorised, AppError> {
    match &request.pg_token {
        Some(_) if !request.payment_key.is_empty() => Err(AppError::InvalidRequest {
            message: "send payment_key (Toss) or pg_token (KakaoPay), not both".to_owned(),
        }),
        Some(pg_token) => {
            validate_token("pg_token", pg_token, PG_TOKEN_MAX_LEN)?;
            if let Some(ready) = &request.ready {
                validate_token("ready", ready, READY_MAX_LEN)?;
            }
            Ok(Authorised::KakaoPay { pg_token: pg_token.clone(), ready: request.ready.clone() })
        }
        None if request.ready.is_some() => Err(AppError::InvalidRequest {
            message: "ready names a KakaoPay payment: send it with its pg_token".to_owned(),
        }),
        None => {
            validate_token("payment_key", &request.payment_key, PAYMENT_KEY_MAX_LEN)?;
            Ok(Authorised::Toss { payment_key: request.payment_key.clone() })
        }
    }
}

/// Confirms the customer's payment for an order. Returns the order as stored: final
/// (PAID or FAILED) or still unknown/pending when the PG gave no definitive answer.
///
/// Everything after input validation runs in a task detached from the request:
/// a customer who hangs up at any point leaves either no attempt, or one whose
/// PG call goes out and whose answer is stored.
pub async fn confirm(
    app: &App,
    customer: &Customer,
    order_id: &str,
    idempotency_key: &str,
    request: &ConfirmRequest,
) -> Result<Order, AppError> {
    let authorised = authorised(request)?;
    let job = ConfirmJob {
        customer: customer.clone(),
        order_id: order_id.to_owned(),
        idempotency_key: idempotency_key.to_owned(),
        authorised,
        amount: request.amount,
    };
    let task = app.pg_tasks.spawn(job.run(app.clone()));
    task.await.map_err(|error| AppError::Internal(format!("confirm task failed: {error}")))?
}

/// A validated confirm, owned so that it can outlive its request.
struct ConfirmJob {
    customer: Customer,
    order_id: String,
    idempotency_key: String,
    authorised: Authorised,
    amount: u64,
}

impl ConfirmJob {
    async fn run(self, app: App) -> Result<Order, AppError> {
        let order = app.db.customer_order(&self.customer.0, &self.order_id).await?.ok_or(AppError::OrderNotFound)?;
        if let Some(replay) = answer_existing(&app, &order, &self.idempotency_key).await? {
            return Ok(replay);
        }
        if self.amount != order.amount {
            return Err(AppError::AmountMismatch { confirmed: self.amount, expected: order.amount });
        }

        // The PG's payment: Toss's from its window, or the KakaoPay payment
        // prepared for the order (while it can still be approved).
        let pg = self.authorised.pg();
        let (payment_key, place) = match &self.authorised {
            Authorised::Toss { payment_key } => (payment_key.clone(), app.toss.try_place().await?),
            Authorised::KakaoPay { ready, .. } => {
                let gateway = kakaopay::gateway(&app)?;
                (kakaopay::prepared_tid(&app, &self.order_id, ready.as_deref()).await?, gateway.try_place().await?)
            }
        };
        // Without a place the attempt is stored as failed: it never reached the PG.
        let (status, failure) = match place {
            Some(_) => (OrderStatus::Pending, None),
            None => (
                OrderStatus::Failed,
                Some(Failure {
                    code: ErrorCode::PgBusy.as_str().to_owned(),
                    message: customer_message("PG_BUSY", None),
                }),
            ),
        };
        // The confirm task owns the attempt until its longest call could have ended;
        // recovery takes over only after that.
        let storing = Storing::now();
        let lease_until_ms = storing.at_ms + lease::millis(lease::for_confirm(&app.config));
        let holder = lease::holder(&app.worker_id);
        // The PG's key is the server's, one per attempt: Toss scopes keys by
        // merchant account, so the browser's key (ours) would share one
        // namespace with every other confirm of the account. Stored before the call.
        let pg_idempotency_key = uuid::Uuid::new_v4().to_string();
        // The cart's products with a stock (a shop's checkout keeps its own).
        let stock = match app.config.shops.of_order(&self.order_id) {
            Some(_) => Vec::new(),
            None => app.config.catalog.stock_lines(&order.items),
        };
        let attempt = NewAttempt {
            order_id: &self.order_id,
            idempotency_key: &self.idempotency_key,
            pg_idempotency_key: &pg_idempotency_key,
            pg,
            payment_key: &payment_key,
            amount: order.amount,
            status,
            failure: failure.as_ref(),
            lease_until_ms,
            lease_owner: &holder,
            stock: &stock,
        };
        let Some(stored) = app.db.insert_attempt(&attempt).await? else {
            // A concurrent confirm (or the page closing the order) stored first:
            // answer as if we came after it.
            return answer_existing(&app, &order, &self.idempotency_key)
                .await?
                .ok_or_else(|| AppError::Internal("an attempt insert lost a race to nothing".to_owned()));
        };
        if stored != status {
            // Its units no longer fit a product's stock: stored FAILED, and nothing is sent.
            log_attempt_stored(&self.order_id, &self.idempotency_key, stored, None);
            return app.db.order(&self.order_id).await?.ok_or(AppError::OrderNotFound);
        }
        log_attempt_stored(&self.order_id, &self.idempotency_key, status, failure.as_ref());
        match place {
            Some(place) => {
                app.retry_budget.record_first_call();
                let (outcome, transition) = match &self.authorised {
                    Authorised::Toss { payment_key } => {
                        self.confirm_at_toss(&app, place, payment_key, order.amount, &pg_idempotency_key).await
                    }
                    Authorised::KakaoPay { pg_token, .. } => {
                        let call = KakaoPayApprove {
                            tid: &payment_key,
                            order_id: &self.order_id,
                            customer_id: &self.customer.0,
                            pg_token,
                            amount: order.amount,
                        };
                        kakaopay::approve(&app, kakaopay::gateway(&app)?, place, call, storing.elapsed()).await
                    }
                };
                self.store_first_answer(&app, outcome, transition, &holder).await
            }
            None => {
                metrics::pg_confirm_call(pg, "busy");
                app.db.order(&self.order_id).await?.ok_or(AppError::OrderNotFound)
            }
        }
    }

    /// The one confirm call to Toss for a stored PENDING attempt, and the
    /// transition its answer leads to (with the metric's label).
    async fn confirm_at_toss(
        &self,
        app: &App,
        place: PgPlace,
        payment_key: &str,
        amount: u64,
        pg_idempotency_key: &str,
    ) -> (&'static str, Transition) {
        let call = TossConfirm { payment_key, order_id: &self.order_id, amount, idempotency_key: pg_idempotency_key };
        let answer = app.toss.confirm(place, call, PgCaller::Customer).await;
        let expected = Expected { payment_key, order_id: &self.order_id, amount };
        let verdict = first_call_verdict(confirm_answer(&answer, expected));
        first_call_transition(verdict, &answer)
    }

    /// Stores what the first call's answer led to, by `holder`, the lease this
    /// task took with the attempt.
    async fn store_first_answer(
        &self,
        app: &App,
        outcome: &'static str,
        transition: Transition,
        holder: &str,
    ) -> Result<Order, AppError> {
        metrics::pg_confirm_call(self.authorised.pg(), outcome);
        // A charge still settles an attempt that recovery marked UNKNOWN meanwhile
        // (the lease lapsed under a very slow database, say). A failure does not:
        // it needs the lease, and recovery, once it took the attempt, may have
        // resent the confirm, which the PG may have charged since.
        let from = [OrderStatus::Pending, OrderStatus::Unknown];
        let unknown = matches!(transition, Transition::Unknown(_));
        let writer = Writer::holding(Actor::Confirm, holder);
        let applied = settle::apply(app, writer, &self.order_id, &self.idempotency_key, &from, transition).await?;
        if unknown && applied.moved {
            // Recovery may be asleep for a whole interval: let it plan its first look.
            app.recovery_wake.notify_one();
        }
        Ok(applied.order)
    }
}

/// When the confirm task began storing its attempt, by both clocks: the
/// attempt's own time is no earlier, so the time since is never less than
/// the attempt's age, whichever clock a pause (SIGSTOP, a VM's) stopped.
struct Storing {
    at: std::time::Instant,
    at_ms: i64,
}

impl Storing {
    fn now() -> Self {
        Self { at: std::time::Instant::now(), at_ms: now_ms() }
    }

    fn elapsed(&self) -> std::time::Duration {
        let by_wall = u64::try_from(now_ms().saturating_sub(self.at_ms)).unwrap_or(0);
        self.at.elapsed().max(std::time::Duration::from_millis(by_wall))
    }
}

/// The answer when this key or this order already has an attempt, or `None` if neither has.
async fn answer_existing(app: &App, order: &Order, idempotency_key: &str) -> Result<Option<Order>, AppError> {
    if let Some(attempt) = app.db.attempt_by_key(idempotency_key).await? {
        if attempt.order_id != order.order_id {
            return Err(AppError::IdempotencyKeyReused);
        }
        let current = app.db.order(&order.order_id).await?.ok_or(AppError::OrderNotFound)?;
        return if current.status.is_final() {
            Ok(Some(current))
        } else {
            Err(AppError::PaymentInProgress { order: Box::new(current) })
        };
    }
    if !app.db.has_attempt(&order.order_id).await? {
        return Ok(None);
    }
    let current = Box::new(app.db.order(&order.order_id).await?.ok_or(AppError::OrderNotFound)?);
    Err(match current.status {
        OrderStatus::Paid | OrderStatus::Canceled | OrderStatus::PartiallyRefunded | OrderStatus::CancelRequested => {
            AppError::OrderAlreadyPaid { order: current }
        }
        OrderStatus::Failed => AppError::OrderAlreadyFailed { order: current },
        OrderStatus::Pending | OrderStatus::Unknown | OrderStatus::Created => {
            AppError::PaymentInProgress { order: current }
        }
    })
}

/// What the first confirm call's verdict means for the order (the settlement
/// rules'), with the metric label.
fn first_call_transition(verdict: ConfirmVerdict, answer: &TossReply) -> (&'static str, Transition) {
    (settle::first_call_label(verdict), after_first_call(verdict, || failure_of(answer), || describe(answer)))
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
    fn the_first_call_stores_what_the_verdict_says() {
        let declined = TossReply::Error { http_status: 403, code: "REJECT_CARD_PAYMENT".into(), message: "m".into() };
        let transition = |verdict| first_call_transition(verdict, &declined).1;
        assert_eq!(transition(ConfirmVerdict::Paid), Transition::Paid);
        assert!(
            matches!(transition(ConfirmVerdict::Failed), Transition::Failed(failure) if failure.code == "REJECT_CARD_PAYMENT")
        );
        assert!(matches!(transition(ConfirmVerdict::Unknown), Transition::Unknown(_)));
        let not_sent = TossReply::NotSent { detail: "refused".into() };
        let (label, transition) = first_call_transition(ConfirmVerdict::Unreachable, &not_sent);
        assert_eq!((label, transition.failure().map(|f| f.code.as_str())), ("unreachable", Some("PG_UNREACHABLE")));
    }
}

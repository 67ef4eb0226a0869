//! Confirming a payment: validate, store the attempt, then call the PG in a task
//! that outlives the request, and store what it learned.

use payonce_api::{ConfirmRequest, ErrorCode, Failure, IDEMPOTENCY_KEY_MAX_LEN, Order, OrderStatus, Pg};
use payonce_rules::pg_reply::PgReply;

use super::settle::{self, log_attempt_stored};
use crate::app::App;
use crate::customer::Customer;
use crate::db::{Actor, JobKind, NewAttempt, PgCaller, Writer, now_ms};
use crate::error::AppError;
use crate::metrics;
use crate::pg::adapters::{ConfirmCall, Confirmed, PgAdapter, Sent, ToConfirm};
use crate::pg::{PgPlace, customer_message};
use crate::resilience::lease;
use payonce_rules::settlement::{Transition, after_first_call};

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

/// Confirms the customer's payment for an order, at `pg`, the PG the request
/// was checked for (`Adapters::checked`). Returns the order as stored: final
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
    (pg, request): (Pg, &ConfirmRequest),
) -> Result<Order, AppError> {
    let job = ConfirmJob {
        customer: customer.clone(),
        order_id: order_id.to_owned(),
        idempotency_key: idempotency_key.to_owned(),
        pg,
        request: request.clone(),
    };
    let task = app.pg_tasks.spawn(job.run(app.clone()));
    task.await.map_err(|error| AppError::Internal(format!("confirm task failed: {error}")))?
}

/// A validated confirm, owned so that it can outlive its request.
struct ConfirmJob {
    customer: Customer,
    order_id: String,
    idempotency_key: String,
    /// The PG the request's proof of authorisation is for.
    pg: Pg,
    request: ConfirmRequest,
}

impl ConfirmJob {
    async fn run(self, app: App) -> Result<Order, AppError> {
        let order = app.db.customer_order(&self.customer.0, &self.order_id).await?.ok_or(AppError::OrderNotFound)?;
        if let Some(replay) = answer_existing(&app, &order, &self.idempotency_key).await? {
            return Ok(replay);
        }
        if self.request.amount != order.amount {
            return Err(AppError::AmountMismatch { confirmed: self.request.amount, expected: order.amount });
        }

        // The PG's payment the window authorised: Toss's from its window, or
        // the KakaoPay payment prepared for the order (while it can still be approved).
        let adapter = app.pgs.of(self.pg)?;
        let ToConfirm { payment_key, token } = adapter.to_confirm(&app.db, &self.order_id, &self.request).await?;
        let place = adapter.try_place().await?;
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
            pg: self.pg,
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
                if !lease_covers_the_call(&app, &self.order_id, &holder, &storing).await? {
                    // Recovery took the attempt over while it was being stored:
                    // it looks the payment up, and nothing goes from here.
                    return app.db.order(&self.order_id).await?.ok_or(AppError::OrderNotFound);
                }
                app.retry_budget.record_first_call();
                let call = ConfirmCall {
                    order_id: &self.order_id,
                    customer_id: Some(&self.customer.0),
                    payment_key: &payment_key,
                    token: token.as_deref(),
                    amount: order.amount,
                    idempotency_key: &pg_idempotency_key,
                };
                let confirmed = first_call(&app, adapter, place, call, &storing).await;
                let (outcome, transition) = first_call_transition(confirmed);
                self.store_first_answer(&app, outcome, transition, &holder).await
            }
            None => {
                metrics::pg_confirm_call(self.pg, "busy");
                app.db.order(&self.order_id).await?.ok_or(AppError::OrderNotFound)
            }
        }
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
        metrics::pg_confirm_call(self.pg, outcome);
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

/// Whether the confirm task's lease still covers a whole call. The lease was
/// written with the attempt, counted from before the store began: a store
/// that waited (a database slow, or away and back) left less of it than a
/// call may take, and recovery on another server could then ask the PG about
/// the payment while the call is still out. So it is renewed for a whole call
/// first; `false` when recovery took the attempt over meanwhile.
async fn lease_covers_the_call(app: &App, order_id: &str, holder: &str, storing: &Storing) -> Result<bool, AppError> {
    // Half the margin: the other half is for storing the call's answer.
    if storing.elapsed() <= lease::margin(&app.config) / 2 {
        return Ok(true);
    }
    let until = now_ms() + lease::millis(lease::for_confirm(&app.config));
    Ok(app.db.renew_job(JobKind::Payment, order_id, holder, until).await?)
}

/// The one confirm of a stored PENDING attempt. It goes out only while the
/// rules let a first call go (`Deadlines::first_call_may_go`): at a PG without
/// keys, while the confirm task's lease holds, so a task that woke later (a
/// frozen server, a paused VM) sends nothing, and the attempt fails as never sent.
async fn first_call(
    app: &App,
    adapter: &dyn PgAdapter,
    place: PgPlace,
    call: ConfirmCall<'_>,
    storing: &Storing,
) -> Confirmed {
    let promises = adapter.promises();
    let since_stored = storing.elapsed();
    if lease::deadlines(&app.config, promises.session_lifetime).first_call_may_go(since_stored, promises.resending) {
        return adapter.confirm(place, call, PgCaller::Customer, Sent::First).await;
    }
    tracing::error!(
        order_id = call.order_id,
        payment_key = call.payment_key,
        since_stored_ms = since_stored.as_millis(),
        "the confirm task woke after its lease: the confirm is not sent, and recovery may have settled the attempt"
    );
    adapter.not_sent("the confirm was due while the lease held, and was not sent after".to_owned())
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
    let current = app.db.order(&order.order_id).await?.ok_or(AppError::OrderNotFound)?;
    Err(already_begun(current))
}

/// Why an order whose payment has begun (or is over) takes no new one: its
/// payment is in progress, or it is paid, or it failed, with the order.
pub(super) fn already_begun(order: Order) -> AppError {
    let order = Box::new(order);
    match order.status {
        OrderStatus::Paid | OrderStatus::Canceled | OrderStatus::PartiallyRefunded | OrderStatus::CancelRequested => {
            AppError::OrderAlreadyPaid { order }
        }
        OrderStatus::Failed => AppError::OrderAlreadyFailed { order },
        OrderStatus::Pending | OrderStatus::Unknown | OrderStatus::Created => AppError::PaymentInProgress { order },
    }
}

/// What the first confirm call's verdict means for the order (the settlement
/// rules'), with the metric label.
fn first_call_transition(confirmed: Confirmed) -> (&'static str, Transition) {
    let Confirmed { verdict, failure, reply } = confirmed;
    (settle::first_call_label(verdict), after_first_call(verdict, || failure, || reply.describe()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pg::{TossReply, failure_of};

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
        use crate::pg::adapters::ReplyFacts;
        use payonce_rules::settlement::ConfirmVerdict;
        let declined = TossReply::Error { http_status: 403, code: "REJECT_CARD_PAYMENT".into(), message: "m".into() };
        let confirmed = |verdict, answer: &TossReply| Confirmed {
            verdict,
            failure: failure_of(answer),
            reply: ReplyFacts::of(answer, answer.describe()),
        };
        let transition = |verdict| first_call_transition(confirmed(verdict, &declined)).1;
        assert_eq!(transition(ConfirmVerdict::Paid), Transition::Paid);
        assert!(
            matches!(transition(ConfirmVerdict::Failed), Transition::Failed(failure) if failure.code == "REJECT_CARD_PAYMENT")
        );
        assert!(matches!(transition(ConfirmVerdict::Unknown), Transition::Unknown(_)));
        let not_sent = TossReply::NotSent { detail: "refused".into() };
        let (label, transition) = first_call_transition(confirmed(ConfirmVerdict::Unreachable, &not_sent));
        assert_eq!((label, transition.failure().map(|f| f.code.as_str())), ("unreachable", Some("PG_UNREACHABLE")));
    }
}

//! The PG behind a concurrency limit. Every call, from a customer's confirm or
//! from recovery, holds a place under it; the limit protects the PG contract
//! and our sockets. Confirms tell the limit what they showed: taken, or refused
//! for load (see `learning`). One server keeps the limit in memory; servers
//! sharing a database keep it there, as one set of places for the cluster.
//!
//! Every call about an order goes through here, and is recorded here once it has
//! returned (`pg_calls`, for operators): never during the call, after its place
//! under the limit is given back (the record's database write must not keep
//! another call from the PG), and a record that fails is logged and changes
//! nothing for the payment.

use std::sync::Arc;
use std::time::{Duration, Instant};

use std::future::Future;

use payonce_api::Pg;
use payonce_rules::pg_reply::PgReply;

use super::client::{TossCancel, TossClient, TossConfirm, TossReply};
use super::limit::cluster::{ClusterLimit, ClusterPlace};
use super::limit::{ConcurrencyLimit, Place, Policy};
use crate::db::{Db, NewPgCall, PgCallKind, PgCaller, now_ms};

/// How a payment is looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookupBy<'a> {
    /// `GET /v1/payments/{paymentKey}`.
    PaymentKey(&'a str),
    /// `GET /v1/payments/orders/{orderId}`.
    OrderId,
}

/// A PG's client and the limit on calls to it. The limit, the records and
/// what an answer tells the limit are the same for every PG (`C` is its
/// client: Toss's by default); each PG's calls are its own `impl` block.
#[derive(Debug, Clone)]
pub struct PgGateway<C = TossClient> {
    client: C,
    limit: Limit,
    policy: Policy,
    log: Option<CallLog>,
}

/// Where calls are recorded, and the name of this server in the records.
#[derive(Debug, Clone)]
struct CallLog {
    db: Db,
    server: Arc<str>,
}

/// What a call was about, for its record.
pub(super) struct Call<'a> {
    pub(super) order_id: &'a str,
    pub(super) kind: PgCallKind,
    pub(super) caller: PgCaller,
    pub(super) idempotency_key: Option<&'a str>,
}

#[derive(Debug, Clone)]
enum Limit {
    Server(Arc<ConcurrencyLimit>),
    Cluster(Arc<ClusterLimit>),
}

/// A held place under the limit. The call it allows counts as in flight until it is dropped.
#[derive(Debug)]
pub enum PgPlace {
    Server(Place),
    Cluster(ClusterPlace),
}

impl PgPlace {
    fn taken(&mut self) {
        match self {
            PgPlace::Server(place) => place.taken(),
            PgPlace::Cluster(place) => place.taken(),
        }
    }

    fn overloaded(&mut self) {
        match self {
            PgPlace::Server(place) => place.overloaded(),
            PgPlace::Cluster(place) => place.overloaded(),
        }
    }

    fn unanswered(&mut self) {
        match self {
            PgPlace::Server(place) => place.unanswered(),
            PgPlace::Cluster(place) => place.unanswered(),
        }
    }

    fn processing(&mut self) {
        match self {
            PgPlace::Server(place) => place.processing(),
            PgPlace::Cluster(place) => place.processing(),
        }
    }
}

impl<C> PgGateway<C> {
    /// A gateway to `pg` whose limit is this server's own; `call_deadline`
    /// is the longest a call can be out.
    pub fn new(client: C, pg: Pg, policy: Policy, call_deadline: Duration) -> Self {
        Self { client, limit: Limit::Server(ConcurrencyLimit::new(pg, policy, call_deadline)), policy, log: None }
    }

    /// A gateway to `pg` whose limit at that PG is shared with every server
    /// on `db`; `holder` names this server, `call_deadline` is the longest a
    /// call can be out.
    pub fn shared(client: C, pg: Pg, policy: Policy, db: Db, holder: Arc<str>, call_deadline: Duration) -> Self {
        let limit = Limit::Cluster(ClusterLimit::new(db, pg, holder, policy, call_deadline));
        Self { client, limit, policy, log: None }
    }

    /// Records every call about an order in `db`'s `pg_calls`, as made by `server`.
    #[must_use]
    pub fn recording(mut self, db: Db, server: Arc<str>) -> Self {
        self.log = Some(CallLog { db, server });
        self
    }

    pub fn client(&self) -> &C {
        &self.client
    }

    /// A read (a lookup) under `place`, given back once answered, then recorded.
    pub(super) async fn read<A: PgReply>(&self, place: PgPlace, call: Call<'_>, sending: impl Future<Output = A>) -> A {
        let started = (now_ms(), Instant::now());
        let answer = sending.await;
        drop(place);
        self.record(call, started, &answer).await;
        answer
    }

    /// A call the PG processes (a confirm, an approve, a cancel) under `place`,
    /// given back once answered; it tells the limit what it showed: taken (not
    /// refused within a moment, or answered), or refused for load.
    pub(super) async fn process<A: PgReply>(
        &self,
        mut place: PgPlace,
        call: Call<'_>,
        sending: impl Future<Output = A>,
    ) -> A {
        place.processing();
        let started = (now_ms(), Instant::now());
        let answer = match self.policy {
            Policy::Fixed(_) => sending.await,
            Policy::Adaptive { window } => {
                tokio::pin!(sending);
                tokio::select! {
                    answer = &mut sending => answer,
                    () = tokio::time::sleep(window / 10) => {
                        place.taken();
                        sending.await
                    }
                }
            }
        };
        tell_limit(&mut place, &answer);
        drop(place);
        self.record(call, started, &answer).await;
        answer
    }

    /// Writes the call's record, after it returned. A record that cannot be
    /// written is logged: the payment goes on without it. On one server the
    /// record is queued before the payment's next write, so it is committed
    /// with it or before, and the call goes on without waiting for the disk;
    /// servers that share a database wait for it.
    async fn record(&self, call: Call<'_>, (started_at_ms, started): (i64, Instant), answer: &impl PgReply) {
        let Some(log) = &self.log else { return };
        let answer = answer.describe();
        let took_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        let row = NewPgCall {
            order_id: call.order_id,
            kind: call.kind,
            caller: call.caller,
            idempotency_key: call.idempotency_key,
            server: &log.server,
            started_at_ms,
            took_ms,
            answer: &answer,
        };
        let recorded = log.db.record_pg_call(&row);
        let (order_id, kind) = (call.order_id.to_owned(), call.kind.as_str());
        let logged = async move {
            if let Err(error) = recorded.await {
                tracing::warn!(order_id, kind, answer, %error, "could not record a PG call");
            }
        };
        if log.db.shared_by_servers() {
            logged.await;
        } else {
            tokio::spawn(logged);
        }
    }

    /// A place now, or `None` at the limit. Customers do not queue: a queued
    /// confirm would eat into the page's waiting time with nothing sent.
    pub async fn try_place(&self) -> Result<Option<PgPlace>, sqlx::Error> {
        Ok(match &self.limit {
            Limit::Server(limit) => limit.try_acquire().map(PgPlace::Server),
            Limit::Cluster(limit) => limit.try_acquire().await?.map(PgPlace::Cluster),
        })
    }

    /// A place, waiting for one. Used by recovery, which has time.
    pub async fn place(&self) -> Result<PgPlace, sqlx::Error> {
        Ok(match &self.limit {
            Limit::Server(limit) => PgPlace::Server(limit.acquire().await),
            Limit::Cluster(limit) => PgPlace::Cluster(limit.acquire().await?),
        })
    }
}

/// Toss's calls.
impl PgGateway<TossClient> {
    /// Looks `order_id`'s payment up, by its paymentKey or by the order's id,
    /// for `caller`, under `place`, given back once answered.
    pub async fn lookup(&self, place: PgPlace, order_id: &str, by: LookupBy<'_>, caller: PgCaller) -> TossReply {
        let call = Call { order_id, kind: PgCallKind::Lookup, caller, idempotency_key: None };
        match by {
            LookupBy::PaymentKey(payment_key) => self.read(place, call, self.client.payment(payment_key)).await,
            LookupBy::OrderId => self.read(place, call, self.client.payment_of_order(order_id)).await,
        }
    }

    /// Sends a cancel under `place`. The PG processes it as it does a confirm,
    /// so it tells the limit the same things.
    pub async fn cancel(&self, place: PgPlace, call: TossCancel<'_>, caller: PgCaller) -> TossReply {
        let record = Call {
            order_id: call.order_id,
            kind: PgCallKind::Cancel,
            caller,
            idempotency_key: Some(call.idempotency_key),
        };
        self.process(place, record, self.client.cancel(call)).await
    }

    /// Sends a confirm under `place`.
    pub async fn confirm(&self, place: PgPlace, call: TossConfirm<'_>, caller: PgCaller) -> TossReply {
        let record = Call {
            order_id: call.order_id,
            kind: PgCallKind::Confirm,
            caller,
            idempotency_key: Some(call.idempotency_key),
        };
        self.process(place, record, self.client.confirm(call)).await
    }
}

/// Tells the limit what a call's answer showed: taken (answered), or refused for
/// load; and, when there was no answer (we stopped waiting, or the connection
/// was reset), that the PG may still be processing the call and counts it
/// until it is done.
fn tell_limit(place: &mut PgPlace, answer: &impl PgReply) {
    if answer.shows_overload() {
        place.overloaded();
    } else {
        place.taken();
    }
    if answer.unanswered() {
        place.unanswered();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_reset_keeps_the_place_like_a_timeout_and_a_call_never_sent_frees_it() {
        let limit = ConcurrencyLimit::new(Pg::Toss, Policy::Fixed(1), Duration::from_secs(60));
        let no_answer = |timed_out| TossReply::NoReply { detail: "no answer".into(), timed_out };
        for answer in [no_answer(true), no_answer(false)] {
            let mut place = PgPlace::Server(limit.try_acquire().expect("a free place"));
            tell_limit(&mut place, &answer);
            drop(place);
            assert!(limit.try_acquire().is_none(), "{answer:?}: the PG may still be processing it");
            tokio::time::advance(Duration::from_secs(61)).await;
            tokio::task::yield_now().await;
        }
        let mut place = PgPlace::Server(limit.try_acquire().expect("a free place"));
        tell_limit(&mut place, &TossReply::NotSent { detail: "connection refused".into() });
        drop(place);
        assert!(limit.try_acquire().is_some(), "a call that never reached the PG frees its place at once");
    }

    #[tokio::test(start_paused = true)]
    async fn lookups_answered_at_once_do_not_free_a_reset_confirms_place_early() {
        let limit = ConcurrencyLimit::new(Pg::Toss, Policy::Fixed(1), Duration::from_secs(60));
        // Many lookups, each answered in a moment: what a recovering shop sees.
        for _ in 0..payonce_rules::places::RECENT_CALLS {
            let place = PgPlace::Server(limit.try_acquire().expect("a free place"));
            tokio::time::advance(Duration::from_millis(20)).await;
            drop(place);
        }
        // A confirm reset at once: the PG may be processing it for as long as a confirm takes.
        let mut place = PgPlace::Server(limit.try_acquire().expect("a free place"));
        place.processing();
        tell_limit(&mut place, &TossReply::NoReply { detail: "connection reset".into(), timed_out: false });
        drop(place);
        tokio::time::advance(Duration::from_secs(1)).await;
        tokio::task::yield_now().await;
        assert!(limit.try_acquire().is_none(), "a second's lookups say nothing of how long a confirm takes");
        tokio::time::advance(Duration::from_secs(60)).await;
        tokio::task::yield_now().await;
        assert!(limit.try_acquire().is_some(), "back once a confirm's longest wait is over");
    }

    #[tokio::test(start_paused = true)]
    async fn confirms_answered_lately_say_how_long_a_reset_confirms_place_stays_taken() {
        let limit = ConcurrencyLimit::new(Pg::Toss, Policy::Fixed(1), Duration::from_secs(60));
        let declined =
            TossReply::Error { http_status: 400, code: "REJECT_CARD_COMPANY".into(), message: "declined".into() };
        // Confirms the PG answered in a second each: how long one takes lately.
        for _ in 0..payonce_rules::places::KNOWN_AFTER {
            let mut place = PgPlace::Server(limit.try_acquire().expect("a free place"));
            place.processing();
            tokio::time::advance(Duration::from_secs(1)).await;
            tell_limit(&mut place, &declined);
            drop(place);
        }
        // A confirm reset at once: the PG may be processing it for as long as confirms take lately.
        let mut place = PgPlace::Server(limit.try_acquire().expect("a free place"));
        place.processing();
        tell_limit(&mut place, &TossReply::NoReply { detail: "connection reset".into(), timed_out: false });
        drop(place);
        assert!(limit.try_acquire().is_none(), "the PG may still be processing it");
        tokio::time::advance(Duration::from_millis(1_100)).await;
        tokio::task::yield_now().await;
        assert!(limit.try_acquire().is_some(), "back once a confirm's time lately is over, not a minute later");
    }
}

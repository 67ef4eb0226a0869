//! A PG's concurrency limit in a cluster: every order server sharing the
//! database takes its places under one limit, kept in the database (see
//! `db::pg_places`), so three servers send no more to the PG at once than one.
//! Each PG has a limit of its own (its own contract): its own places and its
//! own learned row.
//!
//! A place is a lease, never a held lock or transaction: taking and freeing one
//! is one short statement each, and nothing is open while the call is out.
//! Each server renews the leases of its places about once a second. When a
//! server dies, its places come back once renewals stop for the lapse (three
//! seconds), plus as long as each call may still be at the PG: a call that had
//! run for ten seconds, or while calls lately took twenty (the longest of the
//! server's last 64; as long as a call can take, before it has seen 16), is
//! likely still being processed, and the PG counts it against the contract.
//! For the same reason a call we got no answer for (a read timeout, a reset)
//! leaves its place taken, unrenewed, for as long as the PG may still take
//! (`payonce_rules::places`).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use payonce_api::Pg;
use payonce_rules::places::{self, CallKind, RecentCalls};
use rand::Rng;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::learning::{CEILING, Learned};
use super::{Policy, window_ms};
use crate::db::{Db, LearnedLimitRow, PlaceClaim, PlaceTerms, now_ms};
use crate::metrics;

/// How long a place outlives its holder's last renewal.
pub const LAPSE: Duration = Duration::from_secs(3);
/// How often a waiting caller looks for a free place, at most and at first.
const FIRST_LOOK: Duration = Duration::from_millis(20);
const LONGEST_LOOK: Duration = Duration::from_millis(500);
/// How many times a learning step retries after another server changed the limit first.
const LEARN_TRIES: usize = 5;

/// The cluster's limit at one PG as this server sees it.
#[derive(Debug)]
pub struct ClusterLimit {
    db: Db,
    pg: Pg,
    /// This server, as the holder of its places.
    holder: Arc<str>,
    policy: Policy,
    /// The longest a call can be out (our own timeouts).
    call_deadline: Duration,
    recent: Mutex<RecentCalls>,
    /// Places this server holds now.
    held: AtomicU32,
    /// A place of this server's was freed: a waiting caller may look again.
    freed: Notify,
    renewing: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// A place under the cluster's limit. Freed when dropped.
#[derive(Debug)]
pub struct ClusterPlace {
    limit: Arc<ClusterLimit>,
    claim: PlaceClaim,
    taken_at: Instant,
    signalled: bool,
    /// The call ended without an answer; the PG may still be processing it.
    unanswered: bool,
    kind: CallKind,
}

impl ClusterLimit {
    /// `holder`'s share of `pg`'s limit on `db`, renewing its places until it is dropped.
    pub fn new(db: Db, pg: Pg, holder: Arc<str>, policy: Policy, call_deadline: Duration) -> Arc<Self> {
        let limit = match policy {
            Policy::Fixed(limit) => limit,
            Policy::Adaptive { .. } => super::learning::INITIAL,
        };
        metrics::pg_limit(pg, f64::from(limit));
        let limit = Arc::new(Self {
            db,
            pg,
            holder,
            policy,
            call_deadline,
            recent: Mutex::new(RecentCalls::default()),
            held: AtomicU32::new(0),
            freed: Notify::new(),
            renewing: Mutex::new(None),
        });
        let task = tokio::spawn(renew_until_dropped(Arc::downgrade(&limit)));
        *limit.renewing.lock().expect("renewing lock") = Some(task);
        limit
    }

    fn terms(&self) -> PlaceTerms {
        let recent = self.recent.lock().expect("recent lock").longest(self.call_deadline);
        PlaceTerms {
            lapse_ms: millis(LAPSE),
            recent_longest_ms: millis(recent),
            call_deadline_ms: millis(self.call_deadline),
        }
    }

    /// A place now, or `None` when the cluster is at its limit.
    pub async fn try_acquire(self: &Arc<Self>) -> Result<Option<ClusterPlace>, sqlx::Error> {
        let call_id = uuid::Uuid::new_v4().simple().to_string();
        let limit = match self.policy {
            Policy::Fixed(limit) => Some(limit),
            Policy::Adaptive { .. } => None,
        };
        let started = Instant::now();
        let claimed = self.db.claim_place(self.pg, &self.holder, &call_id, limit, now_ms(), self.terms()).await?;
        metrics::pg_place_seconds("take", started.elapsed());
        let Some(number) = claimed else {
            return Ok(None);
        };
        self.held.fetch_add(1, Ordering::Relaxed);
        metrics::pg_in_flight(self.pg, 1.0);
        let claim = PlaceClaim { pg: self.pg, number, call_id };
        Ok(Some(ClusterPlace {
            limit: self.clone(),
            claim,
            taken_at: Instant::now(),
            signalled: false,
            unanswered: false,
            kind: CallKind::Quick,
        }))
    }

    /// A place, waiting for one: looking again when this server frees one, or
    /// after a growing, jittered pause (another server may free one).
    pub async fn acquire(self: &Arc<Self>) -> Result<ClusterPlace, sqlx::Error> {
        let mut pause = FIRST_LOOK;
        loop {
            let freed = self.freed.notified();
            if let Some(place) = self.try_acquire().await? {
                return Ok(place);
            }
            let jittered = pause.mul_f64(rand::rng().random_range(0.5..=1.0));
            tokio::select! {
                () = freed => {}
                () = tokio::time::sleep(jittered) => {}
            }
            pause = (pause * 2).min(LONGEST_LOOK);
        }
    }

    fn learn(self: &Arc<Self>, room: bool) {
        let Policy::Adaptive { window } = self.policy else { return };
        let limit = self.clone();
        // A signal, not part of the call: the call does not wait for it.
        tokio::spawn(async move {
            if let Err(error) = limit.learn_now(room, window_ms(window)).await {
                tracing::warn!(%error, "could not store what the PG showed about its load");
            }
        });
    }

    async fn learn_now(&self, room: bool, window_ms: i64) -> Result<(), sqlx::Error> {
        for _ in 0..LEARN_TRIES {
            let row = self.db.learned_limit_row(self.pg).await?;
            let mut learned = learned_from(&row);
            let now = now_ms();
            let changed = if room {
                let in_use = self.db.places_in_use(self.pg, now).await?;
                learned.room(u32::try_from(in_use).unwrap_or(CEILING), now, window_ms)
            } else {
                learned.overload(now, window_ms)
            };
            if !changed {
                return Ok(());
            }
            if self.db.update_learned_limit_row(self.pg, &row_from(&learned, row.version)).await? {
                metrics::pg_limit(self.pg, f64::from(learned.limit));
                return Ok(());
            }
        }
        Ok(())
    }

    fn release(self: &Arc<Self>, claim: PlaceClaim, ran: Duration, unanswered: bool, kind: CallKind) {
        let kept = {
            let mut recent = self.recent.lock().expect("recent lock");
            let kept = unanswered.then(|| places::kept_without_answer(ran, &recent, self.call_deadline));
            recent.remember(kind, ran);
            kept
        };
        let limit = self.clone();
        tokio::spawn(async move {
            // If this fails the place comes back after the lapse, as a killed server's does.
            let started = Instant::now();
            // A call we got no answer for keeps its place, unrenewed, while
            // the PG may still be processing it.
            let freed = if let Some(kept) = kept {
                limit.db.leave_place(&claim, now_ms() + millis(kept)).await
            } else {
                limit.db.release_place(&claim).await
            };
            if let Err(error) = freed {
                tracing::warn!(%error, pg = claim.pg.as_str(), place = claim.number, "could not free a PG place; it lapses by itself");
            }
            metrics::pg_place_seconds("free", started.elapsed());
            limit.held.fetch_sub(1, Ordering::Relaxed);
            metrics::pg_in_flight(limit.pg, -1.0);
            limit.freed.notify_one();
        });
    }
}

impl Drop for ClusterLimit {
    fn drop(&mut self) {
        if let Some(task) = self.renewing.lock().expect("renewing lock").take() {
            task.abort();
        }
    }
}

/// Renews this server's places at the PG, and reads its learned limit, about three times per lapse.
async fn renew_until_dropped(limit: Weak<ClusterLimit>) {
    let mut ticks = tokio::time::interval(LAPSE / 3);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(limit) = limit.upgrade() else { return };
        if limit.held.load(Ordering::Relaxed) > 0
            && let Err(error) = limit.db.renew_places(limit.pg, &limit.holder, now_ms(), limit.terms()).await
        {
            let pg = limit.pg.as_str();
            tracing::warn!(%error, pg, "could not renew this server's PG places; they lapse unless renewed soon");
        }
        if matches!(limit.policy, Policy::Adaptive { .. }) {
            match limit.db.learned_limit_row(limit.pg).await {
                Ok(row) => {
                    metrics::pg_limit(limit.pg, f64::from(learned_from(&row).limit));
                }
                Err(error) => {
                    let pg = limit.pg.as_str();
                    tracing::warn!(%error, pg, "could not read the cluster's PG concurrency limit");
                }
            }
        }
    }
}

impl ClusterPlace {
    /// The PG took the call: it was not refused within a moment, or it answered.
    pub fn taken(&mut self) {
        if !std::mem::replace(&mut self.signalled, true) {
            self.limit.learn(true);
        }
    }

    /// The PG refused the call for load, or did not answer in time.
    pub fn overloaded(&mut self) {
        self.signalled = true;
        self.limit.learn(false);
    }

    /// The call ended without an answer (a read timeout, a reset): the PG may still be processing it.
    pub fn unanswered(&mut self) {
        self.unanswered = true;
    }

    /// The call is one the PG processes: its time says how long "lately" is.
    pub fn processing(&mut self) {
        self.kind = CallKind::Processing;
    }
}

impl Drop for ClusterPlace {
    fn drop(&mut self) {
        let claim = PlaceClaim {
            pg: self.claim.pg,
            number: self.claim.number,
            call_id: std::mem::take(&mut self.claim.call_id),
        };
        self.limit.release(claim, self.taken_at.elapsed(), self.unanswered, self.kind);
    }
}

fn learned_from(row: &LearnedLimitRow) -> Learned {
    Learned {
        limit: u32::try_from(row.limit).unwrap_or(CEILING).min(CEILING),
        slow_start: row.slow_start != 0,
        last_decrease_ms: row.last_decrease_ms,
        last_increase_ms: row.last_increase_ms,
    }
}

fn row_from(learned: &Learned, version: i64) -> LearnedLimitRow {
    LearnedLimitRow {
        limit: i64::from(learned.limit),
        slow_start: i64::from(learned.slow_start),
        last_decrease_ms: learned.last_decrease_ms,
        last_increase_ms: learned.last_increase_ms,
        version,
    }
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

//! The domain context: what the payment rules, recovery and orders work with.
//! Cheap to clone: all handles. It knows nothing of HTTP; the handlers' state
//! (`state.rs`) wraps it with the rate limits and the metrics' renderer.

use std::sync::Arc;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::ServerConfig;
use crate::db::Db;
use crate::pg::adapters::{Adapters, KakaoPayAdapter, TossAdapter};
use crate::pg::{KakaoPayClient, PgGateway, TossClient};
use crate::resilience::{CircuitBreaker, HintedLookups, RetryBudget, lease};
use crate::waiting_places::WaitingPlaces;
use payonce_api::Pg;
use payonce_rules::settlement::Timings;

#[derive(Debug, Clone)]
pub struct App {
    pub config: Arc<ServerConfig>,
    pub db: Db,
    /// The PGs the shop takes, each its adapter under a limit of its own (its
    /// own contract), shared by a cluster: Toss, and KakaoPay where configured.
    pub pgs: Adapters,
    /// Shared by all recovery work, so a PG outage stops recovery calls, not just one.
    pub breaker: Arc<CircuitBreaker>,
    /// Bounds recovery's retries to a tenth of customers' confirms (with a floor).
    pub retry_budget: Arc<RetryBudget>,
    /// Lookups a webhook asked for go first under an allowance of their own.
    pub hinted_lookups: Arc<HintedLookups>,
    /// This server's name in the leases it takes: of attempts, and of places under a shared PG limit.
    pub worker_id: Arc<str>,
    /// Wakes the recovery job early, when a confirm has just ended unknown.
    pub recovery_wake: Arc<Notify>,
    /// PG calls detached from their requests; shutdown waits for them.
    pub pg_tasks: TaskTracker,
    /// Places for checks that wait for their order: server-wide, per client, per customer.
    pub waiting_places: Arc<WaitingPlaces>,
    /// Cancelled when the server begins to stop: waiting checks answer at once.
    pub stopping: CancellationToken,
}

impl App {
    pub fn new(config: ServerConfig, db: Db) -> Self {
        let client = TossClient::new(&config.pg_url, &config.pg_secret_key, config.pg_transport());
        let worker_id: Arc<str> = Arc::from(format!("server-{}", uuid::Uuid::new_v4().simple()));
        let toss = limited_gateway(client, Pg::Toss, &config, &db, &worker_id);
        let kakaopay = config.kakaopay_url.as_ref().map(|url| {
            let client =
                KakaoPayClient::new(url, &config.kakaopay_secret_key, &config.kakaopay_cid, config.pg_transport());
            let gateway = limited_gateway(client, Pg::KakaoPay, &config, &db, &worker_id);
            Arc::new(KakaoPayAdapter::new(gateway, config.kakaopay_session_lifetime))
        });
        let pgs = Adapters { toss: Arc::new(TossAdapter::new(toss, config.pg_session_lifetime)), kakaopay };
        let waiting_places = WaitingPlaces::new(
            config.max_waiting_checks,
            config.max_waiting_checks_per_client,
            config.max_waiting_checks_per_customer,
        );
        Self {
            breaker: Arc::new(CircuitBreaker::new(
                Timings::new(config.recovery_interval).breaker_cool_down,
                lease::for_confirm(&config),
            )),
            retry_budget: Arc::new(RetryBudget::new(config.recovery_interval)),
            hinted_lookups: Arc::new(HintedLookups::default()),
            config: Arc::new(config),
            db,
            pgs,
            worker_id,
            recovery_wake: Arc::new(Notify::new()),
            pg_tasks: TaskTracker::new(),
            waiting_places: Arc::new(waiting_places),
            stopping: CancellationToken::new(),
        }
    }

    /// Recovery's timings, from the configured interval.
    pub fn timings(&self) -> Timings {
        let timings = Timings::new(self.config.recovery_interval);
        if self.config.pg_webhooks { timings.announced_by_webhooks() } else { timings }
    }
}

/// A gateway to `pg` under a limit of its own (each PG has its own contract):
/// in the database, shared with every server on it, when servers share one;
/// in this server's memory otherwise. Every call about an order is recorded.
fn limited_gateway<C>(client: C, pg: Pg, config: &ServerConfig, db: &Db, worker_id: &Arc<str>) -> PgGateway<C> {
    // The longest a call can be out: the PG counts it until then.
    let call_deadline = config.max_processing();
    let policy = config.pg_limit_policy();
    let gateway = if db.shared_by_servers() {
        PgGateway::shared(client, pg, policy, db.clone(), worker_id.clone(), call_deadline)
    } else {
        PgGateway::new(client, pg, policy, call_deadline)
    };
    gateway.recording(db.clone(), worker_id.clone())
}

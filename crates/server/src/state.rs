//! What every handler and background job shares. Cheap to clone: all handles.

use std::sync::Arc;

use metrics_exporter_prometheus::PrometheusHandle;
use tokio::sync::{Notify, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::ServerConfig;
use crate::db::Db;
use crate::payment::{CircuitBreaker, RecoveryBudget};
use crate::pg::{PgClient, PgGateway};
use crate::routes::limits::{Limits, Rate};

#[derive(Debug, Clone)]
pub struct AppState {
    pub config: Arc<ServerConfig>,
    pub db: Db,
    pub pg: PgGateway,
    /// Shared by all recovery work, so a PG outage stops recovery calls, not just one.
    pub breaker: Arc<CircuitBreaker>,
    /// Bounds recovery's retries to a tenth of customers' confirms (with a floor).
    pub budget: Arc<RecoveryBudget>,
    /// This server's name in the leases it takes: of attempts, and of places under a shared PG cap.
    pub worker_id: Arc<str>,
    /// Wakes the recovery job early, when a confirm has just ended unknown.
    pub recovery_wake: Arc<Notify>,
    /// PG calls detached from their requests; shutdown waits for them.
    pub pg_tasks: TaskTracker,
    pub metrics: PrometheusHandle,
    pub limits: Limits,
    /// One permit per check that may wait for its order at once, server-wide.
    pub check_waits: Arc<Semaphore>,
    /// Cancelled when the server begins to stop: waiting checks answer at once.
    pub stopping: CancellationToken,
}

impl AppState {
    pub fn new(config: ServerConfig, db: Db) -> Self {
        let client =
            PgClient::new(&config.pg_url, &config.pg_secret_key, config.pg_connect_timeout, config.pg_read_timeout);
        let worker_id: Arc<str> = Arc::from(format!("server-{}", uuid::Uuid::new_v4().simple()));
        let pg = if db.shared_by_servers() {
            // The longest a call can be out: the PG counts it until then.
            let call_deadline = config.max_processing();
            PgGateway::shared(client, config.pg_limit_policy(), db.clone(), worker_id.clone(), call_deadline)
        } else {
            PgGateway::new(client, config.pg_limit_policy())
        }
        .recording(db.clone(), worker_id.clone());
        let cool_down = crate::payment::recovery::Timings::new(config.recovery_interval).breaker_cool_down;
        let budget_window = config.recovery_interval;
        let config_waits = usize::try_from(config.max_waiting_checks).unwrap_or(usize::MAX);
        let limits =
            Limits::new(Rate::per_minute(config.rate_limit_customer), Rate::per_minute(config.rate_limit_address));
        Self {
            config: Arc::new(config),
            db,
            pg,
            breaker: Arc::new(CircuitBreaker::new(cool_down)),
            budget: Arc::new(RecoveryBudget::new(budget_window)),
            worker_id,
            recovery_wake: Arc::new(Notify::new()),
            pg_tasks: TaskTracker::new(),
            metrics: crate::metrics::handle(),
            limits,
            check_waits: Arc::new(Semaphore::new(config_waits)),
            stopping: CancellationToken::new(),
        }
    }
}

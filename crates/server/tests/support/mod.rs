//! A real fake PG and a real order server on loopback ports, for one test each.

use std::future::Future;
use std::time::{Duration, Instant};

use fake_pg::Stats;
use payonce_api::{CreateOrderRequest, CreatedOrder, Order, OrderStatus, RequestedItem};
use payonce_server::ServerConfig;
use payonce_server::db::DbLocation;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

pub mod receiver;

pub const SECRET_KEY: &str = fake_pg::DEFAULT_SECRET_KEY;

/// Sends the logs of the servers a test runs in its own process to the test's
/// output, which the test harness shows only when that test fails: a failure
/// under load then says what the server saw (which error, from where). The
/// filter is `RUST_LOG`'s when set.
fn show_server_logs_when_a_test_fails() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("payonce_server=info,sqlx=warn"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_test_writer().try_init();
}

/// The fake PG, in this process, on its own port.
pub struct FakePg {
    pub url: String,
    http: reqwest::Client,
    _stop: oneshot::Sender<()>,
}

impl FakePg {
    /// Starts with a 50 ms latency so tests are quick unless they ask otherwise.
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// Starts with the startup configuration `tweak` makes (a time scale, say).
    pub async fn start_with(tweak: impl FnOnce(&mut fake_pg::Config)) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = oneshot::channel::<()>();
        let mut config = fake_pg::Config::default();
        config.runtime.latency_ms = 50;
        tweak(&mut config);
        tokio::spawn(fake_pg::serve_with_shutdown(config, listener, async {
            let _ = stopped.await;
        }));
        Self { url, http: reqwest::Client::new(), _stop: stop }
    }

    /// Merges `patch` into the runtime config (`PUT /__admin/config`).
    pub async fn configure(&self, patch: Value) {
        let response = self.http.put(format!("{}/__admin/config", self.url)).json(&patch).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{}", response.text().await.unwrap());
    }

    pub async fn stats(&self) -> Stats {
        self.http.get(format!("{}/__admin/stats", self.url)).send().await.unwrap().json().await.unwrap()
    }

    /// The payment as the PG shows it (`GET /v1/payments/{paymentKey}`), if it has one.
    pub async fn payment(&self, payment_key: &str) -> Option<fake_pg::Payment> {
        let response = self
            .http
            .get(format!("{}/v1/payments/{payment_key}", self.url))
            .basic_auth(SECRET_KEY, Some(""))
            .send()
            .await
            .unwrap();
        if response.status() == StatusCode::OK { Some(response.json().await.unwrap()) } else { None }
    }

    pub async fn charges(&self, order_id: &str) -> u64 {
        self.stats().await.charges_by_order.get(order_id).copied().unwrap_or(0)
    }

    /// A confirm sent straight to the PG, as another client would.
    pub async fn confirm_directly(&self, order: &Order, payment_key: &str, idempotency_key: &str) -> reqwest::Response {
        self.http
            .post(format!("{}/v1/payments/confirm", self.url))
            .basic_auth(SECRET_KEY, Some(""))
            .header("Idempotency-Key", idempotency_key)
            .json(&json!({"paymentKey": payment_key, "orderId": order.order_id, "amount": order.amount}))
            .send()
            .await
            .unwrap()
    }

    /// A cancel sent straight to the PG (as from its console): `amount`, or in full.
    pub async fn cancel_directly(&self, payment_key: &str, amount: Option<u64>) -> reqwest::Response {
        let mut body = json!({"cancelReason": "cancelled at the PG's console"});
        if let Some(amount) = amount {
            body["cancelAmount"] = json!(amount);
        }
        self.http
            .post(format!("{}/v1/payments/{payment_key}/cancel", self.url))
            .basic_auth(SECRET_KEY, Some(""))
            .header("Idempotency-Key", uuid::Uuid::new_v4().to_string())
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    /// The payment window for the order, as the PG's SDK opens it.
    pub fn window_url(&self, created: &CreatedOrder) -> String {
        let query = [
            ("clientKey", fake_pg::DEFAULT_CLIENT_KEY),
            ("customerKey", "@@ANONYMOUS"),
            ("orderId", created.order.order_id.as_str()),
            ("amount", &created.order.amount.to_string()),
            ("orderName", created.order.order_name.as_str()),
            ("successUrl", created.success_url.as_str()),
            ("failUrl", created.fail_url.as_str()),
        ];
        format!("{}/v1/window?{}", self.url, serde_urlencoded::to_string(query).unwrap())
    }

    /// Opens the order's payment window, presses the test card `scenario`, and
    /// returns the paymentKey the window issued, as the browser would.
    pub async fn window_payment_key(&self, created: &CreatedOrder, scenario: &str) -> String {
        let html = self.http.get(self.window_url(created)).send().await.unwrap().text().await.unwrap();
        let marker = r#"name="paymentKey" value=""#;
        let start = html.find(marker).expect("the window has a paymentKey field") + marker.len();
        let payment_key = html[start..start + html[start..].find('"').unwrap()].to_owned();
        let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        let submitted = no_redirects
            .post(format!("{}/v1/window", self.url))
            .form(&[("paymentKey", payment_key.as_str()), ("scenario", scenario)])
            .send()
            .await
            .unwrap();
        assert_eq!(submitted.status(), StatusCode::SEE_OTHER);
        payment_key
    }

    /// A URL where nothing listens: connecting is refused. The port stays
    /// bound, never listening, for the rest of the test's process: a port
    /// merely closed again was taken by another test's server meanwhile (which
    /// answered 404 where the test expected a refusal).
    pub async fn closed_port_url() -> String {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let address = socket.local_addr().unwrap();
        std::mem::forget(socket);
        format!("http://{address}")
    }
}

/// Where a test server keeps its data: a folder of its own (logs, and the
/// SQLite file) and its database. The database is a fresh SQLite file, or, when
/// `PAYONCE_TEST_DATABASE_URL` names a PostgreSQL server (as the test command's
/// PostgreSQL run does), a fresh database on it: each test starts empty either way.
pub struct Store {
    pub dir: TempDir,
    pub db: DbLocation,
}

/// Names the PostgreSQL server (any database on it) the tests create their databases on.
pub const TEST_DATABASE_ENV: &str = "PAYONCE_TEST_DATABASE_URL";

/// The PostgreSQL server `TEST_DATABASE_ENV` names, if this run is on one.
pub fn postgres_server() -> Option<String> {
    std::env::var(TEST_DATABASE_ENV).ok().filter(|server| !server.is_empty())
}

impl Store {
    pub async fn fresh() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = match postgres_server() {
            Some(server) => fresh_postgres_database(&server).await,
            None => DbLocation::sqlite_file(&dir.path().join("payonce.db")),
        };
        Self { dir, db }
    }

    /// A folder of its own on the same database: a second server of a cluster.
    pub fn beside(other: &Store) -> Self {
        Self { dir: tempfile::tempdir().unwrap(), db: other.db.clone() }
    }
}

/// Creates an empty database on the PostgreSQL server `server_url` names.
async fn fresh_postgres_database(server_url: &str) -> DbLocation {
    use sqlx::Connection;
    let mut admin = sqlx::PgConnection::connect(server_url)
        .await
        .unwrap_or_else(|error| panic!("{TEST_DATABASE_ENV}={server_url}: cannot connect: {error}"));
    let name = format!("test_{}", uuid::Uuid::new_v4().simple());
    sqlx::Executor::execute(&mut admin, format!("CREATE DATABASE {name}").as_str()).await.unwrap();
    let mut url = url::Url::parse(server_url).unwrap();
    url.set_path(&name);
    url.as_str().parse().unwrap()
}

/// The database stalls for writers: a transaction of the test's holds the
/// write lock of the payments' table (SQLite's one writer, or PostgreSQL's
/// lock of `payment_attempts`), as a slow writer or a database pausing would,
/// until `end`. Reads go on. SQLite makes a writer wait 5 s at most.
pub enum WriteStall {
    Sqlite(sqlx::SqliteConnection),
    Postgres(sqlx::PgConnection),
}

impl WriteStall {
    pub async fn begin(store: &Store) -> Self {
        use sqlx::{Connection, Executor};
        let url = store.db.url();
        match store.db.engine() {
            payonce_server::db::Engine::Sqlite => {
                let mut connection = sqlx::SqliteConnection::connect(url).await.unwrap();
                connection.execute("BEGIN IMMEDIATE").await.unwrap();
                Self::Sqlite(connection)
            }
            payonce_server::db::Engine::Postgres => {
                let mut connection = sqlx::PgConnection::connect(url).await.unwrap();
                connection.execute("BEGIN").await.unwrap();
                connection.execute("LOCK TABLE payment_attempts IN SHARE ROW EXCLUSIVE MODE").await.unwrap();
                Self::Postgres(connection)
            }
        }
    }

    /// The stall ends: writers go on.
    pub async fn end(self) {
        use sqlx::Executor;
        match self {
            Self::Sqlite(mut connection) => drop(connection.execute("COMMIT").await.unwrap()),
            Self::Postgres(mut connection) => drop(connection.execute("COMMIT").await.unwrap()),
        }
    }
}

/// The order server on its own database, in this process or as a child process.
pub struct Server {
    pub url: String,
    /// The operators' listener: metrics.
    pub admin_url: String,
    pub http: reqwest::Client,
    pub store: Store,
    /// The operators' token, if it has one: `/metrics` needs it then.
    pub admin_token: Option<String>,
    running: Running,
}

enum Running {
    InProcess { stop: oneshot::Sender<()>, task: tokio::task::JoinHandle<Result<(), payonce_server::RunError>> },
    Child(tokio::process::Child),
}

/// Server settings for tests: short timeouts so a test of a timeout is quick.
pub fn test_config(pg_url: &str, store: &Store) -> ServerConfig {
    let mut config = ServerConfig::defaults();
    config.pg_url = pg_url.to_owned();
    config.db = store.db.clone();
    config.pg_read_timeout = Duration::from_secs(2);
    config.pg_connect_timeout = Duration::from_millis(500);
    config.recovery_interval = Duration::from_millis(300);
    // Tests send bursts from one address and one customer on purpose; the
    // limits have tests of their own.
    config.rate_limit_customer = 0;
    config.rate_limit_address = 0;
    config.rate_limit_customer_reads = 0;
    config.rate_limit_address_reads = 0;
    config.rate_limit_new_customers = 0;
    config.max_connections = 100_000;
    config.max_connections_per_client = 100_000;
    config
}

impl Server {
    pub async fn start(pg_url: &str) -> Self {
        Self::start_with(pg_url, |_| {}).await
    }

    pub async fn start_with(pg_url: &str, tweak: impl FnOnce(&mut ServerConfig)) -> Self {
        let store = Store::fresh().await;
        let mut config = test_config(pg_url, &store);
        tweak(&mut config);
        Self::start_on(config, store).await
    }

    pub async fn start_on(mut config: ServerConfig, store: Store) -> Self {
        show_server_logs_when_a_test_fails();
        // A PostgreSQL shop at an https address must have its cookie key from a
        // file (`ClusterWithoutCustomerKey`): give it the one a shop's servers
        // would share, read as `main` reads it.
        if config.db.engine() == payonce_server::db::Engine::Postgres
            && config.served_over_https()
            && config.customer_key_file.is_none()
        {
            config.customer_key_file = Some("shared-by-the-shops-servers.key".into());
            config.customer_keys = Some(payonce_server::config::CustomerKeyFiles {
                current: "3f9a1c7e5b2d80463f9a1c7e5b2d8046".to_owned().into(),
                previous: None,
            });
        }
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let admin_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let admin_url = format!("http://{}", admin_listener.local_addr().unwrap());
        let admin_token =
            config.admin_token.as_ref().map(|token| secrecy::ExposeSecret::expose_secret(token).to_owned());
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(payonce_server::run(config, listener, admin_listener, async {
            let _ = stopped.await;
        }));
        let http = reqwest::Client::builder().cookie_store(true).build().unwrap();
        let server = Self { url, admin_url, http, store, admin_token, running: Running::InProcess { stop, task } };
        server.wait_until_healthy().await;
        server
    }

    /// Runs the `payonce-server` binary on `store`, keeping the customer's cookies
    /// from `http` (cookies do not depend on the port, so a restart keeps the customer).
    pub async fn spawn_binary(store: Store, http: reqwest::Client, args: &[&str]) -> Self {
        use tokio::io::AsyncBufReadExt;
        let log =
            std::fs::OpenOptions::new().create(true).append(true).open(store.dir.path().join("server.log")).unwrap();
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_payonce-server"))
            .args(["--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--db", store.db.url()])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let first_line = tokio::io::BufReader::new(stdout).lines().next_line().await.unwrap().unwrap();
        let mut urls = first_line.split_whitespace().filter(|word| word.starts_with("http://")).map(str::to_owned);
        let (Some(url), Some(admin_url)) = (urls.next(), urls.next()) else {
            panic!("no public and admin URLs in {first_line:?}")
        };
        let admin_token = args.iter().position(|arg| *arg == "--admin-token").and_then(|at| args.get(at + 1));
        let admin_token = admin_token.map(|token| (*token).to_owned());
        let server = Self { url, admin_url, http, store, admin_token, running: Running::Child(child) };
        server.wait_until_healthy().await;
        server
    }

    /// The `payonce-server` binary on a fresh database, set as `test_config`
    /// sets an in-process one, with `extra` flags given instead of those
    /// defaults: a server whose metrics are its own (in-process servers share
    /// one recorder), for tests that read exact figures.
    pub async fn own_process(pg_url: &str, extra: &[(&str, &str)]) -> Self {
        let defaults = [
            ("--pg-url", pg_url),
            ("--pg-read-timeout", "2s"),
            ("--pg-connect-timeout", "500ms"),
            ("--recovery-interval", "300ms"),
            ("--rate-limit-customer", "0"),
            ("--rate-limit-address", "0"),
            ("--rate-limit-customer-reads", "0"),
            ("--rate-limit-address-reads", "0"),
            ("--rate-limit-new-customers", "0"),
            ("--max-connections", "100000"),
            ("--max-connections-per-client", "100000"),
        ];
        let given = |flag: &str| extra.iter().any(|(extra_flag, _)| *extra_flag == flag);
        let kept = defaults.iter().filter(|(flag, _)| !given(flag));
        let args: Vec<&str> = kept.chain(extra).flat_map(|(flag, value)| [*flag, *value]).collect();
        let customer = reqwest::Client::builder().cookie_store(true).build().unwrap();
        Self::spawn_binary(Store::fresh().await, customer, &args).await
    }

    /// SIGKILL: no shutdown code runs. Returns the database and the customer's client.
    pub async fn kill(self) -> (Store, reqwest::Client) {
        let Running::Child(mut child) = self.running else { panic!("only a child process can be killed") };
        child.kill().await.unwrap();
        (self.store, self.http)
    }

    async fn wait_until_healthy(&self) {
        eventually("the server answers /healthz", Duration::from_secs(10), || async {
            self.http.get(format!("{}/healthz", self.url)).send().await.is_ok().then_some(())
        })
        .await;
    }

    /// Stops an in-process server as SIGTERM would and waits for it.
    pub async fn stop(self) {
        let Running::InProcess { stop, task } = self.running else { panic!("not in process") };
        let _ = stop.send(());
        task.await.unwrap().unwrap();
    }

    /// A second customer: same server, no cookies.
    pub fn other_customer(&self) -> reqwest::Client {
        reqwest::Client::builder().cookie_store(true).build().unwrap()
    }

    pub async fn create_order(&self) -> CreatedOrder {
        self.create_order_for(&self.http).await
    }

    /// An order of the customer whose cookies `customer` keeps.
    pub async fn create_order_for(&self, customer: &reqwest::Client) -> CreatedOrder {
        let request = CreateOrderRequest { items: vec![RequestedItem { sku: "CERAMIC-MUG".into(), quantity: 2 }] };
        let response = customer.post(format!("{}/api/orders", self.url)).json(&request).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::CREATED);
        response.json().await.unwrap()
    }

    /// The page's close of an order that never got a confirm: `{}` as JSON, by `client`.
    pub fn close_request(&self, client: &reqwest::Client, order_id: &str) -> reqwest::RequestBuilder {
        client.post(format!("{}/api/orders/{order_id}/abandon", self.url)).json(&json!({}))
    }

    pub fn confirm_request(&self, order: &Order, idempotency_key: &str) -> reqwest::RequestBuilder {
        self.confirm_with_key(order, &payment_key_for(order), idempotency_key)
    }

    /// A confirm carrying a given paymentKey, such as one a payment window issued.
    pub fn confirm_with_key(&self, order: &Order, payment_key: &str, idempotency_key: &str) -> reqwest::RequestBuilder {
        self.http
            .post(format!("{}/api/orders/{}/confirm", self.url, order.order_id))
            .header("Idempotency-Key", idempotency_key)
            .json(&json!({"payment_key": payment_key, "amount": order.amount}))
    }

    pub async fn confirm(&self, order: &Order, idempotency_key: &str) -> (StatusCode, Value) {
        let response = self.confirm_request(order, idempotency_key).send().await.unwrap();
        (response.status(), response.json().await.unwrap())
    }

    pub async fn order(&self, order_id: &str) -> Order {
        let response = self.http.get(format!("{}/api/orders/{order_id}", self.url)).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        response.json().await.unwrap()
    }

    /// Polls the order until it reaches `status`, failing after `within`.
    pub async fn wait_for(&self, order_id: &str, status: OrderStatus, within: Duration) -> Order {
        eventually(&format!("order {order_id} becomes {status:?}"), within, || async {
            let order = self.order(order_id).await;
            (order.status == status).then_some(order)
        })
        .await
    }

    /// The server's database, opened beside it (SQLite in WAL mode allows it).
    pub async fn db(&self) -> payonce_server::db::Db {
        payonce_server::db::Db::open(&self.store.db, 2).await.unwrap()
    }

    /// What each status change of the order was, as `FROM>TO`, in order.
    pub async fn history(&self, order_id: &str) -> Vec<String> {
        let events = self.db().await.history(order_id).await.unwrap();
        events.iter().map(|event| format!("{}>{}", event.from_status, event.to_status)).collect()
    }

    /// The customer's cancel of an order, with this request key.
    pub async fn cancel(&self, order_id: &str, request_key: &str) -> (StatusCode, Value) {
        let response = self
            .http
            .post(format!("{}/api/orders/{order_id}/cancel", self.url))
            .header("Idempotency-Key", request_key)
            .send()
            .await
            .unwrap();
        (response.status(), response.json().await.unwrap())
    }

    /// An operator's refund through the admin listener, with `token` if given;
    /// it claims to be "jiwoo" in `X-Operator`, which the audit log ignores.
    pub async fn operator_cancel(&self, order_id: &str, token: Option<&str>, body: Value) -> (StatusCode, Value) {
        let mut request = reqwest::Client::new()
            .post(format!("{}/admin/orders/{order_id}/cancel", self.admin_url))
            .header("Idempotency-Key", uuid::Uuid::new_v4().to_string())
            .header("X-Operator", "jiwoo")
            .json(&body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        (response.status(), response.json().await.unwrap())
    }

    /// Creates an order and pays for it; returns it PAID.
    pub async fn paid_order(&self) -> Order {
        let created = self.create_order().await;
        let (status, body) = self.confirm(&created.order, &uuid::Uuid::new_v4().to_string()).await;
        assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("PAID")), "{body}");
        serde_json::from_value(body).unwrap()
    }

    pub async fn metrics(&self) -> String {
        let request = self.http.get(format!("{}/metrics", self.admin_url));
        let request = match &self.admin_token {
            Some(token) => request.bearer_auth(token),
            None => request,
        };
        let response = request.send().await.unwrap();
        assert!(response.status().is_success(), "/metrics answered {}", response.status());
        response.text().await.unwrap()
    }

    /// The value of a metric, as `/metrics` prints it (named with its labels,
    /// if it has any: `name{label="value"}`), or `None`
    /// when the server has not published it. In-process servers share one
    /// recorder: only a server run as its own process (`own_process`) has
    /// figures of its own.
    pub async fn metric(&self, name: &str) -> Option<String> {
        let prefix = format!("{name} ");
        self.metrics().await.lines().find_map(|line| line.strip_prefix(&prefix).map(str::to_owned))
    }
}

/// The payment key the PG window would have issued; any key works with a lenient fake PG.
pub fn payment_key_for(order: &Order) -> String {
    format!("pk_{}", order.order_id)
}

/// Retries `probe` until it yields a value, failing with `what` after `within`.
pub async fn eventually<T, F, Fut>(what: &str, within: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + within;
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The invariant every test ends with: the PG charged each order exactly as
/// often as the server says (once if it was charged, refunded since or not;
/// otherwise never), and nothing twice.
pub async fn assert_charges_agree(pg: &FakePg, server: &Server, order_ids: &[&str]) {
    let stats = pg.stats().await;
    assert!(stats.double_charges.is_empty(), "double charges: {:?}", stats.double_charges);
    for order_id in order_ids {
        let order = server.order(order_id).await;
        let charges = stats.charges_by_order.get(*order_id).copied().unwrap_or(0);
        let charged = matches!(
            order.status,
            OrderStatus::Paid | OrderStatus::Canceled | OrderStatus::PartiallyRefunded | OrderStatus::CancelRequested
        );
        let expected = u64::from(charged);
        assert_eq!(charges, expected, "order {order_id} is {:?} but was charged {charges} times", order.status);
    }
}

/// The customer cookie the answer to `request` sets, as `name=value` (what a
/// browser sends back), or `None` when it sets none.
pub async fn customer_cookie(request: reqwest::RequestBuilder) -> Option<String> {
    let response = request.send().await.unwrap();
    let set_cookie = response.headers().get("set-cookie")?.to_str().unwrap();
    Some(set_cookie.split(';').next().unwrap().to_owned())
}

//! A fake PG started in-process on a free port, and a client for it.

use std::future::Future;
use std::time::{Duration, Instant};

use base64::Engine;
use fake_pg::{Config, Payment, Stats};
use reqwest::{Client, RequestBuilder, Response, StatusCode};
use serde_json::{Value, json};
use tokio::net::TcpListener;

pub const SHOP: &str = "http://shop.test";

pub struct Pg {
    pub url: String,
    pub client: Client,
    pub secret_key: String,
}

/// Starts a fake PG with `config` and waits until it answers.
pub async fn start(config: Config) -> Pg {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let secret_key = config.secret_key.clone();
    tokio::spawn(fake_pg::serve(config, listener));
    let client = Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    Pg { url, client, secret_key }
}

/// The default config with a short latency, so tests run fast.
pub fn fast_config() -> Config {
    let mut config = Config::default();
    config.runtime.latency_ms = 20;
    config
}

pub fn basic_auth(secret_key: &str) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{secret_key}:"));
    format!("Basic {encoded}")
}

pub fn body(payment_key: &str, order_id: &str, amount: u64) -> Value {
    json!({"paymentKey": payment_key, "orderId": order_id, "amount": amount})
}

/// A cancel body: the whole balance without `amount`.
pub fn cancel_body(reason: &str, amount: Option<u64>) -> Value {
    match amount {
        Some(amount) => json!({"cancelReason": reason, "cancelAmount": amount}),
        None => json!({"cancelReason": reason}),
    }
}

impl Pg {
    /// A confirm request, authenticated, with an optional idempotency key.
    pub fn confirm_request(&self, key: Option<&str>, body: &Value) -> RequestBuilder {
        let request = self
            .client
            .post(format!("{}/v1/payments/confirm", self.url))
            .header("Authorization", basic_auth(&self.secret_key))
            .json(body);
        match key {
            Some(key) => request.header("Idempotency-Key", key),
            None => request,
        }
    }

    pub async fn confirm(&self, key: Option<&str>, body: &Value) -> Response {
        self.confirm_request(key, body).send().await.unwrap()
    }

    /// Confirms a made-up paymentKey and returns the DONE payment.
    pub async fn charged(&self, payment_key: &str, order_id: &str, amount: u64) -> Payment {
        let response =
            self.confirm(Some(&format!("confirm-{payment_key}")), &body(payment_key, order_id, amount)).await;
        assert_eq!(response.status(), StatusCode::OK, "{}", response.text().await.unwrap());
        response.json().await.unwrap()
    }

    /// A cancel request, authenticated, with an optional idempotency key.
    pub fn cancel_request(&self, payment_key: &str, key: Option<&str>, body: &Value) -> RequestBuilder {
        let request = self
            .client
            .post(format!("{}/v1/payments/{payment_key}/cancel", self.url))
            .header("Authorization", basic_auth(&self.secret_key))
            .json(body);
        match key {
            Some(key) => request.header("Idempotency-Key", key),
            None => request,
        }
    }

    pub async fn cancel(&self, payment_key: &str, key: Option<&str>, body: &Value) -> Response {
        self.cancel_request(payment_key, key, body).send().await.unwrap()
    }

    /// `POST /__admin/charges`.
    pub async fn admin_charge(&self, body: Value) -> Response {
        self.client.post(format!("{}/__admin/charges", self.url)).json(&body).send().await.unwrap()
    }

    pub async fn get(&self, path: &str) -> Response {
        self.client
            .get(format!("{}{path}", self.url))
            .header("Authorization", basic_auth(&self.secret_key))
            .send()
            .await
            .unwrap()
    }

    /// `GET /v1/payments/{paymentKey}`, or `None` on 404.
    pub async fn payment(&self, payment_key: &str) -> Option<Payment> {
        let response = self.get(&format!("/v1/payments/{payment_key}")).await;
        match response.status() {
            StatusCode::OK => Some(response.json().await.unwrap()),
            StatusCode::NOT_FOUND => None,
            other => panic!("unexpected status {other}"),
        }
    }

    pub async fn order_payment(&self, order_id: &str) -> Option<Payment> {
        let response = self.get(&format!("/v1/payments/orders/{order_id}")).await;
        match response.status() {
            StatusCode::OK => Some(response.json().await.unwrap()),
            StatusCode::NOT_FOUND => None,
            other => panic!("unexpected status {other}"),
        }
    }

    /// Polls the order's payment until it has `status`, or panics at the deadline.
    pub async fn wait_for_status(&self, order_id: &str, status: &str) -> Payment {
        eventually(Duration::from_secs(10), || async {
            self.order_payment(order_id).await.filter(|payment| payment.status.as_str() == status)
        })
        .await
        .unwrap_or_else(|| panic!("order {order_id} never reached {status}"))
    }

    pub async fn stats(&self) -> Stats {
        self.client.get(format!("{}/__admin/stats", self.url)).send().await.unwrap().json().await.unwrap()
    }

    /// Polls the stats until `check` holds, or panics at the deadline.
    pub async fn wait_for_stats(&self, what: &str, check: impl Fn(&Stats) -> bool) -> Stats {
        eventually(Duration::from_secs(10), || async { Some(self.stats().await).filter(|stats| check(stats)) })
            .await
            .unwrap_or_else(|| panic!("stats never showed {what}"))
    }

    pub async fn put_config(&self, patch: Value) -> Response {
        self.client.put(format!("{}/__admin/config", self.url)).json(&patch).send().await.unwrap()
    }

    pub async fn set_config(&self, patch: Value) {
        let response = self.put_config(patch).await;
        assert_eq!(response.status(), StatusCode::OK, "{}", response.text().await.unwrap());
    }

    /// Opens a payment window and returns its HTML.
    pub async fn window_html(&self, order_id: &str, amount: u64, success_url: &str) -> (StatusCode, String) {
        let response = self
            .client
            .get(format!("{}/v1/window", self.url))
            .query(&[
                ("orderId", order_id),
                ("amount", &amount.to_string()),
                ("orderName", "Tee <b>x2</b> & socks"),
                ("successUrl", success_url),
                ("failUrl", &format!("{SHOP}/pay/fail")),
            ])
            .send()
            .await
            .unwrap();
        let status = response.status();
        (status, response.text().await.unwrap())
    }

    /// Opens a payment window and returns the paymentKey it issued.
    pub async fn open_window(&self, order_id: &str, amount: u64) -> String {
        let (status, html) = self.window_html(order_id, amount, &format!("{SHOP}/pay/success")).await;
        assert_eq!(status, StatusCode::OK, "{html}");
        payment_key_in(&html)
    }

    /// Presses a scenario button; redirects are not followed.
    pub async fn submit_window(&self, payment_key: &str, scenario: &str) -> Response {
        self.client
            .post(format!("{}/v1/window", self.url))
            .form(&[("paymentKey", payment_key), ("scenario", scenario)])
            .send()
            .await
            .unwrap()
    }

    /// Opens a window, presses `scenario`, and returns the paymentKey.
    pub async fn window_with(&self, order_id: &str, amount: u64, scenario: &str) -> String {
        let payment_key = self.open_window(order_id, amount).await;
        let response = self.submit_window(&payment_key, scenario).await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        payment_key
    }
}

/// The paymentKey embedded in a window's form.
pub fn payment_key_in(html: &str) -> String {
    let marker = r#"name="paymentKey" value=""#;
    let start = html.find(marker).expect("the window has a paymentKey field") + marker.len();
    let end = start + html[start..].find('"').unwrap();
    html[start..end].to_owned()
}

pub async fn error_code(response: Response) -> (StatusCode, String, String) {
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    (
        status,
        body["code"].as_str().unwrap_or_default().to_owned(),
        body["message"].as_str().unwrap_or_default().to_owned(),
    )
}

/// Calls `check` until it returns `Some`, for at most `deadline`.
pub async fn eventually<T, F, Fut>(deadline: Duration, mut check: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let until = Instant::now() + deadline;
    loop {
        if let Some(value) = check().await {
            return Some(value);
        }
        if Instant::now() >= until {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether the request failed because the peer reset the connection (RST),
/// as opposed to any answer or an orderly close.
pub fn is_connection_reset(error: &reqwest::Error) -> bool {
    causes(error).any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionReset)
    })
}

/// The error and every error under it, outermost first.
pub fn causes(error: &reqwest::Error) -> impl Iterator<Item = &(dyn std::error::Error + 'static)> {
    std::iter::successors(Some(error as &(dyn std::error::Error + 'static)), |cause| cause.source())
}

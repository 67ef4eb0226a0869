//! payonce's events, received: `POST /payonce/events`.
//!
//! payonce sends each change of a checkout it tells the shop about as an
//! event, signed per Standard Webhooks 1.0 with the shop's `whsec_` secret.
//! The shop's stored payment status comes from these alone. A delivery is
//! verified by the `standardwebhooks` crate (the HMAC, and a timestamp
//! within five minutes of now, so a recorded delivery cannot be replayed
//! later) before anything is read from it or stored; then its event is
//! applied to its order once per event id (`store::event_log`). The same
//! event may come more than once: each time is answered 2xx, so payonce
//! stops sending it.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use payonce_api::Event;
use payonce_api::event::{WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER};
use serde_json::json;
use standardwebhooks::Webhook;

use crate::routes::AppState;
use crate::store::Delivery;

const SECRET_PREFIX: &str = "whsec_";

/// Standard Webhooks' secrets are 24 to 64 random bytes; payonce refuses
/// others too, so the shop says so at start instead of at the first event.
const SECRET_BYTES: std::ops::RangeInclusive<usize> = 24..=64;

/// The verifier of payonce's events, from the `whsec_…` secret on the first
/// line of the file at `path` (in a file, as a flag would show it to every
/// user of the machine), or why the shop cannot start with it.
pub fn read_secret_file(path: &Path) -> Result<Webhook, String> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        format!("cannot read the events secret file {} (--events-secret-file): {error}", path.display())
    })?;
    let secret = text.lines().next().unwrap_or_default().trim();
    let refuse = || {
        format!(
            "the events secret file {} (--events-secret-file) must have on its first line the secret payonce signs \
             events with: {SECRET_PREFIX} then base64 of {} to {} bytes",
            path.display(),
            SECRET_BYTES.start(),
            SECRET_BYTES.end(),
        )
    };
    let encoded = secret.strip_prefix(SECRET_PREFIX).ok_or_else(refuse)?;
    let verifier = Webhook::new(secret).map_err(|_| refuse())?;
    if !SECRET_BYTES.contains(&decoded_len(encoded)) {
        return Err(refuse());
    }
    Ok(verifier)
}

/// How many bytes padded base64 decodes to; `encoded` is known to be
/// valid, as the crate decoded it (its standard engine requires the padding).
fn decoded_len(encoded: &str) -> usize {
    let padding = encoded.bytes().rev().take_while(|&byte| byte == b'=').count();
    (encoded.len() / 4 * 3).saturating_sub(padding)
}

/// `POST /payonce/events`: one delivery of one event.
pub async fn receive(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    if let Err(error) = state.events_verifier.verify(&body, &headers) {
        // Nothing is stored: whoever sent it does not hold the secret, or
        // sent it too long ago (or too far ahead) to be taken now.
        tracing::warn!("refused a delivery to /payonce/events: {error}");
        return answer(StatusCode::UNAUTHORIZED, json!({ "error": format!("not verified: {error}") }));
    }
    // Verified, so the three headers are there as text, and the body is
    // text too: the signature is made over it as UTF-8.
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok()).unwrap_or_default().to_owned();
    let Ok(body) = String::from_utf8(body.to_vec()) else {
        return answer(StatusCode::BAD_REQUEST, json!({ "error": "the body is not UTF-8 text" }));
    };
    let delivery = Delivery {
        webhook_id: header(WEBHOOK_ID_HEADER),
        webhook_timestamp: header(WEBHOOK_TIMESTAMP_HEADER),
        webhook_signature: header(WEBHOOK_SIGNATURE_HEADER),
        body,
        received_at_ms: now_ms(),
    };
    let event = match serde_json::from_str::<Event>(&delivery.body) {
        Ok(event) if event.id == delivery.webhook_id => event,
        // payonce signed it, yet the shop cannot act on it: kept in the log
        // to be looked at, and refused so that payonce's side shows it too.
        unreadable => {
            let problem = match unreadable {
                Ok(event) => format!("the event's id {:?} is not its webhook-id", event.id),
                Err(error) => format!("the body is not an event: {error}"),
            };
            tracing::error!(webhook_id = %delivery.webhook_id, "{problem}");
            if let Err(error) = state.store.log_delivery(&delivery).await {
                tracing::error!(webhook_id = %delivery.webhook_id, "could not log the delivery: {error}");
            }
            return answer(StatusCode::BAD_REQUEST, json!({ "error": problem }));
        }
    };
    match state.store.receive_event(&delivery, &event).await {
        Ok(applied) => {
            tracing::info!(event = %event.id, kind = event.kind.as_str(), checkout = %event.data.checkout_id,
                sequence = event.data.sequence, outcome = applied.as_str(), "event received");
            answer(StatusCode::OK, json!({ "received": event.id, "outcome": applied.as_str() }))
        }
        Err(error) => {
            // Nothing kept: payonce sends it again later, and it is applied then.
            tracing::error!(event = %event.id, "could not store the event: {error}");
            answer(StatusCode::INTERNAL_SERVER_ERROR, json!({ "error": "the shop could not store the event" }))
        }
    }
}

/// `GET /api/deliveries`: every verified delivery, oldest first, with its
/// headers and body as they came, so that anyone holding the secret can
/// check the signatures again. No sign-in, like `/api/orders`: a real shop
/// keeps this behind its own.
pub async fn deliveries_json(State(state): State<AppState>) -> Response {
    match state.store.deliveries().await {
        Ok(deliveries) => Json(deliveries).into_response(),
        Err(error) => {
            tracing::error!("listing deliveries: {error}");
            answer(StatusCode::INTERNAL_SERVER_ERROR, json!({ "error": error.to_string() }))
        }
    }
}

fn answer(status: StatusCode, body: serde_json::Value) -> Response {
    (status, Json(body)).into_response()
}

/// Now, in milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| i64::try_from(since.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use reqwest::{StatusCode, Url};
    use serde_json::Value;

    use super::*;
    use crate::payonce::Payonce;
    use crate::routes::{AppState, router};
    use crate::store::{OrderLine, Store};

    /// The secret of Standard Webhooks' published test vector.
    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

    /// The shop's real router and a real SQLite file, on a real port.
    struct Shop {
        url: String,
        store: Store,
        http: reqwest::Client,
        _dir: tempfile::TempDir,
    }

    async fn shop() -> Shop {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("shop.sqlite3")).await.unwrap();
        // Never called by these routes: the events are all the shop needs.
        let payonce = Payonce::new(Url::parse("http://127.0.0.1:9").unwrap(), "shop-key".into()).unwrap();
        let state = AppState {
            store: store.clone(),
            payonce,
            public_url: "http://127.0.0.1:4000".into(),
            events_verifier: Arc::new(Webhook::new(SECRET).unwrap()),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router(state)).await });
        Shop { url, store, http: reqwest::Client::new(), _dir: dir }
    }

    fn now_secs() -> i64 {
        now_ms() / 1000
    }

    fn sign(secret: &str, id: &str, timestamp: i64, body: &str) -> String {
        Webhook::new(secret).unwrap().sign(id, timestamp, body.as_bytes()).unwrap()
    }

    /// An event's body as payonce might lay it out: its own spacing and
    /// field order, which the shop must keep as they came.
    fn event_body(id: &str, kind: &str, sequence: u64, status: &str, amount_refunded: u64) -> String {
        format!(
            "{{\"id\":\"{id}\", \"type\":\"{kind}\",\"timestamp\":\"2026-12-05T08:00:00.000Z\",\n \"data\":{{\"checkout_id\":\"po_1\",\
             \"reference\":\"책-1\",\"sequence\":{sequence},\"status\":\"{status}\",\"amount\":14000,\
             \"amount_refunded\":{amount_refunded}}}}}"
        )
    }

    impl Shop {
        /// An order of ₩14,000 whose checkout is `po_1`, with no event yet.
        async fn order(&self) -> String {
            let line = OrderLine {
                sku: "a".into(),
                name_en: "A".into(),
                name_ko: "가".into(),
                quantity: 1,
                unit_amount: 14_000,
            };
            let order = self.store.insert_new_order(&[line]).await.unwrap();
            self.store.record_checkout_id(&order.id, "po_1").await.unwrap();
            order.id
        }

        async fn deliver(&self, headers: &[(&str, String)], body: &str) -> (StatusCode, Value) {
            let mut request = self.http.post(format!("{}/payonce/events", self.url)).body(body.to_owned());
            for (name, value) in headers {
                request = request.header(*name, value);
            }
            let response = request.send().await.unwrap();
            (response.status(), response.json().await.unwrap())
        }

        /// Delivers `body` as payonce does: signed now with the shop's secret.
        async fn deliver_signed(&self, id: &str, body: &str) -> (StatusCode, Value) {
            let timestamp = now_secs();
            let headers = [
                (WEBHOOK_ID_HEADER, id.to_owned()),
                (WEBHOOK_TIMESTAMP_HEADER, timestamp.to_string()),
                (WEBHOOK_SIGNATURE_HEADER, sign(SECRET, id, timestamp, body)),
            ];
            self.deliver(&headers, body).await
        }

        async fn get(&self, path: &str) -> Value {
            self.http.get(format!("{}{path}", self.url)).send().await.unwrap().json().await.unwrap()
        }

        async fn status_of(&self, order_id: &str) -> (String, u64, u64) {
            let order = self.store.order(order_id).await.unwrap().unwrap();
            (order.status.as_str().to_owned(), order.amount_refunded, order.event_sequence)
        }
    }

    #[tokio::test]
    async fn a_signed_delivery_is_applied_once_even_when_sent_twice_and_logged_each_time_as_it_came() {
        let shop = shop().await;
        let order_id = shop.order().await;
        let body = event_body("evt_paid", "checkout.paid", 1, "PAID", 0);

        let (status, answer) = shop.deliver_signed("evt_paid", &body).await;
        assert_eq!((status, &answer["outcome"]), (StatusCode::OK, &Value::from("applied")), "{answer}");
        let (status, answer) = shop.deliver_signed("evt_paid", &body).await;
        assert_eq!((status, &answer["outcome"]), (StatusCode::OK, &Value::from("already_received")), "{answer}");

        assert_eq!(shop.status_of(&order_id).await, ("PAID".into(), 0, 1));
        let orders = shop.get("/api/orders").await;
        assert_eq!(orders[0]["status"], "PAID");
        assert_eq!(orders[0]["checkout_id"], "po_1");

        let deliveries = shop.get("/api/deliveries").await;
        let deliveries = deliveries.as_array().unwrap();
        assert_eq!(deliveries.len(), 2);
        for delivery in deliveries {
            assert_eq!(delivery["webhook_id"], "evt_paid");
            // Byte for byte, spacing and all, so its signature checks out again.
            assert_eq!(delivery["body"], body.as_str());
            let timestamp: i64 = delivery["webhook_timestamp"].as_str().unwrap().parse().unwrap();
            let mut headers = HeaderMap::new();
            headers.insert(WEBHOOK_ID_HEADER, "evt_paid".parse().unwrap());
            headers.insert(WEBHOOK_TIMESTAMP_HEADER, timestamp.to_string().parse().unwrap());
            headers.insert(WEBHOOK_SIGNATURE_HEADER, delivery["webhook_signature"].as_str().unwrap().parse().unwrap());
            Webhook::new(SECRET).unwrap().verify(body.as_bytes(), &headers).unwrap();
            assert!(delivery["received_at_ms"].as_i64().unwrap() > 1_600_000_000_000);
        }
    }

    #[tokio::test]
    async fn the_same_event_delivered_several_times_at_once_is_applied_once_and_each_answered_2xx() {
        let shop = shop().await;
        let order_id = shop.order().await;
        let body = event_body("evt_paid", "checkout.paid", 1, "PAID", 0);
        let timestamp = now_secs();
        let signature = sign(SECRET, "evt_paid", timestamp, &body);
        let mut deliveries = tokio::task::JoinSet::new();
        for _ in 0..8 {
            let request = shop
                .http
                .post(format!("{}/payonce/events", shop.url))
                .header(WEBHOOK_ID_HEADER, "evt_paid")
                .header(WEBHOOK_TIMESTAMP_HEADER, timestamp.to_string())
                .header(WEBHOOK_SIGNATURE_HEADER, &signature)
                .body(body.clone());
            deliveries.spawn(async move {
                let response = request.send().await.unwrap();
                (response.status(), response.json::<Value>().await.unwrap())
            });
        }
        let mut applied = 0;
        while let Some(answer) = deliveries.join_next().await {
            let (status, answer) = answer.unwrap();
            assert_eq!(status, StatusCode::OK, "{answer}");
            applied += usize::from(answer["outcome"] == "applied");
        }
        assert_eq!(applied, 1);
        assert_eq!(shop.status_of(&order_id).await, ("PAID".into(), 0, 1));
        assert_eq!(shop.get("/api/deliveries").await.as_array().unwrap().len(), 8);
    }

    #[tokio::test]
    async fn a_wrong_or_missing_signature_is_401_and_stores_nothing() {
        let shop = shop().await;
        let order_id = shop.order().await;
        let body = event_body("evt_paid", "checkout.paid", 1, "PAID", 0);
        let timestamp = now_secs();
        let other_secret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
        let with_signature = |signature: String| {
            [
                (WEBHOOK_ID_HEADER, "evt_paid".to_owned()),
                (WEBHOOK_TIMESTAMP_HEADER, timestamp.to_string()),
                (WEBHOOK_SIGNATURE_HEADER, signature),
            ]
        };
        let refusals = [
            with_signature(sign(other_secret, "evt_paid", timestamp, &body)),
            // Signed for another id, or over another body.
            with_signature(sign(SECRET, "evt_other", timestamp, &body)),
            with_signature(sign(SECRET, "evt_paid", timestamp, &body.replace("\"PAID\"", "\"FAILED\""))),
        ];
        for headers in refusals {
            let (status, answer) = shop.deliver(&headers, &body).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
            assert!(answer["error"].as_str().unwrap().contains("signature invalid"), "{answer}");
        }
        let (status, answer) = shop.deliver(&[(WEBHOOK_ID_HEADER, "evt_paid".to_owned())], &body).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");

        assert_eq!(shop.status_of(&order_id).await, ("NEW".into(), 0, 0));
        assert_eq!(shop.get("/api/deliveries").await, serde_json::json!([]));
        // The event was not recorded as received either: the real delivery is applied.
        let (status, answer) = shop.deliver_signed("evt_paid", &body).await;
        assert_eq!((status, &answer["outcome"]), (StatusCode::OK, &Value::from("applied")), "{answer}");
    }

    #[tokio::test]
    async fn a_timestamp_six_minutes_old_or_ahead_is_refused() {
        let shop = shop().await;
        let order_id = shop.order().await;
        let body = event_body("evt_paid", "checkout.paid", 1, "PAID", 0);
        for timestamp in [now_secs() - 6 * 60, now_secs() + 6 * 60] {
            let headers = [
                (WEBHOOK_ID_HEADER, "evt_paid".to_owned()),
                (WEBHOOK_TIMESTAMP_HEADER, timestamp.to_string()),
                (WEBHOOK_SIGNATURE_HEADER, sign(SECRET, "evt_paid", timestamp, &body)),
            ];
            let (status, answer) = shop.deliver(&headers, &body).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
            assert!(answer["error"].as_str().unwrap().contains("timestamp"), "{answer}");
        }
        assert_eq!(shop.status_of(&order_id).await, ("NEW".into(), 0, 0));
        assert_eq!(shop.get("/api/deliveries").await, serde_json::json!([]));
    }

    #[tokio::test]
    async fn an_older_sequence_after_a_newer_one_does_not_move_the_order_back() {
        let shop = shop().await;
        let order_id = shop.order().await;
        let refunded = event_body("evt_2", "checkout.refunded", 2, "CANCELED", 14_000);
        let paid = event_body("evt_1", "checkout.paid", 1, "PAID", 0);

        let (_, answer) = shop.deliver_signed("evt_2", &refunded).await;
        assert_eq!(answer["outcome"], "applied");
        let (status, answer) = shop.deliver_signed("evt_1", &paid).await;
        assert_eq!((status, &answer["outcome"]), (StatusCode::OK, &Value::from("outdated")), "{answer}");
        assert_eq!(shop.status_of(&order_id).await, ("CANCELED".into(), 14_000, 2));
    }

    #[tokio::test]
    async fn an_event_for_a_checkout_the_shop_has_no_order_of_is_taken_and_changes_nothing() {
        let shop = shop().await;
        let body = event_body("evt_1", "checkout.paid", 1, "PAID", 0);
        let (status, answer) = shop.deliver_signed("evt_1", &body).await;
        assert_eq!((status, &answer["outcome"]), (StatusCode::OK, &Value::from("no_order")), "{answer}");
    }

    #[tokio::test]
    async fn a_verified_body_that_is_no_event_is_400_applies_nothing_and_is_logged() {
        let shop = shop().await;
        let order_id = shop.order().await;
        let not_an_event = r#"{"test": 2432232314}"#;
        let (status, answer) = shop.deliver_signed("evt_x", not_an_event).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        // An event whose id is not the one it was delivered (and signed) under.
        let body = event_body("evt_paid", "checkout.paid", 1, "PAID", 0);
        let (status, answer) = shop.deliver_signed("evt_other", &body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");

        assert_eq!(shop.status_of(&order_id).await, ("NEW".into(), 0, 0));
        let deliveries = shop.get("/api/deliveries").await;
        assert_eq!(deliveries[0]["body"], not_an_event);
        assert_eq!(deliveries.as_array().unwrap().len(), 2);
    }

    #[tokio::test]
    async fn during_a_rotation_a_signature_by_the_shops_secret_among_two_is_enough() {
        let shop = shop().await;
        shop.order().await;
        let body = event_body("evt_1", "checkout.paid", 1, "PAID", 0);
        let timestamp = now_secs();
        let signatures = format!(
            "{} {}",
            sign("whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD", "evt_1", timestamp, &body),
            sign(SECRET, "evt_1", timestamp, &body)
        );
        let headers = [
            (WEBHOOK_ID_HEADER, "evt_1".to_owned()),
            (WEBHOOK_TIMESTAMP_HEADER, timestamp.to_string()),
            (WEBHOOK_SIGNATURE_HEADER, signatures.clone()),
        ];
        let (status, answer) = shop.deliver(&headers, &body).await;
        assert_eq!((status, &answer["outcome"]), (StatusCode::OK, &Value::from("applied")), "{answer}");
        assert_eq!(shop.get("/api/deliveries").await[0]["webhook_signature"], signatures.as_str());
    }

    #[test]
    fn the_published_standard_webhooks_vector_signs_the_same_with_the_crate() {
        // Its timestamp is years old, so `verify` would refuse it for that
        // alone; the signature itself is checked by making it again.
        let verifier = Webhook::new(SECRET).unwrap();
        let signature = verifier.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, br#"{"test": 2432232314}"#).unwrap();
        assert_eq!(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn the_secret_is_the_first_line_of_its_file_and_must_be_a_whsec_secret() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.secret");
        std::fs::write(&path, format!("  {SECRET}\r\nsecond line\n")).unwrap();
        let verifier = read_secret_file(&path).unwrap();
        assert_eq!(
            verifier.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, br#"{"test": 2432232314}"#).unwrap(),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );

        let missing = read_secret_file(&dir.path().join("missing")).err().unwrap();
        assert!(missing.contains("cannot read the events secret file") && missing.contains("--events-secret-file"));
        for bad in [
            "",
            "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",      // no whsec_
            "whsec_",                                // no key
            "whsec_not base64!",                     // not base64
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZI",        // 18 bytes: too short
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS", // no canonical padding
        ] {
            std::fs::write(&path, format!("{bad}\n")).unwrap();
            let error = read_secret_file(&path).err().unwrap_or_else(|| panic!("{bad:?} was taken"));
            assert!(error.contains("whsec_ then base64 of 24 to 64 bytes"), "{error}");
        }
        assert_eq!(decoded_len("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), 24);
        assert_eq!(decoded_len("AAAAAA=="), 4);
        assert_eq!(decoded_len("AAAAAAA="), 5);
    }
}

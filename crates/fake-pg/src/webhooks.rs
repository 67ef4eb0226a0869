//! Toss's webhooks: when a processing changes a payment's status, the PG posts
//! `{eventType: "PAYMENT_STATUS_CHANGED", createdAt, data: <the Payment>}` to the
//! configured `webhook_url`, whoever asked for the processing and whether or not
//! its caller is still waiting. Anything but 200 is a failed send, resent after
//! 1, 4, 16, 64, 256, 1024 and 4096 minutes (Toss's schedule, × `time_scale`),
//! then given up on.

use std::sync::LazyLock;
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::clock::KST_OFFSET;
use crate::config::Api;
use crate::payment::Payment;
use crate::state::AppState;

/// Minutes between Toss's resends of an event the shop did not answer 200.
pub(crate) const RESEND_MINUTES: [u64; 7] = [1, 4, 16, 64, 256, 1024, 4096];

/// How long one send waits for the shop's answer.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// One client for every event, so sends to the shop reuse its connections.
static CLIENT: LazyLock<reqwest::Client> = LazyLock::new(reqwest::Client::new);

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Event<'a> {
    event_type: &'static str,
    /// Korean local time without an offset, to the microsecond, as Toss writes it.
    created_at: String,
    data: &'a Payment,
}

/// Sends the event of `payment`'s new status, if a webhook URL is configured,
/// in a task of its own with its resends.
pub(crate) fn announce(state: &AppState, payment: &Payment) {
    // KakaoPay has no webhooks for online payments: its merchants poll the order.
    if state.settings.api != Api::Toss {
        return;
    }
    let Some(url) = state.store.config().webhook_url else { return };
    let event =
        Event { event_type: "PAYMENT_STATUS_CHANGED", created_at: created_at(SystemTime::now()), data: payment };
    let body = match serde_json::to_vec(&event) {
        Ok(body) => body,
        Err(error) => {
            tracing::error!(%error, "could not encode a webhook event");
            return;
        }
    };
    let state = state.clone();
    let order_id = payment.order_id.clone();
    tokio::spawn(async move { deliver(&state, &url, &order_id, body).await });
}

async fn deliver(state: &AppState, url: &str, order_id: &str, body: Vec<u8>) {
    let mut resends = RESEND_MINUTES.iter();
    loop {
        let sent = CLIENT
            .post(url)
            .header("content-type", "application/json")
            .timeout(SEND_TIMEOUT)
            .body(body.clone())
            .send()
            .await;
        let delivered = sent.as_ref().is_ok_and(|response| response.status() == reqwest::StatusCode::OK);
        state.store.note_webhook_send(delivered);
        if delivered {
            tracing::info!(order_id, "webhook delivered");
            return;
        }
        let Some(minutes) = resends.next() else {
            state.store.note_webhook_given_up();
            tracing::warn!(order_id, "webhook given up after Toss's seven resends");
            return;
        };
        let answer = match &sent {
            Ok(response) => response.status().to_string(),
            Err(error) => error.to_string(),
        };
        tracing::info!(order_id, answer, resend_in_minutes = minutes, "webhook not delivered");
        tokio::time::sleep(state.settings.clock.scaled(Duration::from_secs(minutes * 60))).await;
    }
}

/// `2022-05-12T00:00:00.000000`: Korean wall-clock time, no offset.
fn created_at(time: SystemTime) -> String {
    let wall = humantime::format_rfc3339_micros(time + KST_OFFSET).to_string();
    wall.trim_end_matches('Z').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_dated_in_korean_wall_clock_time_without_an_offset() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_652_313_600); // 2022-05-12T00:00:00Z
        assert_eq!(created_at(at), "2022-05-12T09:00:00.000000");
    }

    #[test]
    fn resends_follow_tosss_schedule_of_three_days_and_nineteen_hours() {
        let total: u64 = RESEND_MINUTES.iter().sum();
        assert_eq!(total, 5_461, "3 days 19 hours and 1 minute after the first send");
    }
}

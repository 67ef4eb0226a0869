//! Standard Webhooks 1.0 signatures, made with the `standardwebhooks` crate
//! (the reference implementation's Rust port, which shops' verifiers agree
//! with): HMAC-SHA256 over `id.timestamp.body` with each of the shop's
//! secrets, `v1,` and base64, space-separated, so a shop that holds either
//! secret during a rotation verifies the event.

use standardwebhooks::Webhook;

/// The `webhook-signature` header for `body`, sent as event `id` at
/// `timestamp` (seconds since the epoch), signed with each of `secrets`.
pub fn signature(secrets: &[String], id: &str, timestamp: i64, body: &str) -> Result<String, String> {
    let mut signatures = Vec::with_capacity(secrets.len());
    for secret in secrets {
        let webhook = Webhook::new(secret).map_err(|error| format!("a secret cannot sign: {error}"))?;
        let signed = webhook.sign(id, timestamp, body.as_bytes()).map_err(|error| error.to_string())?;
        signatures.push(signed);
    }
    Ok(signatures.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example the Standard Webhooks specification publishes.
    const SPEC_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const SPEC_ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const SPEC_TIMESTAMP: i64 = 1_614_265_330;
    const SPEC_BODY: &str = r#"{"test": 2432232314}"#;
    const SPEC_SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    fn headers(id: &str, timestamp: i64, signature: &str) -> axum::http::HeaderMap {
        let mut headers = axum::http::HeaderMap::new();
        headers.insert("webhook-id", id.parse().unwrap());
        headers.insert("webhook-timestamp", timestamp.to_string().parse().unwrap());
        headers.insert("webhook-signature", signature.parse().unwrap());
        headers
    }

    #[test]
    fn the_specifications_example_signs_as_published() {
        let signed = signature(&[SPEC_SECRET.to_owned()], SPEC_ID, SPEC_TIMESTAMP, SPEC_BODY).unwrap();
        assert_eq!(signed, SPEC_SIGNATURE);
    }

    #[test]
    fn during_a_rotation_a_verifier_with_either_secret_accepts_and_one_with_neither_refuses() {
        let (new, previous, other) =
            (crate::shops::new_events_secret(), crate::shops::new_events_secret(), crate::shops::new_events_secret());
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
        let body = r#"{"id":"evt_1","type":"checkout.paid"}"#;
        let signed = signature(&[new.clone(), previous.clone()], "evt_1", now, body).unwrap();
        assert_eq!(signed.split(' ').count(), 2);
        for secret in [&new, &previous] {
            Webhook::new(secret).unwrap().verify(body.as_bytes(), &headers("evt_1", now, &signed)).unwrap();
        }
        assert!(Webhook::new(&other).unwrap().verify(body.as_bytes(), &headers("evt_1", now, &signed)).is_err());
        let tampered = body.replace("paid", "failed");
        assert!(Webhook::new(&new).unwrap().verify(tampered.as_bytes(), &headers("evt_1", now, &signed)).is_err());
    }
}

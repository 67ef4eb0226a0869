//! The shop's events, once the campaign is over and its endpoint has been
//! healthy long enough for payonce to have nothing left to send: what the
//! endpoint received against payonce's feed, its database and every
//! checkout's history, Jepsen-style. Each event the shop received verifies
//! and carries its id as `webhook-id`; an id always came with the same body;
//! a checkout's events first arrived in sequence order, 1, 2, 3, with no gap;
//! each told a status its checkout really had; the shop's deduplicated view
//! (per checkout, the event of highest sequence it took) ends where payonce's
//! checkout ended; every event was answered 2xx at least once and none is
//! left pending or failed at payonce; the feed lists exactly the events the
//! shop received, each checkout's in sequence order.

use std::collections::{BTreeMap, BTreeSet};

use payonce_api::{CheckoutStatus, Event, EventType};
use serde::Serialize;

use crate::report::{EventFigures, WindowFigures};
use crate::shop_endpoint::Delivery;

/// What is true of one of the shop's checkouts at the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckoutFacts {
    /// Every status it had, oldest first (the shop API's `history`).
    pub history: Vec<CheckoutStatus>,
    /// Its status as the server settled the order (its database).
    pub status: CheckoutStatus,
    /// What was refunded of it (the shop API).
    pub amount_refunded: u64,
}

/// What payonce's database says of the shop's events at the end.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PayonceEvents {
    /// Events not DELIVERED (PENDING, FAILED, NO_ENDPOINT): "evt_… (ord_… #n): STATE".
    pub left: Vec<String>,
    /// The sends it recorded, by what came of each.
    pub sends: BTreeMap<String, u64>,
}

/// The anomalies, each described (the first few are reported).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct EventVerdicts {
    /// Deliveries that do not verify, or whose `webhook-id` is not their event's id.
    pub unverified: Vec<String>,
    /// Event ids that came with two bodies (or the feed's differs from the one received).
    pub altered: Vec<String>,
    /// Checkouts whose events first arrived out of sequence or with a gap.
    pub out_of_order: Vec<String>,
    /// Events telling a status their checkout never had, or of no checkout of the shop.
    pub unfounded: Vec<String>,
    /// Settled checkouts the shop's view ends otherwise than payonce's.
    pub disagreeing: Vec<String>,
    /// Events never answered 2xx, or left pending or failed at payonce.
    pub undelivered: Vec<String>,
    /// The feed and what the shop received differ, or the feed lists a
    /// checkout's events out of sequence.
    pub feed: Vec<String>,
}

/// A settled checkout's status: the shop acts on it, and nothing changes it
/// but a refund.
pub fn is_settled(status: CheckoutStatus) -> bool {
    matches!(
        status,
        CheckoutStatus::Paid
            | CheckoutStatus::Failed
            | CheckoutStatus::Expired
            | CheckoutStatus::Canceled
            | CheckoutStatus::PartiallyRefunded
    )
}

/// Whether an event of `kind` may tell `status`.
fn tells(kind: EventType, status: CheckoutStatus) -> bool {
    match kind {
        EventType::Paid => status == CheckoutStatus::Paid,
        EventType::Failed => status == CheckoutStatus::Failed,
        EventType::Expired => status == CheckoutStatus::Expired,
        EventType::Refunded => status == CheckoutStatus::Canceled,
        EventType::PartiallyRefunded => status == CheckoutStatus::PartiallyRefunded,
        EventType::RefundFailed => matches!(status, CheckoutStatus::Paid | CheckoutStatus::PartiallyRefunded),
        EventType::Unresolved => status == CheckoutStatus::Unknown,
    }
}

/// The shop's view: each event it took, once, by checkout and sequence.
pub fn view(deliveries: &[Delivery]) -> BTreeMap<String, BTreeMap<u64, Event>> {
    let mut view: BTreeMap<String, BTreeMap<u64, Event>> = BTreeMap::new();
    let mut taken = BTreeSet::new();
    for delivery in deliveries.iter().filter(|delivery| delivery.answered.took_it()) {
        let Some(event) = &delivery.event else { continue };
        if taken.insert(event.id.clone()) {
            view.entry(event.data.checkout_id.clone()).or_default().insert(event.data.sequence, event.clone());
        }
    }
    view
}

/// The verdict on the shop's events: `deliveries` as the endpoint read them,
/// `feed` as the shop's key lists it from the start, `checkouts` every
/// checkout of the shop, `payonce` its database's word.
pub fn check(
    deliveries: &[Delivery],
    feed: &[Event],
    checkouts: &BTreeMap<String, CheckoutFacts>,
    payonce: &PayonceEvents,
) -> EventVerdicts {
    let mut verdicts = EventVerdicts::default();
    // Every delivery verifies, and an id always brings the same body.
    let mut first_body: BTreeMap<&str, &Event> = BTreeMap::new();
    let mut first_arrivals: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    let mut said_ok = BTreeSet::new();
    for delivery in deliveries {
        if let Some(problem) = &delivery.problem {
            verdicts.unverified.push(format!("{:?} ({}): {problem}", delivery.webhook_id, delivery.answered.as_str()));
        }
        let Some(event) = &delivery.event else { continue };
        if delivery.answered.said_ok() {
            said_ok.insert(event.id.as_str());
        }
        match first_body.get(event.id.as_str()) {
            Some(first) if *first != event => {
                if !verdicts.altered.iter().any(|altered| altered.starts_with(&event.id)) {
                    verdicts.altered.push(format!("{}: sent as {first:?}, then as {event:?}", event.id));
                }
            }
            Some(_) => {}
            None => {
                first_body.insert(&event.id, event);
                first_arrivals.entry(&event.data.checkout_id).or_default().push(event.data.sequence);
            }
        }
    }
    // A checkout's events first arrived 1, 2, 3...
    for (checkout, sequences) in &first_arrivals {
        if !sequences.iter().copied().eq(1..=sequences.len() as u64) {
            verdicts.out_of_order.push(format!("{checkout}: its events first arrived as #{sequences:?}"));
        }
    }
    // Each event tells a change its checkout had, in its order.
    let mut received: BTreeMap<&str, BTreeMap<u64, &Event>> = BTreeMap::new();
    for event in first_body.values() {
        received.entry(&event.data.checkout_id).or_default().insert(event.data.sequence, event);
    }
    for (checkout, events) in &received {
        let Some(facts) = checkouts.get(*checkout) else {
            let ids: Vec<&str> = events.values().map(|event| event.id.as_str()).collect();
            verdicts.unfounded.push(format!("{checkout}: no checkout of the shop, yet told by {ids:?}"));
            continue;
        };
        for event in events.values().filter(|event| !tells(event.kind, event.data.status)) {
            verdicts.unfounded.push(format!(
                "{} ({checkout} #{}): a {} telling {:?}",
                event.id,
                event.data.sequence,
                event.kind.as_str(),
                event.data.status
            ));
        }
        let told: Vec<CheckoutStatus> = events.values().map(|event| event.data.status).collect();
        let mut history = facts.history.iter();
        if !told.iter().all(|status| history.any(|had| had == status)) {
            verdicts
                .unfounded
                .push(format!("{checkout}: its events told {told:?}, and its history is {:?}", facts.history));
        }
    }
    // The shop's view ends where payonce's checkout ended.
    let view = view(deliveries);
    for (checkout, facts) in checkouts.iter().filter(|(_, facts)| is_settled(facts.status)) {
        let last = view.get(checkout).and_then(|events| events.values().next_back());
        match last {
            None => verdicts
                .disagreeing
                .push(format!("{checkout}: {:?} at payonce, and the shop took no event of it", facts.status)),
            Some(last) if (last.data.status, last.data.amount_refunded) != (facts.status, facts.amount_refunded) => {
                verdicts.disagreeing.push(format!(
                    "{checkout}: {:?} ({} refunded) at payonce, {:?} ({} refunded) by the shop's last event, {} #{}",
                    facts.status,
                    facts.amount_refunded,
                    last.data.status,
                    last.data.amount_refunded,
                    last.id,
                    last.data.sequence
                ));
            }
            Some(_) => {}
        }
    }
    // Every event answered 2xx, and nothing left at payonce.
    for event in feed.iter().filter(|event| !said_ok.contains(event.id.as_str())) {
        verdicts.undelivered.push(format!(
            "{} ({} #{}): never answered 2xx by the shop",
            event.id, event.data.checkout_id, event.data.sequence
        ));
    }
    verdicts.undelivered.extend(payonce.left.iter().cloned());
    // The feed lists what the shop received, each checkout's in order.
    let mut listed = BTreeSet::new();
    let mut last_listed: BTreeMap<&str, u64> = BTreeMap::new();
    for event in feed {
        if !listed.insert(event.id.as_str()) {
            verdicts.feed.push(format!("{}: listed twice", event.id));
        }
        let checkout = event.data.checkout_id.as_str();
        if let Some(before) = last_listed.insert(checkout, event.data.sequence)
            && before >= event.data.sequence
        {
            verdicts.feed.push(format!("{checkout}: the feed lists #{} after #{before}", event.data.sequence));
        }
        match first_body.get(event.id.as_str()) {
            None => verdicts.feed.push(format!(
                "{} ({checkout} #{}): in the feed, never received verified",
                event.id, event.data.sequence
            )),
            Some(received) if *received != event => {
                verdicts.altered.push(format!("{}: received as {received:?}, listed as {event:?}", event.id));
            }
            Some(_) => {}
        }
    }
    for id in first_body.keys().filter(|id| !listed.contains(*id)) {
        verdicts.feed.push(format!("{id}: received, not in the feed"));
    }
    verdicts
}

impl EventVerdicts {
    /// Whether anything is wrong.
    pub fn failed(&self) -> bool {
        self.named().iter().any(|(_, found)| !found.is_empty())
    }

    /// Each list with the name the report gives it.
    pub fn named(&self) -> [(&'static str, &Vec<String>); 7] {
        [
            ("events unverified", &self.unverified),
            ("events altered", &self.altered),
            ("events out of order", &self.out_of_order),
            ("events unfounded", &self.unfounded),
            ("events disagreeing", &self.disagreeing),
            ("events undelivered", &self.undelivered),
            ("feed unlike the deliveries", &self.feed),
        ]
    }
}

/// The figures of the shop's events; `windows` are the endpoint's faults
/// applied, whose backlogs are measured here.
pub fn figures(
    deliveries: &[Delivery],
    feed: &[Event],
    payonce: &PayonceEvents,
    mut windows: Vec<WindowFigures>,
    drained_ms: Option<i64>,
) -> EventFigures {
    let mut by_answer = BTreeMap::new();
    for delivery in deliveries {
        *by_answer.entry(delivery.answered.as_str().to_owned()).or_insert(0) += 1;
    }
    // The shop's first take of each event, and when the event was committed.
    let mut taken = BTreeSet::new();
    let mut duplicates = 0;
    let mut firsts = Vec::new();
    for delivery in deliveries.iter().filter(|delivery| delivery.answered.took_it()) {
        let Some(event) = &delivery.event else { continue };
        if !taken.insert(event.id.as_str()) {
            duplicates += 1;
            continue;
        }
        if let Ok(committed) = humantime::parse_rfc3339(&event.timestamp) {
            let committed = committed.duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_millis();
            firsts.push((i64::try_from(committed).unwrap_or(i64::MAX), delivery.at_ms));
        }
    }
    let mut fault_windows = BTreeMap::new();
    for window in &mut windows {
        *fault_windows.entry(window.fault.as_str().to_owned()).or_insert(0) += 1;
        let ended = window.ended_at_ms;
        let backlog: Vec<i64> = firsts
            .iter()
            .filter(|(committed, taken)| *committed < ended && *taken >= ended)
            .map(|(_, taken)| *taken)
            .collect();
        window.backlog = backlog.len();
        window.backlog_taken_ms = backlog.iter().max().map(|last| last - ended);
    }
    EventFigures {
        events: feed.len(),
        sends: payonce.sends.clone(),
        deliveries: deliveries.len(),
        deliveries_by_answer: by_answer,
        duplicates,
        fault_windows,
        windows,
        lag_ms: crate::quantiles(firsts.iter().map(|(committed, taken)| taken - committed)),
        drained_ms,
    }
}

#[cfg(test)]
mod tests {
    use payonce_api::EventData;

    use super::*;
    use crate::shop_endpoint::Answered;

    fn event(id: &str, checkout: &str, sequence: u64, kind: EventType, status: CheckoutStatus) -> Event {
        Event {
            id: id.to_owned(),
            kind,
            timestamp: "2026-12-05T08:00:00.120Z".to_owned(),
            data: EventData {
                checkout_id: checkout.to_owned(),
                reference: format!("ref-{checkout}"),
                sequence,
                status,
                amount: 7_500,
                amount_refunded: 0,
                failure_code: None,
            },
        }
    }

    fn paid(id: &str, checkout: &str, sequence: u64) -> Event {
        event(id, checkout, sequence, EventType::Paid, CheckoutStatus::Paid)
    }

    fn delivery(event: &Event, answered: Answered) -> Delivery {
        Delivery {
            webhook_id: event.id.clone(),
            timestamp: "1".to_owned(),
            signature: "v1,x".to_owned(),
            body: serde_json::to_string(event).unwrap(),
            event: Some(event.clone()),
            problem: None,
            at_ms: 1_796_457_600_500,
            answered,
        }
    }

    fn facts(history: &[CheckoutStatus], status: CheckoutStatus) -> CheckoutFacts {
        CheckoutFacts { history: history.to_vec(), status, amount_refunded: 0 }
    }

    use CheckoutStatus::{Created, Failed, Paid, Pending, Unknown};

    /// Two checkouts: one paid after going unresolved (two events), one failed.
    fn campaign() -> (Vec<Event>, BTreeMap<String, CheckoutFacts>) {
        let feed = vec![
            event("evt_1", "ord_shop_a", 1, EventType::Unresolved, Unknown),
            event("evt_2", "ord_shop_b", 1, EventType::Failed, Failed),
            paid("evt_3", "ord_shop_a", 2),
        ];
        let checkouts = BTreeMap::from([
            ("ord_shop_a".to_owned(), facts(&[Created, Pending, Unknown, Paid], Paid)),
            ("ord_shop_b".to_owned(), facts(&[Created, Pending, Failed], Failed)),
            ("ord_shop_c".to_owned(), facts(&[Created], Created)),
        ]);
        (feed, checkouts)
    }

    #[test]
    fn events_taken_in_order_through_every_fault_agree() {
        let (feed, checkouts) = campaign();
        let deliveries = vec![
            delivery(&feed[0], Answered::Error500),
            delivery(&feed[1], Answered::ResetAfterReading),
            delivery(&feed[0], Answered::Hang),
            delivery(&feed[0], Answered::Slow),
            delivery(&feed[1], Answered::Ok),
            delivery(&feed[2], Answered::Ok),
            delivery(&feed[2], Answered::Ok),
        ];
        let found = check(&deliveries, &feed, &checkouts, &PayonceEvents::default());
        assert_eq!(found, EventVerdicts::default());
        assert!(!found.failed());
        let figures = figures(&deliveries, &feed, &PayonceEvents::default(), vec![], Some(10));
        assert_eq!((figures.events, figures.deliveries, figures.duplicates), (3, 7, 2));
        assert_eq!(figures.lag_ms.max, Some(380));
    }

    #[test]
    fn each_anomaly_is_caught_and_named() {
        let (feed, checkouts) = campaign();
        let mut forged = delivery(&feed[1], Answered::Refused);
        (forged.event, forged.problem) = (None, Some("does not verify: signature invalid".to_owned()));
        let mut changed = feed[1].clone();
        changed.data.amount = 1;
        let stranger = paid("evt_9", "ord_other", 1);
        let created_paid = paid("evt_8", "ord_shop_c", 1);
        let deliveries = vec![
            forged,
            // ord_shop_a's second event first, then its first, never answered 2xx.
            delivery(&feed[2], Answered::Ok),
            delivery(&feed[0], Answered::ResetAfterReading),
            delivery(&feed[1], Answered::Ok),
            delivery(&changed, Answered::Ok),
            delivery(&stranger, Answered::Ok),
            delivery(&created_paid, Answered::Ok),
        ];
        let payonce = PayonceEvents { left: vec!["evt_1 (ord_shop_a #1): PENDING".to_owned()], ..Default::default() };
        let mut listed = feed.clone();
        listed.swap(0, 2);
        let found = check(&deliveries, &listed, &checkouts, &payonce);
        assert_eq!(found.unverified.len(), 1, "{found:?}");
        assert!(found.altered.iter().any(|altered| altered.starts_with("evt_2")), "{found:?}");
        assert_eq!(found.out_of_order, ["ord_shop_a: its events first arrived as #[2, 1]"]);
        assert_eq!(found.unfounded.len(), 2, "a stranger's and a CREATED checkout's PAID: {found:?}");
        assert!(found.undelivered.iter().any(|line| line.starts_with("evt_1 (ord_shop_a #1): never")));
        assert!(found.undelivered.iter().any(|line| line.ends_with("PENDING")));
        assert!(found.feed.iter().any(|line| line.contains("lists #1 after #2")), "{found:?}");
        assert!(found.feed.iter().any(|line| line.starts_with("evt_9")), "{found:?}");
        assert!(found.failed());
    }

    #[test]
    fn a_settled_checkout_the_shop_never_heard_of_or_heard_otherwise_disagrees() {
        let (feed, checkouts) = campaign();
        // ord_shop_b's FAILED never taken: it went 500 only. ord_shop_a's view stops at UNKNOWN.
        let deliveries = vec![
            delivery(&feed[0], Answered::Ok),
            delivery(&feed[1], Answered::Error500),
            delivery(&feed[2], Answered::Error500),
        ];
        let found = check(&deliveries, &feed, &checkouts, &PayonceEvents::default());
        assert_eq!(found.disagreeing.len(), 2, "{found:?}");
        assert!(found.disagreeing[0].starts_with("ord_shop_a: Paid (0 refunded) at payonce, Unknown"));
        assert!(found.disagreeing[1].contains("took no event"));
        assert_eq!(found.undelivered.len(), 2);
    }
}

//! Sessions that hand the merchant a token, as KakaoPay's do: opened by the
//! merchant's server (KakaoPay's ready) with a deadline of their own, shown to
//! the customer, and left by authenticating (a `pg_token` the merchant's
//! approve must carry), by quitting, or by failing the password. What the
//! merchant does next is a keyless confirm or cancel that the face checks
//! first (`begin_checked`, `begin_cancel_checked`).

use std::time::Duration;

use rand::Rng;
use tokio::time::Instant;

use super::{Inner, Phase, Store};
use crate::payment::{Payment, PaymentStatus};
use crate::scenario::Scenario;

/// Length of a `pg_token`: KakaoPay's are 20 alphanumerics.
const PG_TOKEN_CHARS: usize = 20;

/// How the customer left a session without authenticating.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WindowEnd {
    /// Quit the payment.
    Quit,
    /// Failed the password.
    WrongPassword,
}

/// What a token-bearing session adds to a payment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Session {
    /// The customer has seen the window.
    pub(crate) opened: bool,
    /// Issued when the customer authenticated; the approve must carry it.
    pub(crate) pg_token: Option<String>,
    /// How the customer left without authenticating.
    pub(crate) ended: Option<WindowEnd>,
}

/// What the customer chose in the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SessionChoice {
    /// Authenticated. A scenario decides the approve's fate; without one the
    /// global fault rates do, as for any payment.
    Authenticate(Option<Scenario>),
    End(WindowEnd),
}

/// A session as it stands, for a face to check or show.
#[derive(Clone, Debug)]
pub(crate) struct SessionView {
    pub(crate) payment: Payment,
    pub(crate) session: Session,
    /// Its approve is being processed.
    pub(crate) approving: bool,
    /// A cancel of it is being processed.
    pub(crate) cancel_in_progress: bool,
}

impl SessionView {
    /// Whether the customer can still choose in the window.
    pub(crate) fn choosable(&self) -> bool {
        !self.approving
            && self.session.pg_token.is_none()
            && self.session.ended.is_none()
            && matches!(self.payment.status, PaymentStatus::Ready | PaymentStatus::InProgress)
    }
}

impl Store {
    /// Opens a session under `payment_key`: a READY payment to be confirmed
    /// within `deadline` (× `time_scale`). `false` if the key exists already.
    pub(crate) fn open_session(
        &self,
        payment_key: &str,
        order_id: &str,
        order_name: &str,
        amount: u64,
        deadline: Duration,
        now: String,
    ) -> bool {
        let payment =
            Payment::ready(payment_key.to_owned(), order_id.to_owned(), order_name.to_owned(), amount, now, None);
        let confirm_by = Instant::now() + self.clock.scaled(deadline);
        let mut inner = self.lock();
        if inner.payments.contains_key(payment_key) {
            return false;
        }
        inner.insert(payment, None, confirm_by);
        if let Some(record) = inner.payments.get_mut(payment_key) {
            record.session = Some(Session::default());
        }
        true
    }

    /// The session as it stands now (an overdue one is EXPIRED).
    pub(crate) fn session(&self, payment_key: &str) -> Option<SessionView> {
        let mut inner = self.lock();
        inner.expire_if_due(payment_key, Instant::now());
        inner.session_view(payment_key)
    }

    /// The customer's browser shows the window: the session is opened.
    pub(crate) fn show_session(&self, payment_key: &str) -> Option<SessionView> {
        let mut inner = self.lock();
        inner.expire_if_due(payment_key, Instant::now());
        let choosable = inner.session_view(payment_key)?.choosable();
        if choosable && let Some(session) = inner.payments.get_mut(payment_key).and_then(|r| r.session.as_mut()) {
            session.opened = true;
        }
        inner.session_view(payment_key)
    }

    /// The customer chose in the window. Only the first choice counts: once
    /// the session is authenticated, ended or expired, a resubmit changes nothing.
    pub(crate) fn leave_session(&self, payment_key: &str, choice: SessionChoice) -> Option<SessionView> {
        let mut inner = self.lock();
        inner.expire_if_due(payment_key, Instant::now());
        if inner.session_view(payment_key)?.choosable()
            && let Some(record) = inner.payments.get_mut(payment_key)
            && let Some(session) = record.session.as_mut()
        {
            session.opened = true;
            match choice {
                SessionChoice::Authenticate(scenario) => {
                    let token = rand::rng()
                        .sample_iter(rand::distr::Alphanumeric)
                        .take(PG_TOKEN_CHARS)
                        .map(char::from)
                        .collect();
                    session.pg_token = Some(token);
                    record.scenario = scenario;
                    record.payment.is_partial_cancelable = scenario.is_none_or(Scenario::partially_cancelable);
                    record.payment.authenticate();
                }
                SessionChoice::End(end) => session.ended = Some(end),
            }
        }
        inner.session_view(payment_key)
    }
}

impl Inner {
    /// The session of `payment_key` as it stands; `None` if there is no
    /// token-bearing session of that key.
    pub(super) fn session_view(&self, payment_key: &str) -> Option<SessionView> {
        let record = self.payments.get(payment_key)?;
        Some(SessionView {
            payment: record.payment.clone(),
            session: record.session.clone()?,
            approving: record.phase == Phase::Processing,
            cancel_in_progress: record.cancel_in_progress,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::store;
    use super::*;

    const FIFTEEN_MINUTES: Duration = Duration::from_secs(15 * 60);

    #[tokio::test(start_paused = true)]
    async fn a_session_is_opened_authenticated_once_and_expires_at_its_own_deadline() {
        let store = store();
        assert!(store.open_session("T1", "o1", "Mug", 1_000, FIFTEEN_MINUTES, "now".into()));
        assert!(!store.open_session("T1", "o1", "Mug", 1_000, FIFTEEN_MINUTES, "now".into()), "a key is opened once");
        assert!(!store.session("T1").unwrap().session.opened);
        assert!(store.show_session("T1").unwrap().session.opened);
        let left = store.leave_session("T1", SessionChoice::Authenticate(None)).unwrap();
        let token = left.session.pg_token.clone().unwrap();
        assert_eq!((token.len(), left.payment.status), (PG_TOKEN_CHARS, PaymentStatus::InProgress));
        let again = store.leave_session("T1", SessionChoice::End(WindowEnd::Quit)).unwrap();
        assert_eq!((again.session.pg_token, again.session.ended), (Some(token), None), "the first choice counts");

        assert!(store.open_session("T2", "o2", "Mug", 1_000, FIFTEEN_MINUTES, "now".into()));
        tokio::time::advance(FIFTEEN_MINUTES - Duration::from_secs(1)).await;
        assert_eq!(store.session("T2").unwrap().payment.status, PaymentStatus::Ready, "ten minutes are Toss's");
        tokio::time::advance(Duration::from_secs(1)).await;
        let expired = store.leave_session("T2", SessionChoice::Authenticate(None)).unwrap();
        assert_eq!((expired.payment.status, expired.session.pg_token), (PaymentStatus::Expired, None));
    }

    #[test]
    fn a_checked_refusal_counts_nothing_and_two_sessions_of_one_order_both_charge() {
        use super::super::{Begin, ConfirmRequest, Outcome};
        let store = store();
        let confirm = |payment_key: &str| ConfirmRequest {
            payment_key: payment_key.into(),
            order_id: "o1".into(),
            amount: 1_000,
            idempotency_key: None,
        };
        for key in ["T1", "T2"] {
            assert!(store.open_session(key, "o1", "Mug", 1_000, FIFTEEN_MINUTES, "now".into()));
            store.leave_session(key, SessionChoice::Authenticate(None));
        }
        let refused = store.begin_checked(&confirm("T1"), |view| match view {
            Some(view) if view.session.pg_token.is_some() => Err("refused by the face"),
            _ => Ok(()),
        });
        assert!(matches!(refused, Err("refused by the face")));
        let stats = store.stats();
        assert_eq!((stats.processings, stats.in_flight), (0, 0));

        // KakaoPay does not check partner_order_id for uniqueness: both charge,
        // and the counters show the double charge.
        for key in ["T1", "T2"] {
            let Ok(Begin::Start(ticket)) = store.begin_checked(&confirm(key), |_| Ok::<(), ()>(())) else {
                panic!("{key} was not started");
            };
            super::super::tests::settle(&store, &ticket, Outcome::Done);
        }
        assert_eq!(store.stats().double_charges, ["o1"]);
    }

    #[test]
    fn a_toss_payment_is_no_session() {
        let store = store();
        let payment_key = super::super::tests::window(&store, "o1");
        assert!(store.session(&payment_key).is_none());
        assert!(store.leave_session(&payment_key, SessionChoice::End(WindowEnd::Quit)).is_none());
    }
}

//! KakaoPay's HTTP client, and its calls through a gateway (the same limit
//! machinery as Toss's, with a limit of its own: each PG has its own
//! contract). Like Toss's client it reports what happened on the wire and
//! leaves the meaning to the rules' `kakaopay::classify`.

use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderValue};
use reqwest::{Response, Url};
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use payonce_rules::kakaopay::KakaoPayReply;
use payonce_rules::kakaopay::wire::{
    APPROVE_PATH, Approval, ApproveBody, CANCEL_PATH, CancelBody, Cancellation, ErrorBody, ORDER_PATH, Order,
    OrderBody, READY_PATH, Ready, ReadyBody,
};

use super::PgTransport;
use super::client::error_chain;
use super::gateway::{Call, PgGateway, PgPlace};
use crate::db::{PgCallKind, PgCaller};

/// A payment to prepare: the order, its customer (KakaoPay's
/// `partner_user_id`), what it is, and where the window sends the customer.
#[derive(Debug, Clone, Copy)]
pub struct KakaoPayReady<'a> {
    pub order_id: &'a str,
    pub customer_id: &'a str,
    pub item_name: &'a str,
    pub amount: u64,
    pub approval_url: &'a str,
    pub cancel_url: &'a str,
    pub fail_url: &'a str,
}

/// One approve: the prepared payment and the window's `pg_token`.
#[derive(Debug, Clone, Copy)]
pub struct KakaoPayApprove<'a> {
    pub tid: &'a str,
    pub order_id: &'a str,
    pub customer_id: &'a str,
    pub pg_token: &'a str,
    pub amount: u64,
}

/// One cancel: the refund, and the balance the shop expects before it.
#[derive(Debug, Clone, Copy)]
pub struct KakaoPayCancel<'a> {
    pub tid: &'a str,
    pub order_id: &'a str,
    pub amount: u64,
    pub balance_before: u64,
}

/// HTTP client for KakaoPay's online payment API.
#[derive(Debug, Clone)]
pub struct KakaoPayClient {
    http: reqwest::Client,
    base: Url,
    authorization: HeaderValue,
    cid: String,
    lookup_timeout: Duration,
}

impl KakaoPayClient {
    /// A client for KakaoPay's API at `base`, reached as Toss's is
    /// (`transport`): the same timeouts, a lookup's far shorter.
    pub fn new(base: &str, secret_key: &SecretString, cid: &str, transport: PgTransport) -> Self {
        let base = Url::parse(base).expect("the KakaoPay URL was validated at start-up");
        let http = transport.client_builder(&base).build().expect("the TLS backend initialises");
        let mut authorization = HeaderValue::from_str(&format!("SECRET_KEY {}", secret_key.expose_secret()))
            .expect("the secret key was validated at start-up");
        authorization.set_sensitive(true);
        Self { http, base, authorization, cid: cid.to_owned(), lookup_timeout: transport.lookup_timeout() }
    }

    /// `ready`: prepares the payment; it moves no money.
    pub async fn ready(&self, call: KakaoPayReady<'_>) -> KakaoPayReply<Ready> {
        let body = ReadyBody {
            cid: &self.cid,
            partner_order_id: call.order_id,
            partner_user_id: call.customer_id,
            item_name: call.item_name,
            quantity: 1,
            total_amount: call.amount,
            tax_free_amount: 0,
            approval_url: call.approval_url,
            cancel_url: call.cancel_url,
            fail_url: call.fail_url,
        };
        self.post(READY_PATH, &body, None).await
    }

    /// `approve`: charges. Sent once: there is no key to make a second one safe.
    pub async fn approve(&self, call: KakaoPayApprove<'_>) -> KakaoPayReply<Approval> {
        let body = ApproveBody {
            cid: &self.cid,
            tid: call.tid,
            partner_order_id: call.order_id,
            partner_user_id: call.customer_id,
            pg_token: call.pg_token,
            total_amount: call.amount,
        };
        self.post(APPROVE_PATH, &body, None).await
    }

    /// `order`: the payment as KakaoPay has it now. A read: it waits as long as a lookup.
    pub async fn order(&self, tid: &str) -> KakaoPayReply<Order> {
        self.post(ORDER_PATH, &OrderBody { cid: &self.cid, tid }, Some(self.lookup_timeout)).await
    }

    /// `cancel`: refunds `amount`, carrying the balance the shop expects before it.
    pub async fn cancel(&self, call: KakaoPayCancel<'_>) -> KakaoPayReply<Cancellation> {
        let body = CancelBody {
            cid: &self.cid,
            tid: call.tid,
            cancel_amount: call.amount,
            cancel_tax_free_amount: 0,
            cancel_available_amount: call.balance_before,
        };
        self.post(CANCEL_PATH, &body, None).await
    }

    async fn post<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
        timeout: Option<Duration>,
    ) -> KakaoPayReply<T> {
        let url = self.base.join(path).expect("static paths join");
        let mut request = self.http.post(url).header(AUTHORIZATION, self.authorization.clone()).json(body);
        if let Some(timeout) = timeout {
            request = request.timeout(timeout);
        }
        read_answer(request.send().await).await
    }
}

async fn read_answer<T: DeserializeOwned>(sent: Result<Response, reqwest::Error>) -> KakaoPayReply<T> {
    let response = match sent {
        Ok(response) => response,
        Err(error) if error.is_connect() => return KakaoPayReply::NotSent { detail: error_chain(&error) },
        Err(error) => {
            return KakaoPayReply::NoReply { detail: error_chain(&error), timed_out: error.is_timeout() };
        }
    };
    let http_status = response.status().as_u16();
    let body = match response.bytes().await {
        Ok(body) => body,
        Err(error) => {
            return KakaoPayReply::NoReply { detail: error_chain(&error), timed_out: error.is_timeout() };
        }
    };
    if (200..300).contains(&http_status) {
        return match serde_json::from_slice::<T>(&body) {
            Ok(body) => KakaoPayReply::Body { http_status, body },
            Err(_) => KakaoPayReply::Unparsable { http_status },
        };
    }
    // KakaoPay's code decides, whatever the status.
    match serde_json::from_slice::<ErrorBody>(&body) {
        Ok(ErrorBody { error_code, error_message, extras }) => KakaoPayReply::Error {
            http_status,
            error_code,
            method_result_code: extras.and_then(|extras| extras.method_result_code),
            message: error_message,
        },
        Err(_) => KakaoPayReply::Unparsable { http_status },
    }
}

/// KakaoPay's calls, under its own limit.
impl PgGateway<KakaoPayClient> {
    /// Prepares a payment under `place`. Not recorded as a call about the
    /// order's payment: it moves no money, and a lost answer leaves only a
    /// `tid` that expires by itself.
    pub async fn ready(&self, place: PgPlace, call: KakaoPayReady<'_>) -> KakaoPayReply<Ready> {
        let answer = self.client().ready(call).await;
        drop(place);
        answer
    }

    /// Sends the one approve under `place`.
    pub async fn approve(
        &self,
        place: PgPlace,
        call: KakaoPayApprove<'_>,
        caller: PgCaller,
    ) -> KakaoPayReply<Approval> {
        let record = Call { order_id: call.order_id, kind: PgCallKind::Confirm, caller, idempotency_key: None };
        self.process(place, record, self.client().approve(call)).await
    }

    /// Looks the order's payment up by its `tid`.
    pub async fn order(&self, place: PgPlace, order_id: &str, tid: &str, caller: PgCaller) -> KakaoPayReply<Order> {
        let record = Call { order_id, kind: PgCallKind::Lookup, caller, idempotency_key: None };
        self.read(place, record, self.client().order(tid)).await
    }

    /// Sends a cancel under `place`; KakaoPay processes it as it does an approve.
    pub async fn cancel(
        &self,
        place: PgPlace,
        call: KakaoPayCancel<'_>,
        caller: PgCaller,
    ) -> KakaoPayReply<Cancellation> {
        let record = Call { order_id: call.order_id, kind: PgCallKind::Cancel, caller, idempotency_key: None };
        self.process(place, record, self.client().cancel(call)).await
    }
}

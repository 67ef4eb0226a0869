//! The PG as Toss documents it, for one order: its payment, the first response
//! stored against the attempt's idempotency key (replayed for every repeat,
//! a 5xx included; a 429 is not stored), processing that goes on after its
//! caller gave up, a session that expires (after which a lookup shows EXPIRED,
//! or answers 404, as the PG chooses), and lookups by paymentKey and by
//! orderId, and cancels with keys of their own (the first response replayed,
//! a 429 not stored, `PROVIDER_ERROR` stored with nothing refunded). Its
//! answers are built as the server's `TossReply`, so the server's own tables
//! read them.
//!
//! Without keys it is KakaoPay: every confirm and every cancel is processed on
//! its own, a cancel only while the payment's balance is the one it carries
//! (`cancel_available_amount`), and a payment KakaoPay will not cancel (-784)
//! refuses every cancel. Its answers are then built as KakaoPay's replies.

use payonce_rules::kakaopay::KakaoPayReply;
use payonce_rules::kakaopay::wire::{Amount, Approval, Cancellation, Order as KakaoPayOrder, Status as KakaoPayStatus};
use payonce_rules::toss::TossReply;
use payonce_rules::toss::classify::Expected;
use payonce_rules::toss::wire::{Payment, PaymentStatus};

/// The order's amount, in the model's units.
pub const AMOUNT: u64 = 2;
pub const ORDER_ID: &str = "order-1";
/// The paymentKey of the order's payment, from its window.
pub const PAYMENT_KEY: &str = "pk-order-1";
/// Another order's payment, already paid, whose key a customer may confirm with.
pub const OTHER_ORDER_ID: &str = "order-0";
pub const OTHER_PAYMENT_KEY: &str = "pk-order-0";

/// What the attempt expects the PG to show.
pub fn expected(names_other_order: bool) -> Expected<'static> {
    Expected { payment_key: attempt_key(names_other_order), order_id: ORDER_ID, amount: AMOUNT }
}

/// The paymentKey the customer confirmed with.
pub fn attempt_key(names_other_order: bool) -> &'static str {
    if names_other_order { OTHER_PAYMENT_KEY } else { PAYMENT_KEY }
}

/// How the PG shows a payment whose session expired unconfirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExpiryShows {
    /// `status: EXPIRED`.
    Expired,
    /// 404 `NOT_FOUND_PAYMENT`: the PG no longer has it.
    NotFound,
}

/// The order's payment at the PG.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PaymentAtPg {
    /// Authorised in the window, not confirmed.
    InProgress,
    Done,
    /// The card company declined the confirm.
    Aborted,
    /// The session ended before a confirm.
    Expired,
    /// Expired, and the PG answers 404 for it.
    Gone,
    PartialCanceled,
    Canceled,
}

/// A cancel's reply, as the PG sends it (or none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CancelReply {
    /// The payment after the refund, with this balance left.
    Refunded {
        balance: u64,
    },
    /// More than the balance (Toss's `NOT_CANCELABLE_AMOUNT`), or, without
    /// keys, a balance other than the one the cancel carries (KakaoPay's -710).
    NotCancelable,
    /// Refused by the card company: nothing refunded, and the key's answer is
    /// spent. Without keys, KakaoPay's -784: it will not cancel the payment.
    ProviderError,
    TooManyRequests,
    NoReply,
}

/// How one cancel is processed, beyond what the PG's state decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CancelProcessing {
    AsDocumented,
    /// 429, not stored against the key.
    TurnedAway,
    /// `PROVIDER_ERROR`, stored against the key; without keys, -784 from now on.
    ProviderError,
}

/// A cancel the PG has received and not yet processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CancelRequest {
    pub to: (u8, u8),
    pub holder: crate::lease::Holder,
    /// Which of the refund's keys it carries.
    pub key: u8,
}

/// The most keys one refund may go through in the model.
pub const REFUND_KEYS: usize = 3;

/// A confirm's reply, as the PG sends it (or none, when its caller gave up).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reply {
    Approved,
    Declined,
    ServerError,
    TooManyRequests,
    SessionGone,
    AlreadyProcessed,
    /// A code no table knows (the PG's answer to a key of another order).
    Undocumented,
    /// Toss's 409 `IDEMPOTENT_REQUEST_PROCESSING`: the key's first request is
    /// still being processed; this one was not.
    StillProcessing,
    /// The connection failed: the request never reached the PG.
    NotSent,
    /// An answer whose body cannot be read (the request was processed).
    Unreadable,
    /// The caller stopped waiting: the PG may still process it.
    NoReply,
}

/// A lookup's reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Looked {
    /// The order's payment, in this status, with this much refunded.
    Order(PaymentAtPg, u64),
    /// Another order's payment (a lookup by a key of another order).
    OtherOrder,
    /// No answer, or a 5xx.
    Unavailable,
}

/// How one confirm is processed, beyond what the PG's state decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Processing {
    AsDocumented,
    /// 429: turned away for load, not stored against the key.
    TurnedAway,
    /// A 5xx, stored against the key: every repeat replays it.
    StoredServerError,
    /// The connection fails: the request never reaches the PG.
    NotSent,
    /// Processed as documented, and its answer's body cannot be read.
    Unreadable,
    /// Toss's 409: another request with the key is still being processed, so
    /// this one is not (nothing stored).
    KeyInUse,
}

/// A confirm the PG has received and not yet processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Request {
    /// The task waiting for it: (server, worker), and the lease it sent it under.
    pub to: (u8, u8),
    pub holder: crate::lease::Holder,
    /// It reached the PG before the session ended: the PG processes it as
    /// if the session were open (for up to the longest processing).
    pub in_session: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pg {
    pub payment: PaymentAtPg,
    pub refunded: u64,
    /// Charged at some point (a later cancel does not undo this).
    pub charged: bool,
    pub charges: u8,
    /// The first response stored against the attempt's key.
    pub stored: Option<Reply>,
    pub inbox: Vec<Request>,
    pub session_over: bool,
    /// Past the session and the longest processing (the attempt is old):
    /// every confirm that reached the PG in the session has been processed.
    pub long_over: bool,
    pub partly_cancelled: bool,
    /// What the PG's console refunded (not the shop's refund).
    pub refunded_at_console: u64,
    pub cancel_stored: [Option<CancelReply>; REFUND_KEYS],
    pub cancel_inbox: Vec<CancelRequest>,
    /// The card company declines this card.
    pub declines: bool,
    pub expiry_shows: ExpiryShows,
    /// The PG takes no idempotency key (KakaoPay's approve): it stores no
    /// first response, and processes every confirm it receives.
    pub keyless: bool,
    /// Confirms that reached it.
    pub confirms_received: u8,
    /// Without keys: KakaoPay refuses every cancel of the payment (-784).
    pub cancels_refused: bool,
}

impl Pg {
    pub fn new(declines: bool, expiry_shows: ExpiryShows, keyless: bool) -> Self {
        Pg {
            payment: PaymentAtPg::InProgress,
            refunded: 0,
            charged: false,
            charges: 0,
            stored: None,
            inbox: Vec::new(),
            session_over: false,
            long_over: false,
            partly_cancelled: false,
            refunded_at_console: 0,
            cancel_stored: [None; REFUND_KEYS],
            cancel_inbox: Vec::new(),
            declines,
            expiry_shows,
            keyless,
            confirms_received: 0,
            cancels_refused: false,
        }
    }

    /// Processes a confirm of the attempt's key, as Toss does; without keys,
    /// every confirm on its own.
    pub fn process(&mut self, request: Request, names_other_order: bool, processing: Processing) -> Reply {
        match processing {
            Processing::NotSent => return Reply::NotSent,
            Processing::KeyInUse => return Reply::StillProcessing,
            Processing::Unreadable => {
                self.process(request, names_other_order, Processing::AsDocumented);
                return Reply::Unreadable;
            }
            Processing::AsDocumented | Processing::TurnedAway | Processing::StoredServerError => {}
        }
        self.confirms_received = self.confirms_received.saturating_add(1);
        if let Some(stored) = self.stored {
            return stored;
        }
        let reply = match processing {
            Processing::NotSent | Processing::Unreadable | Processing::KeyInUse => unreachable!("answered above"),
            Processing::TurnedAway => return Reply::TooManyRequests,
            Processing::StoredServerError => Reply::ServerError,
            // The key names another order's payment: Toss refuses the pair.
            Processing::AsDocumented if names_other_order => Reply::Undocumented,
            Processing::AsDocumented if self.session_over && !request.in_session => Reply::SessionGone,
            Processing::AsDocumented => match self.payment {
                PaymentAtPg::InProgress if self.declines => {
                    self.payment = PaymentAtPg::Aborted;
                    Reply::Declined
                }
                PaymentAtPg::InProgress => {
                    self.payment = PaymentAtPg::Done;
                    self.charged = true;
                    self.charges += 1;
                    Reply::Approved
                }
                PaymentAtPg::Done | PaymentAtPg::PartialCanceled | PaymentAtPg::Canceled => Reply::AlreadyProcessed,
                PaymentAtPg::Aborted | PaymentAtPg::Expired | PaymentAtPg::Gone => Reply::SessionGone,
            },
        };
        if !self.keyless {
            self.stored = Some(reply);
        }
        reply
    }

    /// Processes a cancel of `amount` under the refund's key `request.key`;
    /// without keys, of the balance `balance_before` it carries.
    pub fn process_cancel(
        &mut self,
        request: CancelRequest,
        (amount, balance_before): (u64, u64),
        processing: CancelProcessing,
    ) -> CancelReply {
        if self.keyless {
            return self.process_cancel_without_key(amount, balance_before, processing);
        }
        let key = usize::from(request.key);
        if let Some(stored) = self.cancel_stored[key] {
            return stored;
        }
        let reply = match processing {
            CancelProcessing::TurnedAway => return CancelReply::TooManyRequests,
            CancelProcessing::ProviderError => CancelReply::ProviderError,
            CancelProcessing::AsDocumented => self.refund(amount, |_| true),
        };
        self.cancel_stored[key] = Some(reply);
        reply
    }

    /// KakaoPay's cancel: nothing stored, the balance checked against the one
    /// the cancel carries, and a refusal of the payment kept for good.
    fn process_cancel_without_key(
        &mut self,
        amount: u64,
        balance_before: u64,
        processing: CancelProcessing,
    ) -> CancelReply {
        match processing {
            CancelProcessing::TurnedAway => CancelReply::TooManyRequests,
            CancelProcessing::ProviderError => {
                self.cancels_refused = true;
                CancelReply::ProviderError
            }
            CancelProcessing::AsDocumented if self.cancels_refused => CancelReply::ProviderError,
            CancelProcessing::AsDocumented => self.refund(amount, |balance| balance == balance_before),
        }
    }

    /// Refunds `amount` of a charge whose balance covers it and passes
    /// `checked`; refuses it (`NotCancelable`) otherwise.
    fn refund(&mut self, amount: u64, checked: impl FnOnce(u64) -> bool) -> CancelReply {
        let charged_now = matches!(self.payment, PaymentAtPg::Done | PaymentAtPg::PartialCanceled);
        let balance = AMOUNT - self.refunded;
        if !(charged_now && balance >= amount && checked(balance)) {
            return CancelReply::NotCancelable;
        }
        self.refunded += amount;
        self.payment = if self.refunded == AMOUNT { PaymentAtPg::Canceled } else { PaymentAtPg::PartialCanceled };
        CancelReply::Refunded { balance: AMOUNT - self.refunded }
    }

    /// A confirm that reached the PG while the session was open is still
    /// being processed.
    pub fn processing_from_the_session(&self) -> bool {
        self.inbox.iter().any(|request| request.in_session)
    }

    /// The order's payment as a lookup shows it now: one never confirmed
    /// shows expired once the session is over and nothing from it is still
    /// being processed.
    pub fn shown_payment(&self) -> PaymentAtPg {
        match self.payment {
            PaymentAtPg::InProgress if self.session_over && !self.processing_from_the_session() => {
                match self.expiry_shows {
                    ExpiryShows::Expired => PaymentAtPg::Expired,
                    ExpiryShows::NotFound => PaymentAtPg::Gone,
                }
            }
            payment => payment,
        }
    }

    /// A lookup by the attempt's paymentKey.
    pub fn look_up_by_key(&self, names_other_order: bool) -> Looked {
        if names_other_order { Looked::OtherOrder } else { self.look_up_by_order() }
    }

    /// A lookup by the order's id.
    pub fn look_up_by_order(&self) -> Looked {
        Looked::Order(self.shown_payment(), self.refunded)
    }
}

fn payment(payment_key: &str, order_id: &str, status: PaymentStatus, refunded: u64) -> TossReply {
    let payment = Payment {
        payment_key: payment_key.to_owned(),
        order_id: order_id.to_owned(),
        status,
        total_amount: AMOUNT,
        balance_amount: Some(AMOUNT - refunded),
        failure: None,
        is_partial_cancelable: Some(true),
    };
    TossReply::Payment { http_status: 200, payment }
}

fn error(http_status: u16, code: &str) -> TossReply {
    TossReply::Error { http_status, code: code.to_owned(), message: String::new() }
}

/// A confirm's reply as the server's client reads it.
pub fn confirm_answer(reply: Reply, names_other_order: bool) -> TossReply {
    match reply {
        Reply::Approved => payment(attempt_key(names_other_order), ORDER_ID, PaymentStatus::Done, 0),
        Reply::Declined => error(403, "REJECT_CARD_PAYMENT"),
        Reply::ServerError => error(500, "FAILED_INTERNAL_SYSTEM_PROCESSING"),
        Reply::TooManyRequests => error(429, "TOO_MANY_REQUESTS"),
        Reply::SessionGone => error(404, "NOT_FOUND_PAYMENT_SESSION"),
        Reply::AlreadyProcessed => error(400, "ALREADY_PROCESSED_PAYMENT"),
        Reply::Undocumented => error(400, "INVALID_ORDER_ID_FOR_PAYMENT_KEY"),
        Reply::StillProcessing => error(409, "IDEMPOTENT_REQUEST_PROCESSING"),
        Reply::NotSent => TossReply::NotSent { detail: "connection refused".to_owned() },
        Reply::Unreadable => TossReply::Unparsable { http_status: 200 },
        Reply::NoReply => TossReply::NoReply { detail: "timed out".to_owned(), timed_out: true },
    }
}

/// What an attempt expects KakaoPay to show (its tid is the one the server
/// prepared: no customer can name another order's).
pub fn kakaopay_expected() -> payonce_rules::kakaopay::classify::Expected<'static> {
    payonce_rules::kakaopay::classify::Expected { tid: PAYMENT_KEY, order_id: ORDER_ID, amount: AMOUNT }
}

fn kakaopay_error<T>(http_status: u16, error_code: i32) -> KakaoPayReply<T> {
    KakaoPayReply::Error { http_status, error_code, method_result_code: None, message: String::new() }
}

fn kakaopay_amount(total: u64) -> Amount {
    Amount { total, tax_free: 0 }
}

/// An approve's reply as KakaoPay words it: the same outcomes, in its codes
/// (docs/kakaopay.md).
pub fn kakaopay_approve_answer(reply: Reply) -> KakaoPayReply<Approval> {
    match reply {
        Reply::Approved => KakaoPayReply::Body {
            http_status: 200,
            body: Approval {
                aid: "A1".to_owned(),
                tid: PAYMENT_KEY.to_owned(),
                partner_order_id: ORDER_ID.to_owned(),
                amount: kakaopay_amount(AMOUNT),
            },
        },
        // The approval failed at the payment method.
        Reply::Declined => kakaopay_error(400, -780),
        Reply::ServerError => kakaopay_error(500, -500),
        // The quota: not processed.
        Reply::TooManyRequests => kakaopay_error(429, -429),
        // The payment's time is over.
        Reply::SessionGone => kakaopay_error(400, -723),
        // Approved already.
        Reply::AlreadyProcessed => kakaopay_error(400, -702),
        Reply::Undocumented => kakaopay_error(400, -9_999),
        // Only a PG with keys answers so; KakaoPay's nearest is a 409 it does not document.
        Reply::StillProcessing => KakaoPayReply::Unparsable { http_status: 409 },
        Reply::NotSent => KakaoPayReply::NotSent { detail: "connection refused".to_owned() },
        Reply::Unreadable => KakaoPayReply::Unparsable { http_status: 200 },
        Reply::NoReply => KakaoPayReply::NoReply { detail: "timed out".to_owned(), timed_out: true },
    }
}

/// A lookup's reply as KakaoPay's `order` words it. A payment authenticated
/// and not approved is `AUTH_PASSWORD`; after its time, `FAIL_PAYMENT` (as
/// the fake PG shows it), or -721 where the PG no longer has it.
pub fn kakaopay_order_answer(looked: Looked) -> KakaoPayReply<KakaoPayOrder> {
    let order = |status, refunded: u64| KakaoPayReply::Body {
        http_status: 200,
        body: KakaoPayOrder {
            tid: PAYMENT_KEY.to_owned(),
            status,
            partner_order_id: ORDER_ID.to_owned(),
            amount: kakaopay_amount(AMOUNT),
            canceled_amount: (refunded > 0).then(|| kakaopay_amount(refunded)),
            cancel_available_amount: Some(kakaopay_amount(AMOUNT - refunded)),
        },
    };
    match looked {
        Looked::Order(PaymentAtPg::Gone, _) => kakaopay_error(400, -721),
        Looked::Order(PaymentAtPg::InProgress, refunded) => order(KakaoPayStatus::AuthPassword, refunded),
        Looked::Order(PaymentAtPg::Done, refunded) => order(KakaoPayStatus::SuccessPayment, refunded),
        Looked::Order(PaymentAtPg::Aborted | PaymentAtPg::Expired, refunded) => {
            order(KakaoPayStatus::FailPayment, refunded)
        }
        Looked::Order(PaymentAtPg::PartialCanceled, refunded) => order(KakaoPayStatus::PartCancelPayment, refunded),
        Looked::Order(PaymentAtPg::Canceled, refunded) => order(KakaoPayStatus::CancelPayment, refunded),
        Looked::OtherOrder => KakaoPayReply::Body {
            http_status: 200,
            body: KakaoPayOrder {
                tid: OTHER_PAYMENT_KEY.to_owned(),
                status: KakaoPayStatus::SuccessPayment,
                partner_order_id: OTHER_ORDER_ID.to_owned(),
                amount: kakaopay_amount(AMOUNT),
                canceled_amount: None,
                cancel_available_amount: Some(kakaopay_amount(AMOUNT)),
            },
        },
        Looked::Unavailable => kakaopay_error(500, -500),
    }
}

/// A lookup's reply as the server's client reads it.
pub fn lookup_answer(looked: Looked) -> TossReply {
    match looked {
        Looked::Order(PaymentAtPg::Gone, _) => error(404, "NOT_FOUND_PAYMENT"),
        Looked::Order(status, refunded) => {
            let status = match status {
                PaymentAtPg::InProgress => PaymentStatus::InProgress,
                PaymentAtPg::Done => PaymentStatus::Done,
                PaymentAtPg::Aborted => PaymentStatus::Aborted,
                PaymentAtPg::Expired | PaymentAtPg::Gone => PaymentStatus::Expired,
                PaymentAtPg::PartialCanceled => PaymentStatus::PartialCanceled,
                PaymentAtPg::Canceled => PaymentStatus::Canceled,
            };
            payment(PAYMENT_KEY, ORDER_ID, status, refunded)
        }
        Looked::OtherOrder => payment(OTHER_PAYMENT_KEY, OTHER_ORDER_ID, PaymentStatus::Done, 0),
        Looked::Unavailable => error(500, "FAILED_INTERNAL_SYSTEM_PROCESSING"),
    }
}

/// A cancel's reply as the server's client reads it.
pub fn cancel_answer(reply: CancelReply) -> TossReply {
    match reply {
        CancelReply::Refunded { balance } => {
            let status = if balance == 0 { PaymentStatus::Canceled } else { PaymentStatus::PartialCanceled };
            payment(PAYMENT_KEY, ORDER_ID, status, AMOUNT - balance)
        }
        CancelReply::NotCancelable => error(400, "NOT_CANCELABLE_AMOUNT"),
        CancelReply::ProviderError => error(400, "PROVIDER_ERROR"),
        CancelReply::TooManyRequests => error(429, "TOO_MANY_REQUESTS"),
        CancelReply::NoReply => TossReply::NoReply { detail: "timed out".to_owned(), timed_out: true },
    }
}

/// A cancel's reply as KakaoPay words it (docs/kakaopay.md).
pub fn kakaopay_cancel_answer(reply: CancelReply) -> KakaoPayReply<Cancellation> {
    match reply {
        CancelReply::Refunded { balance } => KakaoPayReply::Body {
            http_status: 200,
            body: Cancellation {
                tid: PAYMENT_KEY.to_owned(),
                status: if balance == 0 { KakaoPayStatus::CancelPayment } else { KakaoPayStatus::PartCancelPayment },
                approved_cancel_amount: None,
                canceled_amount: Some(kakaopay_amount(AMOUNT - balance)),
                cancel_available_amount: Some(kakaopay_amount(balance)),
            },
        },
        // The balance is not the one the cancel carries.
        CancelReply::NotCancelable => kakaopay_error(400, -710),
        // Not in a state that can be cancelled.
        CancelReply::ProviderError => kakaopay_error(400, -784),
        CancelReply::TooManyRequests => kakaopay_error(429, -429),
        CancelReply::NoReply => KakaoPayReply::NoReply { detail: "timed out".to_owned(), timed_out: true },
    }
}

/// The body of an error answer, for traces.
pub fn describe(answer: &TossReply) -> String {
    match answer {
        TossReply::Error { http_status, code, .. } => format!("{http_status} {code}"),
        TossReply::Payment { payment, .. } => format!("{} {:?}", payment.order_id, payment.status),
        TossReply::NoReply { .. } => "no answer".to_owned(),
        TossReply::NotSent { .. } | TossReply::Unparsable { .. } => "unreadable".to_owned(),
    }
}

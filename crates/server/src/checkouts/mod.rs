//! Shops' checkouts: created by a shop's backend through the shop API, paid
//! by the browser that opens the link first, exactly as any order is, and
//! read back by the shop. A checkout is an order with the shop's request
//! beside it: its payment, settlement, recovery and refunds are the orders'.
//!
//! - `validate`: what a shop may ask for.
//! - `links`: the one-time token of a checkout's `next_url`.
//! - `expiry`: closing checkouts whose time ran out unpaid.

pub mod expiry;
pub mod links;
pub mod validate;

use payonce_api::checkout::order_lines;
use payonce_api::{
    BackToShop, Checkout, CheckoutList, CheckoutPayment, CheckoutStatus, CreateCheckoutRequest, CustomerCheckout,
    ErrorCode, OrderStatus, Pg, ShopRefundRequest, StatusChange,
};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::app::App;
use crate::customer::Customer;
use crate::db::{CheckoutRow, CheckoutStored, Claim, NewCheckout, NewOrder, now_ms, rfc3339, unclaimed_customer};
use crate::error::AppError;
use crate::payment::refund::cancel_for_operator;
use crate::resilience::lease;
use crate::shops::Shop;
pub use links::CheckoutLinks;

/// Most checkouts one answer lists.
pub const LIST_MOST: u32 = 100;
/// Checkouts an answer lists when the shop does not say.
pub const LIST_DEFAULT: u32 = 20;
/// The reason the PG is given for a shop's refund that names none.
const SHOP_REASON: &str = "refunded by the shop";
/// The longest a shop waits for its refund's answer before it is told 202
/// and asks again: within any backend's own HTTP timeout.
const REFUND_ANSWER_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
/// The longest refund reason (the PG's own limit).
const REASON_MAX_CHARS: usize = 200;

/// Creates the checkout, or answers the one the shop's key made before (if
/// it came with the same request; another is `IDEMPOTENCY_KEY_REUSED`).
pub async fn create(
    app: &App,
    links: &CheckoutLinks,
    shop: &Shop,
    idempotency_key: &str,
    request: &CreateCheckoutRequest,
) -> Result<Checkout, AppError> {
    let checked = validate::check(shop, request, app.config.checkout_shortest_open)?;
    let as_given = serde_json::to_string(request).map_err(|error| AppError::Internal(error.to_string()))?;
    let request_digest: String = Sha256::digest(as_given.as_bytes()).iter().map(|byte| format!("{byte:02x}")).collect();
    // Stored with what was decided for the shop: the PGs and the time it stays open.
    let stored = CreateCheckoutRequest {
        pay_with: Some(checked.pay_with),
        expires_in: Some(checked.open_for.as_secs()),
        ..request.clone()
    };
    let order_id = format!("{}{}", shop.order_id_prefix, Uuid::now_v7().simple());
    let created_at_ms = now_ms();
    let new = NewCheckout {
        order: NewOrder {
            order_id: order_id.clone(),
            customer_id: unclaimed_customer(&order_id),
            amount: request.amount,
            // The PGs' windows are Korean first.
            order_name: request.name.korean_first().to_owned(),
            items: order_lines(&request.lines),
            created_at_ms,
            // A shop keeps its own stock.
            stock: Vec::new(),
        },
        shop_id: shop.id.clone(),
        reference: request.reference.clone(),
        idempotency_key: idempotency_key.to_owned(),
        request_digest: request_digest.clone(),
        request: serde_json::to_string(&stored).map_err(|error| AppError::Internal(error.to_string()))?,
        shop_name: serde_json::to_string(&shop.name).map_err(|error| AppError::Internal(error.to_string()))?,
        expires_at_ms: created_at_ms + lease::millis(checked.open_for),
    };
    match app.db.insert_checkout(&new).await? {
        CheckoutStored::Created => {
            tracing::info!(shop = shop.id, order_id, amount = request.amount, "checkout created");
            crate::metrics::checkout_created(&shop.id);
            // Just committed: nothing has happened to it yet, so it is answered
            // from what was stored, without reading it back.
            let created_at = rfc3339(created_at_ms);
            Ok(Checkout {
                next_url: Some(next_url(app, links, &order_id)),
                id: order_id,
                reference: stored.reference,
                status: CheckoutStatus::Created,
                amount: stored.amount,
                amount_refunded: 0,
                name: stored.name,
                lines: stored.lines,
                return_url: stored.return_url,
                metadata: stored.metadata,
                pay_with: stored.pay_with.unwrap_or_default(),
                created_at: created_at.clone(),
                expires_at: rfc3339(new.expires_at_ms),
                payment: None,
                failure: None,
                refund_refusal: None,
                history: vec![StatusChange { status: CheckoutStatus::Created, at: created_at }],
            })
        }
        CheckoutStored::Existing { order_id, request_digest: first } if first == request_digest => {
            show(app, links, shop, &order_id).await
        }
        CheckoutStored::Existing { .. } => Err(AppError::IdempotencyKeyReused),
    }
}

/// The shop's checkout `order_id`, closed first if its time ran out unpaid.
pub async fn show(app: &App, links: &CheckoutLinks, shop: &Shop, order_id: &str) -> Result<Checkout, AppError> {
    let row = app.db.checkout(&shop.id, order_id).await?.ok_or(AppError::OrderNotFound)?;
    view(app, links, row).await
}

/// What `GET /v1/checkouts` asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListQuery {
    pub reference: Option<String>,
    pub after: Option<String>,
    pub limit: Option<u32>,
}

/// The shop's checkouts of a reference, or a page of all of them, newest first.
pub async fn list(app: &App, links: &CheckoutLinks, shop: &Shop, query: &ListQuery) -> Result<CheckoutList, AppError> {
    let limit = query.limit.unwrap_or(LIST_DEFAULT);
    if !(1..=LIST_MOST).contains(&limit) {
        return Err(AppError::InvalidRequest { message: format!("limit must be 1 to {LIST_MOST}") });
    }
    let rows = match (&query.reference, &query.after) {
        (Some(_), Some(_)) => {
            return Err(AppError::InvalidRequest { message: "give reference or after, not both".to_owned() });
        }
        (Some(reference), None) => app.db.checkouts_by_reference(&shop.id, reference, limit + 1).await?,
        (None, after) => {
            let before = match after {
                Some(cursor) => Some(read_cursor(cursor)?),
                None => None,
            };
            let before = before.as_ref().map(|(at, id)| (*at, id.as_str()));
            app.db.checkouts_page(&shop.id, before, limit + 1).await?
        }
    };
    let more = rows.len() > limit as usize;
    let rows: Vec<CheckoutRow> = rows.into_iter().take(limit as usize).collect();
    let next_cursor =
        if more { rows.last().map(|row| format!("{}.{}", row.created_at_ms, row.order_id)) } else { None };
    let mut checkouts = Vec::with_capacity(rows.len());
    for row in rows {
        checkouts.push(view(app, links, row).await?);
    }
    Ok(CheckoutList { checkouts, next_cursor: if query.reference.is_some() { None } else { next_cursor } })
}

/// A cursor as `list` writes it: the last checkout's creation time and id.
fn read_cursor(cursor: &str) -> Result<(i64, String), AppError> {
    let refuse = || AppError::InvalidRequest { message: "after is not a cursor this API gave".to_owned() };
    let (at, id) = cursor.split_once('.').ok_or_else(refuse)?;
    let at: i64 = at.parse().map_err(|_| refuse())?;
    if id.is_empty() || !payonce_api::is_order_id_text(id) {
        return Err(refuse());
    }
    Ok((at, id.to_owned()))
}

/// Refunds `amount` of what is left of the shop's checkout (all of it
/// without one) through the operators' refund machinery; the audit log
/// names the shop as `shop:<id>`. The same key is the same refund; the same
/// key with another amount is `IDEMPOTENCY_KEY_REUSED`.
pub async fn refund(
    app: &App,
    links: &CheckoutLinks,
    shop: &Shop,
    order_id: &str,
    request_key: &str,
    request: &ShopRefundRequest,
) -> Result<(Checkout, bool), AppError> {
    app.db.checkout(&shop.id, order_id).await?.ok_or(AppError::OrderNotFound)?;
    if let Some(earlier) = app.db.refund_by_request(order_id, request_key).await?
        && request.amount.is_some_and(|amount| amount != earlier.amount)
    {
        return Err(AppError::IdempotencyKeyReused);
    }
    let reason = request.reason.as_deref().unwrap_or(SHOP_REASON);
    if reason.trim().is_empty() || reason.chars().count() > REASON_MAX_CHARS {
        return Err(AppError::InvalidRequest { message: format!("reason must be 1 to {REASON_MAX_CHARS} characters") });
    }
    let by = format!("shop:{}", shop.id);
    let (task_app, order, key, amount, reason) =
        (app.clone(), order_id.to_owned(), request_key.to_owned(), request.amount, reason.to_owned());
    // The refund runs on its own: the shop is answered within a few seconds,
    // 202 while the PG has not answered yet (it goes on, and is recovered if
    // the server stops), never held as long as the PG takes.
    let refunding =
        app.pg_tasks.spawn(async move { cancel_for_operator(&task_app, &by, &order, &key, amount, &reason).await });
    let in_progress = match tokio::time::timeout(REFUND_ANSWER_WAIT, refunding).await {
        Ok(Ok(refunded)) => refunded?.status.is_refund_in_progress(),
        Ok(Err(error)) => return Err(AppError::Internal(format!("refund task failed: {error}"))),
        Err(_) => true,
    };
    Ok((show(app, links, shop, order_id).await?, in_progress))
}

/// The checkout as its shop sees it.
async fn view(app: &App, links: &CheckoutLinks, row: CheckoutRow) -> Result<Checkout, AppError> {
    expiry::close_if_due(app, &row).await?;
    let order = app.db.order(&row.order_id).await?.ok_or(AppError::OrderNotFound)?;
    let request = stored_request(&row)?;
    let mut history = vec![StatusChange { status: CheckoutStatus::Created, at: rfc3339(row.created_at_ms) }];
    for event in app.db.history(&row.order_id).await? {
        let status = OrderStatus::parse(&event.to_status)
            .ok_or_else(|| AppError::Internal(format!("unknown status {:?} in the history", event.to_status)))?;
        history
            .push(StatusChange { status: CheckoutStatus::of(status, event.code.as_deref()), at: rfc3339(event.at_ms) });
    }
    let payment = app.db.payment_of(&row.order_id).await?.map(|(pg, payment_id)| CheckoutPayment { pg, payment_id });
    let status = CheckoutStatus::of(order.status, order.failure.as_ref().map(|failure| failure.code.as_str()));
    let next_url = (status == CheckoutStatus::Created).then(|| next_url(app, links, &row.order_id));
    Ok(Checkout {
        id: row.order_id,
        reference: row.reference,
        status,
        amount: order.amount,
        amount_refunded: order.refunded_amount,
        name: request.name,
        lines: request.lines,
        return_url: request.return_url,
        metadata: request.metadata,
        pay_with: request.pay_with.unwrap_or_default(),
        created_at: rfc3339(row.created_at_ms),
        expires_at: rfc3339(row.expires_at_ms),
        next_url,
        payment,
        failure: order.failure,
        refund_refusal: order.refund_refusal,
        history,
    })
}

/// Where the shop sends its customer: the checkout page, the token in the fragment.
fn next_url(app: &App, links: &CheckoutLinks, order_id: &str) -> String {
    format!("{}/checkout/{order_id}#{}", app.config.public_base_url(), links.token(order_id))
}

fn stored_request(row: &CheckoutRow) -> Result<CreateCheckoutRequest, AppError> {
    serde_json::from_str(&row.request).map_err(|error| AppError::Internal(format!("a stored checkout: {error}")))
}

/// The browser opening the checkout's link: the first becomes its customer;
/// it may come back (its cookie says who it is, with or without the token);
/// any other is told the link was used, and sees nothing of the checkout.
pub async fn claim(
    app: &App,
    links: &CheckoutLinks,
    customer: &Customer,
    order_id: &str,
    token: &str,
) -> Result<CustomerCheckout, AppError> {
    let row = app.db.checkout_of_order(order_id).await?.ok_or(AppError::OrderNotFound)?;
    let owner = app.db.customer_of(order_id).await?;
    if owner.as_deref() != Some(customer.0.as_str()) {
        if !links.opens(order_id, token) {
            return Err(AppError::OrderNotFound);
        }
        match app.db.claim_checkout(order_id, &customer.0).await? {
            Claim::Theirs => tracing::info!(order_id, "checkout link opened"),
            Claim::Taken => {
                tracing::warn!(order_id, "checkout link opened in a second browser; refused");
                return Err(AppError::CheckoutLinkUsed);
            }
            Claim::Missing => return Err(AppError::OrderNotFound),
        }
    }
    for_customer(app, customer, row).await
}

/// The customer's own checkout (the browser that opened its link).
pub async fn show_to_customer(app: &App, customer: &Customer, order_id: &str) -> Result<CustomerCheckout, AppError> {
    let row = app.db.checkout_of_order(order_id).await?.ok_or(AppError::OrderNotFound)?;
    for_customer(app, customer, row).await
}

async fn for_customer(app: &App, customer: &Customer, row: CheckoutRow) -> Result<CustomerCheckout, AppError> {
    expiry::close_if_due(app, &row).await?;
    let order = app.db.customer_order(&customer.0, &row.order_id).await?.ok_or(AppError::OrderNotFound)?;
    let request = stored_request(&row)?;
    let back =
        order.back.clone().unwrap_or_else(|| BackToShop { shop: Default::default(), url: request.return_url.clone() });
    let public = app.config.public_base_url();
    Ok(CustomerCheckout {
        order_id: order.order_id,
        status: order.status,
        amount: order.amount,
        order_name: order.order_name,
        name: request.name,
        lines: request.lines,
        pay_with: request.pay_with.unwrap_or_default(),
        expires_at: rfc3339(row.expires_at_ms),
        back,
        success_url: format!("{public}/pay/success"),
        fail_url: format!("{public}/pay/fail"),
        failure: order.failure,
    })
}

/// Whether order `order_id` may be paid through `pg` now: any cart order
/// may; a checkout only through the PGs its shop allowed, and only before its
/// time runs out (one that ran out is closed, and the payment is refused
/// before anything reaches the PG).
pub async fn may_pay(app: &App, order_id: &str, pg: Pg) -> Result<(), AppError> {
    let Some(row) = app.db.checkout_of_order(order_id).await? else { return Ok(()) };
    if now_ms() >= row.expires_at_ms {
        expiry::close_if_due(app, &row).await?;
        let order = app.db.order(order_id).await?.ok_or(AppError::OrderNotFound)?;
        // A payment stored before the time ran out is settled as any is; its confirm answers it.
        if order.failure.as_ref().is_some_and(|failure| failure.code == ErrorCode::CheckoutExpired.as_str()) {
            return Err(AppError::CheckoutExpired { order: Box::new(order) });
        }
    }
    let request = stored_request(&row)?;
    if !request.pay_with.unwrap_or_default().contains(&pg) {
        return Err(AppError::PgNotOffered(pg));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_what_the_list_wrote() {
        assert_eq!(read_cursor("1733390000000.ord_books_0193").unwrap(), (1_733_390_000_000, "ord_books_0193".into()));
        for bad in ["", "1733390000000", "x.ord_1", "1.", "1.ord 1", "1.ord/1"] {
            assert!(matches!(read_cursor(bad), Err(AppError::InvalidRequest { .. })), "{bad}");
        }
    }
}

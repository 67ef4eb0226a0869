//! Shops' checkouts: the order and what the shop gave beside it, stored
//! together; found by the shop's idempotency key, by reference, by page; the
//! browser that opened the link first made the order's customer.

use payonce_api::Pg;
use sqlx::FromRow;

use super::orders::{NewOrder, insert_order_row};
use super::{Db, now_ms};

/// What the order's `customer_id` is until a browser opens the checkout's
/// link: no customer's cookie can carry it (theirs are UUIDs).
pub fn unclaimed_customer(order_id: &str) -> String {
    format!("checkout:{order_id}")
}

/// A checkout about to be stored, with its order.
#[derive(Debug, Clone)]
pub struct NewCheckout {
    pub order: NewOrder,
    pub shop_id: String,
    pub reference: String,
    pub idempotency_key: String,
    pub request_digest: String,
    /// The create request as the shop gave it (JSON).
    pub request: String,
    /// The shop's names (JSON), kept for the way back.
    pub shop_name: String,
    pub expires_at_ms: i64,
}

/// What storing a checkout did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckoutStored {
    Created,
    /// The shop's key was used before: the checkout it made, and the digest of the body it came with.
    Existing {
        order_id: String,
        request_digest: String,
    },
}

/// A checkout's own row.
#[derive(Debug, Clone, FromRow)]
pub struct CheckoutRow {
    pub order_id: String,
    pub shop_id: String,
    pub reference: String,
    pub request: String,
    pub shop_name: String,
    pub expires_at_ms: i64,
    pub claimed_at_ms: Option<i64>,
    pub created_at_ms: i64,
}

const SELECT_CHECKOUT: &str = "SELECT order_id, shop_id, reference, request, shop_name, expires_at_ms, \
     claimed_at_ms, created_at_ms FROM checkouts";

/// What opening a checkout's link did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// This browser is the checkout's customer (now, or since it first opened it).
    Theirs,
    /// Another browser opened it first.
    Taken,
    /// There is no such checkout.
    Missing,
}

impl Db {
    /// Stores the checkout and its order in one transaction, unless the shop
    /// used its idempotency key before: then answers what that key made.
    pub async fn insert_checkout(&self, checkout: &NewCheckout) -> Result<CheckoutStored, sqlx::Error> {
        let new = checkout.clone();
        let stored = self
            .write(Box::new(move |transaction| {
                let new = new.clone();
                Box::pin(async move {
                    if let Some(existing) = by_key(&mut **transaction, &new.shop_id, &new.idempotency_key).await? {
                        return Ok(existing);
                    }
                    insert_order_row(transaction, &new.order).await?;
                    sqlx::query(
                        "INSERT INTO checkouts (order_id, shop_id, reference, idempotency_key, request_digest, \
                         request, shop_name, expires_at_ms, created_at_ms) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                    )
                    .bind(&new.order.order_id)
                    .bind(&new.shop_id)
                    .bind(&new.reference)
                    .bind(&new.idempotency_key)
                    .bind(&new.request_digest)
                    .bind(&new.request)
                    .bind(&new.shop_name)
                    .bind(new.expires_at_ms)
                    .bind(new.order.created_at_ms)
                    .execute(&mut **transaction)
                    .await?;
                    Ok(CheckoutStored::Created)
                })
            }))
            .await;
        match stored {
            Ok(stored) => Ok(stored),
            // Two servers stored the same key at once (PostgreSQL): the other's stands.
            Err(error) => match by_key(&self.writer, &checkout.shop_id, &checkout.idempotency_key).await? {
                Some(existing) => Ok(existing),
                None => Err(error),
            },
        }
    }

    /// The shop's checkout `order_id`; another shop's is none.
    pub async fn checkout(&self, shop_id: &str, order_id: &str) -> Result<Option<CheckoutRow>, sqlx::Error> {
        sqlx::query_as(&format!("{SELECT_CHECKOUT} WHERE shop_id = $1 AND order_id = $2"))
            .bind(shop_id)
            .bind(order_id)
            .fetch_optional(&self.pool)
            .await
    }

    /// The checkout of order `order_id`, whichever shop's; for its customer's page.
    pub async fn checkout_of_order(&self, order_id: &str) -> Result<Option<CheckoutRow>, sqlx::Error> {
        sqlx::query_as(&format!("{SELECT_CHECKOUT} WHERE order_id = $1"))
            .bind(order_id)
            .fetch_optional(&self.pool)
            .await
    }

    /// The shop's checkouts of `reference`, newest first (at most `limit`).
    pub async fn checkouts_by_reference(
        &self,
        shop_id: &str,
        reference: &str,
        limit: u32,
    ) -> Result<Vec<CheckoutRow>, sqlx::Error> {
        sqlx::query_as(&format!(
            "{SELECT_CHECKOUT} WHERE shop_id = $1 AND reference = $2 \
             ORDER BY created_at_ms DESC, order_id DESC LIMIT $3"
        ))
        .bind(shop_id)
        .bind(reference)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
    }

    /// A page of the shop's checkouts, newest first: `limit` of them created
    /// before `(created_at_ms, order_id)` when given (the last of the page before).
    pub async fn checkouts_page(
        &self,
        shop_id: &str,
        before: Option<(i64, &str)>,
        limit: u32,
    ) -> Result<Vec<CheckoutRow>, sqlx::Error> {
        let (at, id) = before.unwrap_or((i64::MAX, ""));
        sqlx::query_as(&format!(
            "{SELECT_CHECKOUT} WHERE shop_id = $1 AND ($2 = 0 OR created_at_ms < $3 \
             OR (created_at_ms = $3 AND order_id < $4)) ORDER BY created_at_ms DESC, order_id DESC LIMIT $5"
        ))
        .bind(shop_id)
        .bind(i64::from(before.is_some()))
        .bind(at)
        .bind(id)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
    }

    /// Makes `customer_id` the checkout's customer if no browser opened its
    /// link before; says whose it is either way.
    pub async fn claim_checkout(&self, order_id: &str, customer_id: &str) -> Result<Claim, sqlx::Error> {
        let (order, customer) = (order_id.to_owned(), customer_id.to_owned());
        self.write(Box::new(move |transaction| {
            let (order, customer) = (order.clone(), customer.clone());
            Box::pin(async move {
                let claimed = sqlx::query(
                    "UPDATE checkouts SET claimed_at_ms = $1 WHERE order_id = $2 AND claimed_at_ms IS NULL",
                )
                .bind(now_ms())
                .bind(&order)
                .execute(&mut **transaction)
                .await?;
                if claimed.rows_affected() == 1 {
                    sqlx::query("UPDATE orders SET customer_id = $1 WHERE order_id = $2 AND customer_id = $3")
                        .bind(&customer)
                        .bind(&order)
                        .bind(unclaimed_customer(&order))
                        .execute(&mut **transaction)
                        .await?;
                    return Ok(Claim::Theirs);
                }
                let owner: Option<String> = sqlx::query_scalar(
                    "SELECT o.customer_id FROM checkouts c JOIN orders o ON o.order_id = c.order_id \
                     WHERE c.order_id = $1",
                )
                .bind(&order)
                .fetch_optional(&mut **transaction)
                .await?;
                Ok(match owner {
                    None => Claim::Missing,
                    Some(owner) if owner == customer => Claim::Theirs,
                    Some(_) => Claim::Taken,
                })
            })
        }))
        .await
    }

    /// Checkouts whose time ran out in `(after_ms, until_ms]` with no payment
    /// attempt: those expiry closes (at most `limit`, earliest first).
    pub async fn expired_checkouts(
        &self,
        after_ms: i64,
        until_ms: i64,
        limit: u32,
    ) -> Result<Vec<(String, i64)>, sqlx::Error> {
        sqlx::query_as(
            "SELECT c.order_id, c.expires_at_ms FROM checkouts c \
             LEFT JOIN payment_attempts a ON a.order_id = c.order_id \
             WHERE c.expires_at_ms > $1 AND c.expires_at_ms <= $2 AND a.order_id IS NULL \
             ORDER BY c.expires_at_ms LIMIT $3",
        )
        .bind(after_ms)
        .bind(until_ms)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
    }

    /// The PG and the PG's id of the order's payment, once one was sent.
    pub async fn payment_of(&self, order_id: &str) -> Result<Option<(Pg, String)>, sqlx::Error> {
        let row: Option<(String, String)> = sqlx::query_as(
            "SELECT pg, payment_key FROM payment_attempts WHERE order_id = $1 AND payment_key IS NOT NULL",
        )
        .bind(order_id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.and_then(|(pg, key)| Pg::parse(&pg).map(|pg| (pg, key))))
    }
}

async fn by_key<'e>(
    executor: impl sqlx::Executor<'e, Database = sqlx::Any>,
    shop_id: &str,
    idempotency_key: &str,
) -> Result<Option<CheckoutStored>, sqlx::Error> {
    let row: Option<(String, String)> =
        sqlx::query_as("SELECT order_id, request_digest FROM checkouts WHERE shop_id = $1 AND idempotency_key = $2")
            .bind(shop_id)
            .bind(idempotency_key)
            .fetch_optional(executor)
            .await?;
    Ok(row.map(|(order_id, request_digest)| CheckoutStored::Existing { order_id, request_digest }))
}

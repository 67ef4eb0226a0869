use payonce_api::{BackToShop, CreateCheckoutRequest, Failure, LineItem, Names, Order, OrderStatus};
use sqlx::{AnyConnection, FromRow};

use super::{Db, rfc3339};
use payonce_rules::toss::messages::refund_refusal_message;

/// An order about to be stored.
#[derive(Debug, Clone)]
pub struct NewOrder {
    pub order_id: String,
    pub customer_id: String,
    pub amount: u64,
    pub order_name: String,
    pub items: Vec<LineItem>,
    pub created_at_ms: i64,
    /// The units it takes of products with a stock (none for a shop's checkout).
    pub stock: Vec<super::StockLine>,
}

/// An order joined with its payment attempt, if it has one.
const SELECT_ORDER: &str = "SELECT o.order_id, o.amount, o.order_name, o.items, o.created_at_ms, \
     a.status, a.failure_code, a.failure_message, a.updated_at_ms AS attempt_updated_at_ms, a.refunded_amount, \
     (SELECT MIN(e.at_ms) FROM payment_events e WHERE e.order_id = o.order_id AND e.to_status = 'PAID') \
     AS paid_at_ms, \
     (SELECT r.failure_code FROM refunds r WHERE r.order_id = o.order_id AND r.status <> 'REQUESTED' \
      ORDER BY r.updated_at_ms DESC, r.refund_id DESC LIMIT 1) AS last_refund_refusal, \
     c.shop_name AS checkout_shop, c.request AS checkout_request \
     FROM orders o LEFT JOIN payment_attempts a ON a.order_id = o.order_id \
     LEFT JOIN checkouts c ON c.order_id = o.order_id";

#[derive(Debug, FromRow)]
struct OrderRow {
    order_id: String,
    amount: i64,
    order_name: String,
    items: String,
    created_at_ms: i64,
    status: Option<String>,
    failure_code: Option<String>,
    failure_message: Option<String>,
    attempt_updated_at_ms: Option<i64>,
    refunded_amount: Option<i64>,
    paid_at_ms: Option<i64>,
    /// The code of the order's last settled refund, if the PG refused it.
    last_refund_refusal: Option<String>,
    /// For a shop's checkout: the shop's names, and the request it was created with (JSON both).
    checkout_shop: Option<String>,
    checkout_request: Option<String>,
}

impl TryFrom<OrderRow> for Order {
    type Error = sqlx::Error;

    fn try_from(row: OrderRow) -> Result<Self, Self::Error> {
        let status = match row.status.as_deref() {
            None => OrderStatus::Created,
            Some(text) => OrderStatus::parse(text)
                .ok_or_else(|| sqlx::Error::Decode(format!("unknown payment status {text:?}").into()))?,
        };
        let failure = match (status, row.failure_code, row.failure_message) {
            (OrderStatus::Failed, Some(code), Some(message)) => Some(Failure { code, message }),
            _ => None,
        };
        // A refusal stays the order's news until a refund goes through or is asked for again.
        let refund_refusal = match (status, row.last_refund_refusal) {
            (OrderStatus::Paid | OrderStatus::PartiallyRefunded, Some(code)) => {
                Some(Failure { message: refund_refusal_message(&code), code })
            }
            _ => None,
        };
        let items: Vec<LineItem> =
            serde_json::from_str(&row.items).map_err(|error| sqlx::Error::Decode(Box::new(error)))?;
        let back = match (row.checkout_shop, row.checkout_request) {
            (Some(shop), Some(request)) => Some(back_to_shop(&shop, &request)?),
            _ => None,
        };
        Ok(Order {
            order_id: row.order_id,
            status,
            amount: u64::try_from(row.amount).map_err(|error| sqlx::Error::Decode(Box::new(error)))?,
            order_name: row.order_name,
            items,
            created_at: rfc3339(row.created_at_ms),
            updated_at: rfc3339(row.attempt_updated_at_ms.unwrap_or(row.created_at_ms)),
            failure,
            refunded_amount: u64::try_from(row.refunded_amount.unwrap_or(0))
                .map_err(|error| sqlx::Error::Decode(Box::new(error)))?,
            paid_at: row.paid_at_ms.map(rfc3339),
            refund_refusal,
            back,
        })
    }
}

/// The way back to the shop, from a checkout's stored names and request.
fn back_to_shop(shop: &str, request: &str) -> Result<BackToShop, sqlx::Error> {
    let decode = |error: serde_json::Error| sqlx::Error::Decode(Box::new(error));
    let shop: Names = serde_json::from_str(shop).map_err(decode)?;
    let request: CreateCheckoutRequest = serde_json::from_str(request).map_err(decode)?;
    Ok(BackToShop { shop, url: request.return_url })
}

impl Db {
    /// Stores a new order. On SQLite, with the other writes arriving meanwhile,
    /// in one transaction (see `group_commit`); returns once it is committed.
    pub async fn insert_order(&self, order: &NewOrder) -> Result<(), sqlx::Error> {
        let order = order.clone();
        self.write(Box::new(move |transaction| {
            let order = order.clone();
            Box::pin(async move { insert_order_row(transaction, &order).await })
        }))
        .await
    }
}

pub(super) async fn insert_order_row(connection: &mut AnyConnection, order: &NewOrder) -> Result<(), sqlx::Error> {
    let items = serde_json::to_string(&order.items).map_err(|error| sqlx::Error::Encode(Box::new(error)))?;
    sqlx::query(
        "INSERT INTO orders (order_id, customer_id, amount, order_name, items, created_at_ms) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&order.order_id)
    .bind(&order.customer_id)
    .bind(i64::try_from(order.amount).map_err(|error| sqlx::Error::Encode(Box::new(error)))?)
    .bind(&order.order_name)
    .bind(items)
    .bind(order.created_at_ms)
    .execute(&mut *connection)
    .await?;
    super::stock::insert_order_stock(connection, &order.order_id, &order.stock).await
}

impl Db {
    /// The order, if it belongs to this customer.
    pub async fn customer_order(&self, customer_id: &str, order_id: &str) -> Result<Option<Order>, sqlx::Error> {
        let query = format!("{SELECT_ORDER} WHERE o.order_id = $1 AND o.customer_id = $2");
        let row: Option<OrderRow> =
            sqlx::query_as(&query).bind(order_id).bind(customer_id).fetch_optional(&self.pool).await?;
        row.map(Order::try_from).transpose()
    }

    /// The order, whoever it belongs to. For the server's own bookkeeping only.
    pub async fn order(&self, order_id: &str) -> Result<Option<Order>, sqlx::Error> {
        let query = format!("{SELECT_ORDER} WHERE o.order_id = $1");
        let row: Option<OrderRow> = sqlx::query_as(&query).bind(order_id).fetch_optional(&self.pool).await?;
        row.map(Order::try_from).transpose()
    }

    /// Whose order it is.
    pub async fn customer_of(&self, order_id: &str) -> Result<Option<String>, sqlx::Error> {
        sqlx::query_scalar("SELECT customer_id FROM orders WHERE order_id = $1")
            .bind(order_id)
            .fetch_optional(&self.pool)
            .await
    }

    /// The customer's orders, newest first (order ids sort by creation time too).
    pub async fn customer_orders(&self, customer_id: &str, limit: u32) -> Result<Vec<Order>, sqlx::Error> {
        let query =
            format!("{SELECT_ORDER} WHERE o.customer_id = $1 ORDER BY o.created_at_ms DESC, o.order_id DESC LIMIT $2");
        let rows: Vec<OrderRow> =
            sqlx::query_as(&query).bind(customer_id).bind(i64::from(limit)).fetch_all(&self.pool).await?;
        rows.into_iter().map(Order::try_from).collect()
    }

    /// The customer's newest order that is being paid (however old), or was
    /// paid since `paid_since_ms`.
    pub async fn recent_payment(&self, customer_id: &str, paid_since_ms: i64) -> Result<Option<Order>, sqlx::Error> {
        let query = format!(
            "{SELECT_ORDER} WHERE o.customer_id = $1 AND (a.status IN ('PENDING', 'UNKNOWN') \
             OR (a.status = 'PAID' AND a.created_at_ms >= $2)) ORDER BY a.created_at_ms DESC LIMIT 1"
        );
        let row: Option<OrderRow> =
            sqlx::query_as(&query).bind(customer_id).bind(paid_since_ms).fetch_optional(&self.pool).await?;
        row.map(Order::try_from).transpose()
    }
}

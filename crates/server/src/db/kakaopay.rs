//! KakaoPay payments prepared for orders (`ready`), before the customer's
//! window: the order's tid and where its window is, one per order while it
//! lasts.

use sqlx::FromRow;

use super::Db;

/// A prepared KakaoPay payment.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct KakaoPayReady {
    pub order_id: String,
    pub tid: String,
    pub pc_url: String,
    pub mobile_url: String,
    pub ready_at_ms: i64,
}

impl Db {
    /// The payment prepared for `order_id`, if any.
    pub async fn kakaopay_ready(&self, order_id: &str) -> Result<Option<KakaoPayReady>, sqlx::Error> {
        sqlx::query_as("SELECT order_id, tid, pc_url, mobile_url, ready_at_ms FROM kakaopay_ready WHERE order_id = $1")
            .bind(order_id)
            .fetch_optional(&self.pool)
            .await
    }

    /// Stores a prepared payment for its order: the first, or one that
    /// replaces a payment prepared before `replaces_before_ms` (expired). Returns
    /// the order's prepared payment as it stands: this one, or one another
    /// request stored first and which has not expired.
    pub async fn store_kakaopay_ready(
        &self,
        ready: &KakaoPayReady,
        replaces_before_ms: i64,
    ) -> Result<KakaoPayReady, sqlx::Error> {
        sqlx::query(
            "INSERT INTO kakaopay_ready (order_id, tid, pc_url, mobile_url, ready_at_ms) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (order_id) DO UPDATE SET tid = excluded.tid, pc_url = excluded.pc_url, \
             mobile_url = excluded.mobile_url, ready_at_ms = excluded.ready_at_ms \
             WHERE kakaopay_ready.ready_at_ms < $6",
        )
        .bind(&ready.order_id)
        .bind(&ready.tid)
        .bind(&ready.pc_url)
        .bind(&ready.mobile_url)
        .bind(ready.ready_at_ms)
        .bind(replaces_before_ms)
        .execute(&self.writer)
        .await?;
        let stored = self.kakaopay_ready(&ready.order_id).await?;
        stored.ok_or_else(|| sqlx::Error::RowNotFound)
    }
}

//! KakaoPay payments prepared for orders (`ready`), before the customer's
//! window: each ready's tid and where its window is. The latest is the one
//! shown while it lasts; every one is kept, so that a customer who finishes in
//! an older window is approved with that window's tid.

use sqlx::FromRow;

use super::Db;

/// A prepared KakaoPay payment.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct KakaoPayReady {
    pub order_id: String,
    /// Named in the window's return URL (`ready=`); empty for readies stored
    /// before returns named theirs.
    pub ready_id: String,
    pub tid: String,
    pub pc_url: String,
    pub mobile_url: String,
    pub ready_at_ms: i64,
}

const COLUMNS: &str = "order_id, ready_id, tid, pc_url, mobile_url, ready_at_ms";

impl Db {
    /// The latest payment prepared for `order_id`, if any.
    pub async fn kakaopay_ready(&self, order_id: &str) -> Result<Option<KakaoPayReady>, sqlx::Error> {
        sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM kakaopay_readies WHERE order_id = $1 ORDER BY ready_at_ms DESC, ready_id LIMIT 1"
        ))
        .bind(order_id)
        .fetch_optional(&self.pool)
        .await
    }

    /// The payment prepared for `order_id` as `ready_id`, if any.
    pub async fn kakaopay_ready_named(
        &self,
        order_id: &str,
        ready_id: &str,
    ) -> Result<Option<KakaoPayReady>, sqlx::Error> {
        sqlx::query_as(&format!("SELECT {COLUMNS} FROM kakaopay_readies WHERE order_id = $1 AND ready_id = $2"))
            .bind(order_id)
            .bind(ready_id)
            .fetch_optional(&self.pool)
            .await
    }

    /// Stores a prepared payment for its order, unless another request
    /// stored one after `fresh_after_ms` meanwhile. Returns the order's latest
    /// prepared payment as it stands: this one, or that other. (Two requests
    /// that both store one leave two windows, each approved with its own tid.)
    pub async fn store_kakaopay_ready(
        &self,
        ready: &KakaoPayReady,
        fresh_after_ms: i64,
    ) -> Result<KakaoPayReady, sqlx::Error> {
        sqlx::query(&format!(
            "INSERT INTO kakaopay_readies ({COLUMNS}) SELECT $1, $2, $3, $4, $5, $6 \
             WHERE NOT EXISTS (SELECT 1 FROM kakaopay_readies WHERE order_id = $1 AND ready_at_ms > $7)"
        ))
        .bind(&ready.order_id)
        .bind(&ready.ready_id)
        .bind(&ready.tid)
        .bind(&ready.pc_url)
        .bind(&ready.mobile_url)
        .bind(ready.ready_at_ms)
        .bind(fresh_after_ms)
        .execute(&self.writer)
        .await?;
        let stored = self.kakaopay_ready(&ready.order_id).await?;
        stored.ok_or_else(|| sqlx::Error::RowNotFound)
    }
}

//! The PGs' places shared by the servers of a cluster: places under each
//! PG's limit as leased rows, and each PG's learned limit as one versioned row.
//! Every query names its PG: each has its own contract, so one PG's calls
//! never take a place under another's limit.
//! No transaction is held while a place is in use: a place is a lease with an
//! expiry its holder keeps renewing, so a killed holder's places come back.

use payonce_api::Pg;
use sqlx::FromRow;

use super::{Db, Engine};

/// A place taken under a PG's shared limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlaceClaim {
    /// The PG whose limit it is under.
    pub pg: Pg,
    /// Its number, 1 to the limit (`pg_slots.slot`).
    pub number: i64,
    pub call_id: String,
}

/// The learned limit as stored: see `pg::limit::learning` for the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, FromRow)]
pub struct LearnedLimitRow {
    /// Stored as `cap`: tables keep their names, so servers of two releases
    /// can share a database during an upgrade.
    #[sqlx(rename = "cap")]
    pub limit: i64,
    pub slow_start: i64,
    pub last_decrease_ms: Option<i64>,
    pub last_increase_ms: i64,
    pub version: i64,
}

/// How a place's lease is kept, in milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct PlaceTerms {
    /// How long a place outlives its holder's last renewal.
    pub lapse_ms: i64,
    /// The longest call its holder saw lately: a call out for less may still be at the PG.
    pub recent_longest_ms: i64,
    /// The longest a call can be out at all (our own timeouts).
    pub call_deadline_ms: i64,
}

/// Where the terms of a hold are in a query: columns or bind placeholders.
struct HoldBinds<'a> {
    taken_at: &'a str,
    now: &'a str,
    lapse: &'a str,
    recent: &'a str,
    deadline: &'a str,
}

impl Db {
    /// Makes sure `pg` has a place row for every number up to `limit`: the
    /// schema starts with the 1,000 a learned limit can reach, and a
    /// contract's fixed number may be higher. Servers starting together may
    /// both insert; a number already there is left as it is.
    pub async fn provide_places(&self, pg: Pg, limit: u32) -> Result<(), sqlx::Error> {
        // `WHERE true` tells SQLite's parser that ON CONFLICT is the upsert's, not the join's.
        sqlx::query(
            "WITH RECURSIVE numbers (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM numbers WHERE n < $1) \
             INSERT INTO pg_slots (pg, slot) SELECT $2, n FROM numbers WHERE true ON CONFLICT (pg, slot) DO NOTHING",
        )
        .bind(i64::from(limit))
        .bind(pg.as_str())
        .execute(&self.writer)
        .await?;
        Ok(())
    }

    /// Takes a free place of `pg`'s numbered at most `limit` (its stored learned
    /// limit when `None`), or `None` when all are taken. The place is held as if
    /// its call had already run, and is kept until renewals stop (see `renew_places`).
    pub async fn claim_place(
        &self,
        pg: Pg,
        holder: &str,
        call_id: &str,
        limit: Option<u32>,
        now_ms: i64,
        terms: PlaceTerms,
    ) -> Result<Option<i64>, sqlx::Error> {
        // PostgreSQL: servers claiming at once each skip the rows the others are
        // claiming, instead of queueing on the same first free one. SQLite has
        // one writer at a time and no row locks.
        let skip_locked = match self.engine {
            Engine::Postgres => " FOR UPDATE SKIP LOCKED",
            Engine::Sqlite => "",
        };
        let held_until =
            self.hold_until_sql(HoldBinds { taken_at: "$3", now: "$3", lapse: "$4", recent: "$5", deadline: "$6" });
        let query = format!(
            "UPDATE pg_slots SET holder = $1, call_id = $2, taken_at_ms = $3, held_until_ms = {held_until} \
             WHERE pg = $8 AND slot = (SELECT slot FROM pg_slots WHERE pg = $8 AND held_until_ms <= $3 \
             AND slot <= COALESCE($7, (SELECT cap FROM pg_limit WHERE pg = $8)) ORDER BY slot LIMIT 1{skip_locked}) \
             AND held_until_ms <= $3 RETURNING slot"
        );
        sqlx::query_scalar(&query)
            .bind(holder)
            .bind(call_id)
            .bind(now_ms)
            .bind(terms.lapse_ms)
            .bind(terms.recent_longest_ms)
            .bind(terms.call_deadline_ms)
            .bind(limit.map(i64::from))
            .bind(pg.as_str())
            .fetch_optional(&self.places_pool)
            .await
    }

    /// Renews every place `holder` still holds at `pg`: each is kept for the
    /// lapse, plus as long as its call may still be at the PG, which is at
    /// least as long again as it has run and at least the longest call seen
    /// lately at that PG, never past the call's own deadline. Returns how many
    /// it renewed. One PG at a time: the terms are that PG's (its calls' own
    /// latency), and each PG's limit renews only while it holds places.
    pub async fn renew_places(&self, pg: Pg, holder: &str, now_ms: i64, terms: PlaceTerms) -> Result<u64, sqlx::Error> {
        let held_until = self.hold_until_sql(HoldBinds {
            taken_at: "taken_at_ms",
            now: "$2",
            lapse: "$3",
            recent: "$4",
            deadline: "$5",
        });
        // A place that lapsed but was not taken over is renewed too: its call is still out.
        let query = format!(
            "UPDATE pg_slots SET held_until_ms = {held_until} WHERE holder = $1 AND pg = $6 AND call_id IS NOT NULL"
        );
        let renewed = sqlx::query(&query)
            .bind(holder)
            .bind(now_ms)
            .bind(terms.lapse_ms)
            .bind(terms.recent_longest_ms)
            .bind(terms.call_deadline_ms)
            .bind(pg.as_str())
            .execute(&self.places_pool)
            .await?;
        Ok(renewed.rows_affected())
    }

    /// When a place is held until, as of now (see `renew_places`), in SQL.
    fn hold_until_sql(&self, binds: HoldBinds<'_>) -> String {
        let HoldBinds { taken_at, now, lapse, recent, deadline } = binds;
        let ran = format!("({now} - {taken_at})");
        let may_still_run = self.greatest(&ran, &format!("({recent} - {ran})"));
        self.least(&format!("{taken_at} + {deadline} + {lapse}"), &format!("{now} + {lapse} + {may_still_run}"))
    }

    /// Frees a place, if it is still this call's (not taken over after a lapse).
    pub async fn release_place(&self, claim: &PlaceClaim) -> Result<(), sqlx::Error> {
        sqlx::query(
            "UPDATE pg_slots SET holder = NULL, call_id = NULL, held_until_ms = 0 \
             WHERE pg = $1 AND slot = $2 AND call_id = $3",
        )
        .bind(claim.pg.as_str())
        .bind(claim.number)
        .bind(&claim.call_id)
        .execute(&self.places_pool)
        .await?;
        Ok(())
    }

    /// Leaves a place taken until `until_ms` but no longer this server's: it
    /// is not renewed, and lapses then.
    pub async fn leave_place(&self, claim: &PlaceClaim, until_ms: i64) -> Result<(), sqlx::Error> {
        sqlx::query(
            "UPDATE pg_slots SET holder = NULL, held_until_ms = $1 WHERE pg = $2 AND slot = $3 AND call_id = $4",
        )
        .bind(until_ms)
        .bind(claim.pg.as_str())
        .bind(claim.number)
        .bind(&claim.call_id)
        .execute(&self.places_pool)
        .await?;
        Ok(())
    }

    /// How many of `pg`'s places are held now, by any server.
    pub async fn places_in_use(&self, pg: Pg, now_ms: i64) -> Result<i64, sqlx::Error> {
        sqlx::query_scalar("SELECT COUNT(*) FROM pg_slots WHERE pg = $1 AND held_until_ms > $2")
            .bind(pg.as_str())
            .bind(now_ms)
            .fetch_one(&self.places_pool)
            .await
    }

    /// `pg`'s learned limit as stored.
    pub async fn learned_limit_row(&self, pg: Pg) -> Result<LearnedLimitRow, sqlx::Error> {
        sqlx::query_as(
            "SELECT cap, slow_start, last_decrease_ms, last_increase_ms, version FROM pg_limit WHERE pg = $1",
        )
        .bind(pg.as_str())
        .fetch_one(&self.writer)
        .await
    }

    /// Stores `pg`'s changed learned limit unless another server changed it
    /// since `row` was read; says whether it did. The stored version moves on by one.
    pub async fn update_learned_limit_row(&self, pg: Pg, row: &LearnedLimitRow) -> Result<bool, sqlx::Error> {
        let result = sqlx::query(
            "UPDATE pg_limit SET cap = $1, slow_start = $2, last_decrease_ms = $3, last_increase_ms = $4, \
             version = version + 1 WHERE pg = $6 AND version = $5",
        )
        .bind(row.limit)
        .bind(row.slow_start)
        .bind(row.last_decrease_ms)
        .bind(row.last_increase_ms)
        .bind(row.version)
        .bind(pg.as_str())
        .execute(&self.writer)
        .await?;
        Ok(result.rows_affected() == 1)
    }

    /// The larger of two SQL expressions (the dialects name it differently).
    fn greatest(&self, a: &str, b: &str) -> String {
        match self.engine {
            Engine::Postgres => format!("GREATEST({a}, {b})"),
            Engine::Sqlite => format!("MAX({a}, {b})"),
        }
    }

    /// The smaller of two SQL expressions.
    fn least(&self, a: &str, b: &str) -> String {
        match self.engine {
            Engine::Postgres => format!("LEAST({a}, {b})"),
            Engine::Sqlite => format!("MIN({a}, {b})"),
        }
    }
}

//! Each PG's places under its limit, and its learned limit, are its own rows:
//! on SQLite by default, and on PostgreSQL in the test command's PostgreSQL
//! run (`PAYONCE_TEST_DATABASE_URL`), so both schemas' migrations are run.

use crate::support;

use std::borrow::Cow;

use payonce_api::Pg;
use payonce_server::db::{Db, DbLocation, Engine, LearnedLimitRow, PlaceClaim, PlaceTerms};
use support::Store;

const TERMS: PlaceTerms = PlaceTerms { lapse_ms: 60_000, recent_longest_ms: 0, call_deadline_ms: 60_000 };
const NOW_MS: i64 = 1_000;

async fn claim(db: &Db, pg: Pg, call_id: &str, limit: u32) -> Option<i64> {
    db.claim_place(pg, "a test", call_id, Some(limit), NOW_MS, TERMS).await.unwrap()
}

#[tokio::test]
async fn each_pg_has_places_and_a_learned_limit_of_its_own() {
    let store = Store::fresh().await;
    let db = Db::open(&store.db, 2).await.unwrap();
    for pg in Pg::ALL {
        // Start-up's statement for a contract above the schema's 1,000 places.
        db.provide_places(pg, 1_001).await.unwrap();
        let learned = db.learned_limit_row(pg).await.unwrap();
        assert_eq!((learned.limit, learned.slow_start, learned.version), (40, 1, 0), "{pg:?} starts at 40");
    }

    // Toss's limit of two, all taken, leaves KakaoPay's two free, numbered from 1.
    assert_eq!(claim(&db, Pg::Toss, "toss-1", 2).await, Some(1));
    assert_eq!(claim(&db, Pg::Toss, "toss-2", 2).await, Some(2));
    assert_eq!(claim(&db, Pg::Toss, "toss-3", 2).await, None);
    assert_eq!(claim(&db, Pg::KakaoPay, "kakaopay-1", 2).await, Some(1));
    assert_eq!(claim(&db, Pg::KakaoPay, "kakaopay-2", 2).await, Some(2));
    assert_eq!(claim(&db, Pg::KakaoPay, "kakaopay-3", 2).await, None);
    for pg in Pg::ALL {
        assert_eq!(db.places_in_use(pg, NOW_MS).await.unwrap(), 2, "{pg:?}");
    }

    // Freeing KakaoPay's place 1 frees no place of Toss's, though Toss has a place 1 too.
    let freed = PlaceClaim { pg: Pg::KakaoPay, number: 1, call_id: "kakaopay-1".into() };
    db.release_place(&freed).await.unwrap();
    assert_eq!(claim(&db, Pg::Toss, "toss-4", 2).await, None, "Toss's place 1 is still its call's");
    assert_eq!(claim(&db, Pg::KakaoPay, "kakaopay-4", 2).await, Some(1));
    // A place left to lapse is left at its own PG only.
    let left = PlaceClaim { pg: Pg::Toss, number: 2, call_id: "toss-2".into() };
    db.leave_place(&left, NOW_MS).await.unwrap();
    assert_eq!(db.places_in_use(Pg::Toss, NOW_MS).await.unwrap(), 1);
    assert_eq!(db.places_in_use(Pg::KakaoPay, NOW_MS).await.unwrap(), 2);
    assert_eq!(db.renew_places(Pg::KakaoPay, "a test", NOW_MS, TERMS).await.unwrap(), 2, "KakaoPay's own places");

    // KakaoPay learning leaves Toss's limit as it was.
    let kakaopay = db.learned_limit_row(Pg::KakaoPay).await.unwrap();
    let lowered = LearnedLimitRow { limit: 20, slow_start: 0, last_decrease_ms: Some(NOW_MS), ..kakaopay };
    assert!(db.update_learned_limit_row(Pg::KakaoPay, &lowered).await.unwrap());
    assert!(!db.update_learned_limit_row(Pg::KakaoPay, &lowered).await.unwrap(), "the version moved on");
    assert_eq!(db.learned_limit_row(Pg::KakaoPay).await.unwrap().limit, 20);
    assert_eq!(db.learned_limit_row(Pg::Toss).await.unwrap().limit, 40);
    // Toss's limit as learned is the one its claims go by: its two places are taken.
    assert_eq!(db.claim_place(Pg::Toss, "a test", "toss-5", None, NOW_MS, TERMS).await.unwrap(), Some(2));
}

/// A database from before places had a PG keeps what it held as Toss's, and
/// gains KakaoPay's places and learned limit.
#[tokio::test]
async fn places_and_a_learned_limit_from_before_stay_tosss() {
    let store = Store::fresh().await;
    let (all, first_of_this_change) = match store.db.engine() {
        Engine::Sqlite => (sqlx::migrate!("./migrations/sqlite"), 14),
        Engine::Postgres => (sqlx::migrate!("./migrations/postgres"), 12),
    };
    let mut before = all;
    let earlier = before.migrations.iter().filter(|m| m.version < first_of_this_change).cloned().collect();
    before.migrations = Cow::Owned(earlier);
    let pool = connect(&store.db).await;
    before.run(&pool).await.unwrap();
    sqlx::query("UPDATE pg_limit SET cap = 17, slow_start = 0, version = 3 WHERE id = 1").execute(&pool).await.unwrap();
    sqlx::query("UPDATE pg_slots SET holder = 'a test', call_id = 'old', held_until_ms = $1 WHERE slot = 1")
        .bind(NOW_MS + 60_000)
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;

    let db = Db::open(&store.db, 2).await.unwrap();
    let toss = db.learned_limit_row(Pg::Toss).await.unwrap();
    assert_eq!((toss.limit, toss.slow_start, toss.version), (17, 0, 3), "the limit learned before is Toss's");
    let kakaopay = db.learned_limit_row(Pg::KakaoPay).await.unwrap();
    assert_eq!((kakaopay.limit, kakaopay.slow_start, kakaopay.version), (40, 1, 0));
    assert_eq!(db.places_in_use(Pg::Toss, NOW_MS).await.unwrap(), 1, "the place held before is Toss's");
    assert_eq!(db.places_in_use(Pg::KakaoPay, NOW_MS).await.unwrap(), 0);
    assert_eq!(claim(&db, Pg::Toss, "toss-1", 1_000).await, Some(2));
    assert_eq!(claim(&db, Pg::KakaoPay, "kakaopay-1", 1_000).await, Some(1));

    // The 1,000 places a learned limit can reach, for each PG.
    let pool = connect(&store.db).await;
    for pg in Pg::ALL {
        let places: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pg_slots WHERE pg = $1 AND slot BETWEEN 1 AND 1000")
            .bind(pg.as_str())
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(places, 1_000, "{pg:?}");
    }
}

async fn connect(location: &DbLocation) -> sqlx::AnyPool {
    sqlx::any::install_default_drivers();
    sqlx::AnyPool::connect(location.url()).await.unwrap()
}

//! A short chaos campaign, as the test command runs it: 200 customers over
//! 30 s, half paying by card through Toss and half with KakaoPay (a PG without
//! idempotency keys), and, drawn apart, half ordering through payonce's cart
//! and half sent by a scripted shop whose backend creates their checkout
//! through the shop API (retried under one key while servers are killed);
//! every PG fault at once at both, five server kills, a freeze and an outage
//! of both PGs, at a tenth of real time. It needs the `payonce-server` and
//! `fake-pg` binaries beside this test's (`cargo test --workspace` builds them).

use clap::Parser;
use payonce_chaos::cli::Options;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_campaign_ends_with_every_order_agreeing_with_the_pg_ledger() {
    let options = Options::parse_from([
        "payonce-chaos",
        "--customers",
        "200",
        "--arrival",
        "5m",
        "--kills",
        "5",
        "--freezes",
        "1",
        "--pg-outage",
        "30s",
        "--time-scale",
        "0.1",
        "--quiet",
    ]);
    let report = payonce_chaos::run(&options).await.expect("the campaign runs");
    println!("{report}");

    assert!(!report.failed(), "the campaign found orders that disagree with the ledger:\n{report}");
    assert_eq!((report.chaos.kills, report.chaos.freezes, report.chaos.outages), (5, 1, 1), "all the chaos happened");
    assert!(report.orders >= 190, "most customers could order despite the kills: {}", report.orders);
    assert!(report.verdicts.recovered > 0, "some payments went through UNKNOWN and were recovered");
    assert!(report.pg.faults_injected > 0 && report.kakaopay.faults_injected > 0, "faults at both PGs");
    let by_pg = |pg: &str| report.customers_by_pg.get(pg).copied().unwrap_or(0);
    assert!(by_pg("toss") >= 60 && by_pg("kakaopay") >= 60, "both PGs had customers: {:?}", report.customers_by_pg);
    assert!(report.kakaopay.charges > 0, "KakaoPay charged some orders");
    let by_via = |via: &str| report.customers_by_via.get(via).copied().unwrap_or(0);
    assert!(by_via("cart") >= 60 && by_via("shop") >= 60, "both ways in had customers: {:?}", report.customers_by_via);
    let shop_orders = report.orders_by_via.get("shop").copied().unwrap_or(0);
    assert!(shop_orders >= by_via("shop") * 9 / 10, "most of the shop's customers could pay its checkout:\n{report}");
}

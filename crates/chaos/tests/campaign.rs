//! A short chaos campaign, as the test command runs it: 200 customers over
//! 30 s, half paying by card through Toss and half with KakaoPay (a PG without
//! idempotency keys), and, drawn apart, half ordering through payonce's cart
//! and half sent by a scripted shop whose backend creates their checkout
//! through the shop API (retried under one key while servers are killed);
//! every PG fault at once at both, five server kills, a freeze and an outage
//! of both PGs, at a tenth of real time. The shop's endpoint for events is
//! down for two minutes (12 s here), and for 30 s (3 s) each answers 500,
//! hangs past the servers' event timeout, resets the connection after reading
//! the event, and answers slowly; once payonce has nothing left to send, every
//! event the shop received is checked against its checkouts, the feed and
//! payonce's database. It needs the `payonce-server` and `fake-pg` binaries
//! beside this test's (`cargo test --workspace` builds them).

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
    let events = &report.events;
    // That every settled checkout's last event was taken is the verdict's; here, that there were some.
    assert!(events.events > 0 && events.deliveries >= events.events, "the shop was told:\n{report}");
    let windows: Vec<u32> = events.fault_windows.values().copied().collect();
    assert_eq!(windows, [1; 5], "every fault of the endpoint happened: {:?}", events.fault_windows);
    let sends_failed: u64 = events.sends.iter().filter(|(outcome, _)| *outcome != "HTTP 200").map(|(_, n)| n).sum();
    assert!(sends_failed > 0, "the endpoint's faults failed some sends, which went again: {:?}", events.sends);
    assert!(events.drained_ms.is_some(), "nothing left to send once the endpoint was back:\n{report}");
    // A window may meet no delivery (payonce rests a shop that failed), so
    // what each met is the report's; what always holds: each event reset
    // after the shop read it came again, and the shop kept it once.
    let resets = events.deliveries_by_answer.get("reset_after_reading").copied().unwrap_or(0);
    assert!(events.duplicates >= resets, "{resets} resets, {} duplicates:\n{report}", events.duplicates);
}

//! The brownout with the learned PG concurrency limit, at a quarter of real
//! time and a fifth of its size (630 customers, a contract of 12 confirms in
//! processing, approvals in 5 s), as the test command runs it. It fails if a
//! payment is left unknown, an order is charged twice, a charge has no PAID
//! order, or the learned limit never comes down when the PG refuses; what it
//! sold is printed, not asserted: these machines are noisy.
//! It needs the `payonce-server` and `fake-pg` binaries beside this test's.

use payonce_experiment::scenario::{self, Scale};
use payonce_experiment::{report, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_brownout_with_the_learned_limit_leaves_nothing_unknown_and_every_charge_paid() {
    let experiment = scenario::brownout();
    let learned =
        experiment.conditions.iter().find(|condition| condition.limit.is_none()).expect("a learned condition");
    let work_dir = tempfile::tempdir().unwrap();
    let bin_dir = payonce_chaos::processes::bin_dir(None);

    let figures = run::run(&experiment, learned, Scale { time: 0.25, size: 0.2 }, &bin_dir, work_dir.path())
        .await
        .expect("the run completes");
    print!("{}", report::table(std::slice::from_ref(&figures)));

    assert_eq!(figures.left_unsettled, 0, "every payment settled");
    assert_eq!(figures.double_charges, 0, "no order charged twice");
    assert_eq!(figures.ledger_mismatches, 0, "every charge has its PAID order and every PAID order its charge");
    assert!(figures.paid > 0, "it sold something");
    // The learned limit heard the PG's refusals and timeouts: it came down.
    assert!(figures.contract_limit_rejections > 0, "the PG refused confirms over its contract");
    let limits: Vec<f64> = figures.series.iter().map(|sample| sample.limit).filter(|&limit| limit > 0.0).collect();
    let came_down = limits.iter().enumerate().any(|(at, &limit)| limits[at..].iter().any(|&later| later < limit));
    assert!(came_down, "the learned limit came down after the PG refused confirms: {limits:?}");
}

//! The events benchmark at a fifth of real time and a tenth of its size (50
//! payments a second, 4 s healthy, a 4 s outage), as the test command runs it:
//! every payment is paid, and every event reaches the shop, the backlog once
//! its endpoint is back. The lag, the backlog's delivery and customers'
//! confirms are printed, not asserted: these machines are noisy;
//! docs/measured-events.md has the full-size figures. It needs the
//! `payonce-server` and `fake-pg` binaries beside this test's.

use payonce_experiment::events::{self, Settings};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_event_reaches_the_shop_and_a_backlog_is_delivered_once_it_is_back() {
    let work_dir = tempfile::tempdir().unwrap();
    let bin_dir = payonce_chaos::processes::bin_dir(None);
    let settings = Settings { time_scale: 0.2, size_scale: 0.1, ..Settings::DEFAULT };

    let figures = events::run(settings, &bin_dir, work_dir.path()).await.expect("the benchmark completes");
    print!("{}", events::table(&figures));

    assert_eq!(figures.not_paid, 0, "every payment paid");
    assert_eq!((figures.healthy_paid, figures.outage_paid), (200, 200));
    assert!(figures.backlog_drained_ms.is_some(), "every event delivered once the endpoint is back");
    assert!(figures.refused_sends >= 1, "the endpoint was down");
}

//! The webhook benchmark at a twentieth of real time (a 3 s read timeout, the
//! PG working on for 1.5 s more), as the test command runs it: both conditions
//! must settle every payment, and with webhooks (`--pg-webhooks`) every
//! payment's event must reach the server. How soon, and with how many lookups,
//! is printed, not asserted: these machines are noisy; docs/measured-webhooks.md
//! has the full-size figures. It needs the `payonce-server` and `fake-pg` binaries
//! beside this test's.

use payonce_experiment::webhooks::{self, Learning, Settings};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_payments_are_settled_by_lookups_alone_and_by_webhooks() {
    let work_dir = tempfile::tempdir().unwrap();
    let bin_dir = payonce_chaos::processes::bin_dir(None);
    let settings = Settings { time_scale: 0.05, ..Settings::DEFAULT };

    let figures = webhooks::run(settings, &bin_dir, work_dir.path()).await.expect("the benchmark completes");
    print!("{}", webhooks::table(&figures));

    for run in &figures {
        assert_eq!(run.settled, run.payments, "{:?}: every UNKNOWN payment settled PAID", run.learning);
    }
    let delivered = |learning| figures.iter().find(|run| run.learning == learning).unwrap().webhooks_delivered;
    assert_eq!(delivered(Learning::LookupsAlone), 0, "no webhooks without a webhook URL");
    assert!(delivered(Learning::Webhooks) >= settings.payments as u64, "an event for every payment");
}

//! The flash sale at a tenth of real time and a hundredth of its size (10 and
//! 200 customers, approvals in 4.5 s), as the test command runs it, with the
//! server's waiting places cut to 25 so that the larger run is far past them.
//! It fails if a check past the waiting places was refused (rather than
//! answered at once, as the page needs), or if the places never filled: both
//! as the server counts them (its checks that found no place are answered
//! with the order as it is, without waiting) and as the customers saw them.
//! Memory, CPU, latencies, the checks the customers saw answered well before
//! their wait, and overload answers (a 503 when the database's queue is too
//! long on a busy machine) are printed, not asserted: these machines are
//! noisy, a check's 200 ms wait at this time scale is shorter than a loaded
//! machine takes to answer anything, and a debug build on a loaded machine is
//! not the server the book measures. docs/measured-flash-sale.md has the
//! full-size figures.
//! It needs the `payonce-server` and `fake-pg` binaries beside this test's.

use std::time::Duration;

use payonce_experiment::flash_sale::{self, Settings};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_its_waiting_places_the_server_answers_checks_at_once_instead_of_refusing_them() {
    let work_dir = tempfile::tempdir().unwrap();
    let bin_dir = payonce_chaos::processes::bin_dir(None);
    let settings = Settings {
        customers: vec![1_000, 20_000],
        arrivals_per_second: 1_000.0,
        pg_latency: Duration::from_secs(45),
        pg_contract_limit: None,
        max_waiting_checks: 2_500,
        pg_http2: true,
        time_scale: 0.1,
        size_scale: 0.01,
        deployment: flash_sale::Deployment::OneServer,
    };

    let runs = flash_sale::run(&settings, &bin_dir, work_dir.path()).await.expect("the sale runs");
    print!("{}", flash_sale::report::table(&runs));

    for run in &runs {
        let told: usize = run.told.values().sum();
        assert_eq!(told, run.customers as usize, "{} customers: every visit ended", run.customers);
        // A refusal of a check (4xx) would be the server turning a customer away.
        let refused: Vec<_> = run.errors.iter().filter(|(kind, _)| kind.starts_with("check: 4")).collect();
        assert!(refused.is_empty(), "{} customers: a check refused: {refused:?}", run.customers);
    }
    let past = &runs[1];
    assert!(past.peak_checking > 25, "the 200 were checking together: {}", past.peak_checking);
    assert!(past.no_place.get("full").is_some_and(|&full| full > 0), "the 25 places filled: {:?}", past.no_place);
    assert!(past.pg_peak_in_flight > 25, "the PG had the confirms in processing together: {}", past.pg_peak_in_flight);
    assert_eq!(past.checks_by_server.len(), 1, "one server's checks counted");
    let versions: Vec<&String> = past.pg_http_versions.keys().collect();
    assert_eq!(versions, ["HTTP/2.0"], "every call at the PG shared HTTP/2");
}

//! The layer rules of ARCHITECTURE.md, checked on every test run: no import
//! circle in the order server, the rules, the fake PG or the model; in the order
//! server no module importing from a layer above its own; and the rules crate
//! without anything that does I/O.

use std::path::Path;

use payonce_layers::ImportGraph;

fn crate_sources(name: &str) -> ImportGraph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name).join("src");
    ImportGraph::of_crate(&src).unwrap_or_else(|error| panic!("cannot read {name}: {error:?}"))
}

/// The order server's layers, lowest first: a module may import from its own
/// layer (without a circle) and from the layers below it.
/// (The settlement rules, pure, sit below them all in a crate of their own.)
const SERVER_LAYERS: &[&[&str]] = &[
    // Foundations: storage, metrics, the accept loop and its connection caps,
    // who a request is from, the error type.
    &["metrics", "serve", "connections", "client_address", "db", "error"],
    // The PG's client, classification and concurrency; the operators, the
    // shops, the cart's products, and the flags that read them.
    &["pg"],
    &["operators", "shops", "catalog"],
    &["config"],
    // Breaker, retry budget, backoff, leases; the places of waiting checks.
    &["resilience", "waiting_places"],
    // The domain context: what the payment rules and orders work with.
    &["app"],
    &["customer"],
    // The domain: payments, refunds, recovery, reconciliation; orders; shops'
    // checkouts, and the events that tell shops of them.
    &["payment", "orders", "checkouts", "events"],
    // HTTP: the rate limits and the handlers' state, then the routes.
    &["rate_limits", "sign_in_failures", "state"],
    &["routes"],
];

#[test]
fn the_order_server_has_no_import_circle() {
    assert_eq!(crate_sources("server").circles(), Vec::<Vec<String>>::new());
}

#[test]
fn the_order_servers_layers_import_only_downward() {
    assert_eq!(crate_sources("server").upward_imports(SERVER_LAYERS), Vec::<String>::new());
}

#[test]
fn the_rules_have_no_import_circle() {
    assert_eq!(crate_sources("rules").circles(), Vec::<Vec<String>>::new());
}

/// The dependencies a crate's manifest names under `[dependencies]`.
fn dependencies_of(crate_dir: &str) -> Vec<String> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../{crate_dir}/Cargo.toml"));
    let manifest = std::fs::read_to_string(&manifest).expect("the crate's manifest");
    let section = manifest.split("[dependencies]").nth(1).expect("a [dependencies] section");
    let section = section.split("\n[").next().unwrap_or_default();
    section
        .lines()
        .filter_map(|line| line.split(['=', '.']).next().map(str::trim))
        .filter(|name| !name.is_empty() && !name.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// The rules stay without I/O because their crate cannot reach any: no
/// runtime, database, HTTP or file crate among its dependencies.
#[test]
fn the_rules_depend_on_nothing_that_does_io() {
    assert_eq!(dependencies_of("rules"), ["payonce-api", "rand", "serde", "tracing"], "the rules' dependencies");
}

/// The page's flow is run by the browser and by the harnesses alike, so it
/// can reach neither: no browser, runtime or HTTP crate among its dependencies.
#[test]
fn the_pages_flow_depends_on_nothing_that_does_io() {
    assert_eq!(dependencies_of("flow"), ["payonce-api", "serde", "serde_json"], "the flow's dependencies");
}

#[test]
fn the_fake_pg_has_no_import_circle() {
    assert_eq!(crate_sources("fake-pg").circles(), Vec::<Vec<String>>::new());
}

#[test]
fn the_model_has_no_import_circle() {
    assert_eq!(crate_sources("model").circles(), Vec::<Vec<String>>::new());
}

/// One writer for an order's status: no statement but `db/status.rs`'s sets it.
#[test]
fn only_the_one_writer_updates_an_orders_status() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/src");
    let mut writers = Vec::new();
    for entry in walkdir::WalkDir::new(&src) {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|extension| extension != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        // A statement may span lines: from each UPDATE to the end of its string
        // literal, and of that the SET clause.
        for (at, _) in text.match_indices("UPDATE payment_attempts SET") {
            let statement = &text[at..text[at..].find('"').map_or(text.len(), |end| at + end)];
            let set_clause = statement.split("WHERE").next().unwrap_or(statement);
            if set_clause.contains("SET status") || set_clause.contains(" status = ") {
                writers.push(entry.path().strip_prefix(&src).unwrap().display().to_string());
            }
        }
    }
    assert_eq!(writers, ["db/status.rs"]);
}

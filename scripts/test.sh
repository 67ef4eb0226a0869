#!/usr/bin/env bash
# Sets up what is missing, builds the book and checks its links, runs every
# Rust test (the order server's integration tests twice, at the same time: on
# SQLite, and on a throwaway PostgreSQL with the cluster tests), mutates the
# rules changed since their recorded mutation run, builds the page, runs the
# browser journeys, with clippy linting every build, and ends with one line:
# "N passed, N failed" over all suites.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$REPO_ROOT/scripts/postgres.sh"
cd "$REPO_ROOT"
# A run builds everything once: incremental caches would only add gigabytes.
export CARGO_INCREMENTAL=0

# Each phase's time, printed with the totals at the end.
phase_times=()
phase_name=""
phase_started=$SECONDS
phase() { # NAME: ends the phase under way (if any) and starts NAME (none: ends the last)
  if [ -n "$phase_name" ]; then
    phase_times+=("$(printf '%5d s  %s' $((SECONDS - phase_started)) "$phase_name")")
  fi
  phase_name="$1"
  phase_started=$SECONDS
  if [ -n "$1" ]; then say "$1"; fi
}

phase "setting up what is missing"
bash scripts/setup.sh || die "setup failed"
# Clippy lints the workspace's own crates as every build below compiles them
# (the compiler wrapper `cargo clippy` itself uses, here around a real build),
# the tests and the page's wasm included: the lints cost no second build, and
# a warning of rustc's or clippy's fails the run (one test, "clippy").
RUSTC_WORKSPACE_WRAPPER="$(rustup which clippy-driver)" || die "clippy is missing: rustup component add clippy"
export RUSTC_WORKSPACE_WRAPPER
# The Rust tests' runner; the demo has no need of it, so it is installed here.
if [ "$(cargo nextest --version 2>/dev/null | head -1 | awk '{print $2}')" != "$NEXTEST_VERSION" ]; then
  say "installing cargo-nextest $NEXTEST_VERSION (a few minutes, once)"
  cargo install --quiet cargo-nextest --version "$NEXTEST_VERSION" --locked || die "installing cargo-nextest failed"
fi
# What the dependencies may be (deny.toml); the demo has no need of it either.
if [ "$(cargo deny --version 2>/dev/null | awk '{print $2}')" != "$DENY_VERSION" ]; then
  say "installing cargo-deny $DENY_VERSION (a few minutes, once)"
  cargo install --quiet cargo-deny --version "$DENY_VERSION" --locked || die "installing cargo-deny failed"
fi

passed=0
failed=0
logs="$REPO_ROOT/target/test-logs"
mkdir -p "$logs"

# A check that counts as one test: its output goes to $logs/NAME.log and is
# shown only when it fails. Sets NAME_passed and NAME_failed, and the totals.
one_test() {
  local name="$1"
  shift
  if "$@" >"$logs/$name.log" 2>&1; then
    printf -v "${name}_passed" 1
    printf -v "${name}_failed" 0
  else
    cat "$logs/$name.log"
    printf -v "${name}_passed" 0
    printf -v "${name}_failed" 1
  fi
  passed=$((passed + ${name}_passed))
  failed=$((failed + ${name}_failed))
}

phase "the book (mdBook), with every internal link and anchor checked"
# One test: the book builds, and every link and #anchor in it is found.
one_test book bash scripts/book.sh

# Every Rust test runs under cargo-nextest: one build of the workspace serves
# both runs (the PostgreSQL run picks its tests by a filter, not by `-p`, which
# would resolve the crates' features anew and build everything again), each
# test runs in a process of its own, and the tests of all binaries run side by
# side instead of one binary after another.
# The page has no Rust tests (its words and decisions are payonce-screens', its
# flow payonce-flow's; the journeys drive the page itself): left out, nothing
# builds leptos for this machine. Every cargo command below selects the same
# crates, so that all resolve the same features and share one build.
workspace=(--workspace --exclude payonce-page)
rust_run() { # LOG PROFILE ARGS...: `cargo nextest run` over the workspace, logged to $logs/LOG
  local log="$logs/$1" profile="$2"
  shift 2
  cargo nextest run "${workspace[@]}" --profile "$profile" "$@" >"$log" 2>&1
}
tests_marked() { # STATUS LOG...: the tests the logs show as STATUS (PASS, SKIP, ...)
  cat "${@:2}" 2>/dev/null | sed -n "s/^ *$1 \[[^]]*\] *\(([^)]*) *\)\{0,1\}\(.*\)$/\2/p" | sort -u
}
rust_counts() { # LOG: "passed failed" of one run; a run that ended without a summary is one failure
  local log="$logs/$1" run passed
  read -r run passed < <(sed -n 's/^ *Summary \[.*\] *\([0-9]*\) tests\{0,1\} run: \([0-9]*\) passed.*/\1 \2/p' "$log" | tail -1)
  if [ -z "${run:-}" ]; then echo "0 1"; else echo "$passed $((run - passed))"; fi
}

# The dependencies' licenses, duplicate versions and sources, by deny.toml:
# one test. (Its advisories need RustSec's database, fetched from GitHub: run
# `cargo deny --workspace check advisories` where GitHub can be reached.)
phase "the dependencies: licenses, duplicate versions and sources (cargo-deny)"
# cargo-deny reads the dependencies of every platform (Windows' too), which no
# build here downloads: fetched first, so that a fresh machine has them all.
one_test deny bash -c 'cargo fetch --locked --quiet && cargo deny --offline --workspace check licenses bans sources'

phase "Rust: one build of every crate and its tests, and the doc tests"
rust_passed=0
rust_failed=0
# The journeys run the order server, the fake PG and the sample shop this
# build makes for the binaries' own integration tests, with the workspace's
# features: nothing is linked again while the Rust tests run them.
if cargo nextest run "${workspace[@]}" --no-run 2>&1 | tee "$logs/cargo-build.log"; then
  built=1
  # nextest does not run doc tests: cargo does, from the same build.
  cargo test "${workspace[@]}" --doc 2>&1 | tee "$logs/cargo-doc-tests.log"
  doc_status=${PIPESTATUS[0]}
  read -r rust_passed rust_failed < <(awk '/^test result:/ { p += $4; f += $6 } END { print p + 0, f + 0 }' "$logs/cargo-doc-tests.log")
  if [ "$doc_status" -ne 0 ] && [ "$rust_failed" -eq 0 ]; then rust_failed=1; fi # a doc test did not build
else
  rust_failed=1 # the tests did not build
  built=0
fi

# The page builds beside both Rust runs, at the lowest priority: on what
# their tests leave idle (they wait on real time, and their last ones on each
# other), and its link-time optimisation on one core beside them, rather than
# with a core idle after them. No test may depend on the machine being idle:
# the experiments print their timings and assert what the product did.
phase "Rust tests on SQLite, and at the same time on PostgreSQL: the order server's integration tests, the cluster tests and a cluster chaos campaign; the page builds beside them"
page_build=""
if [ "$built" -eq 1 ]; then
  nice -n 19 bash scripts/build.sh --page-only >"$logs/page-build.log" 2>&1 &
  page_build=$!
  rust_run sqlite.log sqlite &
  sqlite_run=$!
  # In a subshell, so that a server that cannot start counts as a failure instead of ending the run.
  (
    postgres_start tests "" fast || exit 1
    # Each test makes a database of its own on this server.
    PAYONCE_TEST_DATABASE_URL="$(postgres_url tests)" rust_run postgres.log postgres --run-ignored all \
      -E '(package(payonce-server) & kind(test)) | (package(payonce-chaos) & binary(cluster))'
    # A throwaway server: its data (over 2 GB after the campaign) goes with it.
    postgres_remove tests
  ) &
  postgres_run=$!
  wait "$sqlite_run"
  wait "$postgres_run"
  for run in sqlite postgres; do
    cat "$logs/$run.log"
    read -r run_passed run_failed < <(rust_counts "$run.log")
    say "Rust on $run: $run_passed passed, $run_failed failed"
    rust_passed=$((rust_passed + run_passed))
    rust_failed=$((rust_failed + run_failed))
  done
  # A Rust test that did not run is a failure, not a pass: every test the
  # SQLite run skips (it needs PostgreSQL) must have passed on PostgreSQL.
  not_run="$(comm -23 <(tests_marked SKIP "$logs/sqlite.log") <(tests_marked PASS "$logs/postgres.log"))"
  if [ -n "$not_run" ]; then
    say "Rust tests skipped on SQLite and not passed on PostgreSQL: $not_run"
    rust_failed=$((rust_failed + $(printf '%s' "$not_run" | grep -c .)))
  fi
fi
passed=$((passed + rust_passed))
failed=$((failed + rust_failed))

# A rule changed since its recorded mutation run is mutated again: each module
# whose mutants the tests all catch is one passed, each with a mutant missed
# one failed (a second or so a mutant; nothing runs when no rule changed).
phase "mutation testing of the rules changed since their recorded run"
bash scripts/mutants.sh --changed 2>&1 | tee "$logs/mutants.log"
read -r mutated_at_target mutated_below < <(
  sed -n 's/^mutated modules: \([0-9]*\) at target, \([0-9]*\) below$/\1 \2/p' "$logs/mutants.log" | tail -1
)
passed=$((passed + ${mutated_at_target:-0}))
failed=$((failed + ${mutated_below:-1}))

phase "the rest of the page's build, then the browser journeys (Playwright, Chromium), on the servers the Rust build made"
results="e2e/test-results/results.json"
rm -f "$results"
page_built=1
if [ -n "$page_build" ]; then
  wait "$page_build" || page_built=0
  cat "$logs/page-build.log"
fi
if [ "$built" -eq 1 ] && [ "$page_built" -eq 1 ]; then
  # A forgotten test.only would run that journey alone and look like a pass.
  (cd e2e && npx playwright test --forbid-only)
  e2e_status=$?
  if [ -f "$results" ]; then
    # A journey that did not run (skipped because one it depends on failed, or
    # marked to skip) is a failure of the run, not a pass nor nothing.
    read -r e2e_passed e2e_failed < <(node -e '
      const stats = require(process.argv[1]).stats;
      console.log(stats.expected + stats.flaky, stats.unexpected + stats.skipped);
    ' "$REPO_ROOT/$results")
  else
    e2e_passed=0 e2e_failed=1
  fi
  if [ "$e2e_status" -ne 0 ] && [ "$e2e_failed" -eq 0 ]; then e2e_failed=1; fi
else
  e2e_passed=0 e2e_failed=1
fi
passed=$((passed + e2e_passed))
failed=$((failed + e2e_failed))

# Clippy's verdict on every build above: each crate with warnings ends its
# output with "warning: `crate` (target) generated N warnings".
linted=$(cat "$logs/cargo-build.log" "$logs/page-build.log" 2>/dev/null |
  grep -E '^warning: `[^`]*` \([^)]*\) generated [0-9]+ warnings?' | sort -u)
if [ "$built" -eq 1 ] && [ -z "$linted" ]; then
  clippy_passed=1 clippy_failed=0
else
  [ -n "$linted" ] && say "clippy or rustc warned (the warnings are above, in the builds' output):" && printf '%s\n' "$linted"
  clippy_passed=0 clippy_failed=1
fi
passed=$((passed + clippy_passed))
failed=$((failed + clippy_failed))

phase ""
echo
say "each phase's time:"
printf '%s\n' "${phase_times[@]}"
say "book: $book_passed passed, $book_failed failed; dependencies: $deny_passed passed, $deny_failed failed; clippy: $clippy_passed passed, $clippy_failed failed; Rust: $rust_passed passed, $rust_failed failed; mutated rules: ${mutated_at_target:-0} at target, ${mutated_below:-1} below; browser: $e2e_passed passed, $e2e_failed failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

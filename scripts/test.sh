#!/usr/bin/env bash
# Sets up what is missing, builds the book and checks its links, runs every
# Rust test (the order server's integration tests twice: on SQLite, then on a
# throwaway PostgreSQL with the cluster tests), mutates the rules changed since
# their recorded mutation run, builds the page, runs the browser journeys, and
# ends with one line: "N passed, N failed" over all suites.
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

passed=0
failed=0
logs="$REPO_ROOT/target/test-logs"
mkdir -p "$logs"

phase "the book (mdBook), with every internal link and anchor checked"
# One test: the book builds, and every link and #anchor in it is found.
if bash scripts/book.sh >"$logs/book.log" 2>&1; then
  book_passed=1 book_failed=0
else
  cat "$logs/book.log"
  book_passed=0 book_failed=1
fi
passed=$((passed + book_passed))
failed=$((failed + book_failed))

# Runs `cargo test ARGS...`, logging to $logs/LOG, and adds its counts to the totals.
rust_suite() {
  local log="$logs/$1" status suite_passed suite_failed
  shift
  cargo test "$@" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  read -r suite_passed suite_failed < <(awk '/^test result:/ { p += $4; f += $6 } END { print p + 0, f + 0 }' "$log")
  if [ "$status" -ne 0 ] && [ "$suite_failed" -eq 0 ]; then
    suite_failed=1 # the tests did not build, a test binary crashed, or the suite could not start
  fi
  rust_passed=$((rust_passed + suite_passed))
  rust_failed=$((rust_failed + suite_failed))
}
rust_passed=0
rust_failed=0

phase "Rust tests (unit and integration, all crates, on SQLite)"
rust_suite cargo-test.log --workspace --no-fail-fast

phase "the order server's integration tests again, on PostgreSQL, with the cluster tests and a cluster chaos campaign"
# In a subshell, so that a server that cannot start counts as a failure instead of ending the run.
if (postgres_start tests "" fast); then
  # Each test makes a database of its own on this server.
  export PAYONCE_TEST_DATABASE_URL
  PAYONCE_TEST_DATABASE_URL="$(postgres_url tests)"
  rust_suite cargo-test-postgres.log -p payonce-server --no-fail-fast --test '*' -- --include-ignored
  # Three servers on one database, killed mid-payment, under every PG fault.
  rust_suite cargo-test-cluster-campaign.log -p payonce-chaos --test cluster -- --include-ignored
  unset PAYONCE_TEST_DATABASE_URL
  # A throwaway server: its data (over 2 GB after the campaign) goes with it.
  postgres_remove tests
else
  rust_failed=$((rust_failed + 1))
fi

# A Rust test that did not run is a failure, not a pass: none may be filtered
# out, and every test the SQLite run ignores (it needs PostgreSQL) must have
# passed in the PostgreSQL run.
tests_marked() { # STATE LOG...: the names of the tests a log shows as STATE
  cat "${@:2}" 2>/dev/null | sed -n "s/^test \(.*\) \.\.\. $1.*/\1/p" | sort -u
}
not_run="$(comm -23 <(tests_marked ignored "$logs/cargo-test.log") \
  <(tests_marked ok "$logs/cargo-test-postgres.log" "$logs/cargo-test-cluster-campaign.log"))"
filtered="$(awk '/^test result:/ { f += $12 } END { print f + 0 }' "$logs"/cargo-test*.log)"
if [ -n "$not_run" ] || [ "$filtered" -ne 0 ]; then
  say "Rust tests that did not run: $filtered filtered out; ignored and not passed on PostgreSQL: ${not_run:-none}"
  rust_failed=$((rust_failed + filtered + $(printf '%s' "$not_run" | grep -c .)))
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

phase "browser journeys (Playwright, Chromium)"
results="e2e/test-results/results.json"
rm -f "$results"
if bash scripts/build.sh; then
  # A stray test.only would run that journey alone and look like a pass.
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

phase ""
echo
say "each phase's time:"
printf '%s\n' "${phase_times[@]}"
say "book: $book_passed passed, $book_failed failed; Rust: $rust_passed passed, $rust_failed failed; mutated rules: ${mutated_at_target:-0} at target, ${mutated_below:-1} below; browser: $e2e_passed passed, $e2e_failed failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Sets up what is missing, runs every Rust test, builds the page, runs the
# browser journeys, and ends with one line: "N passed, N failed" over all suites.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

bash scripts/setup.sh || die "setup failed"

passed=0
failed=0
logs="$REPO_ROOT/target/test-logs"
mkdir -p "$logs"

say "Rust tests (unit and integration, all crates)"
cargo test --workspace --no-fail-fast 2>&1 | tee "$logs/cargo-test.log"
cargo_status=${PIPESTATUS[0]}
read -r rust_passed rust_failed < <(awk '/^test result:/ { p += $4; f += $6 } END { print p + 0, f + 0 }' "$logs/cargo-test.log")
if [ "$cargo_status" -ne 0 ] && [ "$rust_failed" -eq 0 ]; then
  rust_failed=1 # the tests did not build or a test binary crashed
fi
passed=$((passed + rust_passed))
failed=$((failed + rust_failed))

say "browser journeys (Playwright, Chromium)"
results="e2e/test-results/results.json"
rm -f "$results"
if bash scripts/build.sh; then
  (cd e2e && npx playwright test)
  e2e_status=$?
  if [ -f "$results" ]; then
    read -r e2e_passed e2e_failed < <(node -e '
      const stats = require(process.argv[1]).stats;
      console.log(stats.expected + stats.flaky, stats.unexpected);
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

echo
say "Rust: $rust_passed passed, $rust_failed failed; browser: $e2e_passed passed, $e2e_failed failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Mutation testing of the rules: cargo-mutants changes the code of the modules
# that carry the settlement rules, one change at a time, and runs the fast tests
# that cover them (the crate's unit tests); a change no test notices is missed.
# Prints, per module, the mutants caught, missed and unviable (they do not
# build) and the share caught of those that built.
#
#   scripts/mutants.sh                    every module
#   scripts/mutants.sh MODULE...          some: settlement toss-classify kakaopay-classify pg-learning resilience delivery pg-limit page-flow page-return shell-lease shell-resilience shell-db shell-refunds shell-gateway shell-by-hand shell-reconcile shell-refund shell-recovery shell-confirm
#   scripts/mutants.sh --changed          the rules' modules changed since their recorded run
#   scripts/mutants.sh --again MODULE...  only what a module's last run did not catch (its files as that run found them)
#
# A missed mutant is either killed by a new test or listed, with a one-line
# reason, in scripts/mutants-accepted.txt ("FILE: MUTANT  # reason", as the
# report prints it): listed ones are counted apart, not reported again.
#
# A module none of whose mutants is missed has its files' digests written to
# scripts/mutants-recorded/MODULE.txt. The test command runs `--changed`: the modules of
# payonce-rules and payonce-flow (a second or so a mutant) whose files differ
# from that record, so a rule changed without its tests fails the run; the
# server's limit (a large crate built per mutant: 15 minutes) is not mutated
# there, and changed since its record it counts as below target until
# `scripts/mutants.sh pg-limit` records it. Put the figures in docs/mutation-tests.md.
#
# `shell-by-hand` is the mutants cargo-mutants cannot make: a lease's guard in
# a statement's SQL made always true, a deadline left out, a check moved after
# the call it guards. Each is a patch in scripts/mutants-by-hand/ (its first
# line says what it breaks), applied in turn to a copy of the tree and run
# against the same integration tests; a patch that no longer applies or
# builds counts as missed, until it is made again.
#
# Its last line, "mutated modules: N at target, N below", is for the test command.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

# Each module: its crate, and the files that carry its rules. The rules live in
# payonce-rules and the page's flow in payonce-flow, crates without I/O, so a
# mutant there builds and is tested in seconds; the in-memory PG limit is the
# server's (a lock and a wake-up).
declare -A crate=(
  [settlement]=payonce-rules [toss-classify]=payonce-rules [kakaopay-classify]=payonce-rules [pg-learning]=payonce-rules
  [resilience]=payonce-rules [delivery]=payonce-rules [pg-limit]=payonce-server [page-flow]=payonce-flow [page-return]=payonce-flow
  [shell-lease]=payonce-server [shell-resilience]=payonce-server [shell-by-hand]=payonce-server
  [shell-db]=payonce-server [shell-refunds]=payonce-server [shell-gateway]=payonce-server
  [shell-reconcile]=payonce-server [shell-refund]=payonce-server [shell-recovery]=payonce-server
  [shell-confirm]=payonce-server
)
declare -A files=(
  [settlement]="crates/rules/src/settlement/*.rs"
  [toss-classify]="crates/rules/src/toss/classify/*.rs"
  [kakaopay-classify]="crates/rules/src/kakaopay/classify/*.rs crates/rules/src/kakaopay/reply.rs"
  [pg-learning]="crates/rules/src/learning.rs crates/rules/src/places.rs"
  [resilience]="crates/rules/src/breaker.rs crates/rules/src/retry_budget.rs crates/rules/src/backoff.rs"
  # When an event goes to its shop again, and when it is given up.
  [delivery]="crates/rules/src/delivery.rs"
  # The cluster's limit is its database's: its integration tests cover it, too slow here.
  [pg-limit]="crates/server/src/pg/limit/mod.rs"
  [page-flow]="crates/flow/src/lib.rs crates/flow/src/classify.rs"
  # Which credential the confirm carries, by the PG whose window sent the customer back.
  [page-return]="crates/flow/src/returned.rs"
  # The server's own arithmetic of a lease (how long a confirm holds its
  # attempt, and the deadlines an attempt's age is judged by), which only the
  # order server's tests against the fake PG reach.
  [shell-lease]="crates/server/src/resilience/lease.rs"
  # The server's breaker, retry budget and hinted lookups: the rules' phases
  # and sums (in payonce-rules, mutated apart) under a lock and a clock.
  [shell-resilience]="crates/server/src/resilience/breaker.rs crates/server/src/resilience/retry_budget.rs crates/server/src/resilience/hinted.rs"
  # The status writer and the job engine's leases: which statement runs, and
  # what its rows mean (the SQL itself is shell-by-hand's).
  [shell-db]="crates/server/src/db/status.rs crates/server/src/db/leases.rs"
  # The refunds' rows: what is stored of a refund and its answer, its balance,
  # and the key it is sent under (its lease guard is shell-by-hand's).
  [shell-refunds]="crates/server/src/db/refunds.rs"
  # Every call to a PG goes through here: its place under the PG's limit, what
  # the limit learns of each answer, and the calls recorded for the operators.
  [shell-gateway]="crates/server/src/pg/gateway.rs"
  # Reconciliation: which PG ledger is read over which day, what each
  # mismatch is called, and which orphan charge is refunded under which key.
  [shell-reconcile]="crates/server/src/payment/reconcile.rs"
  # A refund asked for (by the customer, an operator, or the shop), sent under
  # its key, and settled by recovery when its answer was lost.
  [shell-refund]="crates/server/src/payment/refund.rs crates/server/src/payment/refund_recovery.rs"
  # Recovery: which payments a pass takes, the lookup before any resend, the
  # job engine's passes and orphan charges' refunds.
  [shell-recovery]="crates/server/src/payment/recovery.rs crates/server/src/payment/pass.rs crates/server/src/payment/jobs.rs crates/server/src/payment/orphan_recovery.rs"
  # The confirm and what settles an order around it: the confirm task, a
  # verdict stored, an order closed unpaid, a PG's window prepared, a webhook
  # bringing a lookup forward, an operator's settlement.
  [shell-confirm]="crates/server/src/payment/confirm.rs crates/server/src/payment/settle.rs crates/server/src/payment/abandon.rs crates/server/src/payment/window.rs crates/server/src/payment/webhook.rs crates/server/src/payment/operator.rs"
  # The server's guards no cargo-mutants mutation reaches (in SQL, or an
  # order of calls), and the patches that break them.
  [shell-by-hand]="crates/server/src/db/status.rs crates/server/src/db/leases.rs crates/server/src/db/refunds.rs crates/server/src/resilience/lease.rs crates/server/src/payment/confirm.rs crates/server/src/payment/recovery.rs scripts/mutants-by-hand/*.patch"
)
# The tests a module's mutants run: the crate's unit tests, and, for the
# server's shell, its integration tests that pay, recover and refund (run by
# nextest, on SQLite), stopped at the first failure: a mutant that breaks
# recovery would otherwise wait out every test's own time limit.
declare -A tests=(
  [shell-lease]="--lib --test integration --max-fail=1:immediate -E kind(lib)|test(/^(settlement|stranded|kakaopay|refunds|payments|closing)::/)"
  [shell-resilience]="--lib --test integration --max-fail=1:immediate -E kind(lib)|test(/^(settlement|stranded|retry_budget|webhooks)::/)"
  [shell-by-hand]="--lib --test integration --max-fail=1:immediate -E kind(lib)|test(/^(settlement|stranded|kakaopay|refunds|payments|closing|reconciliation)::/)"
  [shell-db]="--lib --test integration --max-fail=1:immediate -E kind(lib)|test(/^(settlement|stranded|kakaopay|refunds|payments|closing|reconciliation|webhooks)::/)"
  [shell-refunds]="--lib --test integration --max-fail=1:immediate -E kind(lib)|test(/^(refunds|operators|reconciliation|kakaopay|closing|events)::/)"
  [shell-gateway]="--lib --test integration --max-fail=1:immediate -E kind(lib)|test(/^(pg_places|pg_calls|process|settlement|payments|kakaopay|refunds)::/)"
  [shell-reconcile]="--lib --test integration --max-fail=1:immediate -E kind(lib)|test(/^(reconciliation|operators)::/)"
  [shell-refund]="--lib --test integration --max-fail=1:immediate -E kind(lib)|test(/^(refunds|operators|kakaopay|closing|events|reconciliation)::/)"
  # With events (a payment open past the alert), interleavings (a payment key naming another
  # order's payment, looked up by the order) and the server killed mid-payment.
  [shell-recovery]="--lib --test integration --max-fail=1:immediate -E kind(lib)|test(/^(settlement|stranded|kakaopay|payments|retry_budget|webhooks|reconciliation|refunds|events|interleavings)::/)|test(=process::a_server_killed_mid_payment_settles_the_order_after_restart_with_one_charge)"
  # With the one test that kills a server mid-payment: a confirm's lease must end for another to settle it.
  [shell-confirm]="--lib --test integration --max-fail=1:immediate -E kind(lib)|test(/^(payments|settlement|stranded|kakaopay|closing|webhooks|operators|interleavings|stock|reconciliation)::/)|test(=process::a_server_killed_mid_payment_settles_the_order_after_restart_with_one_charge)"
)
# The integration tests wait on real time (a PG's latency, a lease), not on the
# CPU: four at once, as the test command's SQLite run has them beside its
# PostgreSQL run, take half the time of one per core.
nextest_threads=--test-threads=4
# Modules whose mutants are patches, not cargo-mutants'.
declare -A by_hand=([shell-by-hand]=scripts/mutants-by-hand)
all=(settlement toss-classify kakaopay-classify pg-learning resilience delivery pg-limit page-flow page-return shell-lease shell-resilience shell-db shell-refunds shell-gateway shell-by-hand shell-reconcile shell-refund shell-confirm shell-recovery)
# Modules run only by name until their first clean run records them (the test
# command counts a module of `all` without a record as below target).
named_only=()
# Each module's record: its files' digests when a run of it last caught every
# mutant. Per module, as modules share files (the leases' code is both
# shell-db's and shell-by-hand's): one module's run records nothing of another's.
recorded="$REPO_ROOT/scripts/mutants-recorded"

# The digests of a module's files, one "DIGEST  FILE" line each.
digests() { sha256sum ${files[$1]} | sort -k2; }
# Whether a module's files are as its last clean run left them.
as_recorded() { diff -q <(digests "$1") "$recorded/$1.txt" >/dev/null 2>&1; }

# Modules changed since their recorded run that this run leaves to a run of
# their own (the server's: minutes a mutant). Each counts as below target: a
# change nobody mutated again must not pass for one that was.
not_rerun=()
# --again: a module's last run stands for the mutants it caught or found
# unviable, and only the rest are tested again (cargo-mutants' --iterate), with
# the tests as they are now: a test added since can only catch more. Its files
# must be as that run found them, or a mutant caught then is not this one.
again=false
if [ "${1:-}" = "--again" ]; then
  again=true
  shift
  [ "$#" -gt 0 ] || die "--again needs the modules to test again"
fi
if [ "${1:-}" = "--changed" ]; then
  modules=()
  for module in "${all[@]}"; do
    as_recorded "$module" && continue
    if [ "${crate[$module]}" != payonce-server ]; then
      modules+=("$module")
    else
      not_rerun+=("$module")
      echo "$module changed since its recorded run and is not mutated here: run scripts/mutants.sh $module (minutes: a large crate built per mutant)"
    fi
  done
  if [ "${#modules[@]}" -eq 0 ]; then
    say "no rule of payonce-rules or payonce-flow changed since its recorded mutation run (scripts/mutants-recorded/)"
    echo "mutated modules: 0 at target, ${#not_rerun[@]} below"
    [ "${#not_rerun[@]}" -eq 0 ]
    exit
  fi
  say "mutating the rules changed since their recorded run: ${modules[*]}"
else
  modules=("${@:-${all[@]}}")
fi
for module in "${modules[@]}"; do
  [ -n "${crate[$module]:-}" ] || die "no module $module; the modules are: ${all[*]} ${named_only[*]}"
done

# The files as they are mutated now: what a clean run records (an edit during
# the run is not what was tested).
snapshot="$(mktemp -d)"
trap 'rm -rf "$snapshot"' EXIT
for module in "${modules[@]}"; do digests "$module" >"$snapshot/$module"; done

if ! command -v cargo-mutants >/dev/null; then
  say "installing cargo-mutants"
  cargo install --locked cargo-mutants || die "could not install cargo-mutants"
fi

accepted="$REPO_ROOT/scripts/mutants-accepted.txt"
out="$REPO_ROOT/target/mutants"
mkdir -p "$out"

# Which run a module's mutants go in: its crate's (the crate's unit tests), or,
# with tests of its own, a run of its own.
run_of() { if [ -n "${tests[$1]:-}" ]; then echo "$1"; else echo "${crate[$1]}"; fi; }

# A run of a module's patches, written as cargo-mutants writes its results
# (caught.txt, missed.txt, timeout.txt, unviable.txt; a line "FILE:0:0: PATCH
# (what it breaks)" each) so the report below reads both alike. Each patch is
# applied to a copy of the tree (its own target directory: the first build
# takes minutes, each patch's seconds) and the tests run by nextest: a test
# failing catches it (exit 100).
hand_run() {
  local module="$1" results="$out/$1/mutants.out" tree="$out/$1/tree"
  mkdir -p "$results" "$tree"
  # The tree as it is now (tracked and new files, not ignored ones), over the
  # last copy's, whose target directory is kept.
  find "$tree" -mindepth 1 -maxdepth 1 ! -name target -exec rm -rf {} +
  git ls-files -z --cached --others --exclude-standard | tar -c --null -T - | tar -x -C "$tree"
  read -r -a words <<<"${tests[$module]} $nextest_threads"
  run_tests() { (cd "$tree" && CARGO_TARGET_DIR="$tree/target" timeout "$1" cargo nextest run -p "${crate[$module]}" "${words[@]}"); }
  # git apply in the copy, which is no repository: the ceiling keeps git from
  # finding this one's above it (and applying the patch to its files instead).
  in_tree() { local patch="${*: -1}"; (cd "$tree" && GIT_CEILING_DIRECTORIES="$(dirname "$tree")" git apply "${@:1:$#-1}" "$REPO_ROOT/$patch"); }
  # The build takes the tests' words but how a run goes (stops, threads), which nextest refuses with --no-run.
  local build_words=()
  for word in "${words[@]}"; do [[ "$word" == --max-fail* || "$word" == --test-threads* ]] || build_words+=("$word"); done
  (cd "$tree" && CARGO_TARGET_DIR="$tree/target" cargo nextest run -p "${crate[$module]}" "${build_words[@]}" --no-run) \
    || { echo "the unmutated tree does not build"; return 1; }
  local started=$SECONDS
  run_tests 3600 || { echo "the unmutated tests fail"; return 1; }
  # A patch's tests may take three times the unmutated run's before they count as hung.
  local limit=$(((SECONDS - started) * 3 + 60))
  : >"$results/caught.txt"; : >"$results/missed.txt"; : >"$results/timeout.txt"; : >"$results/unviable.txt"
  for patch in "${by_hand[$module]}"/*.patch; do
    local name file line
    name="$(basename "$patch" .patch)"
    file="$(sed -n 's|^+++ b/||p' "$patch" | head -1)"
    line="$file:0:0: $name ($(head -1 "$patch"))"
    # A patch that no longer applies or builds breaks nothing: missed until it is made again.
    if ! in_tree --check "$patch" 2>/dev/null; then
      echo "$line, no longer applies" >>"$results/missed.txt"
      echo "  $name: no longer applies: make it again"
      continue
    fi
    in_tree "$patch"
    run_tests "$limit" >"$out/$module/$name.log" 2>&1
    local exit_status=$?
    in_tree -R "$patch"
    case "$exit_status" in
      0) echo "$line" >>"$results/missed.txt"; echo "  $name: missed" ;;
      100) echo "$line" >>"$results/caught.txt"; echo "  $name: caught" ;;
      101) echo "$line, does not build" >>"$results/missed.txt"; echo "  $name: does not build: make it again" ;;
      124) echo "$line" >>"$results/timeout.txt"; echo "  $name: hung" ;;
      *) echo "  $name: the tests ended with exit status $exit_status (see $out/$module/$name.log)"; return 1 ;;
    esac
  done
}

# One run per crate (each builds a copy of the tree once), over its modules' files.
for run in $(for module in "${modules[@]}"; do run_of "$module"; done | sort -u); do
  args=()
  test_args=(--cargo-test-arg=--lib)
  for module in "${modules[@]}"; do
    [ "$(run_of "$module")" = "$run" ] || continue
    package="${crate[$module]}"
    for pattern in ${files[$module]}; do args+=(--file "$pattern"); done
    if [ -n "${tests[$module]:-}" ]; then
      test_args=(--test-tool nextest)
      read -r -a words <<<"${tests[$module]} $nextest_threads"
      for word in "${words[@]}"; do test_args+=("--cargo-test-arg=$word"); done
    fi
  done
  iterate=()
  if $again; then
    [ -z "${by_hand[$run]:-}" ] || die "$run: --again is for cargo-mutants' modules; run it whole"
    for module in "${modules[@]}"; do
      [ "$(run_of "$module")" = "$run" ] || continue
      diff -q "$snapshot/$module" "$out/$run/files-$module.txt" >/dev/null 2>&1 \
        || die "$module changed since its last run, or has none: run scripts/mutants.sh $module"
    done
    [ -d "$out/$run/mutants.out" ] || die "$run has no results to go on from: run it whole"
    # cargo-mutants carries what the earlier runs caught and what they found
    # unviable in one list (previously_caught.txt): which were unviable is kept apart.
    cat "$out/$run/mutants.out/unviable.txt" "$out/$run/unviable-earlier.txt" 2>/dev/null \
      | sort -u >"$out/$run/unviable-earlier.new"
    mv "$out/$run/unviable-earlier.new" "$out/$run/unviable-earlier.txt"
    iterate=(--iterate)
  else
    # An earlier run's results must never stand for this one's.
    rm -rf "$out/$run/mutants.out" "$out/$run/mutants.out.old" "$out/$run/unviable-earlier.txt"
  fi
  # The files this run mutates, for a run --again after it.
  mkdir -p "$out/$run"
  for module in "${modules[@]}"; do
    [ "$(run_of "$module")" != "$run" ] || cp "$snapshot/$module" "$out/$run/files-$module.txt"
  done
  if [ -n "${by_hand[$run]:-}" ]; then
    say "mutating $package by hand (${by_hand[$run]}/*.patch)"
    hand_run "$run" || { echo "$run: no results"; rm -rf "$out/$run/mutants.out"; }
    continue
  fi
  say "mutating $package (${args[*]})"
  cargo mutants --package "$package" "${args[@]}" --output "$out/$run" "${iterate[@]}" \
    "${test_args[@]}" >"$out/$run.log" 2>&1
  exit_status=$?
  # 0: every mutant caught; 2: some missed; 3: some made the tests hang (the
  # report below counts each). Anything else (the unmutated tests failing, a
  # usage or internal error) means the run did not finish: it has no results.
  case "$exit_status" in
    0 | 2 | 3) ;;
    *)
      echo "cargo mutants ($run) ended with exit status $exit_status: no results (see $out/$run.log)"
      rm -rf "$out/$run/mutants.out"
      ;;
  esac
done

# A mutant's name without its line and column, which move with every edit.
names() { sed -E 's/^([^:]+):[0-9]+:[0-9]+: /\1: /' "$@" 2>/dev/null; }

printf '\n%-12s %7s %7s %9s %9s %9s\n' module caught missed accepted unviable caught%
status=0
at_target=0
below=${#not_rerun[@]}
[ "$below" -eq 0 ] || status=1
for module in "${modules[@]}"; do
  dir="$out/$(run_of "$module")/mutants.out"
  if [ ! -d "$dir" ]; then
    echo "$module: no results in $dir (see $out/$(run_of "$module").log)"
    status=1 below=$((below + 1))
    continue
  fi
  # The module's files, as a pattern over the report's paths.
  pattern="^($(echo "${files[$module]}" | sed -E 's/\./\\./g; s/\*/[^\/]*/g; s/ +/|/g')):"
  # With --again, what the earlier runs caught is in previously_caught.txt,
  # beside what they found unviable (unviable-earlier.txt).
  earlier_unviable="$out/$(run_of "$module")/unviable-earlier.txt"
  caught=$({
    names "$dir/caught.txt"
    names "$dir/previously_caught.txt" | grep -vxFf <(names "$earlier_unviable")
  } | grep -cE "$pattern")
  unviable=$(names "$dir/unviable.txt" "$earlier_unviable" | sort -u | grep -cE "$pattern")
  # A mutant that makes the tests hang past cargo-mutants' timeout is not
  # caught: no test said it was wrong. It is missed, unless accepted.
  missed_all=$(names "$dir/missed.txt" "$dir/timeout.txt" | grep -E "$pattern" | sort)
  listed=$(grep -v '^#' "$accepted" 2>/dev/null | sed -E 's/ +#.*$//' | grep -v '^$' | sort || true)
  # Each accepted line accepts one mutant: two identical mutants in one
  # function (their names differ only by line) need two lines.
  not_accepted=$(comm -23 <(grep . <<<"$missed_all") <(grep . <<<"$listed"))
  missed=$(grep -c . <<<"$not_accepted" || true)
  accepted_count=$(comm -12 <(grep . <<<"$missed_all") <(grep . <<<"$listed") | grep -c . || true)
  tested=$((caught + missed + accepted_count))
  share=$(awk -v c="$caught" -v t="$tested" 'BEGIN { printf "%.1f", t ? 100 * c / t : 0 }')
  printf '%-12s %7d %7d %9d %9d %8s%%\n' "$module" "$caught" "$missed" "$accepted_count" "$unviable" "$share"
  if [ "$missed" -gt 0 ] || [ "$tested" -eq 0 ]; then
    [ -z "$not_accepted" ] || sed 's/^/    missed: /' <<<"$not_accepted"
    status=1 below=$((below + 1))
  else
    # Clean: this is the module's recorded run now.
    at_target=$((at_target + 1))
    mkdir -p "$recorded"
    cp "$snapshot/$module" "$recorded/$module.txt"
  fi
done
echo "mutated modules: $at_target at target, $below below"
exit "$status"

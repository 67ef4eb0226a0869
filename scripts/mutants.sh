#!/usr/bin/env bash
# Mutation testing of the rules: cargo-mutants changes the code of the modules
# that carry the settlement rules, one change at a time, and runs the fast tests
# that cover them (the crate's unit tests); a change no test notices is missed.
# Prints, per module, the mutants caught, missed and unviable (they do not
# build) and the share caught of those that built.
#
#   scripts/mutants.sh                    every module
#   scripts/mutants.sh MODULE...          some: settlement pg-classify pg-limit resilience page-flow
#
# A missed mutant is either killed by a new test or listed, with a one-line
# reason, in scripts/mutants-accepted.txt ("FILE: MUTANT  # reason", as the
# report prints it): listed ones are counted apart, not reported again.
#
# Not part of the test command: every mutant is a build and a test run, about a
# minute each on 2 cores, several hundred in all. Run it after changing a rule,
# and put its figures in the README's "What the mutation tests show".
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

# Each module: its crate, and the files that carry its rules.
declare -A crate=(
  [settlement]=payonce-server [pg-classify]=payonce-server [pg-limit]=payonce-server
  [resilience]=payonce-server [page-flow]=payonce-page
)
declare -A files=(
  [settlement]="crates/server/src/settlement/*.rs"
  [pg-classify]="crates/server/src/pg/classify/*.rs"
  # The cluster's limit is its database's: its integration tests cover it, too slow here.
  [pg-limit]="crates/server/src/pg/limit/learning.rs crates/server/src/pg/limit/mod.rs"
  [resilience]="crates/server/src/resilience/*.rs"
  [page-flow]="src/flow/*.rs"
)
all=(settlement pg-classify pg-limit resilience page-flow)
modules=("${@:-${all[@]}}")
for module in "${modules[@]}"; do
  [ -n "${crate[$module]:-}" ] || die "no module $module; the modules are: ${all[*]}"
done

if ! command -v cargo-mutants >/dev/null; then
  say "installing cargo-mutants"
  cargo install --locked cargo-mutants || die "could not install cargo-mutants"
fi

accepted="$REPO_ROOT/scripts/mutants-accepted.txt"
out="$REPO_ROOT/target/mutants"
mkdir -p "$out"

# One run per crate (each builds a copy of the tree once), over its modules' files.
for package in $(for module in "${modules[@]}"; do echo "${crate[$module]}"; done | sort -u); do
  args=()
  for module in "${modules[@]}"; do
    [ "${crate[$module]}" = "$package" ] || continue
    for pattern in ${files[$module]}; do args+=(--file "$pattern"); done
  done
  say "mutating $package (${args[*]})"
  cargo mutants --package "$package" "${args[@]}" --output "$out/$package" \
    --cargo-test-arg=--lib >"$out/$package.log" 2>&1
  # cargo-mutants exits non-zero when a mutant is missed: the report below says which.
  # A mutant that makes the tests hang past cargo-mutants' timeout (a multiple of the
  # unmutated run's time) is counted as caught: the tests did not pass.
done

# A mutant's name without its line and column, which move with every edit.
names() { sed -E 's/^([^:]+):[0-9]+:[0-9]+: /\1: /' "$@" 2>/dev/null; }

printf '\n%-12s %7s %7s %9s %9s %9s\n' module caught missed accepted unviable caught%
status=0
for module in "${modules[@]}"; do
  dir="$out/${crate[$module]}/mutants.out"
  [ -d "$dir" ] || { echo "$module: no results in $dir (see $out/${crate[$module]}.log)"; status=1; continue; }
  # The module's files, as a pattern over the report's paths.
  pattern="^($(echo "${files[$module]}" | sed -E 's/\./\\./g; s/\*/[^\/]*/g; s/ +/|/g')):"
  caught=$(names "$dir/caught.txt" "$dir/timeout.txt" | grep -cE "$pattern")
  unviable=$(names "$dir/unviable.txt" | grep -cE "$pattern")
  missed_all=$(names "$dir/missed.txt" | grep -E "$pattern")
  listed=$(grep -v '^#' "$accepted" 2>/dev/null | sed -E 's/ +#.*$//' | grep -v '^$' || true)
  missed=$(grep -vxF -f <(printf '%s\n' "$listed") <<<"$missed_all" | grep -c . || true)
  accepted_count=$(grep -xF -f <(printf '%s\n' "$listed") <<<"$missed_all" | grep -c . || true)
  tested=$((caught + missed + accepted_count))
  share=$(awk -v c="$caught" -v t="$tested" 'BEGIN { printf "%.1f", t ? 100 * c / t : 0 }')
  printf '%-12s %7d %7d %9d %9d %8s%%\n' "$module" "$caught" "$missed" "$accepted_count" "$unviable" "$share"
  if [ "$missed" -gt 0 ]; then
    grep -vxF -f <(printf '%s\n' "$listed") <<<"$missed_all" | sed 's/^/    missed: /'
    status=1
  fi
done
exit "$status"

#!/usr/bin/env bash
# The model checker's deeper runs: every interleaving of the settlement
# protocol (crates/model) within bounds larger than the test command's, each
# printing the states it explored, their depth and the time it took, and every
# property's result. docs/model-checker.md lists them.
#
#   scripts/model.sh                  the deeper runs, one after another
#   scripts/model.sh --explore        Stateright's explorer at http://localhost:3000,
#                                     to step through the model in a browser
#   scripts/model.sh ARGS...          one run of payonce-model ARGS (see --help),
#                                     e.g. --old-rule no-age-rule to see a counterexample
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

cargo build --quiet -p payonce-model
model="$REPO_ROOT/target/debug/payonce-model"

if [ "$#" -gt 0 ]; then
  if [ "$1" = "--explore" ]; then
    shift
    exec "$model" --explore localhost:3000 "$@"
  fi
  exec "$model" "$@"
fi

status=0
# Each bound at Toss's PG, and at KakaoPay's (no idempotency keys, its own tables).
for pg in "" "--without-idempotency-keys"; do
  for bounds in "--faults 2 --workers 1" "--faults 1 --workers 2" "--faults 1 --workers 1 --tabs 2" \
    "--faults 2 --workers 2 --no-refunds" "--faults 2 --workers 1 --outage" "--faults 1 --workers 2 --outage"; do
    say "payonce-model $bounds $pg"
    # shellcheck disable=SC2086 # the bounds are words on purpose
    "$model" $bounds $pg || status=1
  done
done
exit "$status"

#!/usr/bin/env bash
# Experiment: a burst of customers confirming at once against a slow PG that
# has a contract limit, once with the server's PG concurrency limit under the
# limit and once over it. Prints what customers got and what the PG saw.
# Usage: scripts/experiment-burst.sh [customers=120] [pg latency=3s] [contract limit=50] [pg read timeout=60s]
# A read timeout under the PG latency makes every confirm end unknown, the
# brownout in which recovery's retry budget matters: its calls are printed too.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

customers="${1:-120}" latency="${2:-3s}" contract="${3:-50}" read_timeout="${4:-60s}"
bash scripts/setup.sh >/dev/null
cargo build --quiet --profile server -p payonce-server -p fake-pg
work="$(mktemp -d)"
pids=()
stop_all() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; pids=(); }
trap 'stop_all; rm -rf "$work"' EXIT

for limit in $((contract * 4 / 5)) $((contract * 8 / 5)); do
  say "--pg-limit $limit; PG latency $latency, contract limit $contract"
  target/server/fake-pg --listen 127.0.0.1:0 --latency "$latency" --contract-limit "$contract" >"$work/pg-$limit.out" 2>/dev/null &
  pids+=("$!")
  pg_url=$(url_in "$work/pg-$limit.out")
  # One address sends every customer's requests here: no per-address limit.
  target/server/payonce-server --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 --db "$work/burst-$limit.db" \
    --pg-url "$pg_url" --pg-limit "$limit" --pg-read-timeout "$read_timeout" \
    --max-checks 100 --rate-limit-address 0 --rate-limit-address-reads 0 --rate-limit-new-customers 0 --max-waiting-checks-per-client 1000000 --max-connections 1000000 --max-connections-per-client 1000000 >"$work/server-$limit.out" 2>/dev/null &
  pids+=("$!")
  shop_url=$(url_in "$work/server-$limit.out")
  admin_url=$(url_in "$work/server-$limit.out" 2)
  (cd e2e && node bench/confirm-burst.mjs "$shop_url" "$pg_url" "$customers" "$admin_url")
  stop_all
done

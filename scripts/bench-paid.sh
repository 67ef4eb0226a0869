#!/usr/bin/env bash
# Prints how soon the page shows "paid" after the PG completes a payment in the
# 40-second demo flow, with checks that wait for the order to change and with
# polling only, side by side (median of 5 runs each, run at the same time).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

bash scripts/build.sh >/dev/null
work="$(mktemp -d)"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$work"' EXIT

target/debug/fake-pg --listen 127.0.0.1:0 --latency 40s >"$work/pg.out" 2>/dev/null &
pids+=("$!")
pg_url=$(url_in "$work/pg.out")
# Two shops on one PG: checks that wait for a change, and polling only.
for shop in waiting polling; do
  flags=()
  [ "$shop" = polling ] && flags=(--max-waiting-checks 0)
  target/debug/payonce-server --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 --db "$work/$shop.db" \
    --static-dir dist --pg-url "$pg_url" --rate-limit-address 0 --rate-limit-address-reads 0 --rate-limit-new-customers 0 --max-waiting-checks-per-client 1000000 --max-connections 1000000 --max-connections-per-client 1000000 "${flags[@]}" >"$work/$shop.out" 2>/dev/null &
  pids+=("$!")
done
waiting_url=$(url_in "$work/waiting.out")
polling_url=$(url_in "$work/polling.out")

cd e2e && node bench/paid-latency.mjs "$waiting_url/" "$polling_url/" "$pg_url" "${1:-5}"

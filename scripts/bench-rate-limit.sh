#!/usr/bin/env bash
# Bench: other customers' API p95 and p99 alone, then while one client sends
# 1,000 POSTs a second, then 1,000 checks a second asking to wait, which the
# rate limits refuse, then opens 1,000 connections a second that never bring a
# request, which the connection caps and the client timeout close. Prints the
# four and their ratios.
# Usage: scripts/bench-rate-limit.sh [seconds per phase=20] [flood per second=1000]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

seconds="${1:-20}" rate="${2:-1000}"
bash scripts/setup.sh >/dev/null
cargo build --quiet --profile server -p payonce-server -p fake-pg
work="$(mktemp -d)"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

target/server/fake-pg --listen 127.0.0.1:0 >"$work/pg.out" 2>/dev/null &
pids+=("$!")
until pg_url=$(grep -o 'http://[0-9.:]*' "$work/pg.out" | head -1) && [ -n "$pg_url" ]; do sleep 0.1; done
# Customers and the flooder connect from different loopback addresses
# (127.0.0.2 and 127.0.0.3), as from different homes.
target/server/payonce-server --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 --db "$work/shop.db" \
  --pg-url "$pg_url" >"$work/server.out" 2>"$work/server.log" &
pids+=("$!")
until shop_url=$(grep -o 'http://[0-9.:]*' "$work/server.out" | head -1) && [ -n "$shop_url" ]; do sleep 0.1; done
say "the shop's default rate limits: 30 POSTs and 240 reads a minute per customer, 600 POSTs and 6,000 reads per address"
(cd e2e && node bench/rate-limit.mjs "$shop_url" "$seconds" "$rate")

#!/usr/bin/env bash
# Bench: checkouts created per second through the shop API, one optimised
# server on SQLite, and each create's latency (p50, p95, p99). Target: at least
# 1,000 a second with p99 at most 20 ms (docs/measured-checkouts.md).
# Usage: scripts/bench-checkouts.sh [seconds=20] [in flight=16]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

seconds="${1:-20}" concurrency="${2:-16}"
bash scripts/setup.sh >/dev/null
cargo build --quiet --profile server -p payonce-server -p fake-pg
work="$(mktemp -d)"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

key="$(target/server/payonce-server shop-key | sed -n 2p | tr -d ' ')"
cat >"$work/shops.toml" <<TOML
[[shop]]
id = "bench"
name = "Bench Books"
order_id_prefix = "ord_bench_"
return_origins = ["https://books.example"]
pay_with = ["toss"]
key_digests = ["$(printf %s "$key" | sha256sum | cut -d' ' -f1)"]
requests_per_minute = 100000000
TOML
target/server/fake-pg --listen 127.0.0.1:0 >"$work/pg.out" 2>/dev/null &
pids+=("$!")
pg_url="$(url_in "$work/pg.out")"
target/server/payonce-server --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 --db "$work/shop.db" \
  --pg-url "$pg_url" --shops-file "$work/shops.toml" >"$work/server.out" 2>"$work/server.log" &
pids+=("$!")
payonce_url="$(url_in "$work/server.out")"
say "$(nproc) cores; one server on SQLite; $concurrency creates in flight for ${seconds} s"
(cd e2e && node bench/checkout-create.mjs "$payonce_url" "$key" "$seconds" "$concurrency")

#!/usr/bin/env bash
# Prints the page's first-load size (wasm + JS + CSS + HTML; raw, gzip, brotli)
# and the time from navigation to an interactive Pay button in headless Chromium,
# served by the order server as in production (release page, compression on).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

bash scripts/setup.sh >/dev/null
bash scripts/build.sh >/dev/null
work="$(mktemp -d)"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$work"' EXIT

target/debug/fake-pg --listen 127.0.0.1:0 >"$work/pg.out" 2>/dev/null &
pids+=("$!")
pg_url=$(url_in "$work/pg.out")
# The shop takes KakaoPay too, so the cart shows its choice as customers see it.
target/debug/fake-pg --listen 127.0.0.1:0 --api kakaopay >"$work/kakaopay.out" 2>/dev/null &
pids+=("$!")
kakaopay_url=$(url_in "$work/kakaopay.out")
cargo build --quiet --profile server -p payonce-server
target/server/payonce-server --listen 127.0.0.1:0 --db "$work/bench.db" --static-dir dist --pg-url "$pg_url" \
  --kakaopay-url "$kakaopay_url" >"$work/server.out" 2>/dev/null &
pids+=("$!")
shop_url=$(url_in "$work/server.out")

cd e2e && node bench/page-load.mjs "$shop_url/" "${1:-15}"

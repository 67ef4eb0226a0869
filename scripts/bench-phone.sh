#!/usr/bin/env bash
# Prints how soon Pay is enabled on a low-end phone (Lighthouse's mobile
# throttling in headless Chromium: CPU 4x slower, 150 ms round trips, 1.6 Mbps
# down), cold, for the cart (`/`) and a shop's checkout (`/checkout/{id}`), with
# where the time went; served by the order server as in production (release
# page, compression on), with a shop whose checkouts the bench creates.
# Usage: scripts/bench-phone.sh [runs]   (9 by default)
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
# The shop takes KakaoPay too: the cart and the checkout show the choice as customers see it.
target/debug/fake-pg --listen 127.0.0.1:0 --api kakaopay >"$work/kakaopay.out" 2>/dev/null &
pids+=("$!")
kakaopay_url=$(url_in "$work/kakaopay.out")

# One shop, whose key exists for this run only (the server keeps its digest).
shop_key="sk_bench_$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')"
cat >"$work/shops.toml" <<EOF
[[shop]]
id = "bench"
name = "Bench Books"
name_ko = "벤치 책방"
order_id_prefix = "ord_bench_"
return_origins = ["http://127.0.0.1"]
pay_with = ["toss", "kakaopay"]
key_digests = ["$(printf %s "$shop_key" | sha256sum | cut -d' ' -f1)"]
EOF

cargo build --quiet --profile server -p payonce-server
target/server/payonce-server --listen 127.0.0.1:0 --db "$work/bench.db" --static-dir dist --pg-url "$pg_url" \
  --kakaopay-url "$kakaopay_url" --shops-file "$work/shops.toml" >"$work/server.out" 2>/dev/null &
pids+=("$!")
payonce_url=$(url_in "$work/server.out")

cd e2e && node bench/phone-load.mjs "$payonce_url" "$shop_key" "${1:-9}"

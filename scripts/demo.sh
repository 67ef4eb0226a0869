#!/usr/bin/env bash
# The demo: a fake PG that takes 40 s to approve (and KakaoPay's, as slow), the
# order server, the page served by trunk, and the sample shop (a bookshop with
# a backend of its own, which sends its customers to payonce through the shop
# API). Open the URL it prints, press Pay, choose "Approve": the page switches
# to "checking" at 15 s and shows "paid" at about 41 s. Ctrl-C stops it all.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

PAGE_PORT="${PAYONCE_DEMO_PAGE_PORT:-8080}"
SERVER_PORT=3000 # Trunk.toml proxies /api here
ADMIN_PORT="${PAYONCE_DEMO_ADMIN_PORT:-3001}"
PG_PORT="${PAYONCE_DEMO_PG_PORT:-9090}"
KAKAOPAY_PORT="${PAYONCE_DEMO_KAKAOPAY_PORT:-9091}"
SHOP_PORT="${PAYONCE_DEMO_SHOP_PORT:-4000}"
PG_LATENCY="${PAYONCE_DEMO_PG_LATENCY:-40s}"
demo_dir="$REPO_ROOT/target/demo"

bash scripts/setup.sh
bash scripts/build.sh
mkdir -p "$demo_dir"

pids=()
stop_all() {
  trap - INT TERM EXIT
  echo
  say "stopping the demo"
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
}
trap stop_all EXIT
# Ctrl-C (or a TERM) is how these stop: a clean end, not a failure.
trap 'stop_all; exit 0' INT TERM

say "fake PG on :$PG_PORT with $PG_LATENCY latency (log: target/demo/fake-pg.log)"
target/debug/fake-pg --listen "127.0.0.1:$PG_PORT" --latency "$PG_LATENCY" \
  --webhook-url "http://127.0.0.1:$SERVER_PORT/api/webhooks/toss" >"$demo_dir/fake-pg.log" 2>&1 &
pids+=("$!")
say "KakaoPay's fake on :$KAKAOPAY_PORT with $PG_LATENCY latency (log: target/demo/fake-kakaopay.log)"
target/debug/fake-pg --api kakaopay --listen "127.0.0.1:$KAKAOPAY_PORT" --latency "$PG_LATENCY" \
  >"$demo_dir/fake-kakaopay.log" 2>&1 &
pids+=("$!")
# The sample shop's key: made once, kept with the demo's data; payonce is
# given only its digest.
if [ ! -s "$demo_dir/shop.key" ]; then
  target/debug/payonce-server shop-key | sed -n 2p | tr -d ' ' >"$demo_dir/shop.key"
fi
# The secret payonce signs the shop's events with; both sides hold it.
if [ ! -s "$demo_dir/shop-events.secret" ]; then
  target/debug/payonce-server events-secret >"$demo_dir/shop-events.secret"
fi
cat >"$demo_dir/shops.toml" <<TOML
[[shop]]
id = "bookshop"
name = "The sample bookshop"
name_ko = "샘플 책방"
order_id_prefix = "ord_books_"
return_origins = ["http://127.0.0.1:$SHOP_PORT"]
pay_with = ["toss", "kakaopay"]
key_digests = ["$(printf %s "$(cat "$demo_dir/shop.key")" | sha256sum | cut -d' ' -f1)"]
events_url = "http://127.0.0.1:$SHOP_PORT/payonce/events"
events_secret_file = "shop-events.secret"
TOML
say "order server on :$SERVER_PORT (log: target/demo/server.log)"
target/debug/payonce-server --listen "127.0.0.1:$SERVER_PORT" --admin-listen "127.0.0.1:$ADMIN_PORT" --db "$demo_dir/payonce.db" \
  --pg-url "http://127.0.0.1:$PG_PORT" --kakaopay-url "http://127.0.0.1:$KAKAOPAY_PORT" \
  --public-url "http://127.0.0.1:$PAGE_PORT" --shops-file "$demo_dir/shops.toml" \
  --recovery-interval 10s >"$demo_dir/server.log" 2>&1 &
pids+=("$!")
say "the sample shop on :$SHOP_PORT (log: target/demo/shop.log)"
target/debug/payonce-shop --listen "127.0.0.1:$SHOP_PORT" --public-url "http://127.0.0.1:$SHOP_PORT" \
  --payonce-url "http://127.0.0.1:$SERVER_PORT" --api-key-file "$demo_dir/shop.key" \
  --events-secret-file "$demo_dir/shop-events.secret" --database "$demo_dir/shop.sqlite3" >"$demo_dir/shop.log" 2>&1 &
pids+=("$!")
say "page served by trunk on :$PAGE_PORT (log: target/demo/trunk.log)"
trunk serve --release --offline --no-autoreload --port "$PAGE_PORT" >"$demo_dir/trunk.log" 2>&1 &
pids+=("$!")

wait_for "http://127.0.0.1:$PG_PORT/__admin/config" "the fake PG" "$demo_dir/fake-pg.log"
wait_for "http://127.0.0.1:$KAKAOPAY_PORT/__admin/config" "KakaoPay's fake" "$demo_dir/fake-kakaopay.log"
wait_for "http://127.0.0.1:$SERVER_PORT/healthz" "the order server" "$demo_dir/server.log"
wait_for "http://127.0.0.1:$PAGE_PORT/api/config" "trunk serve" "$demo_dir/trunk.log"
wait_for "http://127.0.0.1:$SHOP_PORT/healthz" "the sample shop" "$demo_dir/shop.log"

cat <<MSG

  payonce demo is running:  http://127.0.0.1:$PAGE_PORT      (payonce's own cart)
  the sample shop:          http://127.0.0.1:$SHOP_PORT      (a shop with its own backend)

  Press Pay, then choose "Approve" in the payment window. The PG takes $PG_LATENCY:
  the page waits 15 s, switches to "checking", and shows "paid" when the PG is done.
  Other test cards show declines, a 70 s approval that outlasts the 60 s timeout,
  and answers lost after charging. Choose KakaoPay in the cart to pay through its
  window instead (on a PC, its QR page). Orders: http://127.0.0.1:$PAGE_PORT/orders
  The sample shop sells its own books: Buy sends you to payonce's page and back.
  PG admin: http://127.0.0.1:$PG_PORT/__admin/stats   Metrics: http://127.0.0.1:$ADMIN_PORT/metrics

  Ctrl-C stops everything.
MSG
wait -n "${pids[@]}"
die "a demo process stopped unexpectedly; see target/demo/*.log"

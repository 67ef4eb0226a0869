#!/usr/bin/env bash
# The demo: a fake PG that takes 40 s to approve (and KakaoPay's, as slow), the
# order server, and the page served by trunk. Open the URL it prints, press Pay,
# choose "Approve": the page switches to "checking" at 15 s and shows "paid" at
# about 41 s. Ctrl-C stops it all.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

PAGE_PORT="${PAYONCE_DEMO_PAGE_PORT:-8080}"
SERVER_PORT=3000 # Trunk.toml proxies /api here
ADMIN_PORT="${PAYONCE_DEMO_ADMIN_PORT:-3001}"
PG_PORT="${PAYONCE_DEMO_PG_PORT:-9090}"
KAKAOPAY_PORT="${PAYONCE_DEMO_KAKAOPAY_PORT:-9091}"
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
say "order server on :$SERVER_PORT (log: target/demo/server.log)"
target/debug/payonce-server --listen "127.0.0.1:$SERVER_PORT" --admin-listen "127.0.0.1:$ADMIN_PORT" --db "$demo_dir/payonce.db" \
  --pg-url "http://127.0.0.1:$PG_PORT" --kakaopay-url "http://127.0.0.1:$KAKAOPAY_PORT" \
  --public-url "http://127.0.0.1:$PAGE_PORT" \
  --recovery-interval 10s >"$demo_dir/server.log" 2>&1 &
pids+=("$!")
say "page served by trunk on :$PAGE_PORT (log: target/demo/trunk.log)"
trunk serve --release --offline --no-autoreload --port "$PAGE_PORT" >"$demo_dir/trunk.log" 2>&1 &
pids+=("$!")

wait_for "http://127.0.0.1:$PG_PORT/__admin/config" "the fake PG" "$demo_dir/fake-pg.log"
wait_for "http://127.0.0.1:$KAKAOPAY_PORT/__admin/config" "KakaoPay's fake" "$demo_dir/fake-kakaopay.log"
wait_for "http://127.0.0.1:$SERVER_PORT/healthz" "the order server" "$demo_dir/server.log"
wait_for "http://127.0.0.1:$PAGE_PORT/api/config" "trunk serve" "$demo_dir/trunk.log"

cat <<MSG

  payonce demo is running:  http://127.0.0.1:$PAGE_PORT

  Press Pay, then choose "Approve" in the payment window. The PG takes $PG_LATENCY:
  the page waits 15 s, switches to "checking", and shows "paid" when the PG is done.
  Other test cards show declines, a 70 s approval that outlasts the 60 s timeout,
  and answers lost after charging. Choose KakaoPay in the cart to pay through its
  window instead (on a PC, its QR page). Orders: http://127.0.0.1:$PAGE_PORT/orders
  PG admin: http://127.0.0.1:$PG_PORT/__admin/stats   Metrics: http://127.0.0.1:$ADMIN_PORT/metrics

  Ctrl-C stops everything.
MSG
wait -n "${pids[@]}"
die "a demo process stopped unexpectedly; see target/demo/*.log"

#!/usr/bin/env bash
# The demo as a cluster: a throwaway PostgreSQL, the fake PG (40 s to approve),
# three order servers sharing the database and one PG limit, haproxy in front of
# them on :3000, and the page served by trunk. A customer uses it exactly like
# the single-server demo; kill a server mid-payment (the PIDs are printed) and
# the page still ends on the truth. Ctrl-C stops it all.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$REPO_ROOT/scripts/postgres.sh"
source "$REPO_ROOT/scripts/haproxy.sh"
cd "$REPO_ROOT"

PAGE_PORT="${PAYONCE_DEMO_PAGE_PORT:-8080}"
BALANCER_PORT=3000 # Trunk.toml proxies /api here
PG_PORT="${PAYONCE_DEMO_PG_PORT:-9090}"
PG_LATENCY="${PAYONCE_DEMO_PG_LATENCY:-40s}"
DB_PORT="${PAYONCE_CLUSTER_DB_PORT:-25440}"
SERVERS="${PAYONCE_CLUSTER_SERVERS:-3}"
cluster_dir="$REPO_ROOT/target/cluster"

bash scripts/setup.sh
bash scripts/build.sh
mkdir -p "$cluster_dir"

pids=()
stop_all() {
  trap - INT TERM EXIT
  echo
  say "stopping the cluster"
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  postgres_stop cluster || true
}
trap stop_all EXIT
# Ctrl-C (or a TERM) is how these stop: a clean end, not a failure.
trap 'stop_all; exit 0' INT TERM

say "PostgreSQL on :$DB_PORT (a fresh throwaway server in target/postgres-cluster)"
postgres_start cluster "$DB_PORT" durable
db_url="$(postgres_fresh_database payonce)"

say "fake PG on :$PG_PORT with $PG_LATENCY latency (log: target/cluster/fake-pg.log)"
target/debug/fake-pg --listen "127.0.0.1:$PG_PORT" --latency "$PG_LATENCY" >"$cluster_dir/fake-pg.log" 2>&1 &
pids+=("$!")

server_urls=()
server_pids=()
for n in $(seq 1 "$SERVERS"); do
  port=$((3010 + n)) admin=$((3020 + n))
  say "order server $n on :$port, admin :$admin (log: target/cluster/server-$n.log)"
  target/debug/payonce-server --listen "127.0.0.1:$port" --admin-listen "127.0.0.1:$admin" --db "$db_url" \
    --pg-url "http://127.0.0.1:$PG_PORT" --public-url "http://127.0.0.1:$PAGE_PORT" \
    --recovery-interval 10s --trusted-proxies 127.0.0.1 >"$cluster_dir/server-$n.log" 2>&1 &
  pids+=("$!")
  server_pids+=("$!")
  server_urls+=("http://127.0.0.1:$port")
done

say "haproxy on :$BALANCER_PORT in front of them (config: target/cluster/haproxy.cfg)"
haproxy_config "$cluster_dir/haproxy.cfg" "$BALANCER_PORT" "${server_urls[@]}"
/usr/sbin/haproxy -db -f "$cluster_dir/haproxy.cfg" >"$cluster_dir/haproxy.log" 2>&1 &
pids+=("$!")

say "page served by trunk on :$PAGE_PORT (log: target/cluster/trunk.log)"
trunk serve --release --offline --no-autoreload --port "$PAGE_PORT" >"$cluster_dir/trunk.log" 2>&1 &
pids+=("$!")

wait_for "http://127.0.0.1:$PG_PORT/__admin/config" "the fake PG" "$cluster_dir/fake-pg.log"
for n in $(seq 1 "$SERVERS"); do
  wait_for "${server_urls[$((n - 1))]}/healthz" "order server $n" "$cluster_dir/server-$n.log"
done
wait_for "http://127.0.0.1:$BALANCER_PORT/healthz" "haproxy" "$cluster_dir/haproxy.log"
wait_for "http://127.0.0.1:$PAGE_PORT/api/config" "trunk serve" "$cluster_dir/trunk.log"

cat <<MSG

  payonce cluster is running:  http://127.0.0.1:$PAGE_PORT

  $SERVERS order servers share PostgreSQL ($db_url) and one PG limit,
  behind haproxy on :$BALANCER_PORT. Pay exactly as in the single-server demo.
  Kill a server mid-payment and watch the page still end on the truth:
      kill -9 ${server_pids[0]}     (order server 1; others: ${server_pids[*]:1})
  PG admin: http://127.0.0.1:$PG_PORT/__admin/stats   Metrics: http://127.0.0.1:3021/metrics

  Ctrl-C stops everything.
MSG
# A killed order server is part of the demo; stop only when something else ends.
while true; do
  for pid in "${pids[@]}"; do
    if ! kill -0 "$pid" 2>/dev/null && [[ ! " ${server_pids[*]} " == *" $pid "* ]]; then
      die "a cluster process stopped unexpectedly; see target/cluster/*.log"
    fi
  done
  sleep 1
done

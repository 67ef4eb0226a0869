#!/usr/bin/env bash
# Experiment: the flash sale (`payonce-experiment flash-sale`) on the cluster: three order
# servers sharing PostgreSQL behind haproxy, with one PG limit for the three
# (`--pg-max-concurrency`, the cap kept in the database) and a fake PG whose contract
# limit is that number. Customers arrive at 1,000 a second, confirm while the PG takes its
# time and check as the page does; prints the flash sale's table, how the checks were
# spread over the servers, and the PG's peak in processing (never above the limit).
# Usage: scripts/experiment-flash-sale-cluster.sh [customers=5000] [PG limit=4000] [PG latency=45s]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$REPO_ROOT/scripts/postgres.sh"
source "$REPO_ROOT/scripts/haproxy.sh"
cd "$REPO_ROOT"

customers="${1:-5000}" limit="${2:-4000}" latency="${3:-45s}"
bash scripts/setup.sh >/dev/null
cargo build --quiet --profile server -p payonce-server -p fake-pg -p payonce-experiment
work="$(mktemp -d)"
pids=()
stop_all() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; pids=(); }
trap 'stop_all; postgres_stop flash-sale; rm -rf "$work"' EXIT
# PostgreSQL as shipped (fsync on): the cluster as it would run.
postgres_start flash-sale "" durable

target/server/fake-pg --listen 127.0.0.1:0 --latency "$latency" --contract-limit "$limit" \
  >"$work/pg.out" 2>"$work/pg.log" &
pids+=("$!")
pg_url="$(url_in "$work/pg.out")"

db="$(postgres_fresh_database flash_sale)"
shop_urls=() admin_urls="" server_pids=""
for n in 1 2 3; do
  # The page's timings and the server's defaults, as the one-server experiment runs them;
  # every customer comes from this machine, so no limits per address or customer.
  target/server/payonce-server --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 --db "$db" \
    --pg-url "$pg_url" --pg-max-concurrency "$limit" --poll-attempts 25 --max-waiting-checks 10000 \
    --rate-limit-customer 0 --rate-limit-address 0 --rate-limit-customer-reads 0 \
    --rate-limit-address-reads 0 --max-waiting-checks-per-client 1000000 \
    >"$work/server-$n.out" 2>"$work/server-$n.log" &
  pids+=("$!")
  server_pids="${server_pids:+$server_pids,}$!"
  shop_urls+=("$(url_in "$work/server-$n.out")")
  admin_urls="${admin_urls:+$admin_urls,}$(url_in "$work/server-$n.out" 2)"
done

# Each customer holds a connection to haproxy while checking, and haproxy one to a server:
# as many connections as haproxy's open files allow (two each). At haproxy's default the
# frontend stops accepting, the kernel's queue fills, and customers' connections wait
# on SYN retries for seconds (commit to answer p99 11.5 s at 6,000).
port="$(postgres_free_port)"
HAPROXY_MAXCONN=$(($(ulimit -n) / 2 - 500)) haproxy_config "$work/haproxy.cfg" "$port" "${shop_urls[@]}"
/usr/sbin/haproxy -db -f "$work/haproxy.cfg" >/dev/null 2>"$work/haproxy.log" &
pids+=("$!")
shop="http://127.0.0.1:$port"
wait_for "$shop/healthz" "haproxy in front of the servers" "$work/haproxy.log"

say "flash sale on three servers behind haproxy: $customers customers, PG limit $limit, PG latency $latency"
target/server/payonce-experiment flash-sale --customers "$customers" --pg-latency "$latency" \
  --pg-contract-limit "$limit" --shop-url "$shop" --pg-url "$pg_url" --admin-url "$admin_urls" \
  --server-pid "$server_pids" --database-url "$db"

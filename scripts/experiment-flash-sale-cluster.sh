#!/usr/bin/env bash
# Experiment: the flash sale (`payonce-experiment flash-sale`) on the cluster: three order
# servers sharing PostgreSQL behind haproxy (two processes on one port), with one PG limit
# for the three (`--pg-limit`, the limit kept in the database), their PG calls over
# HTTP/2, and a fake PG whose contract limit is that number. Customers arrive at 1,000 a
# second, confirm while the PG takes its time and check as the page does; prints the flash
# sale's table, how the checks were spread over the servers, and the PG's peak in
# processing (never above the limit).
# Usage: scripts/experiment-flash-sale-cluster.sh [customers=10000] [PG limit=8000] [PG latency=45s]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$REPO_ROOT/scripts/postgres.sh"
source "$REPO_ROOT/scripts/haproxy.sh"
cd "$REPO_ROOT"

customers="${1:-10000}" limit="${2:-8000}" latency="${3:-45s}"
bash scripts/setup.sh >/dev/null
cargo build --quiet --profile server -p payonce-server -p fake-pg -p payonce-experiment
work="$(mktemp -d)"
pids=()
stop_all() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; pids=(); }
trap 'stop_all; postgres_stop flash-sale; rm -rf "$work"' EXIT
# PostgreSQL as shipped (fsync on): the cluster as it would run.
postgres_start flash-sale "" durable

# The servers' calls share HTTP/2 connections to the PG (--pg-http2), whose streams, like
# its contract, take the limit.
target/server/fake-pg --listen 127.0.0.1:0 --latency "$latency" --contract-limit "$limit" \
  --http2-max-streams "$limit" >"$work/pg.out" 2>"$work/pg.log" &
pids+=("$!")
pg_url="$(url_in "$work/pg.out")"

db="$(postgres_fresh_database flash_sale)"
shop_urls=() admin_urls="" server_pids=""
for n in 1 2 3; do
  # The page's timings and the server's defaults, as the one-server experiment runs them;
  # every customer comes from this machine, so no limits per address or customer.
  target/server/payonce-server --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 --db "$db" \
    --pg-url "$pg_url" --pg-http2 --pg-limit "$limit" --max-checks 25 --max-waiting-checks 10000 \
    --rate-limit-customer 0 --rate-limit-address 0 --rate-limit-customer-reads 0 \
    --rate-limit-address-reads 0 --rate-limit-new-customers 0 --max-waiting-checks-per-client 1000000 --max-connections 1000000 --max-connections-per-client 1000000 \
    >"$work/server-$n.out" 2>"$work/server-$n.log" &
  pids+=("$!")
  server_pids="${server_pids:+$server_pids,}$!"
  shop_urls+=("$(url_in "$work/server-$n.out")")
  admin_urls="${admin_urls:+$admin_urls,}$(url_in "$work/server-$n.out" 2)"
done

# Each customer holds a connection to haproxy while checking. At haproxy's default maxconn
# the frontend stops accepting, the kernel's queue fills, and customers' connections wait
# on SYN retries for seconds (commit to answer p99 11.5 s at 6,000). haproxy wants two open
# files for each connection it may hold, whatever it speaks to the servers, so one haproxy
# holds at most half this machine's open files per process: 9,500 customers. Two haproxy
# processes share the port (haproxy binds with SO_REUSEPORT; the kernel spreads new
# connections over them), as a balancer run as several processes does. They speak
# HTTP/1.1 to the servers unless HAPROXY_SERVER_HTTP2=1: HTTP/2 there shares a few
# connections to each server, but measured at 10,000 it cost the servers as much memory
# per waiting check (147 KB against 129) and answered no sooner.
port="$(postgres_free_port)"
HAPROXY_SERVER_HTTP2="${HAPROXY_SERVER_HTTP2:-0}" HAPROXY_MAXCONN=$(($(ulimit -n) / 2 - 500)) \
  haproxy_config "$work/haproxy.cfg" "$port" "${shop_urls[@]}"
for n in 1 2; do
  /usr/sbin/haproxy -db -f "$work/haproxy.cfg" >/dev/null 2>"$work/haproxy-$n.log" &
  pids+=("$!")
done
shop="http://127.0.0.1:$port"
wait_for "$shop/healthz" "haproxy in front of the servers" "$work/haproxy-1.log"

say "flash sale on three servers behind haproxy: $customers customers, PG limit $limit, PG latency $latency"
target/server/payonce-experiment flash-sale --customers "$customers" --pg-latency "$latency" \
  --pg-contract-limit "$limit" --shop-url "$shop" --pg-url "$pg_url" --admin-url "$admin_urls" \
  --server-pid "$server_pids" --database-url "$db"

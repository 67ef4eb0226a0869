#!/usr/bin/env bash
# Experiment: one PG limit for a whole cluster. A burst of customers confirms at
# once against a fake PG with a latency and a contract limit, three times with
# the same --pg-limit: one server on SQLite (its limit in memory), one
# server on PostgreSQL, and three servers sharing PostgreSQL behind haproxy
# (the limit in the database). Prints what customers got, how long they waited,
# the PG's peak in processing, and what taking and freeing a place cost.
# Usage: scripts/experiment-cluster.sh [customers=120] [pg latency=1s] [limit=40] [contract limit=60]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$REPO_ROOT/scripts/postgres.sh"
source "$REPO_ROOT/scripts/haproxy.sh"
cd "$REPO_ROOT"

customers="${1:-120}" latency="${2:-1s}" limit="${3:-40}" contract="${4:-60}"
bash scripts/setup.sh >/dev/null
cargo build --quiet --profile server -p payonce-server -p fake-pg
work="$(mktemp -d)"
pids=()
stop_all() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; pids=(); }
trap 'stop_all; postgres_stop experiment; rm -rf "$work"' EXIT
# PostgreSQL as shipped (fsync on): the cost of the shared limit is measured on a durable database.
postgres_start experiment "" durable

# These start a process in this shell (so that stop_all can stop it) and set the URLs it prints.
start_pg() { # name: a fresh fake PG; sets pg_url
  target/server/fake-pg --listen 127.0.0.1:0 --latency "$latency" --contract-limit "$contract" >"$work/pg-$1.out" 2>/dev/null &
  pids+=("$!")
  pg_url="$(url_in "$work/pg-$1.out")"
}

start_server() { # name db: an order server; sets server_url and admin_url
  # One address sends every customer's requests here: no per-address limit.
  target/server/payonce-server --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 --db "$2" \
    --pg-url "$pg_url" --pg-limit "$limit" --max-checks 100 --rate-limit-address 0 --rate-limit-address-reads 0 --rate-limit-new-customers 0 --max-waiting-checks-per-client 1000000 --max-connections 1000000 --max-connections-per-client 1000000 \
    >"$work/server-$1.out" 2>"$work/server-$1.log" &
  pids+=("$!")
  server_url="$(url_in "$work/server-$1.out")"
  admin_url="$(url_in "$work/server-$1.out" 2)"
}

for condition in "1 server, SQLite" "1 server, PostgreSQL" "3 servers, PostgreSQL, haproxy"; do
  say "$condition: $customers confirms at once, --pg-limit $limit, PG latency $latency, contract limit $contract"
  start_pg "${condition%%,*}"
  case "$condition" in
    *SQLite*)
      start_server sqlite "$work/burst.db"
      shop="$server_url" admins="$admin_url"
      ;;
    "1 server"*)
      start_server pg1 "$(postgres_fresh_database burst_one)"
      shop="$server_url" admins="$admin_url"
      ;;
    *)
      db="$(postgres_fresh_database burst_three)"
      urls=() admins=""
      for n in 1 2 3; do
        start_server "pg3-$n" "$db"
        urls+=("$server_url")
        admins="${admins:+$admins,}$admin_url"
      done
      port="$(postgres_free_port)"
      haproxy_config "$work/haproxy.cfg" "$port" "${urls[@]}"
      /usr/sbin/haproxy -db -f "$work/haproxy.cfg" >"$work/haproxy.log" 2>&1 &
      pids+=("$!")
      shop="http://127.0.0.1:$port"
      until curl -fsS -o /dev/null "$shop/healthz" 2>/dev/null; do sleep 0.1; done
      ;;
  esac
  (cd e2e && node bench/confirm-burst.mjs "$shop" "$pg_url" "$customers" "$admins")
  stop_all
done

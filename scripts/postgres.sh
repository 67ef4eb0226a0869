# A throwaway PostgreSQL server for tests and the cluster demo, from Debian's
# `postgresql` package (scripts/setup.sh installs it). Sourced by other scripts:
#
#   postgres_start NAME [PORT] [durable|fast] [tcp|socket]
#                                               starts a fresh target/postgres-NAME on
#                                               127.0.0.1:PORT (a free port if none), or
#                                               with `socket` on a Unix socket only, and
#                                               sets DATABASE_URL
#   postgres_stop NAME                          stops it (its data stays until the next start)
#   postgres_resume NAME                        starts a stopped one again, data and port kept
#   postgres_remove NAME                        stops it and deletes its data
#
# or run, for tests that take the database away: `bash scripts/postgres.sh start NAME
# "" fast socket` prints the server's URL; `stop NAME` and `resume NAME` as above.
#
# A server that is stopped while its clients go on (a database outage test) listens
# on a Unix socket in a folder of its own: a TCP port it freed could be taken by
# another run's server on this machine, and its clients would then reach that one.
#
# The server runs as an unprivileged user: PostgreSQL refuses to run as root, so
# as root it runs as the package's `postgres` user. `fast` turns off fsync: for
# tests, whose databases are thrown away; `durable` keeps PostgreSQL's defaults.
# shellcheck shell=bash

# The newest installed PostgreSQL's programs.
postgres_bin_dir() {
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
  [ -n "$dir" ] && [ -x "$dir/initdb" ] || die "PostgreSQL is missing: run scripts/setup.sh (it installs Debian's postgresql)"
  echo "$dir"
}

# Runs a PostgreSQL program as the user the server runs as.
postgres_as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# A TCP port nothing listens on, from FROM (25432) up: below the range the kernel
# takes local ports of outgoing connections from (32768 and up here), where a
# busy machine's client sockets can hold a port no listener shows.
postgres_free_port() {
  local from="${1:-25432}" port
  for port in $(seq "$from" $((from + 200))); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return; fi
  done
  die "no free port for PostgreSQL between $from and $((from + 200))"
}

# Where the server's files go: target/postgres-NAME, or, when the server's user cannot
# reach the checkout (a clone under /root, say), a private folder in /tmp that
# target/postgres-NAME links to.
postgres_data_dir() {
  local name="$1" link="$REPO_ROOT/target/postgres-$1"
  mkdir -p "$REPO_ROOT/target"
  if [ -L "$link" ]; then readlink "$link"; return; fi
  if [ "$(id -u)" -ne 0 ] || runuser -u postgres -- test -x "$REPO_ROOT/target"; then
    mkdir -p "$link"
    echo "$link"
  else
    local dir
    dir="$(mktemp -d "/tmp/payonce-postgres-$name.XXXXXX")"
    ln -s "$dir" "$link"
    echo "$dir"
  fi
}

postgres_start() {
  local name="$1" requested="${2:-}" mode="${3:-durable}" reach="${4:-tcp}" bin dir port
  bin="$(postgres_bin_dir)"
  postgres_stop "$name" 2>/dev/null || true
  dir="$(postgres_data_dir "$name")"
  postgres_forget_sockets "$dir" # the last run's socket folder, if it had one
  # Fresh every time: a throwaway server keeps nothing from the last run.
  find "$dir" -mindepth 1 -delete
  [ "$(id -u)" -ne 0 ] || chown postgres: "$dir"
  chmod 700 "$dir"
  postgres_as_owner "$bin/initdb" -D "$dir" -U payonce -A trust -E UTF8 --no-instructions >"$dir.initdb.log" 2>&1 \
    || { cat "$dir.initdb.log" >&2; die "initdb failed in $dir"; }
  local settings="-c max_connections=300"
  if [ "$mode" = fast ]; then
    settings="$settings -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  fi
  if [ "$reach" = socket ]; then
    local sockets
    sockets="$(mktemp -d /tmp/payonce-postgres-socket.XXXXXX)"
    [ "$(id -u)" -ne 0 ] || chown postgres: "$sockets"
    local options="-p 5432 -c listen_addresses= -c unix_socket_directories=$sockets $settings"
    echo "5432 $options" >"$dir.options"
    echo "postgres://payonce@localhost/postgres?host=$sockets" >"$dir.url"
    postgres_run "$bin" "$dir" "$options"
    DATABASE_URL="$(cat "$dir.url")"
    export DATABASE_URL
    return
  fi
  settings="-c listen_addresses=127.0.0.1 -c unix_socket_directories= $settings"
  local options tries=1 next=25432
  while :; do
    port="${requested:-$(postgres_free_port "$next")}"
    next=$((port + 1))
    options="-p $port $settings"
    echo "$port $options" >"$dir.options"
    postgres_try_run "$bin" "$dir" "$options" && break
    # A port found free can be taken by another process (another test run on
    # this machine) before the server binds it: then take the next free one.
    if [ -z "$requested" ] && [ "$tries" -lt 5 ] && grep -q "Address already in use" "$dir/server.log"; then
      tries=$((tries + 1))
      continue
    fi
    cat "$dir/server.log" >&2
    die "PostgreSQL did not start (log above)"
  done
  echo "postgres://payonce@127.0.0.1:$port/postgres" >"$dir.url"
  DATABASE_URL="$(cat "$dir.url")"
  export DATABASE_URL
}

# Starts the server in DIR; says whether it started (its log is DIR/server.log).
postgres_try_run() {
  local bin="$1" dir="$2" options="$3"
  rm -f "$dir/server.log"
  postgres_as_owner "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 -o "$options" start >/dev/null
}

postgres_run() {
  postgres_try_run "$@" || { cat "$2/server.log" >&2; die "PostgreSQL did not start (log above)"; }
}

# The URL of server NAME's `postgres` database (started or stopped).
postgres_url() {
  cat "$(readlink -f "$REPO_ROOT/target/postgres-$1").url"
}

postgres_resume() {
  local name="$1" dir port options
  dir="$(readlink -f "$REPO_ROOT/target/postgres-$name")"
  [ -f "$dir.options" ] || die "no PostgreSQL named $name to resume: start it first"
  read -r port options <"$dir.options"
  postgres_run "$(postgres_bin_dir)" "$dir" "$options"
  DATABASE_URL="$(postgres_url "$name")"
  export DATABASE_URL
}

postgres_stop() {
  local name="$1" dir="$REPO_ROOT/target/postgres-$1"
  [ -e "$dir/PG_VERSION" ] || return 0
  postgres_as_owner "$(postgres_bin_dir)/pg_ctl" -D "$(readlink -f "$dir")" -m fast -w stop >/dev/null
}

# Deletes the socket folder the server in DIR was started with, if any.
postgres_forget_sockets() {
  local sockets
  sockets="$(sed -n 's/.*?host=//p' "$1.url" 2>/dev/null || true)"
  case "$sockets" in /tmp/payonce-postgres-socket.*) rm -rf "$sockets" ;; esac
}

postgres_remove() {
  local name="$1" link="$REPO_ROOT/target/postgres-$1" dir
  postgres_stop "$name" 2>/dev/null || true
  [ -e "$link" ] || return 0
  dir="$(readlink -f "$link")"
  postgres_forget_sockets "$dir"
  rm -rf "$dir" "$dir.options" "$dir.url" "$dir.initdb.log" "$link"
}

# Creates database DB on the server DATABASE_URL names (dropping one of that name), and
# prints its URL.
postgres_fresh_database() {
  local db="$1" bin
  bin="$(postgres_bin_dir)"
  PGOPTIONS="-c client_min_messages=warning" "$bin/psql" -q -v ON_ERROR_STOP=1 -d "$DATABASE_URL" \
    -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null \
    || die "could not create database $db"
  echo "${DATABASE_URL/\/postgres//$db}"
}

# Run as a program rather than sourced.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
  case "${1:-}" in
    start) postgres_start "$2" "${3:-}" "${4:-fast}" "${5:-tcp}" && echo "$DATABASE_URL" ;;
    stop) postgres_stop "$2" ;;
    resume) postgres_resume "$2" && echo "$DATABASE_URL" ;;
    remove) postgres_remove "$2" ;;
    *) die "usage: scripts/postgres.sh start|stop|resume|remove NAME [PORT] [durable|fast] [tcp|socket]" ;;
  esac
fi

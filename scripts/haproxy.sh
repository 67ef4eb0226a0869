# haproxy in front of the order servers of a cluster, from Debian's package
# (scripts/setup.sh installs it). Sourced, not run:
#
#   haproxy_config FILE PORT SERVER_URL...   writes a config balancing PORT over the servers
#
# HAPROXY_MAXCONN (default 4096) is how many client connections haproxy holds at once;
# a flash sale's customers each hold one while they check.
# HAPROXY_SERVER_HTTP2=1 speaks HTTP/2 to the servers (h2c, which they serve beside
# HTTP/1.1): the customers' requests share a few connections to each server, as
# streams, instead of each holding a connection (and its buffers) there.
#
# Every layer waits at least as long as the one behind it: an order server
# answers a confirm within its PG timeouts (3 s connect + 60 s read, by
# default) and a little more, so haproxy waits 75 s for a server.
# Only a connection that never reached a server is tried on another one
# (`retry-on conn-failure`): a confirm a server took is never sent twice by
# the balancer. If that server dies mid-request the customer's page gets a
# 502 and, as for any answer it cannot read, checks the order.
# shellcheck shell=bash

haproxy_config() {
  local file="$1" port="$2" n=0 url proto=""
  shift 2
  [[ "${HAPROXY_SERVER_HTTP2:-0}" == 1 ]] && proto=" proto h2"
  {
    cat <<CFG
global
    maxconn ${HAPROXY_MAXCONN:-4096}
    # One line per request on haproxy's standard error.
    log stderr format raw local0 info

defaults
    mode http
    log global
    option httplog
    timeout connect 3s
    timeout http-request 10s
    timeout client 75s
    timeout server 75s
    retries 2
    retry-on conn-failure
    option redispatch
    # Names the client in X-Forwarded-For, appended to whatever the client
    # sent: the servers (--trusted-proxies) read it from the right.
    option forwardfor

frontend shop
    bind 127.0.0.1:$port
    default_backend order_servers

backend order_servers
    balance roundrobin
    # A server that stops answering /healthz is out within two seconds.
    option httpchk GET /healthz
    default-server inter 1s fall 2 rise 1
CFG
    for url in "$@"; do
      n=$((n + 1))
      echo "    server s$n ${url#http://} check$proto"
    done
  } >"$file"
  /usr/sbin/haproxy -c -q -f "$file" || die "haproxy refused the config in $file"
}

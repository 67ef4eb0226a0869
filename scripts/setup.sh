#!/usr/bin/env bash
# Installs what building and testing payonce needs, skipping what is already
# there: the wasm target, trunk, the wasm-bindgen CLI matching Cargo.lock,
# wasm-opt (binaryen from npm), terser (from npm, for the page's JS glue), the
# e2e suite's npm packages, and Debian's
# Chromium, PostgreSQL (the cluster's database), haproxy (its load balancer) and
# zopfli (the page's precompressed gzip).
# Only package registries are used (crates.io, npm, Debian).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need() { command -v "$1" >/dev/null 2>&1 || die "$1 is required: $2"; }
need cargo "install Rust with rustup"
need npm "install Node.js 20 or later"

# Network-bound installs run in the background while cargo compiles.
background=()

# Chromium's headless shell for the journeys (the lighter build Playwright
# itself runs headless: a third less of the journeys' time on two cores) and
# Chromium for the page's benches, as customers' browsers load it; a Korean font so that screenshots (and people
# watching a journey) see the Korean page as it is, not as empty boxes;
# PostgreSQL and haproxy for the cluster; zopfli for the page's precompressed gzip.
debian_packages=()
[ -x /usr/bin/chromium ] || debian_packages+=(chromium)
[ -x /usr/bin/chromium-headless-shell ] || debian_packages+=(chromium-headless-shell)
[ -n "$(fc-list :lang=ko 2>/dev/null)" ] || debian_packages+=(fonts-nanum)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || debian_packages+=(postgresql)
[ -x /usr/sbin/haproxy ] || debian_packages+=(haproxy)
[ -x /usr/bin/zopfli ] || debian_packages+=(zopfli)
if [ "${#debian_packages[@]}" -gt 0 ]; then
  say "installing ${debian_packages[*]} (Debian packages) in the background"
  (as_root apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${debian_packages[@]}" >/dev/null) \
    >"$TOOLS_DIR.apt.log" 2>&1 &
  background+=("$!:${debian_packages[*]}:$TOOLS_DIR.apt.log")
fi

if [ "$("$TOOLS_DIR/node_modules/.bin/wasm-opt" --version 2>/dev/null | awk '{print $3}')" != "$BINARYEN_VERSION" ] \
  || [ "$("$TOOLS_DIR/node_modules/.bin/terser" --version 2>/dev/null | awk '{print $2}')" != "$TERSER_VERSION" ]; then
  say "installing wasm-opt (binaryen@$BINARYEN_VERSION) and terser@$TERSER_VERSION from npm"
  mkdir -p "$TOOLS_DIR"
  npm install --silent --no-audit --no-fund --prefix "$TOOLS_DIR" "binaryen@$BINARYEN_VERSION" "terser@$TERSER_VERSION" >/dev/null
fi

if [ ! -d "$REPO_ROOT/e2e/node_modules/@playwright/test" ] || [ "$REPO_ROOT/e2e/package-lock.json" -nt "$REPO_ROOT/e2e/node_modules/.package-lock.json" ]; then
  say "installing the e2e suite's npm packages"
  # Playwright drives Debian's Chromium; it must never download a browser.
  (cd "$REPO_ROOT/e2e" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --silent --no-audit --no-fund)
fi

# Clippy lints the workspace's crates as the test command builds them.
if ! rustup which clippy-driver >/dev/null 2>&1; then
  say "adding clippy"
  rustup component add clippy
fi

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

if [ "$(trunk --version 2>/dev/null | awk '{print $2}')" != "$TRUNK_VERSION" ]; then
  say "installing trunk $TRUNK_VERSION (a few minutes, once)"
  cargo install --quiet trunk --version "$TRUNK_VERSION" --locked
fi

bindgen="$(wasm_bindgen_version)"
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$bindgen" ]; then
  say "installing wasm-bindgen-cli $bindgen (a few minutes, once)"
  # No --locked: the CLI's own lock names a crate version the registry lacks.
  cargo install --quiet wasm-bindgen-cli --version "$bindgen"
fi

for job in "${background[@]}"; do
  IFS=: read -r pid what log <<<"$job"
  wait "$pid" || { cat "$log" >&2; die "installing $what failed (log above)"; }
done
[ -x /usr/bin/chromium ] || die "Chromium is missing: apt-get install chromium"
[ -x /usr/bin/chromium-headless-shell ] || die "Chromium's headless shell is missing: apt-get install chromium-headless-shell"
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || die "PostgreSQL is missing: apt-get install postgresql"
[ -x /usr/sbin/haproxy ] || die "haproxy is missing: apt-get install haproxy"
[ -x /usr/bin/zopfli ] || die "zopfli is missing: apt-get install zopfli"
# The package starts a system-wide PostgreSQL and haproxy; payonce runs its own.
as_root service postgresql stop >/dev/null 2>&1 || true
as_root service haproxy stop >/dev/null 2>&1 || true
say "tools ready: $(trunk --version), wasm-bindgen $(wasm-bindgen --version | awk '{print $2}'), wasm-opt $BINARYEN_VERSION, $(/usr/bin/chromium --version 2>/dev/null | head -1), $(ls -d /usr/lib/postgresql/*/ | sort -V | tail -1 | xargs basename | sed 's/^/PostgreSQL /'), $(/usr/sbin/haproxy -v | head -1 | awk '{print "haproxy", $3}')"

#!/usr/bin/env bash
# Builds the two servers (debug, as the tests and the demo run them) and the
# page (release, as shipped) into dist/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

say "building the order server and the fake PG"
cargo build --quiet -p payonce-server -p fake-pg
say "building the page (trunk, release)"
trunk build --release --offline >"$REPO_ROOT/target/trunk-build.log" 2>&1 \
  || { tail -n 40 "$REPO_ROOT/target/trunk-build.log" >&2; die "trunk build failed (log above)"; }
node scripts/precompress.mjs dist

#!/usr/bin/env bash
# Builds the two servers (debug, as the tests and the demo run them) and the
# page (release, as shipped) into dist/: the whole app (index.html) and the
# cart alone (cart.html), which the order server sends for `/` and which
# prefetches the whole app for the return from the PG window.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

say "building the order server, the fake PG and the sample shop"
cargo build --quiet -p payonce-server -p fake-pg -p payonce-shop

# Trunk empties its dist folder on every build, so the cart is built beside it and copied in.
trunk_build() {
  local log="$REPO_ROOT/target/trunk-build-$1.log"
  shift
  trunk build --release --offline "$@" >"$log" 2>&1 || { tail -n 40 "$log" >&2; die "trunk build failed (log above)"; }
}
say "building the page (trunk, release)"
trunk_build app
# The cart alone is smaller without `--cfg erase_components` (which pays off only for
# the whole app; see ARCHITECTURE.md), so it is built without it, in a target folder
# of its own so that neither build undoes the other's.
CARGO_TARGET_DIR="$REPO_ROOT/target/cart" CARGO_ENCODED_RUSTFLAGS="" \
  trunk_build cart --dist target/trunk-cart --html-output cart.html cart.html
cp target/trunk-cart/* dist/
node scripts/prefetch-app.mjs dist
node scripts/precompress.mjs dist

#!/usr/bin/env bash
# Builds the two servers (debug, as the tests and the demo run them) and the
# page (release, as shipped) into dist/: the whole app (index.html), the cart
# alone (cart.html), which the order server sends for `/`, and a shop's checkout
# alone (checkout.html), which it sends for `/checkout/{id}`; both prefetch the
# whole app for the return from the PG window.
#
#   scripts/build.sh              the servers and the page
#   scripts/build.sh --page-only  the page alone (the test command runs the
#                                 servers its Rust tests were built with)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

if [ "${1:-}" != "--page-only" ]; then
  say "building the order server, the fake PG and the sample shop"
  cargo build --quiet -p payonce-server -p fake-pg -p payonce-shop
fi

# Trunk empties its dist folder on every build, so the cart and the checkout are built beside it and copied in.
trunk_build() {
  local log="$REPO_ROOT/target/trunk-build-$1.log"
  shift
  # --minify: the CSS and the HTML (600 bytes less of a first load, gzip).
  trunk build --release --offline --minify "$@" >"$log" 2>&1 || { tail -n 40 "$log" >&2; die "trunk build failed (log above)"; }
}
say "building the page (trunk, release)"
# The three bundles share one release build of their dependencies (the cart
# and the checkout with `--cfg erase_components` too: 0.3 KB more on the cart,
# 0.5 KB less on the checkout, see docs/page-size.md). One cargo run builds
# them first, so that each bundle's link-time optimisation, on one core, runs
# beside another's; Trunk then finds them built and binds and optimises each.
cargo build --quiet --release --offline --target wasm32-unknown-unknown \
  --bin payonce-page --bin payonce-cart --bin payonce-checkout || die "the page did not build"
# Trunk binds and optimises each bundle on one core: the three side by side.
trunk_build app &
bundles=($!)
for page in cart checkout; do
  trunk_build "$page" --dist "target/trunk-$page" --html-output "$page.html" "$page.html" &
  bundles+=($!)
done
for bundle in "${bundles[@]}"; do wait "$bundle" || exit 1; done
for page in cart checkout; do cp "target/trunk-$page"/* dist/; done
node scripts/minify-glue.mjs dist
node scripts/prefetch-app.mjs dist cart.html checkout.html
node scripts/precompress.mjs dist

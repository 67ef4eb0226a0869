#!/usr/bin/env bash
# Builds the book (docs/, with mdBook) into target/book and checks every link
# and #anchor in it, and in README.md and ARCHITECTURE.md, with lychee: offline,
# so addresses off this machine are not followed. Installs both tools (from
# crates.io) when missing. Exits non-zero on a broken link or anchor.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

# Only mdBook's build is needed, not its server.
if [ "$(mdbook --version 2>/dev/null | awk '{print $2}')" != "v$MDBOOK_VERSION" ]; then
  say "installing mdbook $MDBOOK_VERSION (a minute or two, once)"
  cargo install --quiet mdbook --version "$MDBOOK_VERSION" --locked --no-default-features --features search
fi
if [ "$(lychee --version 2>/dev/null | awk '{print $2}')" != "$LYCHEE_VERSION" ]; then
  say "installing lychee $LYCHEE_VERSION (a few minutes, once)"
  cargo install --quiet lychee --version "$LYCHEE_VERSION" --locked --no-default-features
fi

mdbook build docs
# The root is the book's, for the root-relative links of its 404 page.
lychee --offline --include-fragments --no-progress --root-dir "$REPO_ROOT/target/book" \
  target/book README.md ARCHITECTURE.md
say "the book is in target/book (open target/book/index.html)"

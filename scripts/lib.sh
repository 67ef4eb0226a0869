# Shared by the scripts in this folder: paths, tool locations, logging.
# shellcheck shell=bash

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS_DIR="$REPO_ROOT/.tools"
export PATH="$TOOLS_DIR/node_modules/.bin:$HOME/.cargo/bin:$PATH"

TRUNK_VERSION="0.21.14"
NEXTEST_VERSION="0.9.151"
DENY_VERSION="0.20.2"
BINARYEN_VERSION="132"
TERSER_VERSION="5.51.4"
MDBOOK_VERSION="0.5.4"
LYCHEE_VERSION="0.24.2"

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
warn() { printf '\033[33mwarning: %s\033[0m\n' "$*" >&2; }
die() { printf '\033[31merror: %s\033[0m\n' "$*" >&2; exit 1; }

# The wasm-bindgen version the page is built with; the CLI must match it exactly.
wasm_bindgen_version() {
  awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$REPO_ROOT/Cargo.lock"
}

# Runs a command as root, through sudo when we are not root.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Waits for the nth (default first) URL a process prints to FILE, and prints it.
url_in() {
  local url
  until url=$(grep -o 'http://[0-9.:]*' "$1" 2>/dev/null | sed -n "${2:-1}p") && [ -n "$url" ]; do sleep 0.1; done
  echo "$url"
}

# Waits up to five minutes for URL to answer; otherwise shows the end of LOG and
# stops, naming WHAT did not start. Usage: wait_for URL WHAT LOG
wait_for() {
  for _ in $(seq 1 600); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.5
  done
  tail -n 30 "$3" >&2
  die "$2 did not start (log above)"
}

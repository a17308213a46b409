#!/usr/bin/env bash
# System packages Cortex uses, installed with apt-get when missing (as root, or through sudo):
#   redis-server  the guest door's queue (the embedded default starts a private one)
#   chromium      with --tests: the console's browser tests (Debian's chromium; Playwright
#                 drives it and never downloads a browser of its own)
#   nodejs, npm   with --tests, when npm is missing: the TypeScript MCP SDK client's tests
#   caddy         with --tests: docs/PUBLIC_ADDRESS.md's reverse proxy, run as the page writes it
set -euo pipefail
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [ "${1:-}" = "--tests" ]; then
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)  # the TypeScript MCP SDK client's tests
  command -v caddy >/dev/null 2>&1 || missing+=(caddy)  # the public-address page's proxy
fi
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q "${missing[@]}"

#!/usr/bin/env bash
# System packages Cortex uses, installed with apt-get when missing (as root, or through sudo):
#   redis-server  the guest door's queue (the embedded default starts a private one)
#   chromium      with --tests: the console's browser tests (Debian's chromium; Playwright
#                 drives it and never downloads a browser of its own)
set -euo pipefail
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [ "${1:-}" = "--tests" ]; then
  [ -x /usr/bin/chromium ] || missing+=(chromium)
fi
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q "${missing[@]}"

#!/usr/bin/env bash
# System packages the test suite needs: a real redis-server, and Chromium for the
# console's browser tests (Debian's chromium; Playwright drives it, never downloads one).
# Installs them with apt-get when missing (as root, or through sudo).
set -euo pipefail
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q "${missing[@]}"

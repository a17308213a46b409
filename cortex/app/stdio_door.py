"""`cortex stdio`: the owner door over stdio, for desktop clients that start local servers
(Claude Desktop, Claude Code, Cursor, VS Code), with no Node bridge.

One writer per brain stays the rule: when a server for this brain runs (its lock names its
URL, `brain.lock.BrainLock.holder`), stdio attaches to it; when none runs, it starts
`cortex serve` for the brain, waits until it is ready, attaches, and stops it when the
client goes. Attaching is a bridge: each JSON-RPC line the client writes on stdin is posted
to the server's `/mcp` with the owner token, and each reply is written on stdout as one
line, so the door, tool and client trailers are the HTTP door's own. Requests run side by
side (a long ask does not hold up a ping). What a plain request/reply bridge does not carry:
messages the server starts itself (sampling, listen streams); over stdio the reader is the
server's own.

Logs go to stderr (stdout is the protocol's); the server it starts logs to
`<CORTEX_HOME>/stdio-server.log`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

from cortex.app.startup import healthz
from cortex.errors import CortexError
from cortex.settings import Settings
from cortex.state_folder import make as make_state_folder

__all__ = ["READY_WAIT_S", "Bridge", "run_stdio"]

# How long a started server may take to answer /healthz (a first start builds the index).
READY_WAIT_S = 300.0
WORKERS = 8  # requests in flight at once
_PROTOCOL = "2025-06-18"  # said until the server's initialize reply names its own


def run_stdio(settings: Settings, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> int:
    """Bridge stdin/stdout to this brain's server, starting one when none runs."""
    url, started = _server(settings)
    try:
        token = _token(settings)
        Bridge(f"{url}/mcp", token).run(stdin or sys.stdin.buffer, stdout or sys.stdout.buffer)
    finally:
        if started is not None:
            started.terminate()  # the server saves its index and lets go of the brain
            try:
                started.wait(60)
            except subprocess.TimeoutExpired:
                started.kill()
    return 0


def _server(settings: Settings) -> tuple[str, subprocess.Popen | None]:
    """The URL of the server of this brain, and the process when this call started it."""
    running = _running_url(settings)
    if running is not None:
        _say(f"cortex stdio: attached to the server of {settings.brain} at {running}")
        return running, None
    log = make_state_folder(settings.home) / "stdio-server.log"  # 0700, as every part makes it
    # The server runs the code this door runs (a bundle's own copy, or the installed one).
    here = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)}
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cortex.cli", "serve", "--port", str(settings.port)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    url = f"http://127.0.0.1:{settings.port}"
    _say(f"cortex stdio: no server of {settings.brain} ran; started one at {url} (its log: {log})")
    deadline = time.monotonic() + READY_WAIT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise CortexError(f"cortex stdio: the server it started stopped (exit {proc.returncode}); see {log}")
        if healthz(url) == 200:
            return url, proc
        time.sleep(0.25)
    proc.terminate()
    raise CortexError(f"cortex stdio: the server it started was not ready in {READY_WAIT_S:.0f} s; see {log}")


def _running_url(settings: Settings) -> str | None:
    """Where the server that holds this brain's lock answers, or None when none holds it."""
    from cortex.app.brain_store import open_local_store
    from cortex.brain.lock import BrainLock

    if settings.remote:
        return None
    store = open_local_store(settings)
    if store is None:
        return None
    holder = BrainLock.holder(store.common_dir)
    if holder is None:
        return None
    url = holder.get("url")
    if holder.get("role") != "served" or not isinstance(url, str):
        role, pid = holder.get("role", "held"), holder.get("pid")
        raise CortexError(f"cortex stdio: this brain is {role} by PID {pid}; try again when it is done")
    return url.rstrip("/").removesuffix("/mcp")


def _token(settings: Settings) -> str:
    from cortex.settings import HEADER_FILE, secret_in_effect

    token = secret_in_effect(settings, "token")
    if token is None:  # a server given CORTEX_TOKEN keeps it in the 0600 header file for clients
        try:
            line = (settings.home / HEADER_FILE).read_text().strip()
        except OSError:
            line = ""
        token = line.removeprefix("Authorization: Bearer ").strip() or None
    if token is None:
        raise CortexError("cortex stdio: no owner token in CORTEX_TOKEN or the state folder; run cortex serve once")
    return token


class Bridge:
    """Newline-delimited JSON-RPC on a pair of streams, posted to a Streamable HTTP endpoint."""

    def __init__(self, endpoint: str, token: str):
        self.endpoint = endpoint
        self.token = token
        self.session: str | None = None
        self.protocol = _PROTOCOL
        self._out = threading.Lock()

    def run(self, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        with ThreadPoolExecutor(WORKERS, thread_name_prefix="stdio") as pool:
            for line in stdin:
                if not line.strip():
                    continue
                try:
                    message = json.loads(line)
                except ValueError:
                    self._write(
                        stdout, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}
                    )
                    continue
                if isinstance(message, dict) and message.get("method") == "initialize":
                    self._send(message, stdout)  # answered before the next line: later ones carry its session
                    continue
                pool.submit(self._send, message, stdout)
        self._close()

    def _send(self, message: Any, stdout: IO[bytes]) -> None:
        is_request = isinstance(message, dict) and "id" in message and "method" in message
        headers = {
            "Authorization": f"Bearer {self.token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": self.protocol,
        }
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        request = urllib.request.Request(self.endpoint, json.dumps(message).encode(), headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=600) as r:
                if r.headers.get("mcp-session-id"):
                    self.session = r.headers["mcp-session-id"]
                body = r.read()
                kind = r.headers.get("content-type", "")
        except urllib.error.HTTPError as exc:
            if is_request:
                said = exc.read().decode("utf-8", "replace")[:300]
                self._write(stdout, _error(message["id"], f"the server answered HTTP {exc.code}: {said}"))
            return
        except OSError as exc:
            if is_request:
                self._write(stdout, _error(message["id"], f"the server could not be reached ({exc})"))
            return
        for reply in _replies(body, kind):
            result = reply.get("result") if isinstance(reply, dict) else None
            if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                self.protocol = result["protocolVersion"]
            self._write(stdout, reply)

    def _write(self, stdout: IO[bytes], reply: Any) -> None:
        with self._out:
            stdout.write(json.dumps(reply, ensure_ascii=False).encode() + b"\n")
            stdout.flush()

    def _close(self) -> None:
        """End the server's session (the client closed stdin)."""
        if not self.session:
            return
        headers = {"Authorization": f"Bearer {self.token}", "Mcp-Session-Id": self.session}
        try:
            urllib.request.urlopen(urllib.request.Request(self.endpoint, headers=headers, method="DELETE"), timeout=5)
        except (OSError, urllib.error.URLError):
            pass


def _replies(body: bytes, kind: str) -> list[Any]:
    """The JSON-RPC messages of a reply: one JSON body, or the data lines of an event stream."""
    if not body.strip():
        return []  # 202: a notification taken
    if "text/event-stream" in kind:
        out = []
        for line in body.decode("utf-8", "replace").splitlines():
            if line.startswith("data:") and line[5:].strip():
                out.append(json.loads(line[5:]))
        return out
    return [json.loads(body)]


def _error(ident: Any, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32603, "message": text}}


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)

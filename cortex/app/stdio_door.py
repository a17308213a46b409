"""`cortex stdio`: the owner door over stdio, for desktop clients that start local servers
(Claude Desktop, Claude Code, Cursor, VS Code), with no Node bridge.

One writer per brain stays the rule: when a server for this brain runs (its lock names its
URL, `brain.lock.BrainLock.holder`), stdio attaches to it; when none runs, it starts
`cortex serve` for the brain, waits until it is ready, attaches, and stops it when the
client goes. A port on 127.0.0.1 can be taken by any local process, so the owner token
crosses only after the server proves it holds that token for this brain
(`/healthz?challenge=`, `settings.identity_proof`); anything else answering is named, with
the brain it serves, and sent nothing. Attaching is a bridge: each JSON-RPC line the client writes on stdin is posted
to the server's `/mcp` with the owner token, and each reply is written on stdout as one
line, so the door, tool and client trailers are the HTTP door's own. Requests run side by
side (a long ask does not hold up a ping). What a plain request/reply bridge does not carry:
messages the server starts itself (sampling, listen streams); over stdio the reader is the
server's own.

Logs go to stderr (stdout is the protocol's); the server it starts logs to
`<CORTEX_HOME>/stdio-server.log` (0600; its banner names where the token is, never the token).
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

from cortex.app.port_holder import listener, port_holder, served_brain
from cortex.errors import CortexError
from cortex.notes.paths import MAX_CONTENT_BYTES
from cortex.settings import HEADER_FILE, Settings, identity_proof, secret_in_effect
from cortex.state_folder import make as make_state_folder

__all__ = ["MAX_LINE_BYTES", "READY_WAIT_S", "Bridge", "run_stdio"]

# How long a started server may take to answer /healthz (a first start builds the index).
READY_WAIT_S = 300.0
WORKERS = 8  # requests in flight at once
_PROTOCOL = "2025-06-18"  # said until the server's initialize reply names its own
# A note at its 1 MiB cap, JSON-escaped at worst 6 bytes a byte, fits; a longer line is
# refused as it is read, never held whole.
MAX_LINE_BYTES = 8 * MAX_CONTENT_BYTES
PARSE_ERROR, INVALID, INTERNAL = -32700, -32600, -32603  # JSON-RPC 2.0's codes


def run_stdio(settings: Settings, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> int:
    """Bridge stdin/stdout to this brain's server, starting one when none runs."""
    url, token, started = _server(settings)
    try:
        Bridge(f"{url}/mcp", token).run(stdin or sys.stdin.buffer, stdout or sys.stdout.buffer)
    finally:
        if started is not None:
            started.terminate()  # the server saves its index and lets go of the brain
            try:
                started.wait(60)
            except subprocess.TimeoutExpired:
                started.kill()
    return 0


def _server(settings: Settings) -> tuple[str, str, subprocess.Popen | None]:
    """The URL of the server of this brain, the owner token it proved it holds, and the
    process when this call started it. CortexError, with nothing sent, when whatever answers
    cannot prove it is this brain's server."""
    running, pid = _running(settings)
    if running is not None:
        token = _token(settings)
        _proven(settings, running, lambda: token, pid)
        _say(f"cortex stdio: attached to the server of {settings.brain} at {running}")
        return running, token, None
    url = f"http://127.0.0.1:{settings.port}"
    if listener(settings.port) is not None:  # no server of this brain, yet the port is taken
        raise CortexError(_not_ours(settings, url))
    home = make_state_folder(settings.home)  # 0700, as every part makes it
    log = home / "stdio-server.log"
    # The server runs the code this door runs (a bundle's own copy, or the installed one);
    # -P: a folder named `cortex` in the client's working folder is not imported instead.
    here = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)}
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.fchmod(fd, 0o600)  # one an older version made 0644
    with os.fdopen(fd, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "cortex.cli", "serve", "--brain", str(settings.brain)]
            + ["--port", str(settings.port), "--no-secrets-shown"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    _say(f"cortex stdio: no server of {settings.brain} ran; starting one at {url} (its log: {log})")
    try:
        _proven(settings, url, lambda: _known_token(settings), proc.pid, (proc, log))
    except BaseException:
        proc.terminate()
        raise
    token = _token(settings)
    return url, token, proc


def _proven(
    settings: Settings,
    url: str,
    token: Callable[[], str | None],
    pid: int | None,
    started: tuple[subprocess.Popen, Path] | None = None,
) -> None:
    """Return once the server at `url` (process `pid`) proves it serves this brain with this
    brain's owner token; CortexError otherwise, saying who listens there. A server still
    starting is waited for (READY_WAIT_S); another process answering is refused at once."""
    deadline = time.monotonic() + READY_WAIT_S
    while time.monotonic() < deadline:
        if started is not None and started[0].poll() is not None:
            proc, log = started
            raise CortexError(f"the server it started stopped (exit {proc.returncode}): {_last_line(log)}")
        secret = token()
        answer = _challenge(url, secret, settings.brain) if secret else None
        if answer == "proven":
            return
        holder = listener(urllib.parse.urlsplit(url).port or 80)
        if answer == "wrong" or (answer is not None and holder is not None and holder != str(pid)):
            raise CortexError(_not_ours(settings, url))
        time.sleep(0.25)  # nothing answers yet, or a server still being built
    raise CortexError(f"no server of {settings.brain} was ready at {url} in {READY_WAIT_S:.0f} s; nothing was sent")


def _challenge(url: str, token: str, brain: Path) -> str | None:
    """Ask the server at `url` to prove it holds `token` for `brain`, without sending it:
    "proven"; "wrong" (it answered, with no proof or another); "starting"; None (no answer)."""
    nonce = secrets.token_hex(16)
    try:
        with urllib.request.urlopen(f"{url}/healthz?challenge={nonce}", timeout=2) as reply:
            body = json.loads(reply.read(65536))
    except urllib.error.HTTPError as exc:
        return "starting" if exc.code == 503 else "wrong"  # 503: still starting, or failed (then it exits)
    except OSError:
        return None
    except ValueError:
        return "wrong"
    if not isinstance(body, dict):
        return "wrong"
    proof = body.get("proof")
    if isinstance(proof, str) and hmac.compare_digest(proof, identity_proof(token, nonce, brain)):
        return "proven"
    return "starting" if body.get("starting") is True and "proof" not in body else "wrong"


def _not_ours(settings: Settings, url: str) -> str:
    """One line: who holds the port of `url`, for which brain, and that nothing was sent."""
    port = urllib.parse.urlsplit(url).port or 80
    pid = listener(port)
    brain = served_brain(pid) if pid is not None else None
    who = port_holder(port) + (f", the server of {brain}" if brain else "")
    return (
        f"{who} listens at {url} and did not prove it serves {settings.brain}; the owner token was not sent. "
        "Stop it, or give this brain's server another port (--port or PORT)"
    )


def _last_line(log: Path) -> str:
    """The last line the server wrote in its log (its reason for stopping)."""
    try:
        with open(log, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - 4096))
            lines = f.read().decode("utf-8", "replace").strip().splitlines()
    except OSError:
        lines = []
    return lines[-1] if lines else f"see {log}"


def _running(settings: Settings) -> tuple[str | None, int | None]:
    """Where the server that holds this brain's lock answers, and its PID; (None, None) when
    none holds it."""
    from cortex.app.brain_store import open_local_store
    from cortex.brain.lock import BrainLock

    if settings.remote:
        return None, None
    store = open_local_store(settings)
    holder = BrainLock.holder(store.common_dir) if store is not None else None
    if holder is None:
        return None, None
    url, pid = holder.get("url"), holder.get("pid")
    if holder.get("role") != "served" or not isinstance(url, str):
        raise CortexError(f"this brain is {holder.get('role', 'held')} by PID {pid}; try again when it is done")
    return url.rstrip("/").removesuffix("/mcp"), pid if isinstance(pid, int) else None


def _known_token(settings: Settings) -> str | None:
    """The owner token of this state folder, or None before the first server made it."""
    token = secret_in_effect(settings, "token")
    if token is None:  # a server given CORTEX_TOKEN keeps it in the 0600 header file for clients
        try:
            line = (settings.home / HEADER_FILE).read_text().strip()
        except OSError:
            line = ""
        token = line.removeprefix("Authorization: Bearer ").strip() or None
    return token


def _token(settings: Settings) -> str:
    token = _known_token(settings)
    if token is None:
        raise CortexError(
            f"no owner token in CORTEX_TOKEN or {settings.home}, though a server of {settings.brain} runs; "
            "set CORTEX_HOME to the state folder that server uses"
        )
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
            while line := stdin.readline(MAX_LINE_BYTES + 1):
                if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                    _skip_line(stdin)  # never held whole
                    self._write(stdout, _error(None, f"a message over {MAX_LINE_BYTES:,} bytes is refused", INVALID))
                    continue
                if not line.strip():
                    continue
                try:
                    message = json.loads(line)
                except ValueError:
                    self._write(stdout, _error(None, "parse error", PARSE_ERROR))
                    continue
                if isinstance(message, list):  # a batch: answered with one array, as JSON-RPC 2.0 says
                    if message:
                        pool.submit(self._batch, message, stdout)
                    else:
                        self._write(stdout, _error(None, "an empty batch", INVALID))
                    continue
                if isinstance(message, dict) and message.get("method") == "initialize":
                    self._send(message, stdout)  # answered before the next line: later ones carry its session
                    continue
                pool.submit(self._send, message, stdout)
        self._close()

    def _send(self, message: Any, stdout: IO[bytes]) -> None:
        for reply in self._post(message):
            self._write(stdout, reply)

    def _batch(self, messages: list[Any], stdout: IO[bytes]) -> None:
        """Each message of a batch in turn; their replies in one array (none for notifications)."""
        replies = [reply for message in messages for reply in self._post(message)]
        if replies:
            self._write(stdout, replies)

    def _post(self, message: Any) -> list[Any]:
        """The server's replies to one message (none for a notification it took)."""
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
            said = exc.read().decode("utf-8", "replace")[:300]
            return [_error(message["id"], f"the server answered HTTP {exc.code}: {said}")] if is_request else []
        except OSError as exc:
            return [_error(message["id"], f"the server could not be reached ({exc})")] if is_request else []
        replies = _replies(body, kind)
        for reply in replies:
            result = reply.get("result") if isinstance(reply, dict) else None
            if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                self.protocol = result["protocolVersion"]
        return replies

    def _write(self, stdout: IO[bytes], reply: Any) -> None:
        with self._out:
            stdout.write(json.dumps(reply, ensure_ascii=False).encode() + b"\n")
            stdout.flush()

    def _close(self) -> None:
        """End the server's session (the client closed stdin)."""
        if not self.session:
            return
        headers = {"Authorization": f"Bearer {self.token}", "Mcp-Session-Id": self.session}
        with contextlib.suppress(OSError, urllib.error.URLError):
            urllib.request.urlopen(urllib.request.Request(self.endpoint, headers=headers, method="DELETE"), timeout=5)


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


def _error(ident: Any, text: str, code: int = INTERNAL) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": text}}


def _skip_line(stream: IO[bytes]) -> None:
    """Read past the rest of a line, a chunk at a time."""
    while chunk := stream.readline(65536):
        if chunk.endswith(b"\n"):
            return


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)

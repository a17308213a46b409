"""`cortex stdio` (issue 55): the MCP SDK's own stdio client, as a desktop client starts it.
Beside a running `cortex serve` of the same brain it attaches, and writes over both doors land
in one history; with no server it starts one, and stops it when the client goes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from reliakit import ROOT, ServeProcess, free_port
from serverkit import TOKEN, call

from cortex.app.brain_setup import init_brain
from cortex.brain.lock import BrainLock

pytestmark = pytest.mark.slow  # each starts servers


def stdio_env(home: Path, brain: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "REDIS_"))}
    env.update(CORTEX_HOME=str(home), CORTEX_BRAIN=str(brain), CORTEX_TOKEN=TOKEN, CORTEX_MEANING="off")
    env.update(PORT=str(port), PYTHONPATH=str(ROOT))
    return env


async def over_stdio(env: dict[str, str], *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "cortex.cli", "stdio"], env=env, cwd=str(ROOT))
    out = []
    with open(os.devnull, "w") as quiet:
        async with Client(stdio_client(params, errlog=quiet)) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert {"brain_read", "brain_write", "brain_search"} <= names
            for tool, args in calls:
                out.append(await c.call_tool(tool, args))
    return out


def log(brain: Path) -> list[str]:
    return subprocess.run(
        ["git", "-C", str(brain), "log", "--format=%s", "main"], capture_output=True, text=True, check=True
    ).stdout.splitlines()


def test_stdio_attaches_to_the_running_server_and_both_writes_land_in_one_history(tmp_path: Path):
    brain = tmp_path / "brain.git"
    init_brain(brain, bare=True)
    serve = ServeProcess(tmp_path / "home", brain, {"CORTEX_TOKEN": TOKEN}, tmp_path / "bin", tmp_path / "log")
    serve.start()
    try:
        w = call(f"{serve.url}/mcp", "brain_write", path="notes/http.md", mode="create", content="# Over HTTP\n")
        assert w.error is None, w.error
        env = stdio_env(tmp_path / "home", brain, free_port())  # another port: it must not start a server
        wrote, read = asyncio.run(
            over_stdio(
                env,
                ("brain_write", {"path": "notes/stdio.md", "mode": "create", "content": "# Over stdio\n"}),
                ("brain_read", {"path": "notes/http.md"}),
            )
        )
        assert not wrote.is_error, wrote.content
        assert not read.is_error and "Over HTTP" in str(read.content)
        subjects = log(brain)
        assert any("notes/stdio.md" in s for s in subjects) and any("notes/http.md" in s for s in subjects)
        assert call(f"{serve.url}/mcp", "brain_read", path="notes/stdio.md").error is None  # one brain, one server
        assert serve.proc is not None and serve.proc.poll() is None  # still the one writer
    finally:
        serve.stop()


def test_stdio_starts_a_server_when_none_runs_and_stops_it_after(tmp_path: Path):
    brain = tmp_path / "brain.git"
    init_brain(brain, bare=True)
    env = stdio_env(tmp_path / "home", brain, free_port())
    (wrote,) = asyncio.run(
        over_stdio(env, ("brain_write", {"path": "notes/alone.md", "mode": "create", "content": "# Alone\n"}))
    )
    assert not wrote.is_error, wrote.content
    assert any("notes/alone.md" in s for s in log(brain))
    assert BrainLock.holder(brain) is None  # the server it started let go of the brain
    assert oct((tmp_path / "home").stat().st_mode & 0o777) == "0o700"  # the state folder stdio made
    assert "Cortex serving" in (tmp_path / "home" / "stdio-server.log").read_text()  # its log, in the state folder


class Impostor:
    """A local listener that took a port first: it answers 200 to everything and keeps every
    Authorization header it is sent."""

    def __init__(self, port: int):
        import http.server
        import threading

        seen = self.seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self) -> None:
                seen.append(self.headers.get("Authorization"))
                body = b'{"ok": true, "sha": null}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_DELETE = _answer

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# A client's first message, as a desktop client sends it.
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
        "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip


def stdio_once(env: dict[str, str], cwd: Path = ROOT, timeout: float = 60) -> subprocess.CompletedProcess:
    """`cortex stdio` given one initialize line, as a client's first message."""
    return subprocess.run(
        [sys.executable, "-P", "-m", "cortex.cli", "stdio"],
        input=json.dumps(INIT).encode() + b"\n",
        env=env,
        cwd=str(cwd),
        capture_output=True,
        timeout=timeout,
    )


def test_stdio_never_sends_the_token_to_a_listener_that_took_its_port(tmp_path: Path):
    brain = tmp_path / "brain.git"
    init_brain(brain, bare=True)
    port = free_port()
    impostor = Impostor(port)
    try:
        done = stdio_once(stdio_env(tmp_path / "home", brain, port))
    finally:
        impostor.close()
    said = done.stderr.decode()
    assert done.returncode == 1, said
    assert not any(impostor.seen), impostor.seen  # no Authorization header ever reached it
    assert f"PID {os.getpid()}" in said and "the owner token was not sent" in said
    assert said.strip().splitlines()[-1].startswith("cortex stdio: PID")  # one line, said once
    assert b"result" not in done.stdout


def test_stdio_refuses_the_server_of_another_brain_on_its_port_and_names_that_brain(tmp_path: Path):
    mine, theirs = tmp_path / "mine.git", tmp_path / "vault.git"
    init_brain(mine, bare=True)
    init_brain(theirs, bare=True)
    # Another brain's server on the port this brain's stdio would start one on; the same token
    # too, so only the brain in the proof tells them apart.
    other = ServeProcess(tmp_path / "home", theirs, {"CORTEX_TOKEN": TOKEN}, tmp_path / "bin", tmp_path / "log")
    other.start()
    try:
        head = log(theirs)
        done = stdio_once(stdio_env(tmp_path / "home", mine, other.port))
        said = done.stderr.decode()
        assert done.returncode == 1, said
        assert f"the server of {theirs}" in said and "did not prove it serves" in said, said
        assert "the owner token was not sent" in said
        assert log(theirs) == head  # nothing written there
    finally:
        other.stop()


def test_stdio_refuses_an_impostor_at_the_url_the_lock_names(tmp_path: Path):
    brain = tmp_path / "brain.git"
    init_brain(brain, bare=True)
    port = free_port()
    impostor = Impostor(port)
    # A lock that names the impostor's URL: the lock is no proof of who answers there.
    held = BrainLock.acquire(brain, brain, "served", f"http://127.0.0.1:{port}/mcp")
    try:
        done = stdio_once(stdio_env(tmp_path / "home", brain, free_port()))
    finally:
        if held is not None:
            held.release()
        impostor.close()
    assert done.returncode == 1, done.stderr
    assert not any(impostor.seen)
    assert "the owner token was not sent" in done.stderr.decode()


def test_stdio_in_a_fresh_state_folder_starts_the_server_and_its_log_holds_no_secret(tmp_path: Path):
    """No token yet, no CORTEX_TOKEN: the server stdio starts makes it; stdio waits for its proof.
    The log is the owner's alone and never holds the token or the URL secret. The client's
    working folder holds a folder named `cortex`, as a desktop client's may."""
    brain = tmp_path / "brain.git"
    init_brain(brain, bare=True)
    home = tmp_path / "home"
    env = stdio_env(home, brain, free_port())
    del env["CORTEX_TOKEN"]
    elsewhere = tmp_path / "client"
    (elsewhere / "cortex").mkdir(parents=True)
    (elsewhere / "cortex" / "__init__.py").write_text("raise SystemExit('the wrong cortex was imported')\n")
    (elsewhere / "cortex" / "cli.py").write_text("raise SystemExit('the wrong cortex was imported')\n")
    done = stdio_once(env, cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout.splitlines()[0])
    assert reply["result"]["serverInfo"], reply
    server_log = home / "stdio-server.log"
    assert oct(server_log.stat().st_mode & 0o777) == "0o600"
    text = server_log.read_text()
    for name in ("owner-token", "url-secret"):
        secret = (home / name).read_text().strip()
        assert secret and secret not in text, name
    assert "Cortex serving" in text


def test_stdio_answers_a_batch_with_one_array_and_refuses_an_oversized_line_unread(tmp_path: Path):
    import io

    from cortex.app.stdio_door import MAX_LINE_BYTES, Bridge

    brain = tmp_path / "brain.git"
    init_brain(brain, bare=True)
    serve = ServeProcess(tmp_path / "home", brain, {"CORTEX_TOKEN": TOKEN}, tmp_path / "bin", tmp_path / "log")
    serve.start()
    try:
        lines = [
            json.dumps(INIT).encode(),
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(),
            b'{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"pad": "' + b"x" * MAX_LINE_BYTES + b'"}}',
            json.dumps(
                [
                    {"jsonrpc": "2.0", "id": 2, "method": "ping"},
                    {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                ]
            ).encode(),
            b"[]",
        ]

        class Counted(io.BytesIO):
            largest = 0

            def readline(self, size: int | None = -1) -> bytes:
                line = super().readline(size)
                Counted.largest = max(Counted.largest, len(line))
                return line

        out = io.BytesIO()
        Bridge(f"{serve.url}/mcp", TOKEN).run(Counted(b"\n".join(lines) + b"\n"), out)
        replies = [json.loads(line) for line in out.getvalue().splitlines()]
        assert Counted.largest <= MAX_LINE_BYTES + 1  # the long line was never held whole
        refused = [r for r in replies if isinstance(r, dict) and r.get("id") is None]
        assert {r["error"]["code"] for r in refused} == {-32600}  # the oversized line, the empty batch
        assert any("is refused" in r["error"]["message"] for r in refused)
        (batch,) = [r for r in replies if isinstance(r, list)]
        assert sorted(r["id"] for r in batch) == [2, 3] and all("result" in r for r in batch)
        assert not any(isinstance(r, dict) and r.get("id") == 9 for r in replies)
    finally:
        serve.stop()

"""Backlinks right from the first read (issue 62): a read at once after a start waits a
moment for the index's first build, and when the build runs longer, the reply says the
backlinks are still being read instead of listing none. A real `cortex serve` process, and
an in-process server whose first build is held half-way, both over real HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from consolekit import owner
from reliakit import free_port
from serverkit import TOKEN, RunningServer, call, make_settings

from cortex.app.server import assemble, make_app
from cortex.brain.trailers import Actor
from cortex.store.git import GitStore

pytestmark = pytest.mark.slow  # each starts a server

HUB = "# Hub\n\nSee [[Postgres]], [[Postgres|the database]] and [[Redis]].\n"
FILES = {
    "notes/hub.md": HUB.encode(),
    "notes/postgres.md": b"# Postgres\n\nWe run Postgres 16.\n",
    "notes/redis.md": b"# Redis\n\nQueues live in Redis. Back to [[hub]].\n",
    "notes/plain.md": b"# Plain\n\nNothing links here.\n",
}
# Enough notes that the first build outlasts an MCP client's handshake (about 0.7 s here):
# the read comes while it runs, as the did.
FILLER = {f"notes/filler-{i:04d}.md": f"# Filler {i}\n\nWords about topic {i}.\n".encode() for i in range(1_000)}
WANT = {
    "notes/postgres.md": [{"path": "notes/hub.md", "links": 2}],
    "notes/redis.md": [{"path": "notes/hub.md", "links": 1}],
    "notes/hub.md": [{"path": "notes/redis.md", "links": 1}],
    "notes/plain.md": [],
}


def _right_or_pending(reply: dict, path: str) -> bool:
    """True when the backlinks are right; False when the reply says they are pending (and
    lists none); fails when it lists wrong ones or leaves them out unsaid."""
    if "backlinks" in reply:
        assert reply["backlinks"] == WANT[path], (path, reply["backlinks"])
        assert "backlinks_pending" not in reply
        return True
    assert reply.get("backlinks_pending") is True, reply
    assert "still being read" in reply["links_note"], reply
    return False


def _serve(home: Path, brain: Path, port: int) -> subprocess.Popen:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "CORTEX_HOME": str(home / "state"),
        "CORTEX_BRAIN": str(brain),
        "CORTEX_TOKEN": TOKEN,
        "CORTEX_MEANING": "off",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "cortex.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )


def _port_open(port: int, proc: subprocess.Popen) -> None:
    """Until the port takes a connection: `cortex serve` opens it first and holds requests
    until the server is built; /healthz is not asked (it would start the index build)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, "cortex serve exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.02)
    raise AssertionError("cortex serve did not open its port")


def test_a_read_at_once_after_each_start_has_the_right_backlinks_or_says_they_are_pending(tmp_path: Path):
    """Two starts of a real `cortex serve`: a full first build, then the saved index loaded.
    Before the fix, the first start's reads listed `backlinks: []` for notes linked from the hub."""
    brain = tmp_path / "brain.git"
    GitStore.init(brain, {**FILES, **FILLER}, bare=True, message="notes with links")
    for _ in range(2):
        port = free_port()
        proc = _serve(tmp_path, brain, port)
        try:
            _port_open(port, proc)
            url = f"http://127.0.0.1:{port}/mcp"
            for path in WANT:
                reply = call(url, "brain_read", path=path)
                assert reply.error is None, reply.error
                _right_or_pending(reply.data, path)
        finally:
            proc.terminate()
            proc.wait(20)


def test_a_build_held_past_the_wait_is_said_by_brain_read_and_the_console(
    tmp_path: Path, brain_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded = assemble(make_settings(tmp_path, brain_path))
    for path, data in FILES.items():
        seeded.brain.write(path, "create", Actor("owner", "brain_write", "pytest"), content=data.decode())
    parts = assemble(make_settings(tmp_path, brain_path))  # a fresh start: nothing built yet
    parts.brain.corpus.first_read_wait = 0.3
    store = parts.brain.store
    hold, release = threading.Event(), threading.Event()
    blob_bytes = store.blob_bytes

    def held(blob):  # the build's reads wait, as a large brain's first build would still run
        if threading.current_thread().name == "cortex-index":
            hold.set()
            release.wait(30)
        return blob_bytes(blob)

    monkeypatch.setattr(store, "blob_bytes", held)
    with RunningServer(make_app(parts), parts.settings) as running:
        parts.brain.corpus.warm()
        assert hold.wait(10)
        try:
            cold = call(f"{running.url}/mcp", "brain_read", path="notes/postgres.md")
            assert cold.error is None and _right_or_pending(cold.data, "notes/postgres.md") is False
            assert "links" not in cold.data  # left out, not an empty list
            page = owner(running.url).get("/console/note/notes/postgres.md")
            assert page.status_code == 200 and 'id="backlinks-pending"' in page.text
            assert "still being read" in page.text
        finally:
            release.set()
        parts.brain.corpus.latest()
        warm = call(f"{running.url}/mcp", "brain_read", path="notes/postgres.md")
        assert _right_or_pending(warm.data, "notes/postgres.md") is True
        page = owner(running.url).get("/console/note/notes/postgres.md")
        assert 'id="backlinks-pending"' not in page.text and 'class="list backlinks"' in page.text

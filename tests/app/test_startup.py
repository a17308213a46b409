"""The port opens first: /healthz answers while the server behind it is still being built,
other requests wait for it and are then served by it, and a failed build is said and ends the run."""

from __future__ import annotations

import threading
import time

import httpx
import pytest
from serverkit import RunningServer
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from cortex.app.startup import Starting


def inner_app(started: list[str]) -> Starlette:
    import contextlib

    @contextlib.asynccontextmanager
    async def lifespan(app):
        started.append("startup")
        yield
        started.append("shutdown")

    return Starlette(routes=[Route("/hello", lambda request: PlainTextResponse("built"))], lifespan=lifespan)


@pytest.mark.slow
def test_healthz_answers_while_the_build_runs_and_requests_wait_for_it():
    release = threading.Event()
    events: list[str] = []

    def build():
        release.wait(30)  # a large build still running
        return inner_app(events)

    app = Starting(build)
    with RunningServer(app) as running:
        health = httpx.get(f"{running.url}/healthz", timeout=5).json()
        assert health["ok"] and health["starting"] and "being built" in health["note"]
        answers: list[httpx.Response] = []
        waiter = threading.Thread(target=lambda: answers.append(httpx.get(f"{running.url}/hello", timeout=30)))
        waiter.start()
        time.sleep(0.2)
        assert not answers  # held, not refused and not answered by a half-built server
        release.set()
        waiter.join(10)
        assert answers[0].status_code == 200 and answers[0].text == "built"
        assert events == ["startup"]  # the real app's lifespan ran inside ours
    assert events == ["startup", "shutdown"]


def test_a_failed_build_is_said_to_every_request_and_to_the_caller():
    reasons: list[str] = []

    def build():
        raise RuntimeError("not a Git repository: /nowhere\nsecond line")

    app = Starting(build, on_error=reasons.append)
    with RunningServer(app) as running:
        assert app.wait_built(10)
        r = httpx.get(f"{running.url}/hello", timeout=5)
        assert r.status_code == 503 and "not a Git repository: /nowhere" in r.text and "second line" not in r.text
    assert reasons == ["not a Git repository: /nowhere"] and app.error == reasons[0]


@pytest.mark.slow
def test_cortex_serve_opens_its_port_before_the_brain_is_built(tmp_path):
    """A real process on a brain: the first /healthz may say "starting"; the server then comes up."""
    import subprocess
    import sys

    from reliakit import free_port, ready_health

    from cortex.app.brain_setup import init_brain

    brain = tmp_path / "brain.git"
    init_brain(brain, bare=True)
    port = free_port()
    env = {
        "PATH": "/usr/bin:/bin",
        "CORTEX_HOME": str(tmp_path / "home"),
        "CORTEX_BRAIN": str(brain),
        "CORTEX_TOKEN": "t" * 32,
        "HOME": str(tmp_path),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "cortex.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        health = ready_health(f"http://127.0.0.1:{port}", proc)
        assert health is not None and health["notes"] >= 5
    finally:
        proc.terminate()
        proc.wait(20)


@pytest.mark.slow
def test_ctrl_c_stops_cortex_serve_cleanly_without_a_traceback(tmp_path):
    from reliakit import ServeProcess

    from cortex.app.brain_setup import init_brain

    brain = tmp_path / "brain.git"
    init_brain(brain, bare=True)
    serve = ServeProcess(tmp_path / "home", brain, {"CORTEX_TOKEN": "t" * 32}, tmp_path / "bin", tmp_path / "log")
    serve.start()
    proc = serve.proc
    serve.stop()  # SIGINT, as Ctrl-C
    assert proc is not None and proc.returncode == 0
    assert "Traceback" not in serve.output() and "KeyboardInterrupt" not in serve.output()


@pytest.mark.slow
def test_cortex_serve_on_a_wrong_brain_says_why_and_exits(tmp_path):
    import subprocess
    import sys

    from reliakit import free_port

    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# a\n")
    env = {"PATH": "/usr/bin:/bin", "CORTEX_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    r = subprocess.run(
        [sys.executable, "-m", "cortex.cli", "serve", "--brain", str(tmp_path / "notes"), "--port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 1
    assert f"cortex init {tmp_path / 'notes'}" in r.stderr


@pytest.mark.slow
def test_reads_writes_and_healthz_are_served_while_the_index_is_still_being_built(tmp_path, brain_path, monkeypatch):
    """A first build of the index is held half-way (as a large brain's would still be running):
    /healthz says how far it has got, brain_read, brain_history and a write are served, and a
    search that cannot wait is told to come back; once the build ends, the search answers."""
    from serverkit import call, make_settings

    from cortex.app.server import assemble, make_app
    from cortex.brain import brain as brain_module
    from cortex.brain.trailers import Actor

    ACTOR = Actor(door="owner", tool="brain_write", client="pytest 1.0")
    first = assemble(make_settings(tmp_path, brain_path))
    for i in range(30):
        first.brain.write(f"notes/n{i}.md", "create", ACTOR, content=f"# Note {i}\n\nbees {i}\n")
    parts = assemble(make_settings(tmp_path, brain_path))  # a fresh start: nothing built yet
    store = parts.brain.store
    reads, hold, release = [0], threading.Event(), threading.Event()
    blob_bytes = store.blob_bytes

    def slow_blob_bytes(blob):  # the build reads blob by blob; the 10th read waits
        reads[0] += 1
        if reads[0] == 10 and threading.current_thread().name == "cortex-index":
            hold.set()
            release.wait(30)
        return blob_bytes(blob)

    monkeypatch.setattr(store, "blob_bytes", slow_blob_bytes)
    monkeypatch.setattr(brain_module, "INDEX_WAIT", 0.2)
    with RunningServer(make_app(parts), parts.settings) as running:
        parts.brain.corpus.warm()
        assert hold.wait(10)
        health = httpx.get(f"{running.url}/healthz", timeout=5).json()
        assert health["index"] == "building" and health["files_read"] >= 9 and health["files"] >= 30
        url = running.url + "/mcp"
        assert "bees 3" in call(url, "brain_read", path="notes/n3.md").data["text"]
        assert call(url, "brain_history", limit=2).data["commits"]
        written = call(url, "brain_write", path="notes/new.md", mode="create", content="# New\n\nwasps\n")
        assert written.data["sha"]
        waited = call(url, "brain_search", query="bees")
        assert waited.error and "still being built" in waited.error and "files read" in waited.error
        release.set()
        parts.brain.corpus.latest()
        found = call(url, "brain_search", query="wasps")
        assert not found.error and found.data["hits"][0]["path"] == "notes/new.md"
        assert httpx.get(f"{running.url}/healthz", timeout=5).json()["index"] == "ready"


def test_the_name_map_is_made_once_the_index_is_built_not_by_the_first_search(tmp_path, brain_path):
    """`warm_up` makes the map behind "names first" as soon as the index exists: built by the
    first search instead, it cost that search ~440 ms at 10,000 notes."""
    from serverkit import call, serve

    from cortex.app.server import warm_up

    with serve(tmp_path, brain_path) as running:
        tools, corpus = running.parts.tools, running.parts.brain.corpus
        assert tools.names.known is None  # nothing made before the warm-up
        warm_up(running.parts)
        deadline = time.time() + 30
        while time.time() < deadline and (tools.names.known is None or corpus.built() is None):
            time.sleep(0.02)
        head = corpus.built()
        assert head is not None and tools.names.known is not None and tools.names.known[0] == head.sha
        title = next(n.title for n in head.notes.values() if n.title and not n.path.startswith("archive/"))
        hits = call(f"{running.url}/mcp", "brain_search", query=title, k=3).data["hits"]
        assert title in [h["title"] for h in hits]  # the map the warm-up made serves the search

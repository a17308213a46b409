"""Hosted mode on a local bare repository as the remote: fetch, push, races, outages, the webhook."""

from __future__ import annotations

import hashlib
import hmac
import os
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest
from serverkit import RunningServer, call, make_settings
from starlette.applications import Starlette

from cortex.app.brain_setup import init_brain
from cortex.brain.brain import Brain
from cortex.brain.trailers import Actor
from cortex.store.credentials import Auth
from cortex.store.remote import RemoteStore, local_path, signature_ok, webhook_route

ME = Actor(door="owner", tool="brain_write", client="pytest")
ENV = {
    "GIT_AUTHOR_NAME": "Elsewhere",
    "GIT_AUTHOR_EMAIL": "e@example.org",
    "GIT_COMMITTER_NAME": "Elsewhere",
    "GIT_COMMITTER_EMAIL": "e@example.org",
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": "/tmp",
}


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=ENV).stdout


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    path = tmp_path / "remote.git"
    init_brain(path, bare=True)
    return path


def open_store(tmp_path: Path, remote: Path, name: str, interval: float = 5.0) -> RemoteStore:
    return RemoteStore.open(tmp_path / name / "remote-clone.git", str(remote), Auth(), fetch_interval=interval)


def push_from_elsewhere(tmp_path: Path, remote: Path, path: str, line: str) -> str:
    """A hand edit made in another clone (a laptop, the Git host's web editor) and pushed."""
    work = tmp_path / "elsewhere"
    if not work.exists():
        git("clone", "-q", str(remote), str(work), cwd=tmp_path)
    git("pull", "-q", "--ff-only", cwd=work)
    target = work / path
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "a") as f:
        f.write(line + "\n")
    git("add", path, cwd=work)
    git("commit", "-q", "-m", f"elsewhere: {line}", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    return git("rev-parse", "HEAD", cwd=work).strip()


def remote_file(remote: Path, path: str) -> str:
    return git("show", f"main:{path}", cwd=remote)


def assert_linear(remote: Path) -> None:
    assert git("rev-list", "--min-parents=2", "main", cwd=remote).split() == []


def wait_for(cond, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


def test_local_path_detection():
    assert local_path("/srv/brain.git") == "/srv/brain.git"
    assert local_path("file:///srv/brain.git") == "/srv/brain.git"
    assert local_path("https://github.com/me/brain.git") is None
    assert local_path("git@github.com:me/brain.git") is None
    assert Auth.display("https://me:s3cret@github.com/me/brain.git?x=1") == "https://github.com/me/brain.git"
    assert "s3cret" not in Auth("s3cret").scrub("auth failed for https://me:s3cret@host/x (token s3cret)")


def test_every_write_is_pushed(tmp_path: Path, remote: Path):
    brain = Brain(open_store(tmp_path, remote, "a"))
    reply = brain.write("notes/a.md", "create", ME, content="# A\n\npushed\n")
    assert reply["push"] == "pushed"
    assert git("rev-parse", "main", cwd=remote).strip() == reply["sha"]
    assert remote_file(remote, "notes/a.md") == "# A\n\npushed\n"


def test_an_outside_push_between_a_read_and_a_write_is_kept(tmp_path: Path, remote: Path):
    brain = Brain(open_store(tmp_path, remote, "a"))
    brain.write("notes/shared.md", "create", ME, content="# Shared\n")
    sha, blob, _ = brain.read("notes/shared.md")
    outside = push_from_elsewhere(tmp_path, remote, "notes/shared.md", "typed on the laptop")
    reply = brain.write("notes/shared.md", "append", ME, content="from the server")
    assert reply["parent"] == outside and reply["push"] == "pushed"
    text = remote_file(remote, "notes/shared.md")
    assert "typed on the laptop" in text and "from the server" in text
    assert_linear(remote)


def test_a_push_race_refetches_and_reapplies_the_one_change(tmp_path: Path, remote: Path):
    store = open_store(tmp_path, remote, "a")
    brain = Brain(store)
    brain.write("notes/race.md", "create", ME, content="# Race\n")
    runs = []

    def change(view):
        runs.append(view.sha)
        if len(runs) == 1:  # another writer pushes after our fetch, before our push
            push_from_elsewhere(tmp_path, remote, "notes/race.md", "the other writer")
        text = (view.read("notes/race.md") or b"").decode()
        return {"notes/race.md": (text + "ours\n").encode()}

    result = store.commit(change, "brain_write: append notes/race.md")
    assert len(runs) == 2 and runs[0] != runs[1] and result.retries == 1 and result.push == "pushed"
    assert remote_file(remote, "notes/race.md") == "# Race\nthe other writer\nours\n"
    assert_linear(remote)


def test_an_expected_blob_refusal_after_a_race_changes_nothing(tmp_path: Path, remote: Path):
    brain = Brain(open_store(tmp_path, remote, "a"))
    first = brain.write("notes/e.md", "create", ME, content="one\n")
    push_from_elsewhere(tmp_path, remote, "notes/e.md", "two")
    with pytest.raises(Exception, match="conflict"):
        brain.write("notes/e.md", "replace", ME, content="mine\n", expected_blob=first["blob"])
    assert remote_file(remote, "notes/e.md") == "one\ntwo\n"
    assert brain.store.pending() == 0


@pytest.mark.slow
def test_two_servers_writing_concurrently_lose_nothing(tmp_path: Path, remote: Path):
    brains = [Brain(open_store(tmp_path, remote, name)) for name in ("one", "two")]
    errors = []

    def writer(i: int, brain: Brain) -> None:
        try:
            for n in range(12):
                brain.write("notes/both.md", "append", ME, content=f"server {i} line {n}")
                brain.write(f"notes/own-{i}.md", "append", ME, content=f"line {n}")
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i, b)) for i, b in enumerate(brains)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    both = remote_file(remote, "notes/both.md")
    for i in range(2):
        own = remote_file(remote, f"notes/own-{i}.md")
        for n in range(12):
            assert f"server {i} line {n}\n" in both and f"line {n}\n" in own
    assert int(git("rev-list", "--count", "main", cwd=remote)) == 1 + 48
    assert_linear(remote)
    for b in brains:
        assert b.store.pending() == 0


@pytest.mark.slow
def test_two_http_servers_on_one_remote(tmp_path: Path, remote: Path):
    servers = []
    for name in ("one", "two"):
        settings = make_settings(
            tmp_path / name,
            tmp_path / name / "unused",
            env={"CORTEX_REMOTE": str(remote), "CORTEX_FETCH_INTERVAL": "0.5"},
        )
        from cortex.app.server import assemble, make_app

        parts = assemble(settings)
        servers.append(RunningServer(make_app(parts), parts.settings).__enter__())
        servers[-1].parts = parts
    try:
        replies: list = []

        def go(url: str, i: int) -> None:
            for n in range(4):
                replies.append(
                    call(url + "/mcp", "brain_write", path="notes/http.md", mode="append", content=f"via {i} #{n}")
                )

        threads = [threading.Thread(target=go, args=(s.url, i)) for i, s in enumerate(servers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert [r.error for r in replies] == [None] * 8
        assert all(r.data["push"] == "pushed" for r in replies)
        text = remote_file(remote, "notes/http.md")
        assert all(f"via {i} #{n}" in text for i in range(2) for n in range(4))
        assert_linear(remote)
        # Each server sees the other's writes: the background fetch moves its head.
        head = git("rev-parse", "main", cwd=remote).strip()
        wait_for(lambda: all(s.parts.brain.store.head() == head for s in servers))
    finally:
        for s in servers:
            s.__exit__(None, None, None)
            s.parts.remote.stop()


def test_a_failed_push_is_pending_then_pushed_by_the_background_retry(tmp_path: Path, remote: Path):
    store = open_store(tmp_path, remote, "a", interval=0.2)
    brain = Brain(store)
    brain.write("notes/p.md", "create", ME, content="# P\n")
    away = tmp_path / "remote-away.git"
    remote.rename(away)  # the remote is unreachable (a network outage, a revoked token)
    try:
        first = brain.write("notes/p.md", "append", ME, content="written during the outage")
        second = brain.write("notes/q.md", "create", ME, content="also during the outage\n")
    finally:
        away.rename(remote)
    assert first["push"] == "pending" and "push pending" in first["push_note"]
    assert second["push"] == "pending" and store.pending() == 2
    assert brain.read("notes/p.md")[2].text.endswith("written during the outage\n")  # served meanwhile
    # Someone else writes while we are cut off; the retry replays our commits on top.
    push_from_elsewhere(tmp_path, remote, "notes/p.md", "elsewhere during the outage")
    store.start()
    try:
        wait_for(lambda: store.pending() == 0)
    finally:
        store.stop()
    text = remote_file(remote, "notes/p.md")
    assert "written during the outage" in text and "elsewhere during the outage" in text
    assert remote_file(remote, "notes/q.md") == "also during the outage\n"
    assert git("rev-parse", "main", cwd=remote).strip() == store.head()
    assert_linear(remote)


def test_the_background_fetch_serves_edits_made_elsewhere(tmp_path: Path, remote: Path):
    store = open_store(tmp_path, remote, "a", interval=0.2).start()
    try:
        brain = Brain(store)
        sha = push_from_elsewhere(tmp_path, remote, "notes/web.md", "edited on the Git host")
        wait_for(lambda: store.head() == sha)
        assert "edited on the Git host" in brain.snapshot().notes["notes/web.md"].text
    finally:
        store.stop()


def test_libgit2_transport_push_and_refusal(tmp_path: Path, remote: Path):
    """The network-remote code path (libgit2's push), exercised on a local remote."""
    store = open_store(tmp_path, remote, "a")
    store.local = None
    brain = Brain(store)
    assert brain.write("notes/l.md", "create", ME, content="one\n")["push"] == "pushed"
    runs = []

    def change(view):
        runs.append(1)
        if len(runs) == 1:
            push_from_elsewhere(tmp_path, remote, "notes/l.md", "two")
        return {"notes/l.md": (view.read("notes/l.md") or b"") + b"three\n"}

    result = store.commit(change, "append")
    assert result.push == "pushed" and len(runs) == 2
    assert remote_file(remote, "notes/l.md") == "one\ntwo\nthree\n"


# -- the webhook ---------------------------------------------------------------


class Poked:
    def __init__(self):
        self.count = 0

    def poke(self):
        self.count += 1


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@pytest.mark.slow
def test_webhook_signatures():
    store = Poked()
    app = Starlette(routes=[webhook_route(store, "hook-secret")])
    body = b'{"ref": "refs/heads/main"}'
    with RunningServer(app) as srv:
        url = srv.url + "/hooks/push"
        good = httpx.post(url, content=body, headers={"X-Hub-Signature-256": sign("hook-secret", body)})
        bad = httpx.post(url, content=body, headers={"X-Hub-Signature-256": sign("wrong", body)})
        tampered = httpx.post(url, content=body + b" ", headers={"X-Hub-Signature-256": sign("hook-secret", body)})
        missing = httpx.post(url, content=body)
        garbage = httpx.post(url, content=body, headers={"X-Hub-Signature-256": "sha256=zz\u00e9"[:9]})
    assert good.status_code == 202 and store.count == 1
    assert [bad.status_code, tampered.status_code, missing.status_code, garbage.status_code] == [401] * 4
    assert store.count == 1


def test_webhook_without_a_secret_is_not_found():
    app = Starlette(routes=[webhook_route(Poked(), None)])
    with RunningServer(app) as srv:
        assert httpx.post(srv.url + "/hooks/push", content=b"{}").status_code == 404


def test_signature_ok_is_strict():
    assert signature_ok("s", b"x", sign("s", b"x"))
    assert not signature_ok("s", b"x", sign("s", b"x").replace("sha256=", "sha1="))
    assert not signature_ok("s", b"x", None)
    assert not signature_ok("s", b"x", "sha256=\u00e9")

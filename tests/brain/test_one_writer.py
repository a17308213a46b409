"""One brain, one server: real `cortex serve` processes on one brain, a
`cortex reindex` beside a running server, and two private Redis servers on one folder."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from guestkit import need_redis
from reliakit import ServeProcess, run_cortex
from serverkit import TOKEN, call

from cortex.app.brain_setup import init_in_place
from cortex.brain.lock import LOCK_NAME
from cortex.guests.redis_process import RedisProcess

pytestmark = pytest.mark.slow  # every test here takes 0.3 s or more


def serve_process(tmp_path: Path, brain: Path, name: str) -> ServeProcess:
    return ServeProcess(
        tmp_path / f"home-{name}", brain, {"CORTEX_TOKEN": TOKEN}, tmp_path / "bin", tmp_path / f"{name}.log"
    )


def refused(proc: ServeProcess) -> str:
    """Start `proc`, which must refuse to start; its output. One that starts is stopped, then fails."""
    try:
        proc.start(timeout=30)
    except AssertionError as exc:
        if "did not start" in str(exc):
            return proc.output()
        raise
    proc.stop()
    raise AssertionError("cortex serve started where it must refuse")


@pytest.fixture
def working_tree_brain(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "a.md").write_text("# A\n\nThe first note.\n")
    init_in_place(folder)
    return folder


def test_a_second_server_on_one_brain_refuses_naming_the_first(tmp_path, working_tree_brain):
    first = serve_process(tmp_path, working_tree_brain, "first")
    first.start()
    try:
        second = serve_process(tmp_path, working_tree_brain, "second")
        said = refused(second)
        want = f"this brain ({working_tree_brain}) is already served by PID {first.proc.pid} at {first.url}/mcp"
        assert want in said, said
        # The first one still serves and writes, and every acknowledged append is there.
        for n in range(5):
            r = call(f"{first.url}/mcp", "brain_write", path="notes/a.md", mode="append", content=f"line {n}\n")
            assert r.error is None, r.error
        text = call(f"{first.url}/mcp", "brain_read", path="notes/a.md").data["text"]
        assert all(f"line {n}" in text for n in range(5))
        assert (working_tree_brain / "notes" / "a.md").read_text() == text
    finally:
        first.stop()
    # A crash frees the brain: the kernel drops the lock with the process.
    again = serve_process(tmp_path, working_tree_brain, "again")
    again.start()
    again.kill()
    after = serve_process(tmp_path, working_tree_brain, "after")
    after.start()
    after.stop()
    # The lock lives in the Git folder, never among the owner's files.
    assert (working_tree_brain / ".git" / LOCK_NAME).exists()
    assert not (working_tree_brain / LOCK_NAME).exists()


def test_a_second_server_on_a_linked_worktree_of_the_brain_refuses_naming_the_first(tmp_path, working_tree_brain):
    """`git worktree add` gives a second working tree on the same repository (forced onto the
    same branch): one server's watcher would commit its stale files over the other's writes."""
    other = tmp_path / "wt"
    subprocess.run(["git", "worktree", "add", "-q", "-f", str(other), "main"], cwd=working_tree_brain, check=True)
    first = serve_process(tmp_path, working_tree_brain, "first")
    first.start()
    try:
        second = serve_process(tmp_path, other, "second")
        said = refused(second)
        want = (
            f"this brain ({other}) shares its Git repository with {working_tree_brain}, which is already served "
            f"by PID {first.proc.pid} at {first.url}/mcp"
        )
        assert want in said, said
        r = call(f"{first.url}/mcp", "brain_write", path="notes/new.md", mode="create", content="# New\n\nKept.\n")
        assert r.error is None, r.error
        assert "Kept." in call(f"{first.url}/mcp", "brain_read", path="notes/new.md").data["text"]
    finally:
        first.stop()
    # Started from the linked worktree first, the main one is refused the same way.
    first = serve_process(tmp_path, other, "first-wt")
    first.start()
    try:
        second = serve_process(tmp_path, working_tree_brain, "second-main")
        assert f"already served by PID {first.proc.pid}" in refused(second)
    finally:
        first.stop()


def test_a_hosted_server_refuses_a_remote_whose_branch_is_checked_out(tmp_path, working_tree_brain):
    """Hosted mode pushing into a working-tree brain that another server serves moved its
    branch under stale files, which that server then committed back over the pushed lines.
    Cortex refuses such a remote, in one line, and pushes nothing; a bare one is served."""
    served = serve_process(tmp_path, working_tree_brain, "served")
    served.start()
    try:
        head = git_head(working_tree_brain)
        hosted = hosted_process(tmp_path, working_tree_brain, "hosted")
        said = [line for line in refused(hosted).splitlines() if line.startswith("cortex serve:")]
        assert len(said) == 1 and f"has its branch checked out in the working tree {working_tree_brain}" in said[0]
        assert "Use a bare repository as the remote" in said[0]
        assert not (tmp_path / "home-hosted" / "remote-clone.git").exists()  # nothing cloned
        # The served brain kept its head, and still writes.
        assert git_head(working_tree_brain) == head
        r = call(f"{served.url}/mcp", "brain_write", path="notes/b.md", mode="create", content="# B\n\nMine.\n")
        assert r.error is None, r.error
    finally:
        served.stop()
    # A linked worktree with the branch checked out counts the same; a bare clone is served.
    bare = tmp_path / "brain.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(working_tree_brain), str(bare)], check=True)
    tree = tmp_path / "wt"
    subprocess.run(["git", "worktree", "add", "-q", str(tree), "main"], cwd=bare, check=True)
    from cortex.store.network import checked_out

    assert checked_out(str(bare), "main") == tree and checked_out(str(bare), "other") is None
    subprocess.run(["git", "worktree", "remove", str(tree)], cwd=bare, check=True)
    hosted = hosted_process(tmp_path, bare, "bare")
    hosted.start()
    try:
        r = call(f"{hosted.url}/mcp", "brain_write", path="notes/c.md", mode="create", content="# C\n\nPushed.\n")
        assert r.error is None and r.data["push"] == "pushed", r
        assert git_head(bare) == r.data["sha"]
    finally:
        hosted.stop()


def hosted_process(tmp_path: Path, remote: Path, name: str) -> ServeProcess:
    """A hosted `cortex serve`: its brain is a clone of `remote` in its own state folder."""
    env = {"CORTEX_TOKEN": TOKEN, "CORTEX_REMOTE": str(remote)}
    return ServeProcess(tmp_path / f"home-{name}", None, env, tmp_path / "bin", tmp_path / f"{name}.log")


def git_head(repo: Path) -> str:
    return subprocess.run(["git", "rev-parse", "main"], cwd=repo, capture_output=True, text=True).stdout.strip()


def test_reindex_beside_a_running_server_refuses_in_one_line(tmp_path, working_tree_brain):
    server = serve_process(tmp_path, working_tree_brain, "server")
    server.start()
    try:
        env = {"CORTEX_HOME": str(tmp_path / "home-reindex"), "CORTEX_TOKEN": TOKEN}
        r = run_cortex("reindex", "--brain", str(working_tree_brain), env=env)
        assert r.returncode == 1
        assert r.stderr.strip().splitlines() == [
            f"cortex reindex: this brain ({working_tree_brain}) is already served by PID {server.proc.pid} "
            f"at {server.url}/mcp; one process writes to a brain at a time: stop it first, or use that server"
        ]
    finally:
        server.stop()


def test_a_second_private_redis_on_one_folder_refuses(tmp_path):
    need_redis()
    folder = tmp_path / "redis"
    first = RedisProcess(folder).start()
    try:
        refusal = re.escape(f"another Cortex (PID {os.getpid()}) runs a redis-server on the data folder {folder}")
        with pytest.raises(RuntimeError, match=refusal):
            RedisProcess(folder).start()
        assert first.ping()  # the first one's socket was not touched
        # Even with its socket file gone, the folder stays the first one's.
        first.socket_path.unlink()
        with pytest.raises(RuntimeError, match=refusal):
            RedisProcess(folder).start()
    finally:
        first.stop()
    RedisProcess(folder).start().stop()  # stopped, the folder is free again

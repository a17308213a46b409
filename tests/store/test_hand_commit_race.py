"""Cortex and a hand `git commit` never lose each other's work (issue 42).

A working-tree brain served for real; one thread makes `brain_capture` calls over HTTP while
another runs the real `git` as a person does: append a line to their own note, `git add`
that note, `git commit`. Every capture Cortex acknowledged must be in HEAD and on disk at the
end, and every hand line in the owner's note. Before Cortex held Git's index.lock while the
branch moved and the index followed, a hand commit in between built its tree from the old
index on top of Cortex's new head and took the capture back out.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest
from serverkit import call, serve
from vaultkit import GIT_ENV, vault_on

pytestmark = pytest.mark.slow  # a server, 200 writes and 200 git commits

ROUNDS = 200
FILES = {"notes/manual.md": b"# Manual\n", "notes/bees.md": b"# Bees\n\nThe hive is south.\n"}


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**GIT_ENV, "HOME": str(repo.parent), "GIT_AUTHOR_NAME": "Hand", "GIT_AUTHOR_EMAIL": "hand@example.org"}
    env |= {"GIT_COMMITTER_NAME": "Hand", "GIT_COMMITTER_EMAIL": "hand@example.org"}
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=env)


def test_hand_commits_racing_tool_writes_lose_nothing_either_side(tmp_path: Path) -> None:
    repo = vault_on(tmp_path, "master", FILES)
    acknowledged: list[tuple[str, str]] = []  # (log path, the captured text)
    failures: list[str] = []
    with serve(tmp_path, repo) as running:
        url = f"{running.url}/mcp"

        def captures() -> None:
            for n in range(ROUNDS):
                reply = call(url, "brain_capture", text=f"capture-{n:03d}")
                if reply.error is None:
                    acknowledged.append((reply.data["path"], f"capture-{n:03d}"))
                else:
                    failures.append(reply.error)

        writer = threading.Thread(target=captures)
        writer.start()
        refused, hand_done = 0, []
        for n in range(ROUNDS):
            with open(repo / "notes/manual.md", "a", encoding="utf-8") as f:
                f.write(f"hand-{n:03d}\n")
            added = _git(repo, "add", "notes/manual.md")
            done = added.returncode == 0 and _git(repo, "commit", "-qm", f"hand {n}").returncode == 0
            refused += not done  # index.lock held: Git refuses, as between two git processes
            hand_done += [f"hand-{n:03d}"] if done else []
        writer.join()
        assert not failures, failures[:3]
        assert len(acknowledged) == ROUNDS
        running.parts.brain.snapshot()
    head = _git(repo, "rev-parse", "HEAD").stdout.strip()
    for path, text in acknowledged:
        committed = _git(repo, "show", f"{head}:{path}").stdout
        assert text in committed, (text, "missing from HEAD", refused)
        assert text in (repo / path).read_text(encoding="utf-8"), (text, "missing from disk")
    print("hand commits refused while Cortex wrote:", refused)
    manual = (repo / "notes/manual.md").read_text(encoding="utf-8")
    assert all(f"hand-{n:03d}" in manual for n in range(ROUNDS))
    in_head = _git(repo, "show", f"{head}:notes/manual.md").stdout
    assert hand_done and all(line in in_head for line in hand_done)

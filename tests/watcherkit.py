"""Fixtures for the watcher and working-state tests: a brain with a working tree (`tree`, `brain`) and its
watcher, threaded (`editor`) or driven by hand (`manual`)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from cortex.app.brain_setup import init_brain
from cortex.brain.brain import Brain
from cortex.brain.watcher import Editor
from cortex.store.git import GitStore


def owner_git(tree: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """A real `git` command of the owner's in `tree` (as Ada, no system config, no editor)."""
    env = {"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(tree.parent), "GIT_CONFIG_NOSYSTEM": "1"}
    env |= {"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.org", "GIT_EDITOR": "true"}
    env |= {"GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.org"}
    return subprocess.run(["git", *args], cwd=tree, env=env, check=check, capture_output=True, text=True)


# What Git says when another process had the index or the branch at that moment: nothing was
# done, and the same command run again goes through.
_MET_ANOTHER = ("index.lock': File exists", "cannot lock ref 'HEAD'")


def owner_git_again(tree: Path, *args: str, deadline_s: float = 15.0) -> subprocess.CompletedProcess[str]:
    """`owner_git`, run again while Git says another process had the index or the branch, as a
    person does: Cortex holds index.lock and moves the branch for the moment of a commit (a
    tool write beside the owner's command, or INDEX.md written again once the head stood
    `PAGE_QUIET_S`), and Git then refuses a second process's command, or a commit's own check
    that the branch has not moved fails;
    nothing was done. Fails on any other error, or when it keeps meeting one past the deadline."""
    deadline = time.monotonic() + deadline_s
    while True:
        r = owner_git(tree, *args, check=False)
        if r.returncode == 0 or not any(m in r.stderr for m in _MET_ANOTHER) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert r.returncode == 0, f"git {' '.join(args)}: {r.stderr}"
    return r


def head_text(brain: Brain, path: str) -> str:
    """The text of `path` at the brain's head ("" when the head has no such file)."""
    head = brain.store.head()
    blob = brain.store.blob_at(head, path) if head else None
    return brain.store.blob_bytes(blob).decode() if blob else ""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    path = tmp_path / "notes"
    init_brain(path)
    return path


@pytest.fixture
def brain(tree: Path) -> Brain:
    return Brain(GitStore(tree))


@pytest.fixture
def editor(brain: Brain):
    ed = Editor(brain, debounce_ms=120, poll_s=0.02).start()
    yield ed
    ed.stop()


class Ticks:
    """A monotonic clock the test moves: the watcher's debounce without sleeping."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def manual(brain: Brain):
    """A watcher with no thread: the test calls `settle()` to give it every chance to commit."""
    ticks = Ticks()
    ed = Editor(brain, debounce_ms=120, clock=ticks)
    ed.check_all()

    def settle() -> None:
        ed.poll_once()  # notice what changed
        ticks.t += 1.0  # a quiet spell far past the debounce
        ed.poll_once()  # commit it, if it is to be committed
        ticks.t += 1.0
        ed.poll_once()  # files changed within the racy window are looked at once more

    ed.settle = settle  # type: ignore[attr-defined]
    return ed

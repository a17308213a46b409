"""A hand commit that took back an acknowledged write from a stale index is found, said and
put back; what the owner took back themselves never is (issues 42 and 54).

The race is made as it happens: a `git` command holds Git's index.lock longer than a write
waits (index.lock made here by hand, as git makes it), so the write goes on without it and
the staging index cannot take it; the command's own index (the old one) then commits over
it. The working tree still holds Cortex's bytes, so the watcher puts the write back, a
create included.
A capture the owner takes out by hand, or a line taken back with `git revert -n` together
with a file of their own, is the owner's decision and stays.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from cortex.brain.brain import Brain
from cortex.brain.trailers import Actor
from cortex.brain.watcher import Editor

ME = Actor(door="owner", tool="brain_capture", client="pytest")


def _git(tree: Path, *args: str) -> str:
    env = {"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(tree), "GIT_CONFIG_NOSYSTEM": "1"}
    env |= {"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.org"}
    env |= {"GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.org"}
    return subprocess.run(["git", *args], cwd=tree, env=env, check=True, capture_output=True, text=True).stdout


def _at(brain: Brain, sha: str, path: str) -> str:
    blob = brain.store.blob_at(sha, path)
    return brain.store.blob_bytes(blob).decode() if blob else ""


def _stale_commit(tree: Path, brain: Brain, manual: Editor, write: Callable[[], str]) -> tuple[str, str]:
    """Run `write` while a git command holds index.lock, then commit the person's own edit from
    the index as it was before: (the acknowledged write's SHA, the hand commit's)."""
    manual.settle()
    git_dir = tree / ".git"
    shutil.copy(git_dir / "index", git_dir / "index.lock")  # a git command holds the index
    acknowledged = write()
    assert not brain.journal.entries[-1].staged, "a write that could not take the lock is said so"
    os.replace(git_dir / "index.lock", git_dir / "index")  # it commits the index it held
    with open(tree / "notes/manual.md", "a", encoding="utf-8") as f:
        f.write("mine\n")
    _git(tree, "add", "notes/manual.md")
    _git(tree, "commit", "-qm", "my own note")
    return acknowledged, _git(tree, "rev-parse", "HEAD").strip()


def test_a_hand_commit_from_a_stale_index_is_restored_in_a_commit_of_its_own(
    tree: Path, brain: Brain, manual: Editor
) -> None:
    brain.write("notes/manual.md", "create", Actor(door="owner", tool="brain_write", client="t"), content="# M\n")
    log = brain.capture("first", ME)["path"]
    acknowledged, hand = _stale_commit(tree, brain, manual, lambda: brain.capture("second", ME)["sha"])
    assert "second" not in _at(brain, hand, log)  # the stale index took the capture out

    manual.settle()
    head = brain.store.head()
    assert head != hand and brain.store.commit_info(head).parents == (hand,)  # a commit of its own
    assert "second" in _at(brain, head, log) and "mine" in _at(brain, head, "notes/manual.md")
    assert _git(tree, "log", "--format=%H", "-3").split()[1:3] == [hand, acknowledged]  # theirs kept
    said = manual.status()["hand_edits"]["restored"]
    assert said and f"took back the write {acknowledged[:7]}" in said[0] and log in said[0], said
    assert "second" in (tree / log).read_text()
    acked = manual.status()["acknowledged"]
    assert acked["not_in_history"] == 0 and acked["being_put_back"] == 0, acked


def test_a_create_taken_out_by_a_stale_index_is_put_back_whatever_the_commits_parent(
    tree: Path, brain: Brain, manual: Editor
) -> None:
    brain.write("notes/manual.md", "create", Actor(door="owner", tool="brain_write", client="t"), content="# M\n")

    def create() -> str:
        sha = brain.write(
            "notes/new.md", "create", Actor(door="owner", tool="brain_write", client="t"), content="# N\n"
        )["sha"]
        brain.capture("after the create", ME)  # the hand commit's parent is not the create
        return sha

    _, hand = _stale_commit(tree, brain, manual, create)
    assert brain.store.blob_at(hand, "notes/new.md") is None
    manual.settle()
    assert _at(brain, brain.store.head(), "notes/new.md") == "# N\n"


def test_a_line_the_owner_reverts_with_a_file_of_their_own_stays_reverted(
    tree: Path, brain: Brain, manual: Editor
) -> None:
    brain.write("notes/manual.md", "create", Actor(door="owner", tool="brain_write", client="t"), content="# M\n")
    ai = brain.write(
        "notes/ai.md", "create", Actor(door="owner", tool="brain_write", client="t"), content="# A\nwrong line\n"
    )
    manual.settle()
    _git(tree, "revert", "-n", ai["sha"])
    with open(tree / "notes/manual.md", "a", encoding="utf-8") as f:
        f.write("mine\n")
    _git(tree, "add", "-A")
    _git(tree, "commit", "-qm", "take back what the AI wrote, and a note of mine")
    hand = _git(tree, "rev-parse", "HEAD").strip()
    for _ in range(2):
        manual.settle()
    assert brain.store.head() == hand and brain.store.blob_at(hand, "notes/ai.md") is None
    assert manual.status()["hand_edits"]["restored"] == []
    acked = manual.status()["acknowledged"]
    assert acked["changed_since"] >= 1 and any(
        "notes/ai.md" in f and hand[:7] in f for f in acked["changed_since_files"]
    )


def test_a_hand_commit_that_only_takes_a_capture_out_is_the_persons_decision(
    tree: Path, brain: Brain, manual: Editor
) -> None:
    log = brain.capture("first", ME)["path"]
    brain.capture("second", ME)
    manual.settle()
    text = (tree / log).read_text()
    (tree / log).write_text(text.replace("second", "").rstrip() + "\n")
    _git(tree, "add", log)
    _git(tree, "commit", "-qm", "drop a capture")
    hand = _git(tree, "rev-parse", "HEAD").strip()
    manual.settle()
    assert brain.store.head() == hand and manual.status()["hand_edits"]["restored"] == []

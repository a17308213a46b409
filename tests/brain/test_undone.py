"""A hand commit that took back an acknowledged write is found, said and put back (issue 42).

The race itself is closed by the index lock (tests/store/test_hand_commit_race.py); here its
outcome is made by hand, as a `git commit` from an index Cortex could not update makes it:
the index is put back to before a capture, the person adds their own note and commits. The
watcher restores the capture in a commit of its own and leaves the person's commit as it is.
A commit that only takes the capture out is the person's decision, and stays.
"""

from __future__ import annotations

import shutil
import subprocess
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


def test_a_hand_commit_from_a_stale_index_is_restored_in_a_commit_of_its_own(
    tree: Path, brain: Brain, manual: Editor
) -> None:
    brain.write("notes/manual.md", "create", Actor(door="owner", tool="brain_write", client="t"), content="# M\n")
    log = brain.capture("first", ME)["path"]
    manual.settle()
    stale = tree / ".git" / "index.stale"
    shutil.copy(tree / ".git" / "index", stale)
    acknowledged = brain.capture("second", ME)["sha"]
    shutil.copy(stale, tree / ".git" / "index")  # Git's index as it was before the capture
    with open(tree / "notes/manual.md", "a", encoding="utf-8") as f:
        f.write("mine\n")
    _git(tree, "add", "notes/manual.md")
    _git(tree, "commit", "-qm", "my own note")
    hand = _git(tree, "rev-parse", "HEAD").strip()
    assert "second" not in _at(brain, hand, log)  # the stale index took the capture out

    manual.settle()
    head = brain.store.head()
    assert head != hand and brain.store.commit_info(head).parents == (hand,)  # a commit of its own
    assert "second" in _at(brain, head, log) and "mine" in _at(brain, head, "notes/manual.md")
    assert _git(tree, "log", "--format=%H", "-3").split()[1:3] == [hand, acknowledged]  # theirs kept
    said = manual.status()["hand_edits"]["restored"]
    assert said and f"took back the write {acknowledged[:7]}" in said[0] and log in said[0], said
    assert "second" in (tree / log).read_text()


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

"""INDEX.md never makes the owner's revert or rebase conflict (issue 62 item 4).

Cortex writes INDEX.md in the same commit as each note it writes, so every `git revert` or
`rebase -i` of a Cortex commit had stopped on a conflict in INDEX.md (its count line and its
rows change in every create). The brain's `.gitattributes` merges it with Git's built-in
union driver, and the watcher writes it whole again once the head no longer matches it.
Real `git` on a working-tree brain with the watcher running.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from watcherkit import head_text as _text
from watcherkit import owner_git as _git
from watcherkit import owner_git_again

from cortex.app.brain_setup import init_brain
from cortex.brain.brain import Brain
from cortex.brain.contents_page import ATTRIBUTES, MERGE_LINE, render_contents_page
from cortex.brain.trailers import Actor
from cortex.brain.watcher import Editor
from cortex.store.git import GitStore

pytestmark = pytest.mark.slow  # real git processes beside a polling watcher

WRITE = Actor(door="owner", tool="brain_write", client="pytest")


def _page_right(brain: Brain) -> bool:
    """Whether the head's INDEX.md lists exactly the head's notes."""
    head = brain.store.head()
    assert head is not None
    return _text(brain, "INDEX.md").encode() == render_contents_page(brain.corpus.peek(head).notes)


def _comes_right(brain: Brain, tree: Path) -> None:
    deadline = time.monotonic() + 20
    while not _page_right(brain) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _page_right(brain), _text(brain, "INDEX.md")
    time.sleep(0.3)  # the watcher's catch-up of the file on disk
    assert (tree / "INDEX.md").read_text() == _text(brain, "INDEX.md")


def _creates(brain: Brain, n: int) -> list[str]:
    return [brain.write(f"notes/n{i}.md", "create", WRITE, content=f"# N{i}\n\nbody {i}\n")["sha"] for i in range(n)]


def test_a_revert_of_a_cortex_write_does_not_conflict_and_the_page_comes_right(
    tree: Path, brain: Brain, editor: Editor
) -> None:
    brain.snapshot()  # the index start-up builds
    assert MERGE_LINE in (tree / ATTRIBUTES).read_text()  # a new brain has the rule
    shas = _creates(brain, 4)
    editor.first_pass.wait(5)
    reverted = _git(tree, "revert", "--no-edit", shas[1], check=False)
    assert reverted.returncode == 0, reverted.stdout + reverted.stderr
    assert "CONFLICT" not in reverted.stdout
    assert brain.store.blob_at(brain.store.head() or "", "notes/n1.md") is None
    _comes_right(brain, tree)
    assert "[N1]" not in _text(brain, "INDEX.md") and "[N3]" in _text(brain, "INDEX.md")
    assert _git(tree, "status", "--porcelain").stdout == ""


def test_a_rebase_dropping_a_cortex_write_does_not_conflict_and_the_page_comes_right(
    tree: Path, brain: Brain, editor: Editor
) -> None:
    brain.snapshot()
    base = brain.store.head()
    shas = _creates(brain, 4)
    editor.first_pass.wait(5)
    time.sleep(0.3)
    drop = shas[1][:7]
    rebased = _git(
        tree,
        "-c",
        f"sequence.editor=sed -i -e 's/^pick {drop}/drop {drop}/'",
        "rebase",
        "-i",
        base or "",
        check=False,
    )
    assert rebased.returncode == 0, rebased.stdout + rebased.stderr
    assert "CONFLICT" not in rebased.stdout + rebased.stderr
    assert brain.store.operation_under_way() is None
    assert brain.store.blob_at(brain.store.head() or "", "notes/n1.md") is None
    _comes_right(brain, tree)
    assert "[N1]" not in _text(brain, "INDEX.md") and "[N2]" in _text(brain, "INDEX.md")


def test_a_brain_made_before_the_rule_gets_it_with_its_next_page(tmp_path: Path) -> None:
    """A brain seeded without .gitattributes: the next commit that writes INDEX.md adds the
    line, and an owner's .gitattributes keeps its own lines."""
    path = tmp_path / "old"
    init_brain(path)
    _git(path, "rm", "-q", ATTRIBUTES)
    _git(path, "commit", "-qm", "as brains were made before")
    (path / ATTRIBUTES).write_text("*.png binary")
    _git(path, "add", ATTRIBUTES)
    _git(path, "commit", "-qm", "the owner's own attributes")
    brain = Brain(GitStore(path))
    shas = _creates(brain, 3)
    assert _text(brain, ATTRIBUTES).splitlines()[0] == "*.png binary"
    assert MERGE_LINE in _text(brain, ATTRIBUTES).splitlines()
    brain.write("notes/n0.md", "append", WRITE, content="more\n")  # no row changes: nothing added twice
    assert _text(brain, ATTRIBUTES).count(MERGE_LINE) == 1
    reverted = _git(path, "revert", "--no-edit", shas[1], check=False)
    assert reverted.returncode == 0, reverted.stdout + reverted.stderr


def test_a_hand_commit_of_a_new_note_is_listed_by_the_next_write(tmp_path: Path) -> None:
    """With no watcher (a bare brain the owner pushes to, or hosted), a write on a head Cortex
    did not make compares INDEX.md whole: a note the owner committed joins it."""
    path = tmp_path / "b"
    init_brain(path)
    brain = Brain(GitStore(path))
    _creates(brain, 1)
    (path / "notes/mine.md").write_text("# Mine\n\nby hand\n")
    _git(path, "add", "notes/mine.md")
    _git(path, "commit", "-qm", "mine")
    assert "[Mine]" not in _text(brain, "INDEX.md")
    brain.write("notes/n0.md", "append", WRITE, content="more\n")  # a body edit: no row of its own
    assert "[Mine]" in _text(brain, "INDEX.md") and _page_right(brain)


def test_the_owners_commands_in_a_row_meet_no_page_commit_between_them(
    tree: Path, brain: Brain, editor: Editor
) -> None:
    """The owner commits by hand, one command after another, as a script or a quick hand does
    (here untracking notes Cortex wrote, which changes no file on disk): each moves the head
    under the watcher, whose INDEX.md commit (taking Git's index.lock) met the owner's next
    `git rm` or `git commit` in 11 of 15 loaded runs. It waits until the head has stood
    `PAGE_QUIET_S`: no page commit lands between the owner's (each was a moment the next
    command could fail), and the page comes right once they stop. A command that still meets
    a lock (a poll's own, under load) is run again, as a person would."""
    brain.snapshot()
    _creates(brain, 8)
    editor.first_pass.wait(5)
    for i in range(8):
        owner_git_again(tree, "rm", "-q", "--cached", f"notes/n{i}.md")
        owner_git_again(tree, "commit", "-qm", f"u{i}")
        time.sleep(0.25)  # the owner's next command, a moment later
    _comes_right(brain, tree)
    assert "[N" not in _text(brain, "INDEX.md")
    subjects = _git(tree, "log", "--format=%s", "-12").stdout.split("\n")
    assert subjects[:9] == ["contents page: INDEX.md matches the notes again"] + [f"u{i}" for i in range(7, -1, -1)]

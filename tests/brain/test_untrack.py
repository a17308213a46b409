"""The owner's `git rm --cached` of a note stands (issue 62 item 3): the watcher never commits
the file back, whether Cortex or the owner wrote it, with or without a .gitignore line, across
a restart, and when the untrack was committed while the server was down. A removal only
staged holds the file's hand edits until the owner commits or undoes it. Real `git` on a
working-tree brain with the watcher running; what must happen is waited for up to a deadline,
and the last two tests drive the watcher by hand in the order a loaded machine produced (Cortex
writes a note and the owner untracks it, both before the watcher looks again)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from watcherkit import head_text as _text
from watcherkit import owner_git, owner_git_again

from cortex.brain.brain import Brain
from cortex.brain.journal import Journal
from cortex.brain.trailers import Actor
from cortex.brain.watcher import Editor

pytestmark = pytest.mark.slow  # real git processes beside a polling watcher

WRITE = Actor(door="owner", tool="brain_write", client="pytest")


def _in_head(brain: Brain, path: str) -> bool:
    head = brain.store.head()
    return head is not None and brain.store.blob_at(head, path) is not None


def _settled(editor: Editor) -> None:
    """A spell in which the watcher would act: for what must not happen in it."""
    editor.first_pass.wait(5)
    time.sleep(0.6)  # past the debounce, a few polls


def _until(done: Callable[[], bool], what: str) -> None:
    """What must happen, waited for up to a deadline (the watcher's polls stretch on a loaded machine)."""
    deadline = time.monotonic() + 15
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def _seen_untracked(editor: Editor, path: str) -> None:
    _until(lambda: path in editor.untracked.paths, f"the watcher never saw {path} untracked")


def _untrack(tree: Path, path: str, ignore: bool) -> None:
    owner_git_again(tree, "rm", "-q", "--cached", path)
    if ignore:
        with open(tree / ".gitignore", "a", encoding="utf-8") as f:
            f.write(f"/{path}\n")
        owner_git_again(tree, "add", ".gitignore")
    owner_git_again(tree, "commit", "-qm", f"untrack {path}")


def _stays_out(brain: Brain, editor: Editor, tree: Path, path: str) -> None:
    """Out of the head and the index, on disk, through an edit of the file: never put back."""
    _seen_untracked(editor, path)
    assert not _in_head(brain, path) and (tree / path).exists()
    with open(tree / path, "a", encoding="utf-8") as f:
        f.write("edited after the untrack\n")
    _settled(editor)
    assert not _in_head(brain, path), brain.store.head()
    assert owner_git(tree, "ls-files", path).stdout == ""
    assert editor.status()["hand_edits"]["restored"] == []


@pytest.mark.parametrize("ignore", [False, True], ids=["no-gitignore", "gitignore"])
def test_an_untracked_note_cortex_wrote_is_not_put_back(tree: Path, brain: Brain, editor: Editor, ignore: bool):
    brain.write("notes/private.md", "create", WRITE, content="# Private\n\nmine alone\n")
    _settled(editor)
    _untrack(tree, "notes/private.md", ignore)
    _stays_out(brain, editor, tree, "notes/private.md")
    acked = editor.status()["acknowledged"]
    assert acked["not_in_history"] == 0 and acked["being_put_back"] == 0, acked


def test_an_untracked_hand_note_is_not_committed_again(tree: Path, brain: Brain, editor: Editor):
    (tree / "notes/diary.md").write_text("# Diary\n\nby hand\n")
    _until(lambda: _in_head(brain, "notes/diary.md"), "a hand edit, committed by the watcher")
    _untrack(tree, "notes/diary.md", ignore=False)
    _stays_out(brain, editor, tree, "notes/diary.md")
    assert "?? notes/diary.md" in owner_git(tree, "status", "--porcelain").stdout  # as the owner left it


def test_an_untrack_stands_across_a_restart_and_one_made_while_down_is_seen(tree: Path, brain: Brain, editor: Editor):
    brain.write("notes/a.md", "create", WRITE, content="# A\n")
    brain.write("notes/b.md", "create", WRITE, content="# B\n")
    _settled(editor)
    _untrack(tree, "notes/a.md", ignore=False)
    _seen_untracked(editor, "notes/a.md")
    editor.stop()
    _untrack(tree, "notes/b.md", ignore=False)  # while the server is down
    again = Editor(brain, debounce_ms=120, poll_s=0.02).start()
    try:
        _seen_untracked(again, "notes/b.md")
        _settled(again)
        for path in ("notes/a.md", "notes/b.md"):
            assert not _in_head(brain, path) and (tree / path).exists(), path
        (tree / "notes/b.md").write_text("# B\n\nedited\n")
        _settled(again)
        assert not _in_head(brain, "notes/b.md")
    finally:
        again.stop()


def test_an_untracked_note_comes_back_when_the_owner_adds_it_or_makes_it_anew(tree: Path, brain: Brain, editor: Editor):
    brain.write("notes/back.md", "create", WRITE, content="# Back\n")
    brain.write("notes/anew.md", "create", WRITE, content="# Anew\n")
    _settled(editor)
    _untrack(tree, "notes/back.md", ignore=False)
    _untrack(tree, "notes/anew.md", ignore=False)
    _seen_untracked(editor, "notes/back.md")
    _seen_untracked(editor, "notes/anew.md")
    owner_git_again(tree, "add", "notes/back.md")
    owner_git_again(tree, "commit", "-qm", "track it again")
    (tree / "notes/anew.md").unlink()
    _until(lambda: not editor.untracked.paths, "back.md tracked again and anew.md gone: neither is untracked")
    (tree / "notes/back.md").write_text("# Back\n\nedited once tracked\n")
    (tree / "notes/anew.md").write_text("# Anew\n\na new note at that path\n")
    _until(lambda: "edited once tracked" in _text(brain, "notes/back.md"), "the edit of the tracked note")
    _until(lambda: "a new note" in _text(brain, "notes/anew.md"), "the new note at the untracked one's path")


def _held(editor: Editor, path: str) -> list[str]:
    deadline = time.monotonic() + 15  # the watcher's next polls, slower on a loaded machine
    while time.monotonic() < deadline:
        held = [h for h in editor.status()["hand_edits"]["held"] if h.startswith(f"{path}: its removal")]
        if held:
            return held
        time.sleep(0.05)
    return []


@pytest.mark.parametrize("then", ["commit", "restore"])
def test_a_staged_removal_holds_hand_edits_until_the_owner_commits_or_undoes_it(
    tree: Path, brain: Brain, editor: Editor, then: str
):
    path = "notes/staged.md"
    brain.write(path, "create", WRITE, content="# Staged\n")
    _settled(editor)
    owner_git_again(tree, "rm", "-q", "--cached", path)
    with open(tree / path, "a", encoding="utf-8") as f:
        f.write("edited while its removal is staged\n")
    held = _held(editor, path)
    assert held and "git restore --staged notes/staged.md" in held[0], editor.status()["hand_edits"]
    assert "edited" not in _text(brain, path)  # committing it would have unstaged the removal
    assert owner_git(tree, "ls-files", path).stdout == ""  # the index as the owner left it
    if then == "commit":
        owner_git_again(tree, "commit", "-qm", "untrack it")
        _seen_untracked(editor, path)
        assert not _in_head(brain, path) and (tree / path).exists()
    else:
        owner_git_again(tree, "restore", "--staged", path)
        _until(lambda: "edited while its removal is staged" in _text(brain, path), "the held edit, committed")
    _until(lambda: editor.status()["hand_edits"]["held"] == [], "nothing held once the owner decided")


def test_a_note_made_and_untracked_between_two_looks_stays_out(tree: Path, brain: Brain, manual: Editor):
    """The watcher may look next only after Cortex wrote a note and the owner untracked it (a
    slow pass stretches the poll; a loaded machine more): that commit of the owner's is seen,
    though the head before and the head after both lack the file. Driven by hand: no timing."""
    brain.write("notes/late.md", "create", WRITE, content="# Late\n")
    _untrack(tree, "notes/late.md", ignore=False)
    manual.settle()  # type: ignore[attr-defined]
    assert "notes/late.md" in manual.untracked.paths
    assert not _in_head(brain, "notes/late.md") and (tree / "notes/late.md").exists()
    assert manual.status()["hand_edits"]["restored"] == []


def test_a_note_made_and_untracked_while_down_stays_out(tree: Path, brain: Brain, manual: Editor):
    """The same across a restart: the head last looked at lacks the note, the head at start too."""
    manual.settle()  # type: ignore[attr-defined]
    brain.write("notes/down.md", "create", WRITE, content="# Down\n")
    _untrack(tree, "notes/down.md", ignore=False)
    again = Editor(brain, debounce_ms=120, clock=lambda: 1e9)
    again.check_all()
    again.poll_once()
    assert "notes/down.md" in again.untracked.paths
    assert not _in_head(brain, "notes/down.md") and (tree / "notes/down.md").exists()


@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="a running git command is read from /proc")
def test_a_note_made_while_a_git_command_ran_is_put_back_when_a_commit_drops_it(
    tree: Path, brain: Brain, manual: Editor
):
    """`git commit` reads the index before taking its lock: one begun before Cortex made a note
    can commit, and write back, an index without it, in objects exactly an untrack (seen with
    `git commit -a` beside two writers, acknowledged writes lost). A write that makes a note
    while a git command runs says so in the journal; a drop of that note is then put back as
    taken out unasked, and the owner's next untrack stands. Driven by hand: no timing."""
    running = subprocess.Popen(["git", "hash-object", "--stdin"], cwd=tree, stdin=subprocess.PIPE)
    try:
        brain.write("notes/race.md", "create", WRITE, content="# Race\n")
    finally:
        running.communicate(b"", timeout=10)
    assert brain.journal.writes_of("notes/race.md")[0].owner_git
    _untrack(tree, "notes/race.md", ignore=False)  # what the stale index's commit leaves
    manual.settle()  # type: ignore[attr-defined]
    assert _in_head(brain, "notes/race.md") and "notes/race.md" not in manual.untracked.paths
    assert manual.status()["hand_edits"]["restored"], manual.status()["hand_edits"]
    _untrack(tree, "notes/race.md", ignore=False)  # the owner's own, after
    manual.settle()  # type: ignore[attr-defined]
    assert not _in_head(brain, "notes/race.md") and "notes/race.md" in manual.untracked.paths


def test_a_note_the_index_did_not_take_is_put_back_when_a_commit_drops_it(tree: Path, brain: Brain, manual: Editor):
    """A git command held index.lock through Cortex's write (here a lock file left in place):
    the staging index did not take the new note, so the owner's next commit lacks it, and so
    does the index Cortex's next write brings to that head, as after an untrack. Put back
    once; the owner's next untrack stands. Driven by hand: no timing."""
    lock = tree / ".git" / "index.lock"
    lock.touch()
    try:
        brain.write("notes/locked.md", "create", WRITE, content="# Locked\n")  # waits out the lock, then goes on
    finally:
        lock.unlink()
    assert not brain.journal.writes_of("notes/locked.md")[0].staged
    (tree / "notes/mine.md").write_text("# Mine\n")
    owner_git_again(tree, "add", "notes/mine.md")
    owner_git_again(tree, "commit", "-qm", "mine")  # from an index without notes/locked.md
    brain.write("notes/next.md", "create", WRITE, content="# Next\n")  # brings the index to that head
    manual.settle()  # type: ignore[attr-defined]
    assert _in_head(brain, "notes/locked.md") and "notes/locked.md" not in manual.untracked.paths
    _untrack(tree, "notes/locked.md", ignore=False)
    manual.settle()  # type: ignore[attr-defined]
    assert not _in_head(brain, "notes/locked.md") and "notes/locked.md" in manual.untracked.paths


def test_a_write_is_left_marked_when_a_commit_of_the_owners_landed_on_it_before_the_lock_was_free(
    tree: Path, brain: Brain, manual: Editor
):
    """A write that makes a file is marked `owner_git` under the lock and looked at once it is
    free (`Journal.settle`): nothing ran, and the mark is gone; a commit of the owner's already
    on top (it may have read the index before the write), and it stays, in the file too."""
    brain.write("notes/plain.md", "create", WRITE, content="# Plain\n")
    assert not brain.journal.writes_of("notes/plain.md")[0].owner_git
    brain.write("notes/marked.md", "create", WRITE, content="# Marked\n")
    entry = brain.journal.writes_of("notes/marked.md")[0]
    entry.owner_git = True  # as under the lock
    owner_git_again(tree, "commit", "--allow-empty", "-qm", "on top")
    brain.journal.settle(brain.store, [entry.sha])
    assert entry.owner_git
    again = Journal.for_store(brain.store)  # a restart reads the mark back
    assert again.writes_of("notes/marked.md")[0].owner_git and not again.writes_of("notes/plain.md")[0].owner_git

"""The owner's own Git beside a serving Cortex (issue 54): no acknowledged write lost, and
nothing the owner chose undone.

Real `git` processes on the brain's working tree, with the watcher running: a pull that
stops on a conflict then aborted or continued, a merge with a conflict, a reset by the
owner, a `git stash` whose reset read HEAD before a write, and a loop of hand commits and
`add -A` against two writers. After each,
the journal and HEAD agree: every acknowledged write is in HEAD, or was changed since by a
commit of the owner's, or left the history by the owner's reset (said, not undone).
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest
from watcherkit import head_text as _text
from watcherkit import owner_git

from cortex.brain.brain import Brain
from cortex.brain.trailers import Actor
from cortex.brain.watcher import Editor
from cortex.errors import StoreError

WRITE = Actor(door="owner", tool="brain_write", client="pytest")
CAPTURE = Actor(door="owner", tool="brain_capture", client="pytest")


_git = owner_git


def _settled(editor: Editor) -> None:
    time.sleep(0.6)  # past the debounce, a few polls
    editor.first_pass.wait(5)


def _conflicting_upstream(tree: Path, tmp_path: Path, brain: Brain) -> None:
    """A remote whose main changed notes/plan.md one way while Cortex wrote it another."""
    remote = tmp_path / "remote.git"
    _git(tmp_path, "clone", "-q", "--bare", str(tree), str(remote))
    _git(tree, "remote", "add", "origin", str(remote))
    _git(tree, "fetch", "-q", "origin")
    _git(tree, "branch", "-q", "--set-upstream-to=origin/main", "main")
    other = tmp_path / "other"
    _git(tmp_path, "clone", "-q", str(remote), str(other))
    (other / "notes").mkdir(exist_ok=True)
    (other / "notes/plan.md").write_text("# Plan\nfrom the laptop\n")
    _git(other, "add", "-A")
    _git(other, "commit", "-qm", "plan, from the laptop")
    _git(other, "push", "-q", "origin", "main")
    brain.write("notes/plan.md", "create", WRITE, content="# Plan\nfrom Cortex\n")


def _account_agrees(editor: Editor) -> dict:
    acked = editor.status()["acknowledged"]
    assert acked["not_in_history"] == 0 and acked["being_put_back"] == 0, acked
    return acked


def _write_in_thread(brain: Brain, text: str) -> tuple[threading.Thread, dict]:
    got: dict = {}

    def run() -> None:
        try:
            got["reply"] = brain.capture(text, CAPTURE)
        except StoreError as exc:
            got["error"] = str(exc)

    t = threading.Thread(target=run)
    t.start()
    return t, got


@pytest.mark.parametrize("finish", ["abort", "continue"])
def test_a_stopped_rebase_is_waited_for_and_both_endings_keep_every_acknowledged_write(
    tree: Path, tmp_path: Path, brain: Brain, editor: Editor, finish: str
) -> None:
    _conflicting_upstream(tree, tmp_path, brain)
    before = brain.capture("before the pull", CAPTURE)
    _settled(editor)
    pulled = _git(tree, "pull", "-q", "--rebase", check=False)
    assert pulled.returncode != 0 and brain.store.operation_under_way() == "a rebase", pulled.stderr

    brain.owner_git_wait = 0.3
    with pytest.raises(StoreError, match="nothing was written: a rebase of yours is under way"):
        brain.capture("refused mid-rebase", CAPTURE)
    brain.owner_git_wait = 20
    waiting, got = _write_in_thread(brain, "waited for the rebase")
    time.sleep(0.5)
    assert "reply" not in got  # the write waits; the branch does not move under the rebase
    if finish == "abort":
        done = _git(tree, "rebase", "--abort", check=False)
    else:
        (tree / "notes/plan.md").write_text("# Plan\nfrom the laptop\nfrom Cortex\n")
        _git(tree, "add", "notes/plan.md")
        done = _git(tree, "rebase", "--continue", check=False)
    assert done.returncode == 0, done.stderr
    waiting.join(30)
    assert "reply" in got, got
    _settled(editor)

    assert _git(tree, "symbolic-ref", "HEAD").stdout.strip() == "refs/heads/main"
    log = _text(brain, before["path"])
    assert "before the pull" in log and "waited for the rebase" in log and "refused" not in log
    assert brain.store.operation_under_way() is None and editor.status()["hand_edits"]["restored"] == []
    _account_agrees(editor)


def test_a_merge_with_a_conflict_is_waited_for(tree: Path, tmp_path: Path, brain: Brain, editor: Editor) -> None:
    _conflicting_upstream(tree, tmp_path, brain)
    _settled(editor)
    pulled = _git(tree, "pull", "-q", "--no-rebase", check=False)
    assert pulled.returncode != 0 and brain.store.operation_under_way() == "a merge", pulled.stderr
    brain.owner_git_wait = 20
    waiting, got = _write_in_thread(brain, "waited for the merge")
    time.sleep(0.5)
    assert "reply" not in got
    (tree / "notes/plan.md").write_text("# Plan\nboth\n")
    _git(tree, "add", "notes/plan.md")
    _git(tree, "commit", "-qm", "merge the laptop's plan")
    waiting.join(30)
    assert "reply" in got, got
    _settled(editor)
    assert "waited for the merge" in _text(brain, got["reply"]["path"])
    assert _text(brain, "notes/plan.md") == "# Plan\nboth\n"
    _account_agrees(editor)


def test_a_stopped_merge_keeps_its_index_from_the_staging_sync(tree: Path, tmp_path: Path, brain: Brain) -> None:
    """Staging entries a busy index.lock kept back wait while a merge stands stopped: the
    index is the merge's (its conflict entries), and syncing it between the owner's `git add`
    and `git commit` held the lock as the commit began (a CI run's failure)."""
    _conflicting_upstream(tree, tmp_path, brain)
    pulled = _git(tree, "pull", "-q", "--no-rebase", check=False)
    assert pulled.returncode != 0 and brain.store.operation_under_way() == "a merge", pulled.stderr
    conflicted = _git(tree, "ls-files", "-u").stdout
    assert "notes/plan.md" in conflicted
    brain.store._unsynced = {"notes/plan.md"}  # as a busy lock leaves them
    brain.store.sync_staging(())
    assert _git(tree, "ls-files", "-u").stdout == conflicted
    assert brain.store._unsynced == {"notes/plan.md"}
    (tree / "notes/plan.md").write_text("# Plan\nboth\n")
    _git(tree, "add", "notes/plan.md")
    _git(tree, "commit", "-qm", "merge the laptop's plan")
    brain.store.sync_staging(())  # the merge over: kept-back entries follow the head
    assert brain.store._unsynced == set() and _git(tree, "status", "--porcelain").stdout == ""


def test_a_reset_by_the_owner_is_reported_and_not_undone(tree: Path, brain: Brain, editor: Editor) -> None:
    brain.write("notes/keep.md", "create", WRITE, content="# Keep\n")
    gone = brain.write("notes/gone.md", "create", WRITE, content="# Gone\n")
    _settled(editor)
    _git(tree, "reset", "-q", "--hard", "HEAD~1")
    reset = brain.store.head()
    _settled(editor)
    assert brain.store.head() == reset and _text(brain, "notes/gone.md") == ""
    acked = editor.status()["acknowledged"]
    assert acked["not_in_history"] == 1 and acked["not_in_history_files"] == [f"notes/gone.md ({gone['sha'][:7]})"]


def test_a_write_a_stash_rewound_is_put_back(tree: Path, brain: Brain, editor: Editor) -> None:
    """`git stash` reads HEAD, then resets the branch to it ("reset: moving to HEAD"): a write
    landing between is taken out, though nobody chose that. Made here as the stash makes it."""
    _settled(editor)
    stashed_on = brain.store.head()
    took = brain.write("notes/late.md", "create", WRITE, content="# Late\n")
    _git(tree, "update-ref", "-m", "reset: moving to HEAD", "refs/heads/main", stashed_on)
    _git(tree, "read-tree", "-u", "--reset", "HEAD")
    deadline = time.monotonic() + 15  # the watcher's next polls (slower on a loaded machine)
    while _text(brain, "notes/late.md") != "# Late\n" and time.monotonic() < deadline:
        time.sleep(0.1)
    _settled(editor)
    assert _text(brain, "notes/late.md") == "# Late\n"
    said = editor.status()["hand_edits"]["restored"]
    assert said and "git stash" in said[0] and took["sha"][:7] in said[0], said
    _account_agrees(editor)


def test_hand_commits_and_adds_beside_two_writers_lose_no_acknowledged_write(
    tree: Path, brain: Brain, editor: Editor
) -> None:
    """A short run of the benchmark's loop (`cortex bench --part owner-git` runs it for minutes)."""
    (tree / "notes/mine.md").write_text("# Mine\n")
    _settled(editor)
    stop = time.monotonic() + 4
    created: list[str] = []
    captured: list[str] = []

    def creates() -> None:
        n = 0
        while time.monotonic() < stop:
            n += 1
            brain.write(f"notes/c{n}.md", "create", WRITE, content=f"# C{n}\n")
            created.append(f"notes/c{n}.md")

    def captures() -> None:
        n = 0
        while time.monotonic() < stop:
            n += 1
            brain.capture(f"capture {n}", CAPTURE)
            captured.append(f"capture {n}")

    writers = [threading.Thread(target=creates), threading.Thread(target=captures)]
    for w in writers:
        w.start()
    k = 0
    while time.monotonic() < stop:
        k += 1
        with open(tree / "notes/mine.md", "a", encoding="utf-8") as f:
            f.write(f"line {k}\n")
        shape = k % 3  # `git stash` + `pop` in this loop: BENCHMARKS.md, issue 54 (a pop can lose a write)
        if shape == 0:
            _git(tree, "add", "-A", check=False)
            _git(tree, "commit", "-qm", f"mine {k}", check=False)
        elif shape == 1:
            _git(tree, "commit", "-qam", f"mine {k}", check=False)
        else:
            _git(tree, "commit", "-qm", f"mine {k}", "notes/mine.md", check=False)
    for w in writers:
        w.join(30)
    _settled(editor)
    _settled(editor)
    head = brain.store.head()
    assert created and captured
    missing = [p for p in created if brain.store.blob_at(head, p) is None]
    logs = "".join(_text(brain, p) for p in brain.store.entries(head) if p.startswith("log/"))
    missing += [c for c in captured if f"\n{c}\n" not in logs]
    assert not missing, missing
    _account_agrees(editor)


def test_a_git_command_running_in_the_tree_is_seen(tree: Path) -> None:
    """`git_running` reads /proc: a `git commit` waiting for its editor runs in the tree, and
    not once it has ended; a read-only command is told by its subcommand, options skipped."""
    from cortex.store.working_tree import git_command, git_running

    assert git_command([b"-c", b"core.pager=less", b"log"]) == "log"
    assert git_command([b"-C", b"/tmp/x", b"--no-pager", b"merge", b"origin/main"]) == "merge"

    assert not git_running(tree)
    env = {"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(tree.parent), "GIT_CONFIG_NOSYSTEM": "1"}
    env |= {
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "a@e",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "a@e",
    }
    commit = subprocess.Popen(
        ["git", "-c", "core.editor=sleep 30 #", "commit", "--allow-empty"], cwd=tree, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while not (tree / ".git" / "COMMIT_EDITMSG").exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # the commit is in its editor
        while not git_running(tree) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert git_running(tree), (commit.poll(), commit.stderr.read() if commit.stderr else "")
    finally:
        commit.kill()
        commit.wait()
    assert not git_running(tree)

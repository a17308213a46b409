"""The owner's own Git beside two writers (issue 54): acknowledged writes against HEAD.

For each shape of the owner's Git (`git commit <path>`, `git commit -am`, `git add -A` +
commit, `git stash` + `pop` (and the two together), a pull (fetch + merge) from another
clone, `git reset --hard HEAD~1`, and three that meet a conflict with the other clone:
`git pull --rebase` stopped and aborted, stopped, resolved and continued, and a merge
stopped, resolved and committed), a
working-tree brain with its watcher takes a create and a capture as fast as two threads
write, while a loop makes a hand edit and runs the shape, retrying it until it succeeds.
Printed per shape: writes acknowledged, in HEAD at the end, refused, removed by the owner's
own reset (their decision: reported, not undone), put back by the watcher, and how long a
hand command took to succeed (median and worst, retries included). `n` is seconds a shape.
"""

from __future__ import annotations

import statistics
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from cortex.app.brain_setup import init_brain
from cortex.brain.brain import Brain
from cortex.brain.trailers import Actor
from cortex.brain.watcher import Editor
from cortex.errors import CortexError
from cortex.store.git import GitStore

__all__ = ["SHAPES", "bench_owner_git"]

WRITE = Actor(door="owner", tool="brain_write", client="bench")
CAPTURE = Actor(door="owner", tool="brain_capture", client="bench")
SHAPES = (
    "commit-path", "commit-am", "add-all", "stash-pop", "stash-add", "pull", "reset-hard",
    "rebase-abort", "rebase-continue", "merge-conflict",
)  # fmt: skip
# The shapes that pull from another clone; the last three meet a conflict on notes/shared.md.
_REMOTE = ("pull", "rebase-abort", "rebase-continue", "merge-conflict")
RETRY_S = 0.05


def _git(tree: Path, *args: str) -> bool:
    env = {"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(tree.parent), "GIT_CONFIG_NOSYSTEM": "1"}
    env |= {"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.org", "GIT_EDITOR": "true"}
    env |= {"GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.org"}
    return subprocess.run(["git", *args], cwd=tree, env=env, capture_output=True).returncode == 0


def _owner_step(shape: str, tree: Path, other: Path, k: int) -> bool:
    """One run of the shape; False when git refused it (a lock held: the loop retries)."""
    if shape == "commit-path":
        return _git(tree, "commit", "-qm", f"mine {k}", "notes/mine.md")
    if shape == "commit-am":
        return _git(tree, "commit", "-qam", f"mine {k}")
    if shape == "add-all":
        return _git(tree, "add", "-A") and _git(tree, "commit", "-qm", f"mine {k}")
    if shape == "stash-pop":
        return _git(tree, "stash", "-q") and _git(tree, "stash", "pop", "-q")
    if shape == "stash-add":  # the two together: a pop then `add -A` and a commit
        stashed = _git(tree, "stash", "-q") and _git(tree, "stash", "pop", "-q")
        return stashed and _git(tree, "add", "-A") and _git(tree, "commit", "-qm", f"mine {k}")
    if shape == "pull":
        if _git(tree, "fetch", "-q", "origin") and _git(tree, "merge", "-q", "--no-edit", "origin/main"):
            return True
        _git(tree, "merge", "--abort")  # a merge stopped by a busy index.lock: the owner aborts, retries
        return False
    if shape in ("rebase-abort", "rebase-continue"):
        _git(tree, "pull", "-q", "--rebase", "--no-autostash", "origin", "main")
        if not (tree / ".git/rebase-merge").exists():
            return False  # refused before it began (a busy index.lock, a file not yet committed)
        if shape == "rebase-abort":
            return _until(tree, "rebase", "--abort")
        return _resolve(tree) and _until(tree, "rebase", "--continue") and _pushed(tree)
    if shape == "merge-conflict":
        _git(tree, "fetch", "-q", "origin")
        _git(tree, "merge", "-q", "--no-edit", "origin/main")
        if not (tree / ".git/MERGE_HEAD").exists():
            return False
        return _resolve(tree) and _until(tree, "commit", "-q", "--no-edit") and _pushed(tree)
    return _git(tree, "reset", "-q", "--hard", "HEAD~1")


def _pushed(tree: Path) -> bool:
    """The owner pushes what they resolved, so the other clone's next change meets it."""
    return _git(tree, "push", "-q", "origin", "main")


def _until(tree: Path, *args: str) -> bool:
    """A git command of the owner's retried while it fails (a busy index.lock), 10 s at most."""
    began = time.monotonic()
    while not _git(tree, *args):
        if time.monotonic() - began > 10:
            return False
        time.sleep(RETRY_S)
    return True


def _commit_shared(tree: Path, message: str) -> None:
    """The owner commits notes/shared.md, unless the watcher committed the save first."""
    began = time.monotonic()
    while not _git(tree, "add", "notes/shared.md") or not _git(tree, "commit", "-qm", message, "notes/shared.md"):
        if _git(tree, "diff", "--quiet", "HEAD", "--", "notes/shared.md") or time.monotonic() - began > 10:
            return
        time.sleep(RETRY_S)


def _resolve(tree: Path) -> bool:
    """The owner's resolution of the conflict on notes/shared.md: both sides' lines kept."""
    shared = tree / "notes/shared.md"
    lines = shared.read_text(encoding="utf-8").splitlines(keepends=True)
    shared.write_text("".join(x for x in lines if not x.startswith(("<<<<<<<", "=======", ">>>>>>>"))))
    return _until(tree, "add", "notes/shared.md")


def _shape(root: Path, shape: str, seconds: float) -> dict[str, Any]:
    tree = root / shape / "notes"
    init_brain(tree)
    brain = Brain(GitStore(tree))
    editor = Editor(brain).start()
    remote, other = root / shape / "remote.git", root / shape / "other"
    if shape in _REMOTE:
        (tree / "notes/shared.md").write_text("# Shared\n")
        _commit_shared(tree, "shared")
        _git(root / shape, "clone", "-q", "--bare", str(tree), str(remote))
        _git(tree, "remote", "add", "origin", str(remote))
        _git(tree, "fetch", "-q", "origin")
        _git(tree, "branch", "-q", "--set-upstream-to=origin/main", "main")
        _git(root / shape, "clone", "-q", str(remote), str(other))
    (tree / "notes/mine.md").write_text("# Mine\n")
    time.sleep(1)
    stop = time.monotonic() + seconds
    acked: list[tuple[str, str]] = []  # (path, text it holds)
    refused = [0]

    def writer(kind: str) -> None:
        n = 0
        while time.monotonic() < stop:
            n += 1
            try:
                if kind == "create":
                    brain.write(f"notes/c{n}.md", "create", WRITE, content=f"# C{n}\n")
                    acked.append((f"notes/c{n}.md", f"# C{n}"))
                else:
                    path = brain.capture(f"capture {n}", CAPTURE)["path"]
                    acked.append((path, f"capture {n}"))
            except CortexError:
                refused[0] += 1

    writers = [threading.Thread(target=writer, args=(kind,)) for kind in ("create", "capture")]
    for w in writers:
        w.start()
    waits: list[float] = []
    k = 0
    while time.monotonic() < stop:
        k += 1
        if shape in _REMOTE:
            _git(other, "pull", "-q", "--ff-only", "origin", "main")  # what the owner pushed last
            (other / f"laptop{k}.md").write_text(f"# Laptop {k}\n")
            if shape != "pull":  # both clones change the same line: a conflict
                with open(other / "notes/shared.md", "a", encoding="utf-8") as f:
                    f.write(f"laptop {k}\n")
                with open(tree / "notes/shared.md", "a", encoding="utf-8") as f:
                    f.write(f"desk {k}\n")
                _commit_shared(tree, f"desk {k}")
            _git(other, "add", "-A")
            _git(other, "commit", "-qm", f"laptop {k}")
            _git(other, "push", "-q", "origin", "main")
        else:
            with open(tree / "notes/mine.md", "a", encoding="utf-8") as f:
                f.write(f"line {k}\n")
        began = time.monotonic()
        while not _owner_step(shape, tree, other, k) and time.monotonic() - began < 10:
            time.sleep(RETRY_S)
        waits.append(time.monotonic() - began)
        time.sleep(0.2)
    for w in writers:
        w.join(60)
    time.sleep(2)  # the watcher's last polls
    head = brain.store.head()
    account = editor.status()["acknowledged"]
    editor.stop()
    texts: dict[str, str] = {}
    for path, _ in acked:
        if path not in texts:
            blob = brain.store.blob_at(head, path) if head else None
            texts[path] = brain.store.blob_bytes(blob).decode() if blob else ""
    in_head = sum(1 for path, said in acked if said in texts[path])
    return {
        f"{shape}_acknowledged": len(acked),
        f"{shape}_in_head": in_head,
        f"{shape}_missing": len(acked) - in_head,  # for reset-hard: the owner's reset took them
        f"{shape}_refused": refused[0],
        f"{shape}_not_in_history": account["not_in_history"],
        f"{shape}_restored": len(editor.restored),
        f"{shape}_hand_runs": len(waits),
        f"{shape}_hand_p50_s": statistics.median(waits) if waits else 0.0,
        f"{shape}_hand_max_s": max(waits) if waits else 0.0,
    }


def bench_owner_git(root: Path, n: int) -> dict[str, Any]:
    """Each shape for `n` seconds; see the module's docstring for what is printed."""
    out: dict[str, Any] = {"seconds_a_shape": n}
    for shape in SHAPES:
        out |= _shape(root, shape, float(n))
    return out

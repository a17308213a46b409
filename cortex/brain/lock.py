"""One writer per brain: an OS lock that `cortex serve` and `cortex reindex` hold on it.

Two servers on one working-tree brain lost an acknowledged write: each one's watcher took
the other's working-tree sync for a hand edit. So a process that writes to a
brain takes an exclusive `flock` on a file in the repository's common Git folder
(`.git/cortex.lock`, or `cortex.lock` in a bare repository: never in the working tree, so
the owner's files are untouched). The common folder, not a linked worktree's own
`.git/worktrees/<name>/`: two servers on two worktrees of one repository share its
branches, and one's watcher committed a stale file over the other's acknowledged write.
So one process writes to a repository at a time, whichever worktree it is started on.
The kernel drops the lock when the process ends, a crash or `kill -9` included, so a stale
lock cannot outlive its holder. The file holds the holder's PID, address and brain path,
which a refused second process names.

Hosted instances each keep their own clone in their own state folder, so each locks its
own clone and several can share one remote, as before. One-shot commands that only commit
(`cortex guest add`, `cortex init`) do not take it: a commit is a compare-and-swap on the
branch, safe beside a running server.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from cortex.errors import StoreError

__all__ = ["LOCK_NAME", "BrainLock"]

LOCK_NAME = "cortex.lock"

try:
    import fcntl
except ImportError:  # Windows: no flock; the one-writer rule is then the owner's to keep
    fcntl = None  # type: ignore[assignment]


class BrainLock:
    """The exclusive lock on one brain, held until `release` or the process ends."""

    def __init__(self, path: Path, fd: int):
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, git_dir: Path, brain: Path, role: str, url: str | None = None) -> BrainLock | None:
        """Lock the brain whose common Git folder is `git_dir`, or raise StoreError naming the holder.

        `role` says what holds it ("served", "reindexed"); `url` is where a server answers.
        None where the platform has no flock.
        """
        if fcntl is None:
            return None
        path = Path(git_dir) / LOCK_NAME
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _holder(fd)
            os.close(fd)
            raise StoreError(_refusal(brain, holder)) from None
        record = {"pid": os.getpid(), "role": role, "brain": str(brain), **({"url": url} if url else {})}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(record) + "\n").encode(), 0)
        return cls(path, fd)

    @staticmethod
    def holder(git_dir: Path) -> dict | None:
        """What the process that holds the lock on this brain wrote (its PID, role, brain and
        URL), or None when no process holds it (or the platform has no flock)."""
        path = Path(git_dir) / LOCK_NAME
        if fcntl is None or not path.exists():
            return None
        fd = os.open(path, os.O_RDONLY)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                return _holder(fd)
            return None  # free: taken and dropped at once
        finally:
            os.close(fd)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None


def _holder(fd: int) -> dict:
    try:
        data = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _refusal(brain: Path, holder: dict) -> str:
    pid = holder.get("pid")
    who = f"PID {pid}" if isinstance(pid, int) else "another process"
    role = holder.get("role") if holder.get("role") in ("served", "reindexed") else "used"
    where = f" at {holder['url']}" if isinstance(holder.get("url"), str) else ""
    what = f"this brain ({brain})"
    other = holder.get("brain")
    if isinstance(other, str) and Path(other) != Path(brain):  # another worktree of the repository
        what = f"this brain ({brain}) shares its Git repository with {other}, which"
    return (
        f"{what} is already {role} by {who}{where}; one process writes to a brain at a time: "
        "stop it first, or use that server"
    )

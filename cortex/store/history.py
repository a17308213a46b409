"""A GitStore's history: walking commits for their times, messages, changed files and
ancestry (the corpus's note dates, brain_history, hosted mode's catch-up).

`History` is mixed into `GitStore` (store.git), whose repository handle (`_repo`), lock
(`_lock`) and `head()` it uses; it only reads.
"""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from cortex.errors import StoreError
from cortex.store.reflog import Mark, Move, read_after
from cortex.store.types import CommitInfo

__all__ = ["History"]


class History:
    """Commits, newest first or oldest first, and how two of them are related."""

    _repo: pygit2.Repository
    _lock: threading.RLock
    ref: str

    if TYPE_CHECKING:  # GitStore's, which this is mixed into

        def head(self) -> str | None: ...

        @property
        def common_dir(self) -> Path: ...

    def commit_time(self, sha: str) -> dt.datetime:
        with self._lock:
            c = self._repo[sha].peel(pygit2.Commit)
            return _commit_time(c)

    def line_times(self, sha: str, path: str) -> list[dt.datetime]:
        """For each line of `path` at commit `sha`, the time of the last commit that changed
        it (Git blame): how working items age with no writer."""
        with self._lock:
            commit = self._repo[sha].peel(pygit2.Commit)
            blame = self._repo.blame(path, newest_commit=commit.id)
            out: list[dt.datetime] = []
            for hunk in blame:
                when = _commit_time(self._repo[hunk.final_commit_id].peel(pygit2.Commit))
                out.extend([when] * hunk.lines_in_hunk)
            return out

    def commit_at(self, when: dt.datetime) -> str | None:
        """The commit that was head at `when`: first-parent walk from the head."""
        with self._lock:
            head = self.head()
            if head is None:
                return None
            commit = self._repo[head].peel(pygit2.Commit)
            while True:
                if _commit_time(commit) <= when:
                    return str(commit.id)
                if not commit.parents:
                    return None
                commit = commit.parents[0]

    def history(
        self, path: str | None = None, limit: int = 20, before: str | None = None
    ) -> tuple[list[CommitInfo], bool]:
        """Commits newest first (touching `path` if given), and whether more remain."""
        with self._lock:
            start = before if before else self.head()
            if start is None:
                return [], False
            walker = self._repo.walk(
                self._repo[start].id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME
            )
            out: list[CommitInfo] = []
            for commit in walker:
                if before and str(commit.id) == start:
                    continue  # `before` is a cursor: strictly older commits only
                files = self._changed_files(commit)
                if path is not None and not any(f == path or f.startswith(path.rstrip("/") + "/") for f in files):
                    continue
                if len(out) == limit:
                    return out, True
                out.append(
                    CommitInfo(
                        sha=str(commit.id),
                        time=_commit_time(commit),
                        message=commit.message,
                        author=commit.author.name,
                        parents=tuple(str(p) for p in commit.parent_ids),
                        files=tuple(files),
                    )
                )
            return out, False

    def find_trailer(self, sha: str, key: str, value: str, limit: int) -> str | None:
        """The newest of the last `limit` first-parent commits carrying `key: value`."""
        needle = f"\n{key}: {value}\n"
        with self._lock:
            commit = self._repo[sha].peel(pygit2.Commit)
            for _ in range(limit):
                if needle in "\n" + commit.message + ("" if commit.message.endswith("\n") else "\n"):
                    return str(commit.id)
                if not commit.parents:
                    return None
                commit = commit.parents[0]
            return None

    def commit_info(self, sha: str) -> CommitInfo:
        """One commit by full SHA (use `resolve_rev` first for user input), with its changed files."""
        with self._lock:
            try:
                commit = self._repo[sha].peel(pygit2.Commit)
            except (KeyError, ValueError, pygit2.GitError) as exc:
                raise StoreError(f"unknown commit {sha!r}") from exc
            return CommitInfo(
                sha=str(commit.id),
                time=_commit_time(commit),
                message=commit.message,
                author=commit.author.name,
                parents=tuple(str(p) for p in commit.parent_ids),
                files=tuple(self._changed_files(commit)),
                committer=commit.committer.name,
            )

    def _changed_files(self, commit: pygit2.Commit) -> list[str]:
        if commit.parents:
            diff = commit.parents[0].tree.diff_to_tree(commit.tree)
        else:
            diff = commit.tree.diff_to_tree(swap=True)
        return sorted({d.new_file.path for d in diff.deltas} | {d.old_file.path for d in diff.deltas})

    def is_ancestor(self, old: str, new: str) -> bool:
        """Whether `old` is `new` or one of its ancestors."""
        with self._lock:
            return old == new or self._repo.descendant_of(pygit2.Oid(hex=new), pygit2.Oid(hex=old))

    def merge_base(self, a: str, b: str) -> str | None:
        with self._lock:
            oid = self._repo.merge_base(pygit2.Oid(hex=a), pygit2.Oid(hex=b))
            return str(oid) if oid else None

    def moves_after(self, seen: Mark | None, limit: int = 500) -> tuple[list[Move], Mark]:
        """The branch's moves (old, new, reflog message) after `seen` (where the last read of its
        reflog ended), oldest first (the newest `limit`), and where this read ends. A head can
        come back to a SHA it held before (a reset), so the place in the reflog, not a SHA, says
        where the last read ended; `seen` None, or a line since trimmed (`git gc`), gives no
        moves. Read from that place, not whole (`store.reflog`)."""
        return read_after(self.common_dir / "logs" / self.ref, seen, limit)

    def commits_between(self, base: str | None, tip: str) -> list[str]:
        """Commits reachable from `tip` and not from `base`, oldest first."""
        with self._lock:
            walker = self._repo.walk(
                pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE
            )
            if base:
                walker.hide(pygit2.Oid(hex=base))
            return [str(c.id) for c in walker]


def _commit_time(commit: pygit2.Commit) -> dt.datetime:
    tz = dt.timezone(dt.timedelta(minutes=commit.commit_time_offset))
    return dt.datetime.fromtimestamp(commit.commit_time, tz)

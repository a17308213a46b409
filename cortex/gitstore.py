"""The Git store: the only module that talks to pygit2.

Reads resolve the branch head and read blobs from a commit's tree, never from a
working tree. Writes build blob + tree + commit on top of the head and move the
branch with a locked compare-and-swap; if the head moved meanwhile the caller's
change function runs again on the fresh head.
"""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

import pygit2

# Only regular blobs are notes: symlinks (0o120000) and submodules (0o160000)
# are never followed, so a tree entry can never point reads outside the brain.
_BLOB_MODES = (pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE)

Changes = dict[str, bytes | None]  # path -> new bytes, or None to delete


class StoreError(Exception):
    """A store operation that cannot proceed; the message is safe to show."""


class Conflict(StoreError):
    """The change no longer applies to the current head."""


@dataclass(frozen=True)
class Entry:
    path: str
    blob: str  # hex blob id


@dataclass(frozen=True)
class Change:
    path: str
    old_blob: str | None
    new_blob: str | None


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    time: dt.datetime
    message: str
    author: str
    parents: tuple[str, ...]
    files: tuple[str, ...] = field(default=())

    @property
    def subject(self) -> str:
        return self.message.splitlines()[0] if self.message else ""

    @property
    def trailers(self) -> dict[str, str]:
        out = {}
        for line in self.message.splitlines():
            if line.startswith("Cortex-") and ":" in line:
                key, _, value = line.partition(":")
                out[key.strip()] = value.strip()
        return out


@dataclass(frozen=True)
class WriteResult:
    sha: str
    parent: str | None
    old_blobs: dict[str, str | None]
    new_blobs: dict[str, str | None]
    retries: int


class View:
    """Read access to one commit's files, handed to a change function."""

    def __init__(self, store: "GitStore", sha: str | None):
        self._store = store
        self.sha = sha
        self._entries: dict[str, str] | None = None

    def blob_of(self, path: str) -> str | None:
        if self.sha is None:
            return None
        return self._store.blob_at(self.sha, path)

    def read(self, path: str) -> bytes | None:
        blob = self.blob_of(path)
        return None if blob is None else self._store.blob_bytes(blob)


class GitStore:
    """One repository and one branch. Every pygit2 call happens under one lock."""

    def __init__(self, path: str | Path, branch: str = "main"):
        try:
            self._repo = pygit2.Repository(str(path))
        except (pygit2.GitError, KeyError) as exc:
            raise StoreError(f"not a Git repository: {path}") from exc
        self.path = Path(path)
        self.ref = f"refs/heads/{branch}"
        self.branch = branch
        self._lock = threading.RLock()
        self.lock = self._lock  # shared with the corpus built on this store

    # -- creating ---------------------------------------------------------

    @staticmethod
    def init(path: str | Path, files: Mapping[str, bytes], *, bare: bool = False,
             message: str = "init: brain from template", branch: str = "main") -> "GitStore":
        """Make a new repository on `branch` whose first commit holds `files`."""
        repo = pygit2.init_repository(str(path), bare=bare, initial_head=branch)
        store = GitStore(path, branch)
        store.commit(lambda view: dict(files), message)
        if not bare:
            repo.checkout_head(strategy=pygit2.GIT_CHECKOUT_FORCE)
        return store

    @property
    def is_bare(self) -> bool:
        return self._repo.is_bare

    @property
    def workdir(self) -> Path | None:
        wd = self._repo.workdir
        return Path(wd) if wd else None

    # -- reading ----------------------------------------------------------

    def head(self) -> str | None:
        """The branch head SHA, read fresh from disk (sees pushes from any clone)."""
        with self._lock:
            try:
                return str(self._repo.references[self.ref].resolve().target)
            except (KeyError, pygit2.GitError):
                return None

    def resolve(self, rev: str) -> str:
        """A full commit SHA for a (possibly abbreviated) SHA; StoreError if unknown."""
        with self._lock:
            try:
                obj = self._repo.revparse_single(rev)
                commit = obj.peel(pygit2.Commit)
            except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
                raise StoreError(f"unknown commit {rev!r}") from exc
            return str(commit.id)

    def entries(self, sha: str) -> dict[str, str]:
        """Every regular file of the commit's tree: path -> blob id."""
        with self._lock:
            tree = self._repo[sha].peel(pygit2.Tree)
            out: dict[str, str] = {}
            self._walk(tree, "", out)
            return out

    def _walk(self, tree: pygit2.Tree, prefix: str, out: dict[str, str]) -> None:
        for entry in tree:
            path = prefix + entry.name
            if entry.filemode == pygit2.GIT_FILEMODE_TREE:
                self._walk(self._repo[entry.id], path + "/", out)
            elif entry.filemode in _BLOB_MODES:
                out[path] = str(entry.id)

    def diff(self, old_sha: str, new_sha: str) -> list[Change]:
        """Files that differ between two commits, by tree diff (no content compare)."""
        with self._lock:
            old_tree = self._repo[old_sha].peel(pygit2.Tree)
            new_tree = self._repo[new_sha].peel(pygit2.Tree)
            changes: list[Change] = []
            for delta in old_tree.diff_to_tree(new_tree).deltas:
                old_ok = delta.old_file.mode in _BLOB_MODES
                new_ok = delta.new_file.mode in _BLOB_MODES
                if delta.old_file.path != delta.new_file.path:  # renames are off; be safe
                    if old_ok:
                        changes.append(Change(delta.old_file.path, str(delta.old_file.id), None))
                    if new_ok:
                        changes.append(Change(delta.new_file.path, None, str(delta.new_file.id)))
                    continue
                changes.append(Change(
                    delta.new_file.path,
                    str(delta.old_file.id) if old_ok and delta.status != pygit2.GIT_DELTA_ADDED else None,
                    str(delta.new_file.id) if new_ok and delta.status != pygit2.GIT_DELTA_DELETED else None,
                ))
            return changes

    def blob_at(self, sha: str, path: str) -> str | None:
        """The blob id of `path` in the commit, or None (also for non-regular entries)."""
        with self._lock:
            tree = self._repo[sha].peel(pygit2.Tree)
            try:
                entry = tree[path]
            except (KeyError, ValueError):
                return None
            if entry.filemode not in _BLOB_MODES:
                return None
            return str(entry.id)

    def blob_bytes(self, blob: str) -> bytes:
        with self._lock:
            return self._repo[blob].data

    def commit_time(self, sha: str) -> dt.datetime:
        with self._lock:
            c = self._repo[sha].peel(pygit2.Commit)
            return _commit_time(c)

    def commit_at(self, when: dt.datetime) -> str | None:
        """The commit that was head at `when`: first-parent walk from the head."""
        with self._lock:
            head = self.head()
            if head is None:
                return None
            commit = self._repo[head]
            while True:
                if _commit_time(commit) <= when:
                    return str(commit.id)
                if not commit.parents:
                    return None
                commit = commit.parents[0]

    def history(self, path: str | None = None, limit: int = 20,
                before: str | None = None) -> tuple[list[CommitInfo], bool]:
        """Commits newest first (touching `path` if given), and whether more remain."""
        with self._lock:
            start = before if before else self.head()
            if start is None:
                return [], False
            walker = self._repo.walk(self._repo[start].id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
            out: list[CommitInfo] = []
            for commit in walker:
                if before and str(commit.id) == start:
                    continue  # `before` is a cursor: strictly older commits only
                files = self._changed_files(commit)
                if path is not None and not any(f == path or f.startswith(path.rstrip("/") + "/") for f in files):
                    continue
                if len(out) == limit:
                    return out, True
                out.append(CommitInfo(
                    sha=str(commit.id), time=_commit_time(commit), message=commit.message,
                    author=commit.author.name, parents=tuple(str(p) for p in commit.parent_ids),
                    files=tuple(files),
                ))
            return out, False

    def _changed_files(self, commit: pygit2.Commit) -> list[str]:
        if commit.parents:
            diff = commit.parents[0].tree.diff_to_tree(commit.tree)
        else:
            diff = commit.tree.diff_to_tree(swap=True)
        return sorted({d.new_file.path for d in diff.deltas} | {d.old_file.path for d in diff.deltas})

    # -- writing ----------------------------------------------------------

    def commit(self, change: Callable[[View], Changes], message: str,
               max_retries: int = 50) -> WriteResult:
        """Apply `change` to the head and move the branch by compare-and-swap.

        `change` receives a View of the head and returns the files to set or delete;
        it may raise Conflict or StoreError to refuse. If another writer moved the
        head first, `change` runs again on the fresh head.
        """
        for attempt in range(max_retries + 1):
            with self._lock:
                head = self.head()
                view = View(self, head)
                changes = change(view)
                old_blobs = {p: view.blob_of(p) for p in changes}
                tree_id, new_blobs = self._tree_with(head, changes)
                if head is not None and tree_id == str(self._repo[head].peel(pygit2.Tree).id):
                    raise StoreError("the change leaves the note exactly as it is; nothing to commit")
                sig = self._signature()
                parents = [pygit2.Oid(hex=head)] if head else []
                oid = self._repo.create_commit(None, sig, sig, message, pygit2.Oid(hex=tree_id), parents)
                if self._swap(head, oid, message):
                    return WriteResult(str(oid), head, old_blobs, new_blobs, attempt)
        raise StoreError(f"the branch kept moving; gave up after {max_retries} retries")

    def _tree_with(self, head: str | None, changes: Changes) -> tuple[str, dict[str, str | None]]:
        """The tree of `head` with `changes` applied, rewriting only the trees on changed paths.

        A TreeBuilder per touched folder costs the size of that folder, not of the
        brain (an Index over the whole tree took ~57 ms per write at 10,000 notes).
        """
        base = self._repo[head].peel(pygit2.Tree) if head is not None else None
        new_blobs: dict[str, str | None] = {}
        for path, data in changes.items():
            new_blobs[path] = None if data is None else str(self._repo.create_blob(data))
        tree = self._rebuild(base, {p: (None if b is None else pygit2.Oid(hex=b)) for p, b in new_blobs.items()})
        if tree is None:
            tree = self._repo.TreeBuilder().write()
        return str(tree), new_blobs

    def _rebuild(self, tree: pygit2.Tree | None, changes: dict[str, pygit2.Oid | None]) -> pygit2.Oid | None:
        builder = self._repo.TreeBuilder(tree) if tree is not None else self._repo.TreeBuilder()
        folders: dict[str, dict[str, pygit2.Oid | None]] = {}
        for path, blob in changes.items():
            name, _, rest = path.partition("/")
            if rest:
                folders.setdefault(name, {})[rest] = blob
            elif blob is None:
                if builder.get(name) is not None:
                    builder.remove(name)
            else:
                builder.insert(name, blob, pygit2.GIT_FILEMODE_BLOB)
        for name, sub in folders.items():
            existing = builder.get(name)
            subtree = (self._repo[existing.id] if existing is not None
                       and existing.filemode == pygit2.GIT_FILEMODE_TREE else None)
            new_id = self._rebuild(subtree, sub)
            if new_id is None:
                if existing is not None:
                    builder.remove(name)  # the folder's last file went: the folder goes too
            else:
                builder.insert(name, new_id, pygit2.GIT_FILEMODE_TREE)
        if len(builder) == 0:
            return None
        return builder.write()

    def _swap(self, expected: str | None, new: pygit2.Oid, message: str) -> bool:
        """Move the branch from `expected` to `new` under a ref lock; False if it moved."""
        try:
            with self._repo.transaction() as tx:
                tx.lock_ref(self.ref)
                current = self.head()
                if current != expected:
                    return False
                tx.set_target(self.ref, new, message=message.splitlines()[0])
        except pygit2.GitError as exc:
            if "lock" in str(exc).lower() or "exists" in str(exc).lower():
                return False  # another writer holds the ref lock: retry on the fresh head
            raise StoreError(f"could not move {self.ref}: {exc}") from exc
        return True

    def _signature(self) -> pygit2.Signature:
        # Server commits are signed as Cortex so history tells them from hand edits.
        return pygit2.Signature("Cortex", "cortex@localhost")

    def update_workdir(self, paths: Mapping[str, bytes | None], expected: Mapping[str, bytes | None]) -> None:
        """Write committed files into the working tree where the disk still matches `expected`."""
        wd = self.workdir
        if wd is None:
            return
        for path, data in paths.items():
            target = wd / path
            try:
                on_disk = target.read_bytes() if target.exists() else None
            except OSError:
                continue
            if on_disk != expected.get(path):
                continue  # hand edits on disk win; the editor watcher will commit them
            if data is None:
                target.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        with self._lock:
            # Keep the on-disk index in step so `git status` stays clean.
            self._repo.index.read_tree(self._repo[self.head()].peel(pygit2.Tree))
            self._repo.index.write()


def _commit_time(commit: pygit2.Commit) -> dt.datetime:
    tz = dt.timezone(dt.timedelta(minutes=commit.commit_time_offset))
    return dt.datetime.fromtimestamp(commit.commit_time, tz)

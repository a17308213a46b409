"""The Git store: the only module that talks to pygit2.

Reads resolve the branch head and read blobs from a commit's tree, never from a
working tree. Writes build blob + tree + commit on top of the head and move the
branch with a locked compare-and-swap; if the head moved meanwhile the caller's
change function runs again on the fresh head.
"""

from __future__ import annotations

import datetime as dt
import errno
import os
import random
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping

import pygit2

from cortex.errors import PathCollision, StoreError
from cortex.notes.paths import collision, equivalent, same_name

# Only regular blobs are notes: symlinks (0o120000) and submodules (0o160000)
# are never followed, so a tree entry can never point reads outside the brain.
_BLOB_MODES = (pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE)

# libgit2 keeps parsed trees of at most 4 KB in its object cache, so every lookup of
# a path in a folder of 3,750 notes parsed that folder's tree again: 1.5 ms a lookup,
# five lookups a write. Trees up to 4 MB are kept now (0.006 ms a lookup), inside a
# cache held to 32 MB in all (its default of 256 MB would let a walk of old commits
# fill it with their trees).
pygit2.settings.cache_object_limit(pygit2.enums.ObjectType.TREE, 4 * 2**20)
pygit2.settings.cache_max_size(32 * 2**20)

# A ref lock older than this was left by a dead writer (live ones hold it ~1 ms).
STALE_LOCK_SECONDS = 2.0
# Tries at writing the working tree's index while a git command holds index.lock (10 ms apart).
INDEX_LOCK_TRIES = 50

Changes = dict[str, bytes | None]  # path -> new bytes, or None to delete
Identity = tuple[str, str]  # (name, email) of a commit's author


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

    @property
    def door(self) -> str:
        """Which door made it: its Cortex-Door trailer; `cortex` for Cortex's own commits without
        one (the first commit of a brain, a replay); `hand-made` for everything else."""
        trailers = self.trailers
        if "Cortex-Door" in trailers:
            return trailers["Cortex-Door"]
        return "cortex" if self.author == "Cortex" else "hand-made"


@dataclass(frozen=True)
class WriteResult:
    sha: str
    parent: str | None
    old_blobs: dict[str, str | None]
    new_blobs: dict[str, str | None]
    retries: int
    push: str | None = None  # hosted mode: "pushed" or "pending" (kept locally, retried)
    push_note: str | None = None  # why a push is pending; never holds a credential


@dataclass(frozen=True)
class Draft:
    """A commit object built on a head but not yet on the branch."""

    sha: str
    parent: str | None
    old_blobs: dict[str, str | None]
    new_blobs: dict[str, str | None]

    def result(self, retries: int, push: str | None = None, push_note: str | None = None) -> WriteResult:
        return WriteResult(self.sha, self.parent, self.old_blobs, self.new_blobs, retries, push, push_note)


def hash_blob(data: bytes) -> str:
    """The Git blob id of `data` (what the file would be stored as), without writing it."""
    return str(pygit2.hash(data))


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

    def resolve(self, path: str) -> str:
        """`path` as this commit stores it, matching any Unicode normalisation."""
        return self._store.resolve_name(self.sha, path)


class GitStore:
    """One repository and one branch. Every pygit2 call happens under one lock."""

    def __init__(self, path: str | Path, branch: str | None = None):
        """Open the repository at `path` and serve `branch`, by default the one HEAD names."""
        try:
            self._repo = pygit2.Repository(str(path))
        except (pygit2.GitError, KeyError) as exc:
            raise StoreError(f"not a Git repository: {path}") from exc
        self.path = Path(path)
        branch = branch or self._head_branch()
        self.ref = f"refs/heads/{branch}"
        self.branch = branch
        self._lock = threading.RLock()
        self.lock = self._lock  # shared with the corpus built on this store
        self._net_repo: pygit2.Repository | None = None  # hosted mode: see _net()
        self._net_lock = threading.Lock()
        # The time commits are stamped with; Brain sets its own clock here, so tests
        # (and `cortex eval`) can move time instead of sleeping past Git's 1 s resolution.
        self.clock: Callable[[], dt.datetime] | None = None
        self._unsynced: set[str] = set()  # index entries a busy index.lock kept from syncing
        # The trees the last draft wrote, by tree id, each with the TreeBuilder that wrote
        # it (see `_node`). A builder is taken out before it is changed, so each one holds
        # exactly the entries of the tree it is filed under.
        self._built: dict[pygit2.Oid, pygit2.TreeBuilder] = {}

    def _head_branch(self) -> str:
        """The branch HEAD names (a repository on `master` is served from `master`)."""
        if self._repo.head_is_detached:
            at = str(self._repo.head.target)[:12]
            raise StoreError(
                f"HEAD is detached (at {at}) in {self.path}: Cortex serves a branch. "
                "Check one out (git switch <branch>) or set CORTEX_BRANCH"
            )
        target = self._repo.references["HEAD"].target
        return str(target).removeprefix("refs/heads/")

    def branches(self) -> list[str]:
        """The repository's local branches."""
        with self._lock:
            return sorted(self._repo.branches.local)

    def servable(self) -> str | None:
        """Why this branch cannot be served as it stands, or None.

        An unborn branch in a repository that has other branches would start a
        second, unrelated history (the first write an orphan root holding none of the
        notes); a merge or rebase under way means the working tree is mid-operation.
        """
        with self._lock:
            others = [b for b in self.branches() if b != self.branch]
            if self.head() is None and others:
                return (
                    f"branch {self.branch} has no commits, but the repository has {', '.join(others[:5])}: "
                    f"check out the branch with the notes (git switch {others[0]}) or set CORTEX_BRANCH"
                )
            if self.workdir is not None and self._repo.state() != pygit2.enums.RepositoryState.NONE:
                return (
                    f"a merge, rebase or cherry-pick is under way in {self.path}: finish or abort it "
                    "(git merge --abort, git rebase --abort), then start Cortex"
                )
            return None

    # -- creating ---------------------------------------------------------

    @staticmethod
    def init(
        path: str | Path,
        files: Mapping[str, bytes],
        *,
        bare: bool = False,
        message: str = "init: brain from template",
        branch: str = "main",
    ) -> "GitStore":
        """Make a new repository on `branch` whose first commit holds `files`."""
        repo = pygit2.init_repository(str(path), bare=bare, initial_head=branch)
        store = GitStore(path, branch)
        store.commit(lambda view: dict(files), message)
        if not bare:
            repo.checkout_head(strategy=pygit2.GIT_CHECKOUT_FORCE)
        return store

    @staticmethod
    def repository_at(path: str | Path) -> Path | None:
        """The repository `path` is (bare or not) or lies inside, or None."""
        found = pygit2.discover_repository(str(path))
        if found is None:
            return None
        repo = pygit2.Repository(found)
        return Path(repo.workdir or repo.path).resolve()

    @staticmethod
    def init_here(path: str | Path, branch: str, exclude: Iterable[str]) -> "GitStore":
        """`git init` in an existing folder (a working tree), with `exclude` in .git/info/exclude."""
        repo = pygit2.init_repository(str(path), bare=False, initial_head=branch)
        info = Path(repo.path) / "info"
        info.mkdir(exist_ok=True)
        with open(info / "exclude", "a", encoding="utf-8") as f:
            f.write("# Tool and editor files left out of the brain by cortex init\n")
            f.writelines(f"{name}\n" for name in exclude)
        return GitStore(path, branch)

    def exclude(self, names: Iterable[str], why: str) -> None:
        """Add `names` (paths from the top, surrogate escapes allowed) to .git/info/exclude,
        as their bytes on disk, each anchored and with glob characters escaped."""
        lines = [f"# {why}\n".encode()]
        for name in names:
            raw = os.fsencode(name)
            for ch in (b"\\", b"*", b"?", b"[", b"!", b"#"):
                raw = raw.replace(ch, b"\\" + ch)
            lines.append(b"/" + raw + b"\n")
        with open(Path(self._repo.path) / "info" / "exclude", "ab") as f:
            f.writelines(lines)

    def commit_tree_as_is(
        self, extra: Mapping[str, bytes], message: str, author: Identity | None, progress: Callable[[str], None]
    ) -> tuple[str, int, list[str]]:
        """The first commit of a working tree: every file as it is on disk (ignore rules kept),
        plus `extra` files written first. (commit SHA, files committed, names left out).

        A file or folder whose name is not valid UTF-8 (Git stores names as UTF-8) is left
        out, and its name is returned (as Python decodes it, with surrogate escapes)."""
        wd = self.workdir
        assert wd is not None
        for rel, data in extra.items():
            write_file_atomic(wd / rel, data)
        with self._lock:
            files: list[str] = []
            unnamable: list[str] = []
            for folder, dirs, names in os.walk(wd):
                rel_folder = os.path.relpath(folder, wd)
                rel_folder = "" if rel_folder == "." else rel_folder.replace(os.sep, "/") + "/"
                unnamable += [rel_folder + d + "/" for d in dirs if not _utf8(d)]
                dirs[:] = [
                    d for d in dirs if d != ".git" and _utf8(d) and not self._repo.path_is_ignored(rel_folder + d + "/")
                ]
                for name in names:
                    rel = rel_folder + name
                    if not _utf8(name):
                        unnamable.append(rel)
                    elif not self._repo.path_is_ignored(rel):
                        files.append(rel)
            index = self._repo.index
            started = time.monotonic()
            for i, rel in enumerate(sorted(files), 1):
                index.add(rel)
                if i % 500 == 0 or time.monotonic() - started > 2:
                    progress(f"committing {i:,} of {len(files):,} files")
                    started = time.monotonic()
            index.write()
            tree = index.write_tree()
            sig = self._signature()
            by = self._signature(*author) if author else sig
            oid = self._repo.create_commit(self.ref, by, by if author else sig, message, tree, [])
            return str(oid), len(files), sorted(unnamable)

    @property
    def workdir(self) -> Path | None:
        wd = self._repo.workdir
        return Path(wd) if wd else None

    @property
    def git_dir(self) -> Path:
        """The repository's Git folder (`.git/`, or the bare repository itself)."""
        return Path(self._repo.path)

    # -- reading ----------------------------------------------------------

    def head(self) -> str | None:
        """The branch head SHA, read fresh from disk (sees pushes from any clone)."""
        return self._target(self.ref)

    def _target(self, ref: str) -> str | None:
        with self._lock:
            try:
                return str(self._repo.references[ref].resolve().target)
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
                changes.append(
                    Change(
                        delta.new_file.path,
                        str(delta.old_file.id) if old_ok and delta.status != pygit2.GIT_DELTA_ADDED else None,
                        str(delta.new_file.id) if new_ok and delta.status != pygit2.GIT_DELTA_DELETED else None,
                    )
                )
            return changes

    def blob_at(self, sha: str, path: str) -> str | None:
        """The blob id of `path` in the commit, or None (also for non-regular entries)."""
        with self._lock:
            entry = self._entry(self._tree_id(sha), path)
            if entry is None or entry.filemode not in _BLOB_MODES:
                return None
            return str(entry.id)

    def _tree_id(self, sha: str) -> pygit2.Oid:
        """The id of commit `sha`'s tree, without reading the tree."""
        obj = self._repo[sha]
        return obj.tree_id if isinstance(obj, pygit2.Commit) else obj.peel(pygit2.Tree).id

    def _node(self, tree_id: pygit2.Oid) -> pygit2.Tree | pygit2.TreeBuilder:
        """The folder `tree_id`, to look names up in: the TreeBuilder that wrote it when the
        last draft did, else the tree.

        After a write of a note in a folder of 3,750 notes, the next write's first lookup
        made libgit2 read that folder's new tree back (inflate, hash check, parse: 1.7 ms),
        and its TreeBuilder copied every entry again (0.6 ms); the builder that wrote the
        tree still holds them.
        """
        builder = self._built.get(tree_id)
        return builder if builder is not None else self._repo[tree_id]

    def _entry(self, tree_id: pygit2.Oid, path: str) -> pygit2.Object | None:
        """The entry `tree[path]` finds under tree `tree_id`, or None."""
        names = path.split("/")
        if not all(names):  # an empty name ("a//b", "a/", "/a"): libgit2's own rules
            try:
                return self._repo[tree_id][path]
            except (KeyError, ValueError):
                return None
        node = self._node(tree_id)
        for name in names[:-1]:
            entry = _child(node, name)
            if entry is None or entry.filemode != pygit2.GIT_FILEMODE_TREE:
                return None
            node = self._node(entry.id)
        return _child(node, names[-1])

    def blob_bytes(self, blob: str) -> bytes:
        with self._lock:
            return self._repo[blob].data

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
            commit = self._repo[head]
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
        """One commit by full SHA (use `resolve` first for user input), with its changed files."""
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
            )

    def _changed_files(self, commit: pygit2.Commit) -> list[str]:
        if commit.parents:
            diff = commit.parents[0].tree.diff_to_tree(commit.tree)
        else:
            diff = commit.tree.diff_to_tree(swap=True)
        return sorted({d.new_file.path for d in diff.deltas} | {d.old_file.path for d in diff.deltas})

    # -- writing ----------------------------------------------------------

    def commit(
        self, change: Callable[[View], Changes], message: str, max_retries: int = 50, author: Identity | None = None
    ) -> WriteResult:
        """Apply `change` to the head and move the branch by compare-and-swap.

        `change` receives a View of the head and returns the files to set or delete;
        it may raise Conflict or StoreError to refuse. If another writer moved the
        head first, `change` runs again on the fresh head.
        """
        for attempt in range(max_retries + 1):
            with self._lock:
                draft = self.draft(change, message, author)
                if self._swap(draft.parent, pygit2.Oid(hex=draft.sha), message):
                    return draft.result(attempt)
            # Another process won the race: back off a little (outside the lock) so
            # several writers do not spin in step.
            time.sleep(random.uniform(0, min(0.05, 0.002 * (attempt + 1))))
        raise StoreError(f"the branch kept moving; gave up after {max_retries} retries")

    def draft(self, change: Callable[[View], Changes], message: str, author: Identity | None = None) -> Draft:
        """Run `change` on the head and write the commit object; the branch does not move.

        `author` (name, email): whose work it is, e.g. the owner's hand edit; Cortex is
        always the committer, so history tells who wrote from who recorded it.
        """
        with self._lock:
            head = self.head()
            others = list(self._repo.branches.local) if head is None else []
            if others:
                # Never a second root: a write to an unborn branch beside others would
                # start a history that holds none of the notes.
                raise StoreError(
                    f"branch {self.branch} has no commits while the repository has "
                    f"{', '.join(sorted(others)[:5])}; nothing was committed"
                )
            view = View(self, head)
            changes = change(view)
            why = self.collision(head, changes)
            if why:
                raise PathCollision(why)
            old_blobs = {p: view.blob_of(p) for p in changes}
            try:
                tree_id, new_blobs = self._tree_with(head, changes)
                if head is not None and tree_id == str(self._tree_id(head)):
                    raise StoreError("the change leaves the note exactly as it is; nothing to commit")
                sig = self._signature()
                by = self._signature(*author) if author else sig
                parents = [pygit2.Oid(hex=head)] if head else []
                oid = self._repo.create_commit(None, by, sig, message, pygit2.Oid(hex=tree_id), parents)
            except (pygit2.GitError, OSError) as exc:
                raise self._storage_error(exc) from exc
            return Draft(str(oid), head, old_blobs, new_blobs)

    def collision(self, sha: str | None, changes: Changes) -> str | None:
        """Why `changes` on commit `sha` would replace a note by a folder or a folder by a note."""
        with self._lock:
            tree = self._tree_id(sha) if sha else None

            def entry(path: str) -> pygit2.Object | None:
                return self._entry(tree, path) if tree is not None else None

            def is_file(path: str) -> bool:
                found = entry(path)
                return found is not None and found.filemode != pygit2.GIT_FILEMODE_TREE

            def file_under(path: str) -> str | None:
                found = entry(path)
                if found is None or found.filemode != pygit2.GIT_FILEMODE_TREE:
                    return None
                while found.filemode == pygit2.GIT_FILEMODE_TREE:
                    first = next(iter(self._repo[found.id]), None)
                    if first is None:
                        return path + "/"
                    path, found = f"{path}/{first.name}", first
                return path

            def twin(path: str) -> str | None:
                found = self._walk_names(tree, path, same_name)
                return found if found is not None and found != path else None

            return collision(changes, is_file, file_under, twin)

    def _walk_names(self, tree: pygit2.Oid | None, path: str, match: Callable[[str, str], bool]) -> str | None:
        """The existing path whose every segment `match`es `path`'s (an exact segment first), or None."""
        found: list[str] = []
        node: pygit2.Oid | None = tree
        for seg in path.split("/"):
            if node is None:
                return None  # `path` goes on below a file
            entry = _child(self._node(node), seg) if seg else None
            if entry is None:
                entry = next((e for e in self._repo[node] if match(e.name, seg)), None)
                if entry is None:
                    return None
            found.append(entry.name)
            node = entry.id if entry.filemode == pygit2.GIT_FILEMODE_TREE else None
        return "/".join(found)

    def resolve_name(self, sha: str | None, path: str) -> str:
        """The path as stored in commit `sha` for `path` written in any Unicode normalisation
        (a macOS editor stores `Résumé.md` in NFD; a client asks in NFC); `path` itself if
        there is no such file."""
        with self._lock:
            if sha is None:
                return path
            tree = self._tree_id(sha)
            if self._entry(tree, path) is not None:
                return path
            return self._walk_names(tree, path, equivalent) or path

    def set_head(self, expected: str | None, new: str, message: str = "cortex: move branch") -> bool:
        """Compare-and-swap the branch from `expected` to `new`; False if it had moved."""
        with self._lock:
            return self._swap(expected, pygit2.Oid(hex=new), message)

    def _tree_with(self, head: str | None, changes: Changes) -> tuple[str, dict[str, str | None]]:
        """The tree of `head` with `changes` applied, rewriting only the trees on changed paths.

        A TreeBuilder per touched folder costs the size of that folder, not of the
        brain (an Index over the whole tree took ~57 ms per write at 10,000 notes).
        """
        base = self._tree_id(head) if head is not None else None
        new_blobs: dict[str, str | None] = {}
        for path, data in changes.items():
            new_blobs[path] = None if data is None else str(self._repo.create_blob(data))
        built: dict[pygit2.Oid, pygit2.TreeBuilder] = {}
        tree = self._rebuild(base, {p: (None if b is None else pygit2.Oid(hex=b)) for p, b in new_blobs.items()}, built)
        if tree is None:
            tree = self._repo.TreeBuilder().write()
        self._built = built  # the next write most likely starts from these trees
        return str(tree), new_blobs

    def _rebuild(
        self,
        tree: pygit2.Oid | None,
        changes: dict[str, pygit2.Oid | None],
        built: dict[pygit2.Oid, pygit2.TreeBuilder],
    ) -> pygit2.Oid | None:
        """The id of tree `tree` with `changes` made (None when nothing is left in it); each
        tree written goes into `built` with its builder."""
        builder = self._built.pop(tree, None) if tree is not None else None  # out before it changes
        if builder is None:
            builder = self._repo.TreeBuilder(self._repo[tree]) if tree is not None else self._repo.TreeBuilder()
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
            subtree = existing.id if existing is not None and existing.filemode == pygit2.GIT_FILEMODE_TREE else None
            new_id = self._rebuild(subtree, sub, built)
            if new_id is None:
                if existing is not None:
                    builder.remove(name)  # the folder's last file went: the folder goes too
            else:
                builder.insert(name, new_id, pygit2.GIT_FILEMODE_TREE)
        if len(builder) == 0:
            return None
        oid = builder.write()
        built[oid] = builder
        return oid

    def _swap(self, expected: str | None, new: pygit2.Oid, message: str) -> bool:
        """Move the branch from `expected` to `new` under a ref lock; False if it moved."""
        try:
            with self._repo.transaction() as tx:
                tx.lock_ref(self.ref)
                current = self.head()
                if current != expected:
                    return False
                tx.set_target(self.ref, new, message=message.splitlines()[0])
        except (pygit2.GitError, OSError) as exc:
            cause = self._storage_cause(exc)
            if cause is None and ("lock" in str(exc).lower() or "exists" in str(exc).lower()):
                self._clear_stale_lock()
                return False  # another writer holds the ref lock: retry on the fresh head
            raise self._storage_error(exc) from exc
        return True

    def _storage_cause(self, exc: BaseException) -> str | None:
        """A full or read-only disk, told from the system rather than the message:
        on ENOSPC libgit2 reported a stale, unrelated error text."""
        code = getattr(exc, "errno", None)
        if code == errno.ENOSPC:
            return "No space left on device"
        if code == errno.EROFS:
            return "Read-only file system"
        try:
            if os.statvfs(self._repo.path).f_bavail == 0:
                return "No space left on device"
        except OSError:
            pass
        if not os.access(Path(self._repo.path) / "objects", os.W_OK):
            return "Read-only file system"
        return None

    def _storage_error(self, exc: BaseException) -> StoreError:
        cause = self._storage_cause(exc)
        if cause is None:
            text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            cause = text.rsplit(": ", 1)[-1] if "/" in text else text
        return StoreError(f"storage error: {cause}; nothing was committed. Retry once the cause is fixed")

    def _clear_stale_lock(self) -> None:
        """Remove a ref lock left by a writer that died (kill -9, power loss).

        A live writer holds the lock for about a millisecond; one older than
        STALE_LOCK_SECONDS has no owner, and keeping it would block every write.
        """
        lock = Path(self._repo.path) / (self.ref + ".lock")
        try:
            age = time.time() - lock.stat().st_mtime
            if age > STALE_LOCK_SECONDS:
                lock.unlink()
        except FileNotFoundError:
            pass

    def _signature(self, name: str = "Cortex", email: str = "cortex@localhost") -> pygit2.Signature:
        # Server commits are signed as Cortex so history tells them from hand edits.
        if self.clock is None:
            return pygit2.Signature(name, email)
        now = self.clock()
        delta = now.utcoffset()
        offset = int(delta.total_seconds() // 60) if delta else 0
        return pygit2.Signature(name, email, int(now.timestamp()), offset)

    def owner_identity(self, override: str | None = None) -> Identity | None:
        """The owner's identity for their own commits (hand edits, `cortex init` in place):
        `override` ("Name <email>", from CORTEX_AUTHOR), else Git's configured user.name and
        user.email (repository, then global), else None."""
        if override:
            m = re.fullmatch(r"\s*(.+?)\s*<([^<>\s]+)>\s*", override)
            if not m:
                raise StoreError(f"CORTEX_AUTHOR must look like 'Name <email>', not {override!r}")
            return m.group(1), m.group(2)
        with self._lock:
            try:
                sig = self._repo.default_signature
            except (KeyError, pygit2.GitError):
                return None
            return sig.name, sig.email

    # -- a working tree (hand edits) ----------------------------------------

    def update_workdir(
        self, paths: Mapping[str, bytes | None], expected: Mapping[str, bytes | None]
    ) -> dict[str, bytes | None]:
        """Write committed files into the working tree where the disk still matches `expected`.

        Returns the files written. A file whose disk bytes differ from `expected`
        holds a hand edit and is left alone (the editor watcher commits it). Writes
        go to a dot-named temp file and are renamed into place, so a watcher or an
        editor never sees half a file.
        """
        wd = self.workdir
        if wd is None:
            return {}
        written: dict[str, bytes | None] = {}
        for path, data in paths.items():
            target = self.workdir_file(path)
            if target is None:
                continue
            if read_file(target) != expected.get(path):
                continue  # hand edits on disk win
            try:
                if data is None:
                    target.unlink(missing_ok=True)
                    _prune_empty_folders(target.parent, wd)
                else:
                    if target.is_dir() and not any(target.iterdir()):
                        target.rmdir()  # the empty folder left by the folder's last note, as Git would
                    write_file_atomic(target, data)
            except OSError:
                continue
            written[path] = data
        self.sync_index(paths)
        return written

    def workdir_file(self, path: str) -> Path | None:
        """The working-tree file for `path`, or None if it would leave the tree or cross a symlink."""
        wd = self.workdir
        if wd is None or path.startswith("/") or ".." in path.split("/") or path.startswith(".git/"):
            return None
        target = wd / path
        real_wd = os.path.realpath(wd)
        if os.path.realpath(target.parent) != os.path.normpath(os.path.join(real_wd, os.path.dirname(path))):
            return None  # a symlinked folder on the way
        if target.is_symlink():
            return None
        return target

    def sync_index(self, paths: Iterable[str]) -> None:
        """Point the on-disk index at the head for `paths`, so `git status` shows only real hand edits.

        Only the named entries change: re-reading the whole tree threw away every
        entry's stat cache, and `git status` then re-hashed the whole brain. A `git`
        command holding the index lock makes the write fail; it is retried for a
        moment, and paths still unsynced are kept for the next call. (Dropping them
        left the index without a committed note: `git status` showed it deleted and
        untracked.)
        """
        with self._lock:
            paths = set(paths) | self._unsynced
            if not paths or self.workdir is None:
                return  # the watcher's every poll lands here when nothing was kept back
            head = self.head()
            if head is None:
                return
            for _ in range(INDEX_LOCK_TRIES):
                try:
                    self._write_index(head, paths)
                    self._unsynced.clear()
                    return
                except (pygit2.GitError, OSError, KeyError, ValueError):
                    time.sleep(0.01)  # a git command holds index.lock for a moment
            self._unsynced = paths

    def _write_index(self, head: str, paths: set[str]) -> None:
        index = self._repo.index
        index.read(True)  # force: a git command may have rewritten it within the same second
        for path in sorted(paths):
            blob = self.blob_at(head, path)
            target = self.workdir_file(path)
            if blob is None:
                if path in index:
                    index.remove(path)
                continue
            disk = read_file(target) if target is not None else None
            if disk is not None and hash_blob(disk) == blob:
                index.add(path)  # from disk: keeps the stat cache fresh
            else:
                index.add(pygit2.IndexEntry(path, pygit2.Oid(hex=blob), pygit2.GIT_FILEMODE_BLOB))
        index.write()

    def workdir_busy(self) -> str | None:
        """Why hand edits must wait (HEAD on another branch, a merge or rebase under way), or None."""
        with self._lock:
            try:
                if self._repo.head_is_detached or self._repo.references["HEAD"].target != self.ref:
                    return "the working tree is not on " + self.branch
                if self._repo.state() != pygit2.enums.RepositoryState.NONE:
                    return "a merge, rebase or cherry-pick is under way"
            except (pygit2.GitError, KeyError):
                return None
            return None

    def is_ignored(self, path: str) -> bool:
        """Whether .gitignore excludes `path`."""
        with self._lock:
            try:
                return bool(self._repo.path_is_ignored(path))
            except pygit2.GitError:
                return False

    def write_blob(self, data: bytes) -> str:
        with self._lock:
            return str(self._repo.create_blob(data))

    def merge_text(self, base: bytes | None, ours: bytes, theirs: bytes) -> bytes | None:
        """A three-way merge of one file's bytes (Git's own line merge); None when it conflicts."""
        with self._lock:
            entry = lambda data: pygit2.IndexEntry(
                "note.md",
                self._repo.create_blob(data),  # noqa: E731
                pygit2.GIT_FILEMODE_BLOB,
            )
            result = self._repo.merge_file_from_index(entry(base or b""), entry(ours), entry(theirs))
            if not result.automergeable:
                return None
            return result.contents.encode("utf-8") if isinstance(result.contents, str) else result.contents

    # -- hosted mode: a clone that fetches from and pushes to one remote ------

    @staticmethod
    def clone(url: str, path: str | Path, auth: "Auth", branch: str | None = None) -> "GitStore":
        """A bare clone of `url` at `path` on `branch`, by default the remote's own default branch.

        An empty remote gives an empty clone on `branch` (default main).
        """
        try:
            repo = pygit2.clone_repository(
                url, str(path), bare=True, callbacks=auth.callbacks(), checkout_branch=branch
            )
        except (pygit2.GitError, ValueError, OSError) as exc:
            raise StoreError(f"could not clone {auth.display(url)}: {auth.scrub(str(exc))}") from None
        if repo.head_is_unborn and not list(repo.branches.local):
            repo.references.create("HEAD", f"refs/heads/{branch or 'main'}", force=True)
        return GitStore(path, branch)

    def _net(self) -> pygit2.Repository:
        # Network calls use their own Repository handle under their own lock, so a
        # slow fetch or push (hundreds of ms over HTTPS) never blocks reads, which
        # hold self._lock. Each handle is only ever used by one thread at a time.
        if self._net_repo is None:
            self._net_repo = pygit2.Repository(str(self.path))
        return self._net_repo

    def set_remote_url(self, url: str) -> None:
        with self._lock:
            if "origin" in [r.name for r in self._repo.remotes]:
                if self._repo.remotes["origin"].url != url:
                    self._repo.remotes.set_url("origin", url)
            else:
                self._repo.remotes.create("origin", url)

    @property
    def tracking_ref(self) -> str:
        return f"refs/remotes/origin/{self.branch}"

    def tracking_head(self) -> str | None:
        """Where the remote's branch was at the last fetch or push."""
        return self._target(self.tracking_ref)

    def set_tracking(self, sha: str) -> None:
        with self._lock:
            self._repo.references.create(self.tracking_ref, pygit2.Oid(hex=sha), force=True)

    def fetch(self, auth: "Auth") -> str | None:
        """Fetch the remote's branch into the tracking ref; StoreError (credential-free) on failure."""
        with self._net_lock:
            try:
                self._net().remotes["origin"].fetch(
                    [f"+refs/heads/{self.branch}:{self.tracking_ref}"], callbacks=auth.callbacks()
                )
            except (pygit2.GitError, KeyError, OSError) as exc:
                raise StoreError(f"fetch failed: {auth.scrub(str(exc))}") from None
        return self.tracking_head()

    def push(self, sha: str, expected: str | None, auth: "Auth", local_path: str | None = None) -> str:
        """Move the remote's branch from `expected` to `sha`: "pushed", "behind", "locked" or "failed: …".

        A local-path remote is updated here with a locked compare-and-swap on its
        ref: libgit2's local transport checks fast-forward when it connects and
        then force-writes the ref, so two concurrent pushers could lose a write.
        Network remotes get Git's own check (receive-pack compares the old value).
        """
        with self._net_lock:
            if local_path is not None:
                return self._push_local(sha, expected, local_path)
            repo = self._net()
            cb = auth.callbacks()
            try:
                repo.references.create("refs/cortex/push", pygit2.Oid(hex=sha), force=True)
                repo.remotes["origin"].push([f"refs/cortex/push:refs/heads/{self.branch}"], callbacks=cb)
            except (pygit2.GitError, KeyError, OSError) as exc:
                return "failed: " + auth.scrub(str(exc))
            if cb.rejected:
                return "failed: rejected: " + auth.scrub(cb.rejected)
        self.set_tracking(sha)
        return "pushed"

    def _push_local(self, sha: str, expected: str | None, path: str) -> str:
        try:
            remote = pygit2.Repository(path)
            src = self._net()
            _copy_objects(src, remote, sha, expected)
            with remote.transaction() as tx:
                tx.lock_ref(self.ref)
                try:
                    current = str(remote.references[self.ref].resolve().target)
                except (KeyError, pygit2.GitError):
                    current = None
                if current != expected:
                    return "behind"
                tx.set_target(self.ref, pygit2.Oid(hex=sha), message="cortex: push")
        except pygit2.GitError as exc:
            if "lock" in str(exc).lower():
                return "locked"
            return f"failed: {exc}"
        except OSError as exc:
            return f"failed: {exc.strerror or exc}"
        self.set_tracking(sha)
        return "pushed"

    def is_ancestor(self, old: str, new: str) -> bool:
        """Whether `old` is `new` or one of its ancestors."""
        with self._lock:
            return old == new or self._repo.descendant_of(pygit2.Oid(hex=new), pygit2.Oid(hex=old))

    def merge_base(self, a: str, b: str) -> str | None:
        with self._lock:
            oid = self._repo.merge_base(pygit2.Oid(hex=a), pygit2.Oid(hex=b))
            return str(oid) if oid else None

    def commits_between(self, base: str | None, tip: str) -> list[str]:
        """Commits reachable from `tip` and not from `base`, oldest first."""
        with self._lock:
            walker = self._repo.walk(
                pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE
            )
            if base:
                walker.hide(pygit2.Oid(hex=base))
            return [str(c.id) for c in walker]

    def replay(self, sha: str, onto: str) -> str:
        """Re-make commit `sha` on top of `onto` by a three-way tree merge (a cherry-pick).

        For commits kept locally while the remote was unreachable: they were
        acknowledged, so they cannot be refused any more. Where the remote changed
        the same lines, both sides' lines are kept (Git's union merge; two appends
        to a log both stay) and a `Cortex-Merged:` line says so. A file deleted on
        one side and changed on the other keeps the kept commit's version, said in
        `Cortex-Overwrote:`; the remote's version stays in history. INDEX.md keeps
        the remote's version; it is regenerated by the next write that changes a row.
        """
        with self._lock:
            commit = self._repo[sha].peel(pygit2.Commit)
            empty = self._repo[self._repo.TreeBuilder().write()]
            base_tree = commit.parents[0].tree if commit.parents else empty
            onto_commit = self._repo[onto].peel(pygit2.Commit)
            deltas = list(base_tree.diff_to_tree(commit.tree).deltas)
            ours_changed = {d.new_file.path for d in deltas}
            why = self.collision(
                onto, {d.new_file.path: (None if d.status == pygit2.GIT_DELTA_DELETED else b"") for d in deltas}
            )
            if why:  # kept locally and reported: the owner decides, nothing is deleted
                raise PathCollision(
                    f"cannot replay {sha[:12]} on the remote's {onto[:12]}: "
                    + why.replace("nothing was committed", "the commit stays pending")
                )
            theirs_changed = {d.new_file.path for d in base_tree.diff_to_tree(onto_commit.tree).deltas}
            index = self._repo.merge_trees(
                base_tree,
                onto_commit.tree,
                commit.tree,
                favor=pygit2.enums.MergeFavor.UNION,
                flags=pygit2.enums.MergeFlag(0),
            )
            overwrote = []
            if index.conflicts is not None:
                for ancestor, ours, theirs in list(index.conflicts):
                    path = (theirs or ours or ancestor).path
                    del index.conflicts[path]
                    keep = ours if path == "INDEX.md" else theirs
                    if path != "INDEX.md":
                        overwrote.append(path)
                    if keep is not None:
                        index.add(pygit2.IndexEntry(path, keep.id, keep.mode))
            if "INDEX.md" in ours_changed & theirs_changed:
                try:
                    entry = onto_commit.tree["INDEX.md"]
                    index.add(pygit2.IndexEntry("INDEX.md", entry.id, entry.filemode))
                except KeyError:
                    pass
            merged = sorted((ours_changed & theirs_changed) - set(overwrote) - {"INDEX.md"})
            tree = index.write_tree(self._repo)
            message = commit.message.rstrip("\n") + "\n"
            message += "".join(f"Cortex-Merged: {p} with the remote's {onto[:12]} (both kept)\n" for p in merged)
            message += "".join(f"Cortex-Overwrote: {p} at {onto[:12]}\n" for p in overwrote)
            oid = self._repo.create_commit(None, commit.author, self._signature(), message, tree, [onto_commit.id])
            return str(oid)


class Auth:
    """Credentials for one remote, from the environment; never logged or put in a URL."""

    def __init__(self, token: str | None = None, user: str = "x-access-token"):
        self._token = token
        self._user = user

    def callbacks(self) -> "_Callbacks":
        return _Callbacks(self._token, self._user)

    def scrub(self, text: str) -> str:
        """`text` with the token and any URL credentials masked."""
        if self._token:
            text = text.replace(self._token, "[REDACTED token]")
        return _URL_CREDS.sub(r"\1[REDACTED]@", text)

    @staticmethod
    def display(url: str) -> str:
        """`url` without user info or query: safe to print."""
        return _URL_CREDS.sub(r"\1", url).split("?", 1)[0]


_URL_CREDS = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]*@")


class _Callbacks(pygit2.RemoteCallbacks):
    def __init__(self, token: str | None, user: str):
        super().__init__()
        self._token = token
        self._user = user
        self._tries = 0
        self.rejected: str | None = None

    def credentials(self, url, username_from_url, allowed_types):  # noqa: ANN001 (pygit2's signature)
        self._tries += 1
        if self._tries > 2:  # libgit2 asks again after a refusal; stop instead of looping
            raise pygit2.GitError("authentication failed (check CORTEX_REMOTE_TOKEN)")
        if allowed_types & pygit2.enums.CredentialType.USERPASS_PLAINTEXT and self._token:
            return pygit2.UserPass(username_from_url or self._user, self._token)
        if allowed_types & pygit2.enums.CredentialType.SSH_KEY:
            return pygit2.KeypairFromAgent(username_from_url or "git")
        raise pygit2.GitError("the remote asks for credentials and none are configured")

    def push_update_reference(self, refname, message):  # noqa: ANN001
        if message:
            self.rejected = f"{refname}: {message}"


def _child(node: pygit2.Tree | pygit2.TreeBuilder, name: str) -> pygit2.Object | None:
    """The entry called `name` (one path segment) in a tree or a TreeBuilder, or None."""
    if isinstance(node, pygit2.TreeBuilder):
        return node.get(name)
    try:
        return node[name]
    except (KeyError, ValueError):
        return None


def _copy_objects(src: pygit2.Repository, dst: pygit2.Repository, tip: str, known: str | None) -> None:
    """Write every object reachable from `tip` and missing from `dst` (trees before commits)."""
    walker = src.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    if known and known in src:
        walker.hide(pygit2.Oid(hex=known))
    for commit in walker:
        if commit.id in dst.odb:
            continue
        _copy_tree(src, dst, commit.tree_id)
        dst.odb.write(pygit2.GIT_OBJECT_COMMIT, commit.read_raw())


def _copy_tree(src: pygit2.Repository, dst: pygit2.Repository, tree_id: pygit2.Oid) -> None:
    if tree_id in dst.odb:
        return  # Git's connectivity rule: a stored tree has all it points to
    tree = src[tree_id]
    for entry in tree:
        if entry.filemode == pygit2.GIT_FILEMODE_TREE:
            _copy_tree(src, dst, entry.id)
        elif entry.filemode != pygit2.GIT_FILEMODE_COMMIT and entry.id not in dst.odb:
            dst.odb.write(pygit2.GIT_OBJECT_BLOB, src[entry.id].read_raw())
    dst.odb.write(pygit2.GIT_OBJECT_TREE, tree.read_raw())


def read_file(path: Path) -> bytes | None:
    """A regular file's bytes, or None when it is missing, a symlink or unreadable."""
    try:
        if path.is_symlink() or not path.is_file():
            return None
        return path.read_bytes()
    except OSError:
        return None


def _prune_empty_folders(folder: Path, root: Path) -> None:
    """Remove `folder` and its parents while they are empty, never `root`: Git keeps no empty folders,
    and one left behind would block a later note of the same name."""
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _utf8(name: str) -> bool:
    """Whether a name from the file system is valid UTF-8 (no surrogate escapes)."""
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def write_file_atomic(target: Path, data: bytes) -> None:
    """Write via a dot-named temp file and a rename, keeping the old file's mode."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = target.stat().st_mode & 0o777
    except OSError:
        mode = 0o644
    tmp = target.parent / f".cortex-{os.getpid()}-{threading.get_ident()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.chmod(tmp, mode)
    os.replace(tmp, target)


def _commit_time(commit: pygit2.Commit) -> dt.datetime:
    tz = dt.timezone(dt.timedelta(minutes=commit.commit_time_offset))
    return dt.datetime.fromtimestamp(commit.commit_time, tz)

"""The Git store: one repository and one branch, read at a commit and written by a
compare-and-swap on the branch.

Reads resolve the branch head and read blobs from a commit's tree, never from a
working tree. Writes build blob + tree + commit on top of the head and move the
branch with a locked compare-and-swap; if the head moved meanwhile the caller's
change function runs again on the fresh head.

`GitStore` is this module's reads and writes plus three mixins, each in its own module
of this folder and each talking to pygit2 as this one does: `History` (walking
commits), `WorkingTree` (the files a person edits) and `Network` (hosted mode's remote).
"""

from __future__ import annotations

import datetime as dt
import errno
import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import cast

import pygit2

from cortex.errors import PathCollision, StoreError
from cortex.files import storage_error_text
from cortex.notes.paths import collision, equivalent, same_name
from cortex.settings import identity
from cortex.store.history import History
from cortex.store.network import Network
from cortex.store.types import Change, Changes, Draft, Identity, WriteResult
from cortex.store.working_tree import WorkingTree

__all__ = ["STALE_LOCK_SECONDS", "GitStore", "View"]

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


class View:
    """Read access to one commit's files, handed to a change function."""

    def __init__(self, store: GitStore, sha: str | None):
        self._store = store
        self.sha = sha

    def blob_of(self, path: str) -> str | None:
        if self.sha is None:
            return None
        return self._store.blob_at(self.sha, path)

    def read(self, path: str) -> bytes | None:
        blob = self.blob_of(path)
        return None if blob is None else self._store.blob_bytes(blob)


class GitStore(History, WorkingTree, Network):
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
        self._net_repo: pygit2.Repository | None = None  # hosted mode: see Network._net()
        self._net_lock = threading.Lock()
        # The time commits are stamped with; Brain sets its own clock here, so tests
        # (and `cortex eval`) can move time instead of sleeping past Git's 1 s resolution.
        self.clock: Callable[[], dt.datetime] | None = None
        self._unsynced: set[str] = set()  # staging entries a busy index.lock kept from syncing
        # Working-tree files a commit could not be written to, and why (a read-only folder):
        # retried, reported, and never read as the owner's edit.
        self.unwritten: dict[str, str] = {}
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
    ) -> GitStore:
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

    @property
    def git_dir(self) -> Path:
        """The repository's Git folder (`.git/`, or the bare repository itself)."""
        return Path(self._repo.path)

    @property
    def common_dir(self) -> Path:
        """The Git folder every worktree of this repository shares: `git_dir`, except in a
        linked worktree (`git worktree add`), whose own `.git/worktrees/<name>/` names it."""
        git_dir = self.git_dir
        try:
            named = (git_dir / "commondir").read_text().strip()
        except OSError:
            return git_dir
        return (git_dir / named).resolve()

    def reflog_size(self) -> int:
        """The size of the branch's reflog file (0 when it has none): a cheap "has it moved"."""
        try:
            return (self.common_dir / "logs" / self.ref).stat().st_size
        except OSError:
            return 0

    # -- reading ----------------------------------------------------------

    def head(self) -> str | None:
        """The branch head SHA, read fresh from disk (sees pushes from any clone)."""
        return self.ref_target(self.ref)

    def ref_target(self, ref: str) -> str | None:
        """The commit `ref` points at, or None."""
        with self._lock:
            try:
                return str(self._repo.references[ref].resolve().target)
            except (KeyError, pygit2.GitError):
                return None

    def resolve_rev(self, rev: str) -> str:
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
            path = prefix + cast(str, entry.name)
            if entry.filemode == pygit2.GIT_FILEMODE_TREE:
                self._walk(cast(pygit2.Tree, self._repo[entry.id]), path + "/", out)
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
        return builder if builder is not None else cast(pygit2.Tree, self._repo[tree_id])

    def _entry(self, tree_id: pygit2.Oid, path: str) -> pygit2.Object | None:
        """The entry `tree[path]` finds under tree `tree_id`, or None."""
        names = path.split("/")
        if not all(names):  # an empty name ("a//b", "a/", "/a"): libgit2's own rules
            try:
                return cast(pygit2.Object, cast(pygit2.Tree, self._repo[tree_id])[path])
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
            return cast(pygit2.Blob, self._repo[blob]).data

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
            parents = self.parents_on(head)
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
                by, committer = self.signatures(author)
                oid = self._repo.create_commit(None, by, committer, message, pygit2.Oid(hex=tree_id), parents)
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
                    first = next(iter(cast(pygit2.Tree, self._repo[found.id])), None)
                    if first is None:
                        return path + "/"
                    path, found = f"{path}/{first.name}", first
                return path

            def twin(path: str) -> str | None:
                return self._twin(tree, path)

            return collision(changes, is_file, file_under, twin)

    def _twin(self, tree: pygit2.Oid | None, path: str) -> str | None:
        """The existing spelling of as much of `path` as exists, when a name on it (a folder on
        the way, or the file) is spelt otherwise but is one name with it (`same_name`):
        `projects/garden` for `PROJECTS/Garden/tomatoes.md` beside `projects/garden/plans.md`.
        None when every existing name on the way is spelt alike."""
        found: list[str] = []
        node, respelt = tree, False
        for seg in path.split("/"):
            if node is None or not seg:
                break
            entry = _child(self._node(node), seg)
            if entry is None:
                names = cast(pygit2.Tree, self._repo[node])
                entry = next((e for e in names if same_name(cast(str, e.name), seg)), None)
                if entry is None:
                    break
                respelt = True
            found.append(cast(str, entry.name))
            node = entry.id if entry.filemode == pygit2.GIT_FILEMODE_TREE else None
        return "/".join(found) if respelt else None

    def _walk_names(self, tree: pygit2.Oid | None, path: str, match: Callable[[str, str], bool]) -> str | None:
        """The existing path whose every segment `match`es `path`'s (an exact segment first), or None."""
        found: list[str] = []
        node: pygit2.Oid | None = tree
        for seg in path.split("/"):
            if node is None:
                return None  # `path` goes on below a file
            entry = _child(self._node(node), seg) if seg else None
            if entry is None:
                entry = next((e for e in cast(pygit2.Tree, self._repo[node]) if match(cast(str, e.name), seg)), None)
                if entry is None:
                    return None
            found.append(cast(str, entry.name))
            node = entry.id if entry.filemode == pygit2.GIT_FILEMODE_TREE else None
        return "/".join(found)

    def stored_path(self, sha: str | None, path: str) -> str:
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
            builder = (
                self._repo.TreeBuilder(cast(pygit2.Tree, self._repo[tree]))
                if tree is not None
                else self._repo.TreeBuilder()
            )
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
        return StoreError(storage_error_text(cause, "nothing was committed"))

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

    def parents_on(self, head: str | None) -> list[pygit2.Oid]:
        """The parents of a new commit on the branch at `head`: the head, or none for the
        branch's first commit; StoreError where that first commit would be a second root."""
        others = list(self._repo.branches.local) if head is None else []
        if others:
            # Never a second root: a write to an unborn branch beside others would
            # start a history that holds none of the notes.
            raise StoreError(
                f"branch {self.branch} has no commits while the repository has "
                f"{', '.join(sorted(others)[:5])}; nothing was committed"
            )
        return [pygit2.Oid(hex=head)] if head else []

    def signatures(
        self, author: Identity | None, *, owner_commits: bool = False
    ) -> tuple[pygit2.Signature, pygit2.Signature]:
        """(author, committer) of a new commit, both dated by `clock` (the system's without one).

        The author is `author` when given, else Cortex. The committer is Cortex, so history
        tells who wrote from who recorded it (server commits are signed as Cortex, apart
        from hand edits), except with `owner_commits`: the owner's own first commit
        (`cortex init` in place) is theirs on both lines.
        """
        cortex = self._signature("Cortex", "cortex@localhost")
        by = self._signature(*author) if author else cortex
        return by, (by if author and owner_commits else cortex)

    def _signature(self, name: str, email: str) -> pygit2.Signature:
        if self.clock is None:
            return pygit2.Signature(name, email)
        now = self.clock()
        delta = now.utcoffset()
        offset = int(delta.total_seconds() // 60) if delta else 0
        return pygit2.Signature(name, email, int(now.timestamp()), offset)

    def owner_identity(self, override: str | None = None) -> Identity | None:
        """The owner's identity for their own commits (hand edits, `cortex init` in place):
        `override` ("Name <email>", from CORTEX_AUTHOR), else Git's configured user.name and
        user.email (repository, then global), else None. The settings read CORTEX_AUTHOR with
        the same rule, so a bad value is refused there, before any brain is opened."""
        if override:
            return identity("CORTEX_AUTHOR", override)
        with self._lock:
            try:
                sig = self._repo.default_signature
            except (KeyError, pygit2.GitError):
                return None
            return sig.name, sig.email


def _child(node: pygit2.Tree | pygit2.TreeBuilder, name: str) -> pygit2.Object | None:
    """The entry called `name` (one path segment) in a tree or a TreeBuilder, or None."""
    if isinstance(node, pygit2.TreeBuilder):
        return node.get(name)
    try:
        return node[name]
    except (KeyError, ValueError):
        return None

"""A GitStore's traffic with a remote (hosted mode): clone, fetch, push, and replaying
commits kept locally onto the remote's newer head.

Network calls go through a second repository handle under their own lock (`_net`), so a
slow fetch or push never blocks reads. The policy around them (when to fetch, what a
refused push means, the background thread) is `RemoteStore`'s, in store.remote.

`Network` is mixed into `GitStore` (store.git), whose repository handle (`_repo`), lock
(`_lock`), `ref_target`, `collision` and `signatures` it uses.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Self

import pygit2

from cortex.errors import PathCollision, StoreError
from cortex.store.credentials import Auth
from cortex.store.types import Changes, Identity

__all__ = ["Network", "checked_out"]


def checked_out(path: str, branch: str | None) -> Path | None:
    """The working tree of the local repository at `path` that has `branch` (None: the
    branch its HEAD names) checked out, or None: nothing is (a bare repository, say).

    A push moves such a branch but not the files under it, and the server or editor there
    then commits those stale files back over the pushed notes (git's own receive-pack refuses
    such a push by default; libgit2's local transport does not).
    """
    try:
        repo = pygit2.Repository(path)
    except (pygit2.GitError, KeyError, OSError):
        return None
    heads = [] if repo.is_bare else [(repo.workdir, repo)]  # a bare one may still have linked worktrees
    for name in repo.list_worktrees():
        try:
            tree = repo.lookup_worktree(name).path
            heads.append((tree, pygit2.Repository(tree)))
        except (pygit2.GitError, KeyError, OSError):  # a worktree whose folder is gone
            continue
    wanted = f"refs/heads/{branch}" if branch else repo.references["HEAD"].target  # a clone takes HEAD's
    for where, each in heads:
        if each.references["HEAD"].target == wanted:
            return Path(where)
    return None


class Network:
    """Fetching from and pushing to the remote `origin`, and replaying kept commits."""

    _repo: pygit2.Repository
    _lock: threading.RLock
    _net_repo: pygit2.Repository | None
    _net_lock: threading.Lock
    path: Path
    ref: str
    branch: str

    if TYPE_CHECKING:  # GitStore's, which this is mixed into

        def __init__(self, path: str | Path, branch: str | None = None) -> None: ...
        def ref_target(self, ref: str) -> str | None: ...
        def collision(self, sha: str | None, changes: Changes) -> str | None: ...
        def signatures(
            self, author: Identity | None, *, owner_commits: bool = False
        ) -> tuple[pygit2.Signature, pygit2.Signature]: ...

    @classmethod
    def clone(cls, url: str, path: str | Path, auth: Auth, branch: str | None = None) -> Self:
        """A bare clone of `url` at `path` on `branch`, by default the remote's own default branch.

        An empty remote gives an empty clone on `branch` (default main).
        """
        try:
            repo = pygit2.clone_repository(
                url, str(path), bare=True, callbacks=_Callbacks(auth), checkout_branch=branch
            )
        except (pygit2.GitError, ValueError, OSError) as exc:
            raise StoreError(f"could not clone {auth.display(url)}: {auth.scrub(str(exc))}") from None
        if repo.head_is_unborn and not list(repo.branches.local):
            repo.references.create("HEAD", f"refs/heads/{branch or 'main'}", force=True)
        return cls(path, branch)

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
        return self.ref_target(self.tracking_ref)

    def set_tracking(self, sha: str) -> None:
        with self._lock:
            self._repo.references.create(self.tracking_ref, pygit2.Oid(hex=sha), force=True)

    def fetch(self, auth: Auth) -> str | None:
        """Fetch the remote's branch into the tracking ref; StoreError (credential-free) on failure."""
        with self._net_lock:
            try:
                self._net().remotes["origin"].fetch(
                    [f"+refs/heads/{self.branch}:{self.tracking_ref}"], callbacks=_Callbacks(auth)
                )
            except (pygit2.GitError, KeyError, OSError) as exc:
                raise StoreError(f"fetch failed: {auth.scrub(str(exc))}") from None
        return self.tracking_head()

    def push(self, sha: str, expected: str | None, auth: Auth, local_path: str | None = None) -> str:
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
            cb = _Callbacks(auth)
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
            empty = self._repo[self._repo.TreeBuilder().write()].peel(pygit2.Tree)
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
            merging = self._repo.merge_trees(
                base_tree,
                onto_commit.tree,
                commit.tree,
                favor=pygit2.enums.MergeFavor.UNION,
                flags=pygit2.enums.MergeFlag(0),
            )
            overwrote = []
            if merging.conflicts is not None:
                for ancestor, ours, theirs in list(merging.conflicts):
                    path = (theirs or ours or ancestor).path
                    del merging.conflicts[path]
                    keep = ours if path == "INDEX.md" else theirs
                    if path != "INDEX.md":
                        overwrote.append(path)
                    if keep is not None:
                        merging.add(pygit2.IndexEntry(path, keep.id, keep.mode))
            if "INDEX.md" in ours_changed & theirs_changed:
                try:
                    entry = onto_commit.tree["INDEX.md"]
                    merging.add(pygit2.IndexEntry("INDEX.md", entry.id, entry.filemode))
                except KeyError:
                    pass
            merged = sorted((ours_changed & theirs_changed) - set(overwrote) - {"INDEX.md"})
            tree = merging.write_tree(self._repo)
            message = commit.message.rstrip("\n") + "\n"
            message += "".join(f"Cortex-Merged: {p} with the remote's {onto[:12]} (both kept)\n" for p in merged)
            message += "".join(f"Cortex-Overwrote: {p} at {onto[:12]}\n" for p in overwrote)
            _, committer = self.signatures(None)
            oid = self._repo.create_commit(None, commit.author, committer, message, tree, [onto_commit.id])
            return str(oid)


class _Callbacks(pygit2.RemoteCallbacks):
    """libgit2's questions during one fetch, push or clone: which credentials, and whether
    the remote refused a ref."""

    def __init__(self, auth: Auth):
        super().__init__()
        self._token = auth.token
        self._user = auth.user
        self._tries = 0
        self.rejected: str | None = None

    def credentials(
        self, url: str, username_from_url: str | None, allowed_types: pygit2.enums.CredentialType
    ) -> pygit2.UserPass | pygit2.KeypairFromAgent:
        self._tries += 1
        if self._tries > 2:  # libgit2 asks again after a refusal; stop instead of looping
            raise pygit2.GitError("authentication failed (check CORTEX_REMOTE_TOKEN)")
        if allowed_types & pygit2.enums.CredentialType.USERPASS_PLAINTEXT and self._token:
            return pygit2.UserPass(username_from_url or self._user, self._token)
        if allowed_types & pygit2.enums.CredentialType.SSH_KEY:
            return pygit2.KeypairFromAgent(username_from_url or "git")
        raise pygit2.GitError("the remote asks for credentials and none are configured")

    def push_update_reference(self, refname: str, message: str | None) -> None:
        if message:
            self.rejected = f"{refname}: {message}"


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
    tree = src[tree_id].peel(pygit2.Tree)
    for entry in tree:
        if entry.filemode == pygit2.GIT_FILEMODE_TREE:
            _copy_tree(src, dst, entry.id)
        elif entry.filemode != pygit2.GIT_FILEMODE_COMMIT and entry.id not in dst.odb:
            dst.odb.write(pygit2.GIT_OBJECT_BLOB, src[entry.id].read_raw())
    dst.odb.write(pygit2.GIT_OBJECT_TREE, tree.read_raw())

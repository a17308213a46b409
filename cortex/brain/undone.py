"""An acknowledged write a Git command of the owner's took back out unasked: found, said,
put back (issue 54).

Two shapes, both read from the branch's reflog as the watcher polls:

- **A commit built from an index that lacked the write.** `git commit` reads HEAD and the
  staging index without Git's lock; between a write's branch move and its index it reads the
  new head and the old index, and its commit sets the written file back to before the
  write. A commit of the owner's that sets a file back exactly to before Cortex's last write
  of it, while the working tree holds bytes Cortex wrote (not the commit's), is that: the
  owner changed nothing in the working tree. Seen in about 1 of 3 four-second runs of hand
  commits beside two writers before this check.
- **A reset "to HEAD" that rewound the branch.** `git stash` (and `git reset --hard` with no
  commit named) reads HEAD, then resets the branch to it: a write landing between is taken
  out, though the command only meant to put the files back (its reflog: "reset: moving to
  HEAD").

Everything else is the owner's decision and is never undone: a change they made to the file
in the working tree (an editor save, `git revert -n`, a deletion: the working tree then
holds their bytes), a reset to a named commit (`HEAD~1`, a SHA), a rebase. The restore is a
commit of its own on the head, merged with what changed since; the owner's commit is never
rewritten. The rule alone would put back `git rm --cached` of a note Cortex wrote (the file
left in the working tree with Cortex's bytes); the watcher takes such untracks out first
(`brain.untracked`: the staging index lacks the file). The race above can leave the index
without a new note too (git writes back the index it read); the journal marks the writes a
git command may have raced (`Entry.owner_git`), and those drops stay this module's.
"""

from __future__ import annotations

from dataclasses import dataclass

from cortex.brain.brain import Brain
from cortex.brain.contents_page import ATTRIBUTES, CONTENTS_PAGE
from cortex.brain.journal import Entry
from cortex.brain.trailers import Actor
from cortex.errors import StoreError
from cortex.store.git import View
from cortex.store.types import WriteResult

__all__ = ["RESTORE", "Lost", "restore", "rewound_writes", "undone_writes"]

# What `git reset --hard` with no commit writes in the reflog, and `git stash` too: "put the
# files back to HEAD", never "drop commits". Such a reset that rewound the branch read HEAD
# before a write of Cortex's landed, and took it out without anyone choosing to.
TO_HEAD = "reset: moving to HEAD"

RESTORE = Actor(door="editor", tool="restore", client="working tree")


@dataclass(frozen=True)
class Lost:
    entry: Entry  # the acknowledged write
    path: str
    head: str  # the head that lacks it
    base: str | None  # the blob the file was set back to (the write is merged onto changes since)


def undone_writes(brain: Brain, moves: list[tuple[str, str, str]]) -> list[Lost]:
    """The acknowledged writes a commit of the owner's among `moves` set back exactly to before
    the write, while the working tree held Cortex's bytes, not the commit's: the commit was
    built from an index that lacked the write (a `git commit` reads HEAD and the index
    without Git's lock, and can read them between a write's branch move and its index)."""
    store = brain.store
    head = store.head()
    if head is None:
        return []
    out: dict[str, Lost] = {}
    for old, new, _ in moves:
        if old == new or not store.is_ancestor(old, new):
            continue
        for sha in store.commits_between(old, new):
            info = store.commit_info(sha)
            if info.committer == "Cortex" or len(info.parents) != 1:
                continue
            for path in info.files:
                lost = _undone(brain, info.parents[0], sha, path)
                if lost is not None:
                    out[path] = Lost(lost.entry, path, head, lost.base)
    return list(out.values())


def _undone(brain: Brain, parent: str, sha: str, path: str) -> Lost | None:
    """The write of `path` the commit `sha` undid, where the working tree holds a Cortex write."""
    store, journal = brain.store, brain.journal
    e = next((w for w in journal.writes_of(path) if store.is_ancestor(w.sha, parent)), None)
    if e is None or e.paths[path] != store.blob_at(parent, path):
        return None  # the parent did not hold a write of Cortex's as the last word on the file
    now = store.blob_at(sha, path)
    if now != _parent_blob(brain, e.sha, path) or now == e.paths[path]:
        return None  # the commit did not set the file back to before the write
    disk = store.disk_blob(path)
    if disk == now or not journal.wrote(path, disk):
        return None  # the working tree holds the commit's bytes, or the owner's own: theirs
    return Lost(e, path, sha, now)


def _parent_blob(brain: Brain, sha: str, path: str) -> str | None:
    parents = brain.store.commit_info(sha).parents
    return brain.store.blob_at(parents[0], path) if parents else None


def rewound_writes(brain: Brain, moves: list[tuple[str, str, str]]) -> list[Lost]:
    """The acknowledged writes a reset "to HEAD" (`git stash`, `git reset --hard`) among the
    branch's `moves` (its reflog's, oldest first) rewound out of the branch, where the head
    does not hold them now. A reset to a named older commit is the owner's decision."""
    store, journal = brain.store, brain.journal
    head = store.head()
    if head is None:
        return []
    by_sha = {e.sha: e for e in journal.entries}
    out: dict[str, Lost] = {}
    for old, new, message in moves:
        if message.strip() != TO_HEAD or old == new or not store.is_ancestor(new, old):
            continue
        for sha in store.commits_between(new, old):
            e = by_sha.get(sha) or _tool_write(brain, sha)
            if e is None:
                continue
            for path in e.paths:
                left = store.blob_at(new, path)
                if e.paths[path] != left and store.blob_at(head, path) != e.paths[path]:
                    out[path] = Lost(e, path, head, left)  # the last write of the path holds the rest
    return list(out.values())


def _tool_write(brain: Brain, sha: str) -> Entry | None:
    """A tool write's commit read as its journal entry: the journal may not have it yet (a
    reset can land between a commit and its line). A hand edit's commit is not one."""
    store = brain.store
    info = store.commit_info(sha)
    door = info.trailers.get("Cortex-Door")
    if info.committer != "Cortex" or door in (None, "editor") or len(info.parents) != 1:
        return None
    paths = {p: store.blob_at(sha, p) for p in info.files if p not in (CONTENTS_PAGE, ATTRIBUTES)}
    return Entry(sha, paths, info.trailers.get("Cortex-Tool", ""), True, info.time.timestamp())


def restore(brain: Brain, lost: list[Lost]) -> WriteResult | None:
    """Put the lost files back as their writes made them, in one commit on the head: merged
    with what changed since (another capture appended to the log: Git's line merge, a
    conflict keeping both sides); a deletion only where nothing changed since. None when
    no file is put back."""
    store = brain.store

    def change(view: View) -> dict[str, bytes | None]:
        out: dict[str, bytes | None] = {}
        for one in lost:
            wrote, now = one.entry.paths[one.path], view.blob_of(one.path)
            if now == wrote:
                continue
            if now == one.base:
                out[one.path] = None if wrote is None else store.blob_bytes(wrote)
                continue
            if wrote is None or now is None:
                continue  # deleted since by someone, or a deletion to merge: left as it is
            base = store.blob_bytes(one.base) if one.base else b""
            merged = store.merge_text(base, store.blob_bytes(now), store.blob_bytes(wrote), union=True)
            if merged is not None and merged != store.blob_bytes(now):
                out[one.path] = merged
        if not out:
            raise StoreError("the change leaves the note exactly as it is; nothing to commit")
        return out

    paths = sorted({one.path for one in lost})
    writes = ", ".join(sorted({one.entry.sha[:7] for one in lost}))
    subject = f"restore {', '.join(paths)}: a Git command of the owner's took back {writes} unasked"
    try:
        result = brain.commit_change(paths, change, subject, RESTORE)
    except StoreError as exc:
        if "nothing to commit" in str(exc):
            return None
        raise
    return result

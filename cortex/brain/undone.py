"""A hand commit that took back a write Cortex acknowledged: found, said, and put back.

Cortex holds Git's index.lock while a write moves the branch and the index follows
(`store.working_tree.staging_held`), so a `git commit` by hand cannot build its tree from
the old index on top of the new head. Where that still happened (a `git commit` that held
the lock longer than a write waits, then committed from an index Cortex could not update),
its commit has one shape: its parent is a Cortex commit, it sets a file that commit wrote
back to what it was before that commit, and it also changes a file of its own (what the
person meant to commit). `undone_by` finds that shape; `restore` writes the file again as
a three-way merge on the head, in a commit of its own. The person's commit is never
rewritten. A commit that only takes back a Cortex write is the person's decision, and is
left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from cortex.brain.brain import Brain
from cortex.brain.trailers import Actor
from cortex.errors import StoreError
from cortex.store.git import View
from cortex.store.types import WriteResult

__all__ = ["RESTORE", "Undone", "restore", "undone_by"]

RESTORE = Actor(door="editor", tool="restore", client="working tree")
CORTEX = "Cortex"  # the committer of every commit Cortex makes


@dataclass(frozen=True)
class Undone:
    hand: str  # the hand commit
    cortex: str  # the Cortex commit it took back
    paths: tuple[str, ...]  # the files it set back to before that commit


def undone_by(brain: Brain, sha: str) -> Undone | None:
    """The Cortex write the commit `sha` took back out by the stale-index shape, or None."""
    store = brain.store
    hand = store.commit_info(sha)
    if hand.committer == CORTEX or len(hand.parents) != 1:
        return None
    ours = store.commit_info(hand.parents[0])
    if ours.committer != CORTEX or len(ours.parents) > 1:
        return None
    before = ours.parents[0] if ours.parents else None
    paths = tuple(
        p
        for p in ours.files
        if store.blob_at(ours.sha, p) != (old := store.blob_at(before, p) if before else None)
        and store.blob_at(hand.sha, p) == old
    )
    own = set(hand.files) - set(ours.files)  # what the person meant to commit
    return Undone(hand.sha, ours.sha, paths) if paths and own else None


def restore(brain: Brain, undone: Undone) -> WriteResult | None:
    """Put the files back as the Cortex commit wrote them, merged with the head's (Git's line
    merge; a conflict keeps both sides), in one commit; None when the head already has them."""
    store = brain.store
    before = store.commit_info(undone.cortex).parents
    base = before[0] if before else None

    def change(view: View) -> dict[str, bytes | None]:
        out: dict[str, bytes | None] = {}
        for path in undone.paths:
            wrote = store.blob_at(undone.cortex, path)
            now = view.read(path)
            if wrote is None or now is None:
                continue  # a deletion taken back, or the file gone since: the person's call
            old = store.blob_at(base, path) if base else None
            merged = store.merge_text(store.blob_bytes(old) if old else b"", now, store.blob_bytes(wrote), union=True)
            if merged is not None and merged != now:
                out[path] = merged
        if not out:
            raise StoreError("the change leaves the note exactly as it is; nothing to commit")
        return out

    names = ", ".join(undone.paths)
    subject = f"restore {names}: {undone.hand[:7]}, a hand commit, took back {undone.cortex[:7]}"
    try:
        return brain.commit_change(list(undone.paths), change, subject, RESTORE)
    except StoreError as exc:
        if "nothing to commit" in str(exc):
            return None
        raise

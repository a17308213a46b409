"""Notes the owner took out of Git and kept on disk (`git rm --cached`, then a commit): the
watcher never commits them again (issue 62).

A path is untracked by the owner when a head the watcher sees lacks it while the head before
held it, the working tree still holds the file, Git's staging index does not (nor is Cortex
still to put it there), and Cortex's last write of it neither deleted it (a write's deletion
against a hand edit stays the hand edit's, as before) nor made it while a git command ran in
the working tree (`Entry.owner_git`: `git commit` reads the index before its lock, so one that
began before the write may commit, and write back, an index without the new file, which is
then the stale-index race `brain.undone` puts back, not an untrack). It
stays untracked until the file leaves the working tree or the owner puts it back in Git (`git
add`, or a commit holding it). `cortex-untracked.json` in the working tree's Git folder keeps
them, with the head last looked at, so a restart keeps them and an untrack committed while the
server was down is found from that head.

What a head dropped is read commit by commit (`dropped`), not only as a diff of the head last
looked at against the new one: the watcher may look next only after Cortex wrote a note *and*
the owner untracked it (a slow pass stretches the poll to 4x its time, a loaded machine more),
and both heads then lack the file. The diff alone missed it, and the owner's commit was then
put back as a write taken out unasked (`brain.undone`), 2 runs in 30 of the restart test with
both cores busy.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from cortex.store.git import GitStore

__all__ = ["UNTRACKED_FILE", "WALK_LIMIT", "Untracked", "dropped"]

UNTRACKED_FILE = "cortex-untracked.json"
# The newest commits between two heads read one by one; the diff of the two heads covers the
# rest (a start after a long time down, with many hosted pushes pulled meanwhile).
WALK_LIMIT = 500


def dropped(store: GitStore, seen: str, head: str) -> set[str]:
    """The paths `head` lacks that `seen` held or that a commit between them removed from its
    first parent's tree. KeyError or ValueError when `seen` is gone from the repository."""
    out = {ch.path for ch in store.diff(seen, head) if ch.new_blob is None}
    for sha in store.commits_between(seen, head)[-WALK_LIMIT:]:
        info = store.commit_info(sha)
        if not info.parents:
            continue
        parent = info.parents[0]
        out |= {p for p in info.files if store.blob_at(sha, p) is None and store.blob_at(parent, p) is not None}
    return {p for p in out if store.blob_at(head, p) is None}


class Untracked:
    """The owner's untracked notes of one working tree (path -> the head that no longer held
    it) and the head last looked at; `path` None keeps them in memory."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.head: str | None = None
        self.paths: dict[str, str] = {}
        self._load()

    @classmethod
    def for_store(cls, store: GitStore) -> Untracked:
        return cls(store.git_dir / UNTRACKED_FILE if store.workdir is not None else None)

    def _load(self) -> None:
        if self.path is None:
            return
        try:
            rec = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            return  # none yet, or cut short: the next head looked at starts it again
        if not isinstance(rec, dict):
            return
        head, paths = rec.get("head"), rec.get("paths")
        self.head = head if isinstance(head, str) else None
        if isinstance(paths, dict):
            self.paths = {p: s for p, s in paths.items() if isinstance(p, str) and isinstance(s, str)}

    def save(self) -> None:
        """Written whole, then renamed into place: a crash leaves the old file or the new."""
        if self.path is None:
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            tmp.write_text(json.dumps({"head": self.head, "paths": self.paths}, sort_keys=True), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            pass  # a read-only .git: kept in memory for this run

    def drop(self, path: str) -> None:
        if self.paths.pop(path, None) is not None:
            self.save()

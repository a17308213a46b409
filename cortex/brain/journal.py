"""Cortex's own record of the writes it acknowledged, so "nothing acknowledged was lost" is
a check Cortex runs itself (issue 54).

One line per acknowledged commit, in `cortex-journal.jsonl` in the repository's common Git
folder (beside `cortex.lock`; never in the working tree): its SHA, the files it set (path ->
blob, null for a deletion), the tool, and whether Git's staging index and the working tree
both took it under Git's own lock (`staged`; false when a `git` command held `index.lock`
longer than a write waits, or a hand edit held the file). `owner_git`: the write made a new
file, and a `git` command was running once Git's index lock was released after it, or a commit
not Cortex's had landed on it by then. `git commit` reads the index before its lock, so one
begun before the write's index was in place may commit, and write back, an index without the
new file, which is what an untrack by the owner leaves too; the watcher does not take such a
drop for one (`brain.untracked`). The mark is set under the lock and cleared after it
(`settle`): the watcher may look in between. It is in the file only when it stays (a line
of its own). `brain.undone` reads the journal to tell a write Cortex made from the owner's own
bytes. The file keeps the last `KEEP` writes.

`account` reads the journal against the branch: each file's last acknowledged write is in
HEAD, changed since by a later commit (the owner's, by path and SHA), being put back, or
gone from the branch's history (a reset or rewrite by the owner: said, never undone).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cortex.errors import StoreError
from cortex.store.git import GitStore
from cortex.store.types import WriteResult

__all__ = ["JOURNAL_FILE", "KEEP", "Entry", "Journal"]

JOURNAL_FILE = "cortex-journal.jsonl"
KEEP = 2_000  # acknowledged writes the journal keeps (about 200 bytes each)
SHOWN = 20  # files per kind `account` names
HISTORY_LOOK = 500  # commits after a write `account` reads for the one that changed its file


@dataclass
class Entry:
    sha: str
    paths: dict[str, str | None]
    tool: str
    staged: bool
    at: float
    owner_git: bool = False  # a new file written while a git command ran in the working tree


class Journal:
    """The acknowledged writes of one brain; thread-safe; `path` None keeps it in memory."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.entries: list[Entry] = []
        self._load()

    @classmethod
    def for_store(cls, store: GitStore) -> Journal:
        """The journal of a brain with a working tree; in memory for a bare or hosted one."""
        if store.workdir is None:
            return cls(None)
        return cls(store.common_dir / JOURNAL_FILE)

    def _load(self) -> None:
        if self.path is None:
            return
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except (FileNotFoundError, UnicodeDecodeError, OSError):
            return
        for line in lines:
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a line cut short by a crash
            if not isinstance(rec, dict):
                continue
            if isinstance(rec.get("sha"), str) and rec.get("owner_git") is True and "paths" not in rec:
                for e in reversed(self.entries[-KEEP:]):  # the mark `settle` kept, for a line above
                    if e.sha == rec["sha"]:
                        e.owner_git = True
                        break
                continue
            if isinstance(rec.get("sha"), str) and isinstance(rec.get("paths"), dict):
                e = Entry(
                    rec["sha"],
                    rec["paths"],
                    str(rec.get("tool", "")),
                    bool(rec.get("staged")),
                    float(rec.get("at", 0)),
                    bool(rec.get("owner_git")),  # in a rewritten file
                )
                self.entries.append(e)
        self.entries = self.entries[-KEEP:]
        if len(lines) > 2 * KEEP:
            self._rewrite()

    def _rewrite(self) -> None:
        assert self.path is not None
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            for e in self.entries:
                f.write(_line(e))
        os.replace(tmp, self.path)

    def _append(self, text: str) -> None:
        if self.path is None:
            return
        try:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(text)
        except OSError:
            pass  # a read-only .git: the commit itself stands; the check runs from memory

    def record(
        self,
        result: WriteResult,
        *,
        tool: str,
        unstaged: Iterable[str],
        off_disk: Iterable[str] = (),
        generated: Iterable[str] = (),
        owner_git: bool = False,
    ) -> None:
        """One acknowledged commit; `unstaged`: its files Git's staging index did not take;
        `off_disk`: those the working tree did not (a hand edit held them); `generated`: files
        the commit regenerates (INDEX.md and its .gitattributes line), not recorded;
        `owner_git`: it made a new file (marked until `settle` looks)."""
        left_out = set(generated)
        paths = {p: b for p, b in result.new_blobs.items() if p not in left_out}
        if not paths:
            return
        missed = (set(off_disk) | set(unstaged)) & set(paths)
        e = Entry(result.sha, paths, tool, not missed, time.time(), owner_git)
        with self._lock:
            self.entries.append(e)
            if len(self.entries) > KEEP:
                self.entries = self.entries[-KEEP:]
            self._append(_line(e, with_mark=False))

    def settle(self, store: GitStore, shas: list[str]) -> None:
        """After Git's index lock is released: the writes `shas` (each made a file) keep their
        `owner_git` mark when a git command runs in the working tree now (it may have read the
        index before theirs was in place) or a commit not Cortex's landed on the first of them
        since (such a command, done already); else it is cleared. Kept marks get a line each."""
        if not shas:
            return
        kept = store.owner_git_running()
        head = store.head()
        if not kept and head is not None:
            try:
                later = store.commits_between(shas[0], head)[-HISTORY_LOOK:]
                kept = any(store.commit_info(c).committer != "Cortex" for c in later)
            except (KeyError, ValueError, StoreError):
                kept = True  # the write is gone from the branch already: left marked
        want = set(shas)
        with self._lock:
            for e in reversed(self.entries):  # just recorded: found among the newest
                if e.sha in want:
                    e.owner_git = kept
                    want.discard(e.sha)
                    if not want:
                        break
            if kept:
                self._append("".join(json.dumps({"sha": sha, "owner_git": True}) + "\n" for sha in shas))

    def writes_of(self, path: str) -> list[Entry]:
        """The writes that set `path`, newest first."""
        with self._lock:
            return [e for e in reversed(self.entries) if path in e.paths]

    def wrote(self, path: str, blob: str | None) -> bool:
        """Whether a write set `path` to `blob` (a blob of Cortex's, not the owner's)."""
        with self._lock:
            return any(e.paths.get(path, "?") == blob for e in self.entries)

    def account(self, store: GitStore, putting_back: Iterable[str] = ()) -> dict[str, Any]:
        """Each file's last acknowledged write against the branch's head: how many are in HEAD,
        and which (path and SHA) were changed since, are being put back, or left the history."""
        with self._lock:
            last: dict[str, Entry] = {}
            for e in self.entries:
                for p in e.paths:
                    last[p] = e
        head = store.head()
        back = set(putting_back)
        out: dict[str, Any] = {"writes": len(self.entries), "files": len(last), "in_head": 0}
        changed: list[str] = []
        gone: list[str] = []
        restoring: list[str] = []
        rebased: dict[str, str] = {}  # the head's recent commits by message, read once when needed
        for path, e in sorted(last.items()):
            blob = e.paths[path]
            if head is not None and store.blob_at(head, path) == blob:
                out["in_head"] += 1
            elif path in back:
                restoring.append(f"{path} ({e.sha[:7]})")
            elif head is not None and (kept := _kept_as(store, e.sha, head, rebased)) is not None:
                said = len(changed) < SHOWN  # the first few say which commit; the rest are counted
                by = _changed_by(store, kept, head, path) if said else ""
                changed.append(f"{path} ({e.sha[:7]}, changed since by {by})")
            else:
                gone.append(f"{path} ({e.sha[:7]})")
        out["changed_since"] = len(changed)
        out["being_put_back"] = len(restoring)
        out["not_in_history"] = len(gone)
        out["changed_since_files"] = changed[:SHOWN]
        out["being_put_back_files"] = restoring[:SHOWN]
        # A reset or a rewrite of the branch by the owner: their decision, said, never undone.
        out["not_in_history_files"] = gone[:SHOWN]
        return out


def _line(e: Entry, *, with_mark: bool = True) -> str:
    rec: dict[str, Any] = {"sha": e.sha, "paths": e.paths, "tool": e.tool, "staged": e.staged, "at": round(e.at, 3)}
    if with_mark and e.owner_git:
        rec["owner_git"] = True  # a rewrite keeps a mark `settle` kept; most lines lack it
    return json.dumps(rec, ensure_ascii=False) + "\n"


def _kept_as(store: GitStore, sha: str, head: str, rebased: dict[str, str]) -> str | None:
    """The commit of the head's history that holds the write `sha`: itself, or its copy made by
    a rebase of the owner's (the same message, which names the tool, client and request);
    None when the branch no longer holds it (a reset)."""
    if store.is_ancestor(sha, head):
        return sha
    if not rebased:
        for c in store.commits_between(None, head)[-HISTORY_LOOK:]:
            rebased.setdefault(store.commit_info(c).message, c)
    try:
        return rebased.get(store.commit_info(sha).message)
    except StoreError:
        return None


def _changed_by(store: GitStore, sha: str, head: str | None, path: str) -> str:
    """The newest commit after `sha` that changed `path` (short SHA), or "a later commit"."""
    if head is None:
        return "a later commit"
    for c in reversed(store.commits_between(sha, head)[-HISTORY_LOOK:]):  # newest first
        info = store.commit_info(c)
        if path in info.files:
            who = "Cortex" if info.committer == "Cortex" and "hand-edit" not in info.message else info.author
            return f"{c[:7]} ({who})"
    return "a later commit"

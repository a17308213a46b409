"""Hand edits: watch a brain's working tree and commit what a person saves.

Any editor works (Obsidian, VS Code, vim): the watcher polls the tree's stat
data (mtime, size, inode of each note file), waits for a quiet spell (the
debounce, default 300 ms) and commits the files whose bytes differ from the
head, hashed the way Git hashes a blob. Polling needs no dependency and works on
every platform and file system (network mounts and containers included, where
inotify often says nothing). Measured: one scan of 1,000 notes ~3 ms; the poll
interval stretches to 4x the scan time so a big brain stays under ~20% of a core.

No keystroke is lost. For every note the watcher remembers which blob the disk
held when it was last in step with a commit (its base):
- disk == head, or disk == base (a server write not yet synced): nothing to do;
- base == head: a plain hand edit, committed as is (door `editor`);
- the head moved under an unsaved edit (a tool wrote meanwhile): a three-way
  merge (base, disk, head); a clean merge keeps both changes, a conflicting one
  commits the hand edit and its message names the server change it replaced
  (which stays in history).
A tool write first commits the hand edits to the files it touches (Brain calls
`before_write`), then writes on top; after it, `after_write` puts the new bytes
on disk only where the disk still holds the base.

The owner's Git decides what is in Git (issue 62): a note they untracked (`git rm --cached`
and a commit, the file kept on disk) is never committed again (`brain.untracked`), and while
such a removal is only staged, the file's hand edits wait (held, and said in /healthz) until
the owner commits it or takes it back (`git restore --staged`).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cortex.brain.brain import Brain
from cortex.brain.trailers import Actor
from cortex.brain.tree_events import TreeEvents
from cortex.brain.undone import restore, rewound_writes, undone_writes
from cortex.brain.untracked import Untracked, dropped
from cortex.errors import BadInput, StoreError
from cortex.files import read_file
from cortex.notes.paths import check_path
from cortex.store.git import View
from cortex.store.reflog import Mark
from cortex.store.types import WriteResult
from cortex.store.working_tree import git_running, hash_blob

__all__ = ["DEBOUNCE_MS", "HAND", "PAGE_QUIET_S", "POLL_S", "RACY_NS", "Editor", "ignored"]

log = logging.getLogger(__name__)

HAND = Actor(door="editor", tool="hand-edit", client="working tree")
DEBOUNCE_MS = 300
RESTORED_SHOWN = 10  # restorations /healthz lists
POLL_S = 0.1
# INDEX.md is written again only once a head not Cortex's has stood this long with no git
# command running: its commit takes index.lock, and the owner's next command met it (11 of
# 15 loaded runs of the untrack tests, each owner command right after the last).
PAGE_QUIET_S = 2.0
# A poll scans the tree when the system's file events say it changed (`TreeEvents`), and
# else only when its last scan cost at most this share of the time since (or of a poll): a
# scan of 10,000 notes took 62 ms, 20% of a core polled every 0.1 s with nothing changed.
# With events flowing the scan is only a safety net (a network folder may send none);
# without, a hand edit is seen within 0.62 s at 10,000 notes, and a small brain every poll.
SCAN_SHARE_WATCHED = 0.01
SCAN_SHARE = 0.1
# A file modified this close to its stat may change again within the same mtime
# tick with the same size ("racy git"); such files are re-hashed once more.
RACY_NS = 50_000_000
_UNKNOWN = object()


def ignored(rel: str) -> bool:
    """Editors' temp and swap files, dot folders, non-notes and the generated INDEX.md.

    Dot names cover `.git/`, `.obsidian/`, `.cortex/`, `.DS_Store`, `.#notes.md`,
    `.notes.md.swp`, `.~lock.*#`; the `.md` rule covers `notes.md~`, `*.tmp`, `4913`.
    """
    parts = rel.split("/")
    return any(p.startswith(".") or not p for p in parts) or _not_a_note(parts[-1], rel)


def _not_a_note(name: str, rel: str) -> bool:
    """`ignored`'s rules for a file's own name, where no part of `rel` is a dot name."""
    return not name.endswith(".md") or name.startswith(("~", "#")) or rel == "INDEX.md"


@dataclass
class _Plan:
    head: str | None
    out: dict[str, bytes | None] = field(default_factory=dict)
    disk: dict[str, bytes | None] = field(default_factory=dict)
    merged: list[str] = field(default_factory=list)
    overwrote: list[str] = field(default_factory=list)
    waiting: dict[str, str] = field(default_factory=dict)  # hand edits held back, and why


class _Moved(Exception):
    """The head moved after planning: plan again."""


class Editor:
    """The working-tree watcher of one brain; also its hook for tool writes."""

    def __init__(
        self,
        brain: Brain,
        debounce_ms: int = DEBOUNCE_MS,
        poll_s: float = POLL_S,
        clock: Callable[[], float] = time.monotonic,
        author: str | None = None,
    ):
        if brain.store.workdir is None:
            raise StoreError("hand edits need a repository with a working tree")
        self.brain = brain
        self.store = brain.store
        self.root = str(brain.store.workdir)
        self.debounce = debounce_ms / 1000
        self.poll_s = poll_s
        self.clock = clock  # the debounce's clock: tests drive poll_once with their own
        # Hand edits are the owner's work: authored as them (CORTEX_AUTHOR, else Git's
        # user.name/user.email), committed by Cortex; Cortex only when neither is set.
        self.author = brain.store.owner_identity(author)
        self._lock = threading.RLock()
        self._base: dict[str, str | None] = {}
        self._stats: dict[str, tuple[int, int, int]] = {}
        self._pending: set[str] = set()
        self._last_change = 0.0
        self._scanned = (float("-inf"), 0.0)  # when a poll last scanned (its clock), and what it cost (s)
        self.events = TreeEvents(Path(self.root))  # the system's file events, once `start`ed
        # The head INDEX.md was last looked at for, and the one that must stand PAGE_QUIET_S first.
        self._page_looked: str | None = None
        self._page_head: tuple[str | None, float] = (None, 0.0)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.commits = 0
        self.last_error: str | None = None
        # Hand edits that would turn a note into a folder (or back): not committed,
        # re-checked after every change on disk until the person renames one side.
        self.held: dict[str, str] = {}
        self.first_pass = threading.Event()  # set once the start-up pass (check_all) is done
        # Where the last read of the branch's reflog ended: a file of another size has moved.
        self._seen_moves: Mark = brain.store.moves_after(None)[1]
        # Hand commits that took back an acknowledged write, and the commit that put it back.
        self.restored: list[str] = []
        # Notes the owner took out of Git and kept on disk: never committed again.
        self.untracked = Untracked.for_store(brain.store)
        # Files whose removal from Git the owner has staged, their hand edits held: planned
        # again when the staging index changes (`_index_stat`), not on every poll.
        self._removal_staged: set[str] = set()
        self._index_stat: tuple[int, int] | None = None
        brain.attach_workdir(self)

    # -- running ----------------------------------------------------------

    def start(self) -> Editor:
        """Watch in a thread; its first pass commits the edits made while the server was down.

        That first pass reads and hashes every note, so it runs in the thread, not
        before the server answers: reads are pinned to commits, and a tool write
        commits the hand edits to its own files first either way.
        """
        if self._thread is None:
            self.events.start()  # before the first pass: an edit during it is a change after it
            self._thread = threading.Thread(target=self._run, name="cortex-editor", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.events.stop()

    def status(self) -> dict[str, Any]:
        held = sorted(set(self.held.values()))
        return {
            "hand_edits": {
                "watching": self.root,
                "debounce_ms": int(self.debounce * 1000),
                "commits": self.commits,
                "last_error": self.last_error,
                "held": held,
                # Files a commit could not put on disk (a read-only folder): retried each poll.
                "unwritten": [f"{p}: {why}" for p, why in sorted(self.store.unwritten.items())],
                "restored": list(self.restored),
            },
            # Each file's last acknowledged write against the head (brain.journal).
            "acknowledged": self.brain.journal.account(self.store),
        }

    def _run(self) -> None:
        try:
            self.check_all()
        except Exception as exc:  # reported; the watching goes on
            self.last_error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            log.warning("first hand-edit pass failed: %s", self.last_error)
        self.first_pass.set()
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                self.poll_once()
            except Exception as exc:  # keep watching; the next pass retries
                self.last_error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                log.warning("hand-edit pass failed: %s", self.last_error)
            spent = time.monotonic() - started
            self._stop.wait(max(self.poll_s, 4 * spent))

    def scan(self) -> dict[str, tuple[int, int, int]]:
        """Stat data of every note file in the tree (regular files only; symlinks are never followed)."""
        out: dict[str, tuple[int, int, int]] = {}
        stack = [("", self.root)]
        while stack:
            rel, folder = stack.pop()
            try:
                entries = os.scandir(folder)
            except OSError:
                continue
            with entries:
                for entry in entries:
                    name = entry.name
                    if name.startswith("."):
                        continue
                    path = rel + name
                    try:
                        path.encode("utf-8")
                        if entry.is_dir(follow_symlinks=False):
                            if not os.path.lexists(os.path.join(entry.path, ".git")):  # not a nested repo
                                stack.append((path + "/", entry.path))
                            continue
                        # Dot names are left out above, folders too: only the name's own rules.
                        if _not_a_note(name, path) or not entry.is_file(follow_symlinks=False):
                            continue
                        st = entry.stat(follow_symlinks=False)
                    except (OSError, UnicodeEncodeError):
                        continue
                    out[path] = (st.st_mtime_ns, st.st_size, st.st_ino)
        return out

    def poll_once(self) -> WriteResult | None:
        """One pass: note what changed; after the debounce, commit it."""
        self._note_untracks()  # first: an untrack by the owner is no write to put back
        self._check_lost()  # before the staging index is synced to a head that lacks the write
        self.store.sync_staging(())  # staging entries a busy index.lock kept back last time, if any
        if self.store.unwritten:  # files a commit could not put on disk: try again
            with self._lock:
                self._catch_up(sorted(self.store.unwritten), {})
        now = self.clock()
        changed: set[str] = set()
        if self._pending or self._scan_due(now):
            now_ns, began = time.time_ns(), time.perf_counter()
            current = self.scan()
            self._scanned = (now, time.perf_counter() - began)
            for path in [p for p in self.untracked.paths if p not in current]:
                self.untracked.drop(path)  # gone from disk: a file made there later is a new note
            changed = {p for p in current.keys() | self._stats.keys() if current.get(p) != self._stats.get(p)}
            self._pending |= {p for p, st in current.items() if now_ns - st[0] < RACY_NS}  # looked at again
            self._stats = current
        if self._removal_staged and self._index_changed():
            changed |= self._removal_staged  # the owner may have committed or undone the removal
        if changed:
            self._pending |= changed | set(self.held)
            self._last_change = now
        if self._pending and now - self._last_change >= self.debounce:
            paths, self._pending = self._pending, set()
            return self.commit_paths(paths)
        if not self._pending and self._page_due(now):
            # The head moved under the watcher (the owner's revert, rebase or commit): INDEX.md
            # written whole again when it no longer matches the notes (issue 62).
            self._page_looked = self.store.head()
            return self.brain.refresh_contents_page()
        return None

    def _scan_due(self, now: float) -> bool:
        """Whether this poll scans the tree: a file event came, or its last scan cost at most
        `SCAN_SHARE` (`SCAN_SHARE_WATCHED` while events flow) of the time since, or of a poll."""
        if self.events.take():
            return True
        at, cost = self._scanned
        share = SCAN_SHARE_WATCHED if self.events.live else SCAN_SHARE
        return cost <= share * max(now - at, self.poll_s)

    def _page_due(self, now: float) -> bool:
        """Whether INDEX.md is to be looked at: a head it was not looked at for has stood
        `PAGE_QUIET_S`, the index that lists its notes is built, and no operation or git
        command of the owner's runs in the tree (read from /proc: last, once a head)."""
        head = self.store.head()
        if head == self._page_looked:
            return False
        if head != self._page_head[0]:
            self._page_head = (head, now)
        if now - self._page_head[1] < PAGE_QUIET_S or self.brain.corpus.built() is None:
            return False
        if self.store.workdir_busy():
            return False
        return self.store.workdir is None or not git_running(self.store.workdir)

    def _index_changed(self) -> bool:
        """Whether Git's staging index file changed since this was last asked."""
        try:
            st = os.stat(self.store.git_dir / "index")
            now: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            now = None
        changed, self._index_stat = now != self._index_stat, now
        return changed

    def _note_untracks(self) -> None:
        """Look at a head the watcher has not seen: the paths it lacks that the head before held
        or a commit since removed (`brain.untracked.dropped`), still on disk, out of the staging
        index and not Cortex's doing (`_not_the_owners`), are the owner's untracked notes;
        paths it holds again are not."""
        head = self.store.head()
        seen = self.untracked.head
        if head is None or head == seen or self.store.workdir_busy():
            return
        found: list[str] = []
        if seen is not None:
            try:
                removed = dropped(self.store, seen, head)  # commit by commit: see brain.untracked
            except (KeyError, ValueError, StoreError):
                removed = set()  # the old head is gone from the repository: nothing to compare
            gone = [
                path
                for path in sorted(removed)
                if not ignored(path)
                and path not in self.store.unwritten
                and self.store.disk_blob(path) is not None
                and not self._not_the_owners(path)
            ]
            if gone:
                staged = self.store.staged(gone)
                found = [p for p in gone if p not in staged]
        for path in found:
            self.untracked.paths[path] = head
            self.held.pop(path, None)
            self._removal_staged.discard(path)
            log.info("%s: untracked by the owner's commit %s; not committed again", path, head[:7])
        for path in [p for p in self.untracked.paths if self.store.blob_at(head, p) is not None]:
            del self.untracked.paths[path]  # back in Git
        self.untracked.head = head
        self.untracked.save()

    def _not_the_owners(self, path: str) -> bool:
        """Whether a head's lack of `path` is no untrack by the owner, by Cortex's last write of
        it: the write deleted it; or made it while a git command ran in the working tree, whose
        commit (and the index it writes back) may be built from an index read before the write;
        or Git's staging index did not take it under the lock (a git command held index.lock),
        so the next commit's index may lack it. Either way the head and the index lack the file
        as after an untrack (the stale-index race `brain.undone` puts back; seen with `git
        commit -a` beside two writers), while the disk holds the write's bytes (else that is
        not put back either, and the untrack is the owner's). Erring this way puts an untrack
        made in that moment back once; the restore is a write of its own, and the owner's next
        untrack stands."""
        writes = self.brain.journal.writes_of(path)
        if not writes:
            return False
        last = writes[0]
        if last.paths.get(path, "") is None:
            return True
        return (last.owner_git or not last.staged) and self.store.disk_blob(path) == last.paths[path]

    def _check_lost(self) -> None:
        """Put back what a hand commit from a stale index took out of an acknowledged write
        (`brain.undone`); nothing while an operation of the owner's is under way."""
        if self.store.workdir_busy():
            return  # the branch's moves are read once the operation ends
        lost: list = []
        if self.store.reflog_size() != self._seen_moves.offset:
            # The reflog, not the head: a write and the reset that took it out can both land
            # between two polls, and the head is then the one seen before.
            moves, self._seen_moves = self.store.moves_after(self._seen_moves)
            lost = rewound_writes(self.brain, moves)
            rewound = bool(lost)
            lost += undone_writes(self.brain, moves)
            if lost:
                self._note_untracks()  # the head may have moved on since the poll's first look
                lost = [one for one in lost if one.path not in self.untracked.paths]  # the owner's decision
        else:
            rewound = False
        if not lost:
            return
        result = restore(self.brain, lost)  # takes Git's index lock, then this watcher's
        if result is not None:
            paths = ", ".join(sorted({one.path for one in lost}))
            writes = ", ".join(sorted({one.entry.sha[:7] for one in lost}))
            how = "a reset to HEAD (git stash)" if rewound else "a hand commit built from an index that lacked it"
            said = f"{paths}: {how} took back the write {writes}; restored in {result.sha[:7]}"
            self.restored = [*self.restored, said][-RESTORED_SHOWN:]
            self.last_error = said
            log.warning("%s", said)

    # -- committing ---------------------------------------------------------

    def check_all(self) -> WriteResult | None:
        """Compare every note on disk and in the head (start-up: edits made while the server was down)."""
        with self._lock:
            self._note_untracks()  # those committed while the server was down, from the head last seen
            self._stats = self.scan()
            head = self.store.head()
            in_head = {p for p in (self.store.entries(head) if head else {}) if not ignored(p)}
            for path in in_head - set(self._stats):
                self._base.setdefault(
                    path, self.store.blob_at(head, path) if head else None
                )  # deleted by hand: a deletion
            return self.commit_paths(set(self._stats) | in_head)

    def before_write(self, paths: Iterable[str]) -> None:
        """Brain's hook: commit hand edits to `paths` before a tool writes them."""
        self.commit_paths([p for p in paths if not ignored(p)])

    def after_write(self, result: WriteResult) -> dict[str, str | None]:
        """Brain's hook: put a tool write's files on disk where the disk still holds its base;
        the blob each file on disk now holds (None: no file), of those it looked at."""
        with self._lock:
            return self._catch_up(list(result.new_blobs), result.old_blobs)

    def commit_paths(self, paths: Iterable[str]) -> WriteResult | None:
        """Commit the hand edits among `paths` as one commit; None when there are none."""
        paths = sorted(p for p in set(paths) if not ignored(p))
        paths = self._hold_bad_names(paths)
        if not paths:
            return None
        # Looked at first without Git's index lock, as a tool write does (`Brain._writing`):
        # taking it on every poll of a stopped merge failed the owner's own `git add` that
        # resolves it (1 in 10 runs of test_a_merge_with_a_conflict_is_waited_for).
        if self._wait_for_owner(paths):
            return None
        # Git's index lock first, then the watcher's: the order a tool write takes them in.
        with self.store.staging_held(), self._lock:
            if self._wait_for_owner(paths):
                return None
            for _ in range(20):
                head = self.store.head()
                plan = self._plan(paths, View(self.store, head))
                self._hold_collisions(plan, paths)
                self.held.update(plan.waiting)
                if not plan.out:
                    return None

                def change(view: View, plan: _Plan = plan) -> dict[str, bytes | None]:
                    if view.sha != plan.head:
                        raise _Moved()
                    return dict(plan.out)

                try:
                    result = self.brain.commit_change(
                        list(plan.out), change, _subject(plan), HAND, _body(plan), sync=False, author=self.author
                    )
                except _Moved:
                    continue
                except StoreError as exc:
                    if "nothing to commit" in str(exc):
                        return None
                    raise
                self.commits += 1
                self._after_commit(plan, result)
                return result
            raise StoreError("the branch kept moving while committing hand edits")

    def _wait_for_owner(self, paths: list[str]) -> bool:
        """Whether hand edits must wait (a merge, a rebase, another branch checked out); then
        `paths` are tried again after it, and /healthz says why."""
        busy = self.store.workdir_busy()
        if busy:
            self._pending |= set(paths)
            self.last_error = f"hand edits wait: {busy}"
        return busy is not None

    def _hold_bad_names(self, paths: list[str]) -> list[str]:
        """Paths whose name the path rule refuses (the one rule tools and guests obey) are
        not committed while the file exists; the reason is held and reported. Deleting
        such a file is committed as usual."""
        keep = []
        for path in paths:
            try:
                check_path(path)
            except BadInput as exc:
                target = self.store.workdir_file(path)
                if target is not None and target.exists():
                    why = f"{path!r} is not committed: {exc}; rename the file"
                    if self.held.get(path) != why:
                        self.last_error = why
                        log.warning("hand edit not committed: %s", why)
                    self.held[path] = why
                    continue
            keep.append(path)
        return keep

    def _hold_collisions(self, plan: _Plan, paths: list[str]) -> None:
        """Take out of `plan` the edits that would put a folder where a note is (or the reverse).

        On disk a person can delete `notes/v.md` and make a folder `notes/v.md/`;
        committing that would delete a note through a path nobody wrote. The whole
        switch (both sides) waits, reported in /healthz and the log, until one side
        is renamed; the rest of the edit is committed as usual.
        """
        for path in paths:
            self.held.pop(path, None)
        adds = {p: d for p, d in plan.out.items() if d is not None}
        held: dict[str, str] = {}
        for path, data in adds.items():
            why = self.store.collision(plan.head, {path: data})
            if why:
                held[path] = why
        for path in [p for p, d in plan.out.items() if d is None]:
            for add, why in list(held.items()):
                if add.startswith(path + "/") or path.startswith(add + "/"):
                    held[path] = why
        for path in held:
            plan.out.pop(path, None)
            plan.disk.pop(path, None)
        new = {p: w for p, w in held.items() if self.held.get(p) != w}
        self.held.update(held)
        if new:
            why = next(iter(new.values())).replace("nothing was committed", "the hand edit waits")
            self.last_error = why
            log.warning("hand edit not committed: %s", why)

    def _on_disk(self, path: str) -> tuple[bytes | None, str | None] | None:
        """(bytes, Git blob id) of the working-tree file, (None, None) if absent;
        None when the path may not be read (a symlink or an escape)."""
        target = self.store.workdir_file(path)
        if target is None:
            return None
        disk = read_file(target)
        return disk, (None if disk is None else hash_blob(disk))

    def _plan(self, paths: list[str], view: View) -> _Plan:
        plan = _Plan(view.sha)
        staged: set[str] | None = None  # the staging index, read once, only when needed

        def in_staging(path: str) -> bool:
            nonlocal staged
            if staged is None:
                staged = self.store.staged(paths)
            return path in staged

        for path in paths:
            self._removal_staged.discard(path)
            on_disk = self._on_disk(path)
            if on_disk is None:
                continue
            disk, disk_blob = on_disk
            theirs_blob = view.blob_of(path)
            if disk_blob == theirs_blob:
                self._base[path] = theirs_blob
                self.store.unwritten.pop(path, None)  # mended by hand
                continue
            if path in self.untracked.paths:
                if theirs_blob is None and not in_staging(path):
                    continue  # the owner took it out of Git: it stays out
                self.untracked.drop(path)  # put back by the owner (`git add`)
            if theirs_blob is not None and disk is not None and not in_staging(path):
                # The owner staged its removal (`git rm --cached`): committing the edit would put
                # it back in the index under them. It waits for their commit or their undo.
                plan.waiting[path] = (
                    f"{path}: its removal from Git is staged (git rm --cached); its hand edits wait "
                    f"until you commit that, or undo it (git restore --staged {path})"
                )
                self._removal_staged.add(path)
                continue
            base = self._base.get(path, _UNKNOWN)
            if disk_blob == base:
                continue  # the disk has not caught up with a server write yet
            if disk is None and base is _UNKNOWN:
                continue  # never seen on disk: a server create not yet synced
            if disk is not None and self.store.is_ignored(path):
                continue  # .gitignore says this file is not part of the brain
            plan.disk[path] = disk
            if base is _UNKNOWN or base == theirs_blob:
                plan.out[path] = disk
                continue
            theirs = view.read(path)
            merged = None
            # A copy Cortex could not update: the person never saw the commit, so their edit
            # must not take it back out; a conflict keeps both sides.
            stale = path in self.store.unwritten
            if disk is not None and theirs is not None:
                base_bytes = self.store.blob_bytes(base) if isinstance(base, str) else b""
                merged = self.store.merge_text(base_bytes, disk, theirs, union=stale)
            if merged is None and stale:
                plan.waiting[path] = f"{path}: a hand edit of a copy Cortex could not update waits (no merge)"
                plan.disk.pop(path, None)
                continue
            if merged is None:  # deleted on one side, or the same lines changed: the hand edit wins, said so
                plan.out[path] = disk
                plan.overwrote.append(path)
            else:
                plan.out[path] = merged
                plan.merged.append(path)
        return plan

    def _after_commit(self, plan: _Plan, result: WriteResult) -> None:
        for path, disk in plan.disk.items():
            new = result.new_blobs.get(path)
            if path in plan.merged and plan.out[path] != disk:
                written = self.store.update_workdir({path: plan.out[path]}, {path: disk})
                # Not written: the person saved again; merge that save against what they had.
                self._base[path] = new if path in written else self.store.write_blob(disk or b"")
            else:
                self._base[path] = new
        self._catch_up(["INDEX.md"], result.old_blobs)
        self.store.sync_staging(list(plan.out))

    def _catch_up(self, paths: list[str], old_blobs: dict[str, str | None]) -> dict[str, str | None]:
        """Write the head's bytes for `paths` where the disk holds the base (or the commit's
        parent), all in one `update_workdir` (Git's staging index written once); the blob each
        path's file now holds, for those read or written."""
        head = self.store.head()
        if head is None:
            return {}
        held: dict[str, str | None] = {}
        writes: dict[str, bytes | None] = {}
        expected: dict[str, bytes | None] = {}
        wanted: dict[str, str | None] = {}
        right: list[str] = []
        for path in paths:
            on_disk = self._on_disk(path)
            if on_disk is None:
                continue
            disk, disk_blob = on_disk
            held[path] = disk_blob
            want = self.store.blob_at(head, path)
            if disk_blob == want:
                self._base[path] = want
                self.store.unwritten.pop(path, None)
                # The file is right, the index may not be (a restore of a file the owner's
                # stale index dropped): left out, each hand commit took the file out again.
                right.append(path)
                continue
            base = self._base.get(path, _UNKNOWN)
            if disk_blob != base and disk_blob != old_blobs.get(path, _UNKNOWN):
                continue  # a hand edit: the watcher commits it (merged with this write)
            writes[path] = None if want is None else self.store.blob_bytes(want)
            expected[path], wanted[path] = disk, want
        if writes or right:
            written = self.store.update_workdir(writes, expected, also_stage=right)
            for path in writes:
                if path in written:
                    self._base[path] = held[path] = wanted[path]
                else:
                    del held[path]  # not written (a hand edit since, a read-only folder): read again
        return held


def _names(paths: list[str]) -> str:
    return ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


def _subject(plan: _Plan) -> str:
    return f"editor: hand edit {_names(sorted(plan.out))}"


def _body(plan: _Plan) -> str:
    lines = []
    if plan.merged:
        lines.append(f"Merged with the server's newer change to {_names(plan.merged)} (both kept).")
    if plan.overwrote:
        lines.append(
            f"Conflicting edit: this replaces the server's change at {(plan.head or '')[:12]} "
            f"to {_names(plan.overwrote)}; that version stays in history."
        )
    return "\n".join(lines)

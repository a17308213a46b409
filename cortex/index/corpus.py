"""Corpus@SHA: the snapshot of the branch head (`cortex.index.snapshot`: every note of one
commit, parsed, with its lexical index), built or loaded once, then kept up with the head.

A new snapshot is built from the previous one by a tree diff, parsing only the
changed blobs, so the cost of a one-note commit does not grow with the brain.
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime as dt
import gc
import io
import logging
import threading
import time as _time
from collections.abc import Callable, Collection, Hashable, Iterator
from typing import Protocol, TypeVar

from cortex.errors import NotReady
from cortex.index.bm25 import Index, SearchResult, idf
from cortex.index.bm25_file import save_index
from cortex.index.build_pool import read_notes
from cortex.index.builder import IndexBuilder
from cortex.index.fields import index_note
from cortex.index.masked import MaskedIndexes
from cortex.index.note_text import read_lazily
from cortex.index.snapshot import Snapshot
from cortex.index.tokenize import tokenize
from cortex.notes.note import Note, decode, parse_note
from cortex.notes.paths import is_note_path
from cortex.store.git import GitStore
from cortex.store.types import Change

__all__ = [
    "BULK_NOTES",
    "DATE_WALK_LIMIT",
    "FIRST_READ_WAIT_S",
    "LOOSE_LIMIT",
    "Corpus",
    "SavedSnapshot",
    "gc_paused",
    "is_bulk",
    "release_freed_memory",
]

T = TypeVar("T")

# How far back a cold start looks for each note's last-change time. Beyond this
# many first-parent commits a note is dated by the oldest commit seen ("on or
# before"), so a long history cannot slow start-up.
DATE_WALK_LIMIT = 300
# A commit touching more notes than this is an import or a mass edit (a vault's
# first commit, a find-and-replace over everything), not a change a person made to
# each note: it gives no note a "last real change". So is a root commit. A real
# vault's import touched all 722 notes and dated every router row the import day.
BULK_NOTES = 50
# Notes changed since the index's last compaction are kept one dict each, which
# costs ~10x the compact form per entry; past this many (and a quarter of the
# brain) the index is compacted, which costs about a build's last step.
LOOSE_LIMIT = 500
# How long brain_read (and the console's note page) waits for the first build at start-up
# before saying its links and backlinks are still being read: a brain of a few hundred notes
# is built well within it; a first build of 10,000 notes (4-5 s) is not, and is said.
FIRST_READ_WAIT_S = 2.0


def is_bulk(root: bool, notes_touched: int) -> bool:
    """Whether a commit dates none of its notes' "last real change" (see BULK_NOTES): a
    root commit, or one touching more than BULK_NOTES notes."""
    return root or notes_touched > BULK_NOTES


def release_freed_memory() -> None:
    """Hand the heap a build freed back to the system (glibc keeps it otherwise).

    A build makes and drops a token list and a counter per note; at 10,000
    synthetic notes the process kept 42 MB of that freed heap until this call.
    A no-op where the C library has no malloc_trim.
    """
    with contextlib.suppress(AttributeError, OSError):
        ctypes.CDLL(None).malloc_trim(0)


_gc_lock = threading.Lock()
_gc_pausers = 0
_gc_was_on = False


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a brain's notes are loaded or built.

    Each collection scans every object made so far, and a load makes millions: at 50,000
    notes the saved index's load took 2.65 s with the collector and 1.15 s without. Cycles
    made meanwhile are collected after. Nested and threaded uses count; the last one out
    turns it back on, if it was on.
    """
    global _gc_pausers, _gc_was_on
    with _gc_lock:
        if _gc_pausers == 0:
            _gc_was_on = gc.isenabled()
            gc.disable()
        _gc_pausers += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pausers -= 1
            if _gc_pausers == 0 and _gc_was_on:
                gc.enable()


class SavedSnapshot(Protocol):
    """Where the latest snapshot outlives the process (cortex.index.saved.IndexFile)."""

    def load(self) -> Snapshot | None:
        """The saved snapshot of this brain, or None when there is none fit to use (it says why)."""

    def refuse(self, reason: str) -> None:
        """A loaded snapshot cannot be advanced to the head: say why (a full build follows)."""


class Corpus:
    """Keeps the latest snapshot and advances it when the branch head moves.

    Locks, outermost first, and why there are three:

    * `_build_lock`: one build or advance of the latest snapshot at a time. A
      build reads Git call by call, so reads and writes interleave with it
      instead of waiting for the whole of a large brain.
    * `_lock`: the index's queries and its moves to a new head, held briefly and
      never around a Git read.
    * the store's lock, innermost, held by every Git call and by a write's
      compare-and-swap. A write that needs the notes inside it uses `peek`,
      which never waits for the other two: no cycle, so no deadlock.
    """

    def __init__(self, store: GitStore, saved: SavedSnapshot | None = None, workers: int | None = None):
        self.store = store
        # Processes a full build parses and indexes notes in: None picks by brain size
        # and cores (build_workers), 1 keeps it in this process.
        self.workers = workers
        # The first snapshot is loaded from here and advanced by tree diff when it can be.
        self.saved = saved
        self._loading_saved = False  # for /healthz while the saved index is read
        self._latest: Snapshot | None = None
        self._lock = threading.RLock()
        self._build_lock = threading.Lock()
        self._old: dict[str, Snapshot] = {}
        # Told (notes done, notes in all) during a full build that takes over a second:
        # `cortex serve` prints it, so a large brain's first start is not silent.
        self.progress: Callable[[int, int], None] | None = None
        self._reading: tuple[int, int] | None = None  # (files read, files in all) while building
        self.progress_every_s = 1.0  # `cortex reindex` draws a bar more often
        self._masked = MaskedIndexes()  # the notes as guests see them (`masked=True` below)
        self._first_built = threading.Event()  # set once the first snapshot is published
        # How long a read that needs every note (links, backlinks) waits for the first build.
        self.first_read_wait = FIRST_READ_WAIT_S

    def latest(self, wait: float | None = None) -> Snapshot | None:
        """The snapshot of the current head (None for an empty repository).

        Builds or advances it when needed; `wait` bounds how long to wait for a
        build another thread is running (NotReady when it runs out).
        """
        head = self.store.head()
        if head is None:
            return None
        snap = self._latest
        if snap is not None and snap.sha == head:
            return snap
        if not self._build_lock.acquire(timeout=-1 if wait is None else wait):
            raise NotReady(self.not_ready())
        try:
            return self._catch_up()
        finally:
            self._build_lock.release()

    def _catch_up(self) -> Snapshot | None:
        head = self.store.head()  # it may have moved while this thread waited
        if head is None:
            return None
        snap = self._latest
        if snap is None:
            snap = self._first(head)
            with self._lock:
                self._latest = snap
            self._first_built.set()
        elif snap.sha != head:
            snap = self._advance(snap, head)
        return snap

    def peek(self, sha: str) -> Snapshot:
        """The notes of commit `sha` for a caller that may hold the store's lock (a write).

        Never waits for a build: when one is running, the notes are parsed from the
        last snapshot and a tree diff (or, before any, from every blob), without an
        index. Only `notes`, `blobs` and `link_map` of the result are to be used.
        """
        snap = self._latest
        if snap is not None and snap.sha == sha:
            return snap
        if self._build_lock.acquire(blocking=False):
            try:
                snap = self._catch_up()
            finally:
                self._build_lock.release()
            if snap is not None and snap.sha == sha:
                return snap
        base = self._latest
        if base is None:
            return self._build(sha, date_walk=False, indexed=False)
        notes, blobs = dict(base.notes), dict(base.blobs)
        for ch in self.store.diff(base.sha, sha):
            if not is_note_path(ch.path):
                continue
            if ch.new_blob is None:
                notes.pop(ch.path, None)
                blobs.pop(ch.path, None)
            else:
                notes[ch.path] = parse_note(ch.path, decode(self.store.blob_bytes(ch.new_blob)))
                blobs[ch.path] = ch.new_blob
        time = self.store.commit_time(sha)
        return Snapshot(sha, time, notes, blobs, {p: time for p in notes}, Index())

    def warm(self) -> None:
        """Start building the latest snapshot in a background thread, unless one is under way."""
        if self._latest is None and not self._build_lock.locked():
            threading.Thread(target=self._warm, name="cortex-index", daemon=True).start()

    def _warm(self) -> None:
        try:
            self.latest()
        except Exception:  # noqa: BLE001 - a failed warm-up leaves the first search to build and report
            logging.getLogger(__name__).exception("index build failed")

    def not_ready(self) -> str:
        """What a search that could not wait is told."""
        reading = self._reading
        done = f" ({reading[0]:,} of {reading[1]:,} files read)" if reading else ""
        return (
            f"the search index is still being built{done}; try again shortly. "
            "brain_read, brain_history and writes work meanwhile"
        )

    def state(self) -> dict[str, object]:
        """For /healthz: whether search is ready, and how far a build has got."""
        if self._latest is not None:
            return {"index": "ready", "notes": len(self._latest.notes)}
        if self._loading_saved:
            return {"index": "loading the saved index"}
        reading = self._reading
        if reading is None:
            return {"index": "not built"}
        return {"index": "building", "files_read": reading[0], "files": reading[1]}

    def index_bytes(self) -> tuple[Snapshot, bytes] | None:
        """The latest snapshot and its index as `save_index` writes it, under the index's lock:
        the index moves on with the head (and `save_index` may compact it), so nothing may change it
        meanwhile. Searches wait for this; Git reads and writes do not."""
        with self._lock:
            snap = self._latest
            if snap is None:
                return None
            buf = io.BytesIO()
            save_index(snap.index, buf)
            return snap, buf.getvalue()

    def built(self) -> Snapshot | None:
        """The last snapshot built, without building or advancing one."""
        return self._latest

    def built_within(self, wait: float | None = None) -> Snapshot | None:
        """The last snapshot built; before the first, waits up to `wait` seconds (default
        `first_read_wait`) for the build start-up began (`warm`), and never starts one: None
        when it is still running, and the caller says so (issue 62: backlinks read at once
        after a start were an empty list, right a second later)."""
        wait = self.first_read_wait if wait is None else wait
        if self._latest is None and wait > 0:
            self._first_built.wait(wait)
        return self._latest

    def at(self, sha: str) -> Snapshot:
        """A snapshot of any commit; older ones are built in full and kept briefly."""
        latest = self.latest()
        if latest is not None and latest.sha == sha:
            return latest
        with self._lock:
            old = self._old.get(sha)
        if old is not None:
            return old
        snap = self._build(sha, date_walk=False)  # outside every lock: as_of reads are rare
        with self._lock:
            return self._keep_old(snap)

    def _keep_old(self, snap: Snapshot) -> Snapshot:
        """Keep `snap` among the old snapshots (under `_lock`): two at most, to keep memory flat."""
        if snap.sha not in self._old and len(self._old) >= 2:
            self._old.pop(next(iter(self._old)))
        return self._old.setdefault(snap.sha, snap)

    def _first(self, head: str) -> Snapshot:
        """The first snapshot: the saved one advanced to `head` when it can be, else a full build."""
        with gc_paused():
            return self._load_or_build(head)

    def _load_or_build(self, head: str) -> Snapshot:
        # Under `_build_lock` only: reads and writes go on while the file is read and decoded.
        saved = None
        if self.saved is not None:
            self._loading_saved = True
            try:
                saved = self.saved.load()
            finally:
                self._loading_saved = False
        if saved is not None:
            assert self.saved is not None
            read_lazily(self.store, saved.notes, saved.blobs)  # a saved note keeps no text
            try:
                resumed = self._resume(saved, head)
            except Exception as exc:  # noqa: BLE001 - e.g. a commit this repository never had
                self.saved.refuse(f"it could not be advanced to the head ({type(exc).__name__}: {exc})")
                resumed = None
            if resumed is not None:
                return resumed
        return self._build(head)

    def _resume(self, saved: Snapshot, head: str) -> Snapshot | None:
        """`saved` advanced to `head`, dated as a full build would date it; None when it cannot be.

        Notes, blobs and the index follow from one tree diff. The dates need the commits
        between: a note is dated by the newest of them that touched it (and its last real
        change by the newest non-bulk one), as `_dates` walks them; notes no commit in
        the range touched keep their saved dates. Within DATE_WALK_LIMIT commits this is
        what `_build` gives: a property test checks it over random linear histories, and
        a test over a merged branch (whose notes a merge dates, as `_dates` does). Two
        sides of a merge that both touched one note, and the merge not, could be walked
        in another order than `_build`'s walk takes them (not seen in tests).
        """
        if saved.sha == head:
            return saved
        if not self.store.is_ancestor(saved.sha, head):
            assert self.saved is not None
            self.saved.refuse(f"its commit {saved.sha[:12]} is no longer in the history of the head")
            return None
        between = self.store.commits_between(saved.sha, head)[::-1]  # newest first
        cut = len(between) > DATE_WALK_LIMIT
        between = between[:DATE_WALK_LIMIT]
        snap = self._advance(saved, head, publish=False)  # published by `_catch_up`, dated
        paths = set(snap.notes)
        changed, real = dict(snap.changed), {p: t for p, t in saved.real.items() if p in paths}
        oldest = snap.time
        seen_changed: set[str] = set()
        seen_real: set[str] = set()
        for sha in between:
            info = self.store.commit_info(sha)
            oldest = info.time
            touched = [f for f in info.files if f in paths]
            bulk = is_bulk(not info.parents, len(touched))
            for f in touched:
                if f not in seen_changed:
                    seen_changed.add(f)
                    changed[f] = info.time
                if not bulk and f not in seen_real:
                    seen_real.add(f)
                    real[f] = info.time
        # A note the diff changed but no walked commit touched (the range was longer than
        # the walk): "on or before" the oldest commit walked, as `_dates` says it.
        for ch in self.store.diff(saved.sha, head) if cut else ():
            if ch.path in paths and ch.path not in seen_changed:
                changed[ch.path] = oldest
        snap.changed, snap.real = changed, real
        return snap

    def _build(self, sha: str, date_walk: bool = True, indexed: bool = True) -> Snapshot:
        entries = self.store.entries(sha)
        items = [(path, blob) for path, blob in entries.items() if is_note_path(path)]
        # Progress is told in files, as /healthz says it: the files up to each note.
        files_to = [n for n, path in enumerate(entries, 1) if is_note_path(path)]
        started = _time.monotonic()
        last = [started]

        def report(notes_done: int) -> None:
            done = files_to[notes_done - 1]
            self._reading = (done, len(entries))
            if self.progress is not None and _time.monotonic() - last[0] > self.progress_every_s:
                self.progress(done, len(entries))
                last[0] = _time.monotonic()

        blobs = dict(items)
        if indexed:
            notes, builder = read_notes(self.store, items, self.workers, report if date_walk else lambda done: None)
            index = builder.finish()
            read_lazily(self.store, notes, blobs)
        else:
            notes = {path: parse_note(path, decode(self.store.blob_bytes(blob))) for path, blob in items}
            index = Index()
        release_freed_memory()
        if self.progress is not None and date_walk and last[0] != started:
            self.progress(len(entries), len(entries))
        time = self.store.commit_time(sha)
        if date_walk:
            changed, real = self._dates(sha, set(notes))
        else:
            changed, real = {p: time for p in notes}, {}
        return Snapshot(sha, time, notes, blobs, changed, index, real)

    def _dates(self, sha: str, paths: set[str]) -> tuple[dict[str, dt.datetime], dict[str, dt.datetime]]:
        """Last-change time per note, and last real change (see BULK_NOTES), from a bounded first-parent walk."""
        commits, _ = self.store.history(None, limit=DATE_WALK_LIMIT, before=None)
        dates: dict[str, dt.datetime] = {}
        real: dict[str, dt.datetime] = {}
        oldest = self.store.commit_time(sha)
        for info in commits:
            oldest = info.time
            touched = [f for f in info.files if f in paths]
            bulk = is_bulk(not info.parents, len(touched))
            for f in touched:
                dates.setdefault(f, info.time)
                if not bulk:
                    real.setdefault(f, info.time)
            if len(real) == len(paths):
                break
        return {p: dates.get(p, oldest) for p in paths}, real

    def follow(
        self, sha: str, parent: str | None, changes: list[Change], parsed: dict[str, Note] | None = None
    ) -> None:
        """Move the latest snapshot onto a commit this process just made from it (`changes`
        are the commit's own), without a tree diff. `parsed`: notes the writer already parsed
        from the bytes it committed, by path; they are not read back and parsed again.

        A write's next write (or read) would otherwise diff the two trees: 7 ms of a 30 ms
        write at 10,000 notes, all in one folder. Skipped when a build or advance is under
        way or the snapshot is elsewhere: the next read diffs as usual.
        """
        snap = self._latest
        if snap is None or snap.sha != parent or not self._build_lock.acquire(blocking=False):
            return
        try:
            if self._latest is snap:
                self._advance(snap, sha, changes=changes, parsed=parsed)
        finally:
            self._build_lock.release()

    def _advance(
        self,
        prev: Snapshot,
        head: str,
        publish: bool = True,
        changes: list[Change] | None = None,
        parsed: dict[str, Note] | None = None,
    ) -> Snapshot:
        """The snapshot of `head`, from `prev` and their tree diff (or the given `changes`,
        with the notes in `parsed` already parsed from their new blobs); publishes it unless
        told not to (a saved snapshot is published once its dates are set, by `_catch_up`)."""
        if changes is None:
            changes = self.store.diff(prev.sha, head)
        changes = [ch for ch in changes if is_note_path(ch.path)]
        time = self.store.commit_time(head)
        parsed = {
            ch.path: parse_note(ch.path, decode(self.store.blob_bytes(ch.new_blob)))
            if parsed is None or ch.path not in parsed
            else parsed[ch.path]
            for ch in changes
            if ch.new_blob is not None
        }
        notes = dict(prev.notes)
        blobs = dict(prev.blobs)
        changed = dict(prev.changed)
        real = dict(prev.real)
        bulk = is_bulk(False, len(changes))  # `head` descends from `prev`: never a root
        with self._lock:  # the index moves on with the head: the previous snapshot gives it up
            index = prev.index
            for ch in changes:
                if ch.new_blob is None:
                    notes.pop(ch.path, None)
                    blobs.pop(ch.path, None)
                    changed.pop(ch.path, None)
                    real.pop(ch.path, None)
                    index.remove(ch.path)
                else:
                    note = notes[ch.path] = parsed[ch.path]
                    blobs[ch.path] = ch.new_blob
                    changed[ch.path] = time
                    if not bulk:
                        real[ch.path] = time
                    index_note(index, note)
            read_lazily(self.store, parsed, {ch.path: ch.new_blob for ch in changes if ch.new_blob is not None})
            if index.loose > max(LOOSE_LIMIT, len(index) // 4):
                index.compact()
            prev.index = Index()  # an old snapshot must never search with a newer index
            snap = Snapshot(head, time, notes, blobs, changed, index, real)
            if all(ch.new_blob is not None and ch.path in prev.notes for ch in changes):
                snap.relinked(prev, {ch.path for ch in changes})
            if publish:
                self._latest = snap
        return snap

    def index_for(self, snap: Snapshot) -> Index:
        """The index matching `snap` (for a caller that queries it under `_lock` or alone)."""
        return self._query(snap, lambda index: index)

    def _rebuilt(self, snap: Snapshot) -> Index:
        """A fresh index of `snap`, once it is no longer the latest: built outside `_lock`,
        because the notes' text is read from Git and a write may hold the store's lock
        while it waits for `_lock` (see the class docstring). Nothing changes it after."""
        builder = IndexBuilder()
        for note in snap.notes.values():
            index_note(builder, note)
        index = builder.finish()
        with self._lock:
            snap.index = index
            self._keep_old(snap)
        return index

    def _query(self, snap: Snapshot, ask: Callable[[Index], T], masked: bool = False) -> T:
        """`ask` of `snap`'s index, under `_lock` while that index can move with the head.

        `masked`: of the index of the notes as replies show them, credentials masked (a
        guest's view, `cortex.index.masked`); a masked copy changes no more, so it is asked
        without the lock. Where masking changes no note, that is the stored index."""
        if masked:
            index = self._masked.index(snap, lambda make: self._query(snap, make))
            if index is not None:
                return ask(index)
        with self._lock:
            if self._latest is snap or snap.sha in self._old:
                return ask(snap.index)
        return ask(self._rebuilt(snap))

    def search(
        self,
        snap: Snapshot,
        query: str | tuple[str, ...],
        k: int,
        allow: Callable[[str], bool] | None = None,
        within: Collection[str] | None = None,
        allow_key: Hashable | None = None,
        reach: tuple[Callable[[str], bool], Hashable] | None = None,
        masked: bool = False,
    ) -> SearchResult:
        """BM25 search of `snap`, under the lock so the index cannot move mid-query (see
        `Index.search_tokens` for `allow_key` and `reach`; `_query` for `masked`). `query`:
        its text, or its tokens when they are already had (an ask's `Question.tokens`)."""
        tokens = tokenize(query) if isinstance(query, str) else list(query)
        return self._query(snap, lambda index: index.search_tokens(tokens, k, allow, within, allow_key, reach), masked)

    def idf(self, snap: Snapshot, terms: set[str]) -> dict[str, float]:
        """Each of `terms` the index knows, with its IDF in `snap` (rarer weighs more)."""
        return self._query(snap, lambda index: {t: idf(len(index), index.df(t)) for t in terms if index.df(t)})

    def with_index(self, snap: Snapshot, ask: Callable[[Index], T]) -> T:
        """`ask(index)` of `snap`'s index, held still while it runs (see `_query`)."""
        return self._query(snap, ask)

    def matching(
        self, snap: Snapshot, terms: set[str], within: set[str] | None = None, masked: bool = False
    ) -> set[str]:
        """Notes of `snap` holding at least one of `terms` (of `within` only, when given; as
        guests see them, when `masked`)."""
        return self._query(snap, lambda index: index.matching_tokens(terms, within), masked)

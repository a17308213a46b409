"""Corpus@SHA: every note of one commit, parsed, with its lexical index.

A new snapshot is built from the previous one by a tree diff, parsing only the
changed blobs, so the cost of a one-note commit does not grow with the brain.
"""

from __future__ import annotations

import datetime as dt
import time as _time
from dataclasses import dataclass, field
from typing import Callable

from .gitstore import GitStore
from .notes import Note, parse_note
from .search import Index

# How far back a cold start looks for each note's last-change time. Beyond this
# many first-parent commits a note is dated by the oldest commit seen ("on or
# before"), so a long history cannot slow start-up.
DATE_WALK_LIMIT = 300


def is_note_path(path: str) -> bool:
    """Notes are Markdown files outside the machine folder; INDEX.md is generated."""
    return path.endswith(".md") and path != "INDEX.md" and not path.startswith(".cortex/")


def in_archive(path: str) -> bool:
    return path.startswith("archive/")


def is_live(note: Note, today: dt.date) -> bool:
    """The live-note rule: outside archive/ and not retired today. Search, ask and the router use it."""
    return not in_archive(note.path) and not note.is_retired(today)


def index_fields(note: Note) -> dict[str, str]:
    return {
        "path": note.path.replace("/", " ").removesuffix(".md"),
        "title": note.title,
        "headings": "\n".join(note.headings),
        "body": note.body,
    }


def decode(data: bytes) -> str:
    # Hand-made commits can hold any bytes; replace rather than fail the whole brain.
    return data.decode("utf-8", errors="replace")


@dataclass
class Snapshot:
    """The notes of one commit. `index` is only trusted while this is the latest."""

    sha: str
    time: dt.datetime
    notes: dict[str, Note]
    blobs: dict[str, str]
    changed: dict[str, dt.datetime]
    index: Index = field(repr=False)

    def live(self, path: str, today: dt.date) -> bool:
        note = self.notes.get(path)
        return note is not None and is_live(note, today)


class Corpus:
    """Keeps the latest snapshot and advances it when the branch head moves."""

    def __init__(self, store: GitStore):
        self.store = store
        self._latest: Snapshot | None = None
        # The store's own lock: one lock for Git and corpus means no lock-order
        # deadlock between a write (store, then corpus) and a read (the reverse).
        self._lock = store.lock
        self._old: dict[str, Snapshot] = {}
        # Told (notes done, notes in all) during a full build that takes over a second:
        # `cortex serve` prints it, so a large brain's first start is not silent.
        self.progress: Callable[[int, int], None] | None = None

    def latest(self) -> Snapshot | None:
        """The snapshot of the current head (None for an empty repository)."""
        head = self.store.head()
        if head is None:
            return None
        with self._lock:
            if self._latest is None:
                self._latest = self._build(head)
            elif self._latest.sha != head:
                self._latest = self._advance(self._latest, head)
            return self._latest

    def built(self) -> Snapshot | None:
        """The last snapshot built, without building or advancing one."""
        return self._latest

    def at(self, sha: str) -> Snapshot:
        """A snapshot of any commit; older ones are built in full and kept briefly."""
        with self._lock:
            latest = self.latest()
            if latest is not None and latest.sha == sha:
                return latest
            if sha not in self._old:
                if len(self._old) >= 2:  # as_of reads are rare; keep memory flat
                    self._old.pop(next(iter(self._old)))
                self._old[sha] = self._build(sha, date_walk=False)
            return self._old[sha]

    def _build(self, sha: str, date_walk: bool = True) -> Snapshot:
        entries = self.store.entries(sha)
        notes: dict[str, Note] = {}
        blobs: dict[str, str] = {}
        index = Index()
        started = last = _time.monotonic()
        for done, (path, blob) in enumerate(entries.items(), 1):
            if self.progress is not None and _time.monotonic() - last > 1.0:
                self.progress(done, len(entries))
                last = _time.monotonic()
            if not is_note_path(path):
                continue
            note = parse_note(path, decode(self.store.blob_bytes(blob)))
            notes[path] = note
            blobs[path] = blob
            index.add(path, index_fields(note))
        if self.progress is not None and last != started:
            self.progress(len(entries), len(entries))
        time = self.store.commit_time(sha)
        changed = self._dates(sha, set(notes)) if date_walk else {p: time for p in notes}
        return Snapshot(sha, time, notes, blobs, changed, index)

    def _dates(self, sha: str, paths: set[str]) -> dict[str, dt.datetime]:
        """Last-change time per note, from a bounded first-parent walk."""
        commits, _ = self.store.history(None, limit=DATE_WALK_LIMIT, before=None)
        dates: dict[str, dt.datetime] = {}
        oldest = self.store.commit_time(sha)
        for info in commits:
            oldest = info.time
            for f in info.files:
                if f in paths and f not in dates:
                    dates[f] = info.time
            if len(dates) == len(paths):
                break
        return {p: dates.get(p, oldest) for p in paths}

    def _advance(self, prev: Snapshot, head: str) -> Snapshot:
        changes = self.store.diff(prev.sha, head)
        notes = dict(prev.notes)
        blobs = dict(prev.blobs)
        changed = dict(prev.changed)
        index = prev.index  # moves on with the head: the previous snapshot gives it up
        time = self.store.commit_time(head)
        for ch in changes:
            if not is_note_path(ch.path):
                continue
            if ch.new_blob is None:
                notes.pop(ch.path, None)
                blobs.pop(ch.path, None)
                changed.pop(ch.path, None)
                index.remove(ch.path)
            else:
                note = parse_note(ch.path, decode(self.store.blob_bytes(ch.new_blob)))
                notes[ch.path] = note
                blobs[ch.path] = ch.new_blob
                changed[ch.path] = time
                index.add(ch.path, index_fields(note))
        prev.index = Index()  # an old snapshot must never search with a newer index
        return Snapshot(head, time, notes, blobs, changed, index)

    def index_for(self, snap: Snapshot) -> Index:
        """The index matching `snap`, rebuilding one if `snap` is no longer the latest."""
        with self._lock:
            if self._latest is snap or snap.sha in self._old:
                return snap.index
            index = Index()
            for path, note in snap.notes.items():
                index.add(path, index_fields(note))
            snap.index = index
            self._old[snap.sha] = snap
            return index

    def search(self, snap: Snapshot, query: str, k: int, allow=None):
        """BM25 search of `snap`, under the lock so the index cannot move mid-query."""
        with self._lock:
            return self.index_for(snap).search(query, k=k, allow=allow)

    def matching(self, snap: Snapshot, terms: set[str]) -> set[str]:
        """Notes of `snap` holding at least one of `terms`."""
        with self._lock:
            return self.index_for(snap).matching_tokens(terms)

"""The brain as a guest sees it: each note masked as every reply shows it (`masked`), and
the lexical index of those masked notes (`MaskedIndexes`).

A guest's ask ranks, counts and reads notes; were that done on the stored text, a masked
credential could still be searched, counted or quoted, and a guessed one confirmed by the
reply ("tulip4821: 1 note"). So a guest's ask is served from the notes masked. Only a note
whose text or path holds a credential needle (`Note.might_hold_secret`, set when it is
parsed) can read otherwise masked; the masked index is the snapshot's own index with just
the notes masking changes put in again, masked (`Index.copy`, so the stored index is left
as it is for the owner). It is made on a guest's first ask at a commit and kept for that
commit only (its time and memory: bench/masked_bench.py); each note's masked fields are
kept by blob, so a commit masks again only the notes it changed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from cortex.index.bm25 import Index, tokenized_fields
from cortex.index.fields import index_fields, index_names
from cortex.index.snapshot import Snapshot
from cortex.notes.note import Note, parse_note
from cortex.notes.redact import might_hold_secret, redact

__all__ = ["KEEP_INDEXES", "MaskedIndexes", "masked", "masked_fields"]

# One: an ask begun before a commit that asks on after it pays a rebuild, as its unmasked
# searches of that commit do (`Corpus._rebuilt`); a second copy would cost its memory always.
KEEP_INDEXES = 1

# A note as the index holds it: each field's tokens, and its names.
Indexed = tuple[dict[str, list[str]], list[str]]


def masked(note: Note) -> Note:
    """`note` as every reply shows it, credentials masked (parsed again only when one was).
    Its path stays the stored one: replies mask paths on the way out."""
    stored = note.text
    if not might_hold_secret(stored):
        return note
    text = redact(stored)
    return note if text == stored else parse_note(note.path, text)


def masked_fields(note: Note) -> Indexed | None:
    """The note's index fields (tokenized) and names as a guest sees them, path included,
    or None when masking changes neither its text nor its path."""
    if not note.might_hold_secret:
        return None
    stored = note.text  # read once: a note that keeps no text reads it from Git
    text, path = redact(stored), redact(note.path)
    if text == stored and path == note.path:
        return None
    shown = parse_note(path, text)
    return tokenized_fields(index_fields(shown)), index_names(shown)


class MaskedIndexes:
    """The masked index of the latest snapshots a guest asked at, and the masked fields of
    every note that might hold a secret, by (path, blob)."""

    def __init__(self) -> None:
        self._fields: dict[tuple[str, str], Indexed | None] = {}
        self._indexes: OrderedDict[str, Index | None] = OrderedDict()
        self._lock = threading.Lock()  # one guest masks a commit; a second waits and reads it

    def index(self, snap: Snapshot, base: Callable[[Callable[[Index], Index]], Index]) -> Index | None:
        """`snap`'s masked index, or None when masking changes no note (then the stored index
        is the guest's view too). `base(make)` runs `make` on the snapshot's stored index
        while that index is held still: the copy is made there, the texts are read before."""
        with self._lock:
            if snap.sha in self._indexes:
                self._indexes.move_to_end(snap.sha)
                return self._indexes[snap.sha]
            changed = self._changed(snap)
            index = base(lambda stored: _masked_copy(stored, changed)) if changed else None
            self._indexes[snap.sha] = index
            while len(self._indexes) > KEEP_INDEXES:
                self._indexes.popitem(last=False)
            return index

    def _changed(self, snap: Snapshot) -> dict[str, Indexed]:
        """Every note of `snap` that masking changes, as the masked index holds it. Reads the
        text of notes that might hold a secret and are new since the last call."""
        fields, kept = self._fields, {}
        for path, note in snap.notes.items():
            if note.might_hold_secret:
                key = (path, snap.blobs[path])
                kept[key] = fields[key] if key in fields else masked_fields(note)
        self._fields = kept  # what the snapshot no longer holds goes
        return {path: found for (path, _), found in kept.items() if found is not None}


def _masked_copy(stored: Index, changed: dict[str, Indexed]) -> Index:
    index = stored.copy()
    for path, (tokens, names) in sorted(changed.items()):
        index.add_tokens(path, tokens, names)
    return index

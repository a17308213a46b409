"""A note's text out of Git, read from its blob only when asked (`read_lazily`), so a large
brain's notes do not all keep their text in memory. Decoding the bytes is the notes' own
(`notes.note.decode`).
"""

from __future__ import annotations

import functools

from cortex.notes.note import Note, decode
from cortex.store.git import GitStore

__all__ = ["read_lazily"]


def read_lazily(store: GitStore, notes: dict[str, Note], blobs: dict[str, str]) -> None:
    """Let `notes` stop keeping their text: each reads it from its blob when asked.

    Every note's text in memory was most of a large brain's footprint (about 310 MB of a
    714 MB process at 25,000 chat transcripts); a request reads a few notes, from Git.
    """
    for path, note in notes.items():
        if not note.reads_lazily:
            note.read_text_from(functools.partial(_blob_text, store, blobs[path]))


def _blob_text(store: GitStore, blob: str) -> str:
    return decode(store.blob_bytes(blob))

"""Which notes bear a name: each note's title, aliases and file name, as the name key search
compares an exact query against (`ranking.name_key`), carried from one head to the next."""

from __future__ import annotations

from typing import Any

from cortex.index.fields import index_names
from cortex.index.ranking import name_key
from cortex.index.snapshot import Snapshot

__all__ = ["NameMap", "names_after"]

Known = tuple[str, dict[str, Any], dict[str, frozenset[str]]]  # (sha, the snapshot's notes, name key -> notes)


class NameMap:
    """The name map of the last head asked for, moved forward to the next."""

    def __init__(self) -> None:
        self.known: Known | None = None

    def at(self, snap: Snapshot) -> dict[str, frozenset[str]]:
        """The name map of `snap` (name key -> notes), carried forward from the last one.
        The server builds it once the index is ready (`app.server.warm_up`): built by the
        first search instead, it cost that search ~440 ms at 10,000 notes."""
        known = self.known
        if known is None or known[0] != snap.sha:
            self.known = known = (snap.sha, snap.notes, names_after(known, snap.notes))
        return known[2]


def _names_of(note: Any) -> set[str]:
    return {name_key(n) for n in index_names(note)} - {""}


def names_after(known: Known | None, notes: dict[str, Any]) -> dict[str, frozenset[str]]:
    """Name key -> the notes of `notes` bearing it; from the previous head's map when few
    notes changed (a snapshot keeps the Note object of every note it did not change).
    Rebuilt whole, every search after a write spent 10 ms of 13 here at 1,000 notes."""
    changed: list[str] = []
    if known is not None:
        before = known[1]
        changed = [p for p in before.keys() | notes.keys() if before.get(p) is not notes.get(p)]
    if known is None or len(changed) > len(notes) // 4:
        built: dict[str, set[str]] = {}
        for path, note in notes.items():
            for name in _names_of(note):
                built.setdefault(name, set()).add(path)
        return {k: frozenset(v) for k, v in built.items()}
    names = dict(known[2])  # a new map: a search on the old head may still read the old one
    for path in changed:
        old, new = known[1].get(path), notes.get(path)
        gone = _names_of(old) if old is not None else set()
        came = _names_of(new) if new is not None else set()
        for name in gone - came:
            left = names.get(name, frozenset()) - {path}
            if left:
                names[name] = left
            else:
                names.pop(name, None)
        for name in came - gone:
            names[name] = names.get(name, frozenset()) | {path}
    return names

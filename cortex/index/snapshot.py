"""One commit's notes (`Snapshot`): each note parsed, its blob, its dates, and the commit's
lexical index; the live-note rule; and the link map, built on first use.

`cortex.index.corpus` makes snapshots and advances the latest one with the head; this is
what a caller holds and reads.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from cortex.index.bm25 import Index
from cortex.notes.links import LinkResolver, own_names
from cortex.notes.note import Note, WikiLink, log_entries

__all__ = ["Snapshot", "in_archive", "is_live"]


def in_archive(path: str) -> bool:
    return path.startswith("archive/")


def is_live(note: Note, today: dt.date) -> bool:
    """The live-note rule: outside archive/ and not retired today. Search, ask and the router use it."""
    return not in_archive(note.path) and not note.is_retired(today)


@dataclass
class Snapshot:
    """The notes of one commit. `index` is only trusted while this is the latest."""

    sha: str
    time: dt.datetime
    notes: dict[str, Note]
    blobs: dict[str, str]
    changed: dict[str, dt.datetime]
    index: Index = field(repr=False)
    # The last real change per note (no imports or mass edits); notes never changed
    # by hand since their import are absent.
    real: dict[str, dt.datetime] = field(default_factory=dict)
    # (resolver, backlinks by target, targets by source), built on first use.
    _links: tuple[LinkResolver, dict[str, list[tuple[str, WikiLink]]], dict[str, set[str]]] | None = field(
        default=None, repr=False
    )

    def live(self, path: str, today: dt.date) -> bool:
        note = self.notes.get(path)
        return note is not None and is_live(note, today)

    def log_entries(self, today: dt.date, days: int) -> list[tuple[str, str, str]]:
        """(path, heading, body) of every `log/YYYY-MM-DD.md` entry of the last `days` days
        up to `today`, newest first."""
        out: list[tuple[str, str, str]] = []
        since = today - dt.timedelta(days=days - 1)
        for path in sorted((p for p in self.notes if p.startswith("log/")), reverse=True):
            try:
                day = dt.date.fromisoformat(path[4:14])
            except ValueError:
                continue
            if since <= day <= today:
                out.extend((path, heading, body) for heading, body in log_entries(self.notes[path].body))
        return out

    def link_map(self) -> tuple[LinkResolver, dict[str, list[tuple[str, WikiLink]]]]:
        """The resolver of this commit's note names and, per note, the links pointing to it.

        Built on first use (one pass over every note's resolved links: 160 ms at
        10,000 notes of 2.5 links each) and kept with the snapshot, which never
        changes; a commit that only edits notes carries it forward (`relinked`).
        """
        if self._links is None:
            resolver = LinkResolver(self.notes)
            back: dict[str, list[tuple[str, WikiLink]]] = {}
            fwd: dict[str, set[str]] = {}
            for source in sorted(self.notes):
                _add_links(resolver, back, fwd, source, self.notes[source])
            self._links = (resolver, back, fwd)
        return self._links[0], self._links[1]

    def relinked(self, prev: Snapshot, edited: set[str]) -> None:
        """Carry `prev`'s link map forward when this commit only edited notes (`edited`).

        The resolver depends on the set of paths, which is unchanged, and on the notes'
        titles and aliases: when no edited note's changed, only the edited notes' own links
        are taken out and put back: O(their links), not O(every link), for the first
        brain_read after a one-note commit. A changed title or alias can move any link.
        """
        if prev._links is None:
            return
        if any(own_names(prev.notes[p]) != own_names(self.notes[p]) for p in edited):
            return  # built afresh on first use
        resolver, old_back, old_fwd = prev._links
        back = dict(old_back)
        fwd = dict(old_fwd)
        for source in edited:
            for target in fwd.pop(source, ()):
                back[target] = [e for e in back[target] if e[0] != source]
                if not back[target]:
                    del back[target]
        for source in sorted(edited):
            _add_links(resolver, back, fwd, source, self.notes[source], copy=True)
        self._links = (resolver, back, fwd)


def _add_links(
    resolver: LinkResolver,
    back: dict[str, list[tuple[str, WikiLink]]],
    fwd: dict[str, set[str]],
    source: str,
    note: Note,
    copy: bool = False,
) -> None:
    targets: set[str] = set()
    for link in note.links:
        target = resolver.resolve(link.target, source)
        if target is not None:
            if copy and target not in targets:
                back[target] = list(back.get(target, ()))  # the previous snapshot keeps its own list
            back.setdefault(target, []).append((source, link))
            targets.add(target)
    if targets:
        fwd[source] = targets
    if copy:
        for target in targets:
            back[target].sort(key=lambda e: (e[0], e[1].start))

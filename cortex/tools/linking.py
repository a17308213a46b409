"""What a note's links ([[wikilinks]] and Markdown links to notes) point to, for replies:
brain_read's links and backlinks, and the links of a note just written that point to no note
(said in the write's reply).

Resolution is `cortex.notes.links.LinkResolver`'s (file name, path, alias, then title); a
snapshot's link map holds it. Every list is bounded and says what it left out.
"""

from __future__ import annotations

from typing import Any, TypedDict

from cortex.index.snapshot import Snapshot
from cortex.notes.note import Note
from cortex.tools.paging import fit

__all__ = ["MAX_DANGLING", "Dangling", "dangling_reply", "links_reply"]

MAX_DANGLING = 20  # dangling targets named in a write's reply; the rest are counted


def links_reply(snap: Snapshot, note: Note, cap: int) -> dict[str, Any]:
    """`links` (each distinct link, resolved at `snap`, or `missing`) and `backlinks` (the
    notes linking to `note`, with how many links each), each under `cap` bytes of JSON."""
    resolver, back = snap.link_map()
    out: dict[str, Any] = {}
    seen: set[tuple[str, str | None]] = set()
    links = []
    for link in note.links:
        key = (link.target, link.heading)
        if key in seen:
            continue
        seen.add(key)
        item = link.summary()
        found = resolver.find(link.target, note.path)
        if found is None:
            item["missing"] = True  # a dangling link: no note of that name at this SHA
        else:
            item["path"] = found[0]
            if found[1] not in ("path", "file name"):
                item["resolved_by"] = found[1]  # alias, title or name: past Obsidian's own rule
        links.append(item)
    out["links"] = fit(links, cap)
    if len(out["links"]) < len(links):
        out["links_left_out"] = (
            f"{len(links) - len(out['links'])} more distinct link(s) not listed "
            f"(kept under {cap:,} bytes); they are in the text"
        )
    sources: dict[str, int] = {}
    for source, _ in back.get(note.path, []):
        if source != note.path:
            sources[source] = sources.get(source, 0) + 1
    backlinks = [{"path": p, "links": c} for p, c in sources.items()]
    out["backlinks"] = fit(backlinks, cap)
    if len(out["backlinks"]) < len(backlinks):
        name = note.path.rsplit("/", 1)[-1].removesuffix(".md")
        out["backlinks_left_out"] = (
            f"{len(backlinks) - len(out['backlinks'])} more note(s) link here "
            f"(kept under {cap:,} bytes); brain_search for {name!r} "
            "finds them"
        )
    return out


def dangling(snap: Snapshot, path: str) -> list[str]:
    """The distinct targets of the links of the note at `path` that name no note at `snap`, in text order."""
    note = snap.notes.get(path)
    if note is None or not note.links:
        return []  # never build the commit's link map for a note with no links (issue 45: a
        # create rebuilt it whole, 11 ms of a 25 ms write at 1,000 notes)
    resolver, _ = snap.link_map()
    out: list[str] = []
    for link in note.links:
        shown = link.url if link.url is not None else link.target  # a Markdown link as written
        if shown not in out and resolver.find(link.target, path) is None:
            out.append(shown)
    return out


class Dangling(TypedDict, total=False):
    """A write's reply about its note's [[links]] that name no note."""

    links_missing: list[str]
    links_missing_left_out: str
    links_note: str


def dangling_reply(snap: Snapshot, path: str) -> Dangling:
    """A write's `links_missing` and a line saying so, or nothing when every link resolves."""
    targets = dangling(snap, path)
    if not targets:
        return {}
    named = ", ".join(t if t.lower().endswith(".md") else f"[[{t}]]" for t in targets[:5]) + (
        f" and {len(targets) - 5} more" if len(targets) > 5 else ""
    )
    out: Dangling = {
        "links_missing": targets[:MAX_DANGLING],
        "links_note": (
            f"{len(targets)} link(s) of {path} point to no note: {named}. The note was written; a link "
            "names a note by its file name, path, alias or title: fix the names, or create those notes"
        ),
    }
    if len(targets) > MAX_DANGLING:
        out["links_missing_left_out"] = f"{len(targets) - MAX_DANGLING} more; brain_read lists every link"
    return out

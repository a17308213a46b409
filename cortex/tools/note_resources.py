"""Notes as MCP resources on the owner's doors: `cortex://note/<path>` (percent-encoded, `/`
kept), read as brain_read reads a note (masked by the door, at the head or at `?as_of=<sha>`), the commit,
blob and status beside the text; listed by path in pages with a cursor, never archive/ or
working/. A client attaches a note with `@`, and brain_search hits and brain_list entries
carry the same URI.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote

from cortex.errors import BadInput
from cortex.index.snapshot import in_archive
from cortex.notes.paths import check_text, is_note_path
from cortex.notes.working import in_working
from cortex.tools.toolset import NOTE_URI, Tools, note_uri

__all__ = ["NOTE_TEMPLATE", "RESOURCES_PAGE", "NoteResource", "listed_notes", "note_changes", "read_note"]

NOTE_TEMPLATE = NOTE_URI + "{+path}"
RESOURCES_PAGE = 200  # notes a resources/list reply names; `next_cursor` says where to go on


@dataclass(frozen=True)
class NoteResource:
    uri: str
    name: str  # the path
    title: str
    description: str


def listed_notes(tools: Tools, cursor: str | None) -> tuple[list[NoteResource], str | None]:
    """One page of the head's notes by path, after `cursor` (the last path of the page before)."""
    snap = tools.brain.snapshot()
    paths = sorted(p for p in snap.notes if not in_archive(p) and not in_working(p))
    start = 0
    if cursor is not None:
        check_text(cursor, "cursor")
        start = bisect.bisect_right(paths, cursor)
    page = paths[start : start + RESOURCES_PAGE]
    today = tools.brain.today()
    out = []
    for path in page:
        note = snap.notes[path]
        retired = note.retired_reason(today)
        said = f"{note.status}" + (f"; retired: {retired}" if retired else "")
        out.append(NoteResource(note_uri(path), path, note.title, said))
    more = start + RESOURCES_PAGE < len(paths)
    return out, (page[-1] if more and page else None)


def read_note(tools: Tools, uri: str) -> tuple[str, dict[str, Any]]:
    """(the note's text, its commit, blob and status) for a `cortex://note/` URI; the door masks
    both where it shapes the read (`mcp_tools.OneLineMCPServer.read_resource`)."""
    if not uri.startswith(NOTE_URI):
        raise BadInput(f"not a note's URI: {uri[:200]}")
    quoted, _, query = uri[len(NOTE_URI) :].partition("?")
    args = parse_qs(query) if query else {}
    if set(args) - {"as_of"} or any(len(v) != 1 for v in args.values()):
        raise BadInput("a note's URI takes only ?as_of=<sha>")
    path = unquote(quoted)
    sha, blob, note = tools.brain.read(path, args.get("as_of", [None])[0])
    meta: dict[str, Any] = {"sha": sha, "blob": blob, "status": note.status, "path": note.path}
    retired = note.retired_reason(tools.brain.today())
    if retired:
        meta["retired"] = retired
    return note.text, meta


def note_changes(tools: Tools, old: str, new: str) -> tuple[list[str], bool]:
    """(the URIs of the notes that changed from commit `old` to `new`, whether the list of
    notes changed: one made, deleted or moved), by the commits' tree diff."""
    changed = [c for c in tools.brain.changed_between(old, new) if is_note_path(c.path)]
    listed = [c for c in changed if not in_archive(c.path) and not in_working(c.path)]
    return [note_uri(c.path) for c in changed], any(c.old_blob is None or c.new_blob is None for c in listed)

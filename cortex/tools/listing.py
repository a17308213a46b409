"""brain_list: one folder of the brain at a commit, its subfolders (with how many files each
holds) and its files (a note with its title and status), in pages under a byte budget. Also
what brain_read answers for a folder's path, and the folders a search prefix could mean.

A page's cursor is the last entry it gave (`after`), so the next page starts after that name
whatever was added since; `as_of` with the page's `sha` pins the listing itself.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Annotated, Any, NotRequired, cast

from pydantic import Field
from typing_extensions import TypedDict

from cortex.errors import BadInput
from cortex.index.snapshot import Snapshot
from cortex.notes.nearest import did_you_mean, nearest
from cortex.notes.paths import check_path, check_text, tool_readable
from cortex.notes.redact import redact
from cortex.tools.paging import REPLY_FIELDS_BYTES, fit
from cortex.tools.tool import READ, Caller, Tool, When
from cortex.tools.toolset import Tools, note_uri

__all__ = [
    "LIST_REPLY_BYTES",
    "ListReply",
    "ListRequest",
    "TITLE_CHARS",
    "TOOL",
    "check_folder",
    "folder_listing",
    "folder_reply",
    "folders_of",
    "list_folder",
    "prefix_note",
]

# About 200 entries of a path and a title: a page a client can hold beside its conversation.
LIST_REPLY_BYTES = 20_000
TITLE_CHARS = 200  # a title is a heading's line, which may be long; each entry stays small


def check_folder(folder: str | None) -> str:
    """A folder as listings name it: '' for the top, else its path ending in '/'; BadInput when no path could be one."""
    if folder is None:
        return ""
    check_text(folder, "folder")
    name = folder.strip().strip("/")
    if not name:
        return ""
    tool_readable(check_path(name, for_write=False))
    return name + "/"


def folders_of(paths: list[str] | dict[str, Any]) -> dict[str, int]:
    """Every folder holding one of `paths` ('a/', 'a/b/'), with how many files are under it."""
    out: dict[str, int] = {}
    for path in paths:
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            key = "/".join(parts[:i]) + "/"
            out[key] = out.get(key, 0) + 1
    return out


def folder_listing(
    snap: Snapshot, files: dict[str, str], folder: str, today: dt.date, after: str | None = None
) -> dict[str, Any]:
    """The page of `folder`'s entries (subfolders, then files, each by name) after `after`.

    `files`: every file of the commit (path -> blob); notes among them are described from
    `snap`. BadInput for a folder that holds nothing (with the nearest folders) or a
    cursor that is not an entry of this folder."""
    folders = folders_of(files)
    if folder and folder not in folders:
        near = nearest(folder, {f: () for f in folders})
        raise BadInput(f"no folder {folder} in commit {snap.sha[:12]}{did_you_mean(near)}")
    subs: dict[str, int] = {}
    rows: list[dict[str, Any]] = []
    for path in sorted(files):
        if not path.startswith(folder):
            continue
        rest = path[len(folder) :]
        if "/" in rest:
            sub = folder + rest.split("/", 1)[0] + "/"
            subs[sub] = folders[sub]
            continue
        row: dict[str, Any] = {"path": path}
        note = snap.notes.get(path)
        if note is not None:
            row["uri"] = note_uri(path)  # its resource, to attach
            row["title"] = redact(note.title)[:TITLE_CHARS]
            row["status"] = note.status
            retired = note.retired_reason(today)
            if retired:
                row["retired"] = retired
        rows.append(row)
    entries = [{"folder": f, "files": n} for f, n in sorted(subs.items())] + rows
    names = [e.get("folder") or e["path"] for e in entries]
    start = 0
    if after is not None:
        check_text(after, "after")
        if after not in names:
            raise BadInput(f"after must be an entry of {folder or 'the top folder'} from an earlier brain_list reply")
        start = names.index(after) + 1
    page = fit(entries[start:], LIST_REPLY_BYTES - REPLY_FIELDS_BYTES)
    reply: dict[str, Any] = {
        "sha": snap.sha,
        "folder": folder,
        "entries": page,
        "folders": len(subs),
        "files": len(rows),
    }
    left = len(entries) - start - len(page)
    if left:
        last = names[start + len(page) - 1] if page else after
        reply["next"] = last
        reply["more"] = (
            f"{left} more entr{'y' if left == 1 else 'ies'} of {folder or 'the top folder'} not listed "
            f"(kept under {LIST_REPLY_BYTES:,} bytes); call brain_list again with after={last!r} and as_of={snap.sha}"
        )
    return reply


def prefix_note(snap: Snapshot, prefix: str) -> str | None:
    """What a search prefix that starts no note's path is told: which folders it may have meant."""
    if not prefix or any(p.startswith(prefix) for p in snap.notes):
        return None
    folders = folders_of(list(snap.notes))
    near = nearest(prefix if prefix.endswith("/") else prefix + "/", {f: () for f in folders})
    said = did_you_mean(near).removeprefix("; ")
    return f"no note path starts with {prefix!r}, so nothing was searched" + (f"; {said}" if said else "")


# The README's row for it (`cortex tools` prints the table).
SUMMARY = (
    "one folder: its subfolders (with how many files each holds) and its files (title, status), by name, "
    "about 20 KB per reply with a cursor (`next`, and `more` says how many are left); a folder that does "
    "not exist is refused with the nearest folders"
)


DESCRIPTION = (
    "List one folder: its subfolders (with how many files each holds) and its files (a note with its title "
    "and status), by name, about 20 KB per reply; `more` says how many entries are left and `next` is the "
    "cursor to pass as `after` (with as_of=sha for the same listing). A folder that does not exist is refused"
    " with the nearest folders."
)


@dataclass(frozen=True, kw_only=True)
class ListRequest:
    folder: Annotated[str | None, Field(description="A folder, e.g. notes/ (default: the top of the brain)")] = None
    after: Annotated[str | None, Field(description="The cursor `next` of the previous reply")] = None
    as_of: When = None


class ListReply(TypedDict):
    """brain_list: one folder's subfolders (`folder`, `files`) and files (`path`, `title`,
    `status`) by name, with a cursor when more are left."""

    sha: str
    folder: str
    entries: list[dict[str, Any]]
    folders: int
    files: int
    next: NotRequired[str]
    more: NotRequired[str]
    note: NotRequired[str]  # brain_read was given a folder's path: this is its listing


def list_folder(tools: Tools, request: ListRequest, caller: Caller) -> ListReply:
    """brain_list: one folder's subfolders and files at the head (or `as_of`), paged."""
    return folder_reply(tools, request.folder, after=request.after, as_of=request.as_of)


def folder_reply(
    tools: Tools, folder: str | None, *, after: str | None = None, as_of: str | None = None, asked: str | None = None
) -> ListReply:
    """One page of a folder's listing; `asked`: the path brain_read was given, when it named a folder."""
    name = check_folder(folder)
    snap = tools.brain.snapshot(as_of)
    reply = folder_listing(snap, tools.brain.files(snap.sha), name, tools.brain.today(), after)
    if asked is not None:
        reply["note"] = (
            f"{asked} is a folder, not a note: here is its listing; brain_read one of its paths, "
            "or brain_list with after= for more"
        )
    return cast(ListReply, reply)


TOOL = Tool("brain_list", DESCRIPTION, SUMMARY, READ, ListRequest, ListReply, list_folder)

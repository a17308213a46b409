"""brain_write's modes, one note each: the arguments each mode needs, the files it sets on
a head, and the reply.

`Brain.write` runs these inside the compare-and-swap: `note_changes` is called again on
a fresh head whenever another writer moved it, so what a mode reads and what it writes
are always of the same head.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, NotRequired, get_args

from typing_extensions import TypedDict

from cortex.brain.text_rules import append_text, edit_text, strict_text, within_cap
from cortex.errors import BadInput, Conflict
from cortex.notes.paths import check_content, check_path, check_text, is_note_path
from cortex.store.git import View
from cortex.store.types import Changes, WriteResult

__all__ = [
    "MAX_REASON_CHARS",
    "WRITE_MODES",
    "CaptureReply",
    "WriteMode",
    "WriteReply",
    "LinksMoved",
    "WriteRequest",
    "note_changes",
    "push_fields",
    "push_note",
    "write_body",
    "write_reply",
    "write_request",
]

WriteMode = Literal["create", "replace", "append", "edit", "delete", "move"]
WRITE_MODES: tuple[WriteMode, ...] = get_args(WriteMode)


class WriteReply(TypedDict):
    """brain_write: the one commit a write made (or, for a retried request, had made)."""

    sha: str
    path: str
    mode: WriteMode
    blob: str | None  # the note's new blob (None once deleted)
    parent: NotRequired[str | None]
    replaced_blob: NotRequired[str | None]  # the blob the write replaced (None for a new note)
    to: NotRequired[str]  # move: the new path
    links_rewritten: NotRequired[list[str]]  # move: the notes whose [[links]] to it were rewritten
    links_missing: NotRequired[list[str]]  # the note's [[links]] that name no note
    links_missing_left_out: NotRequired[str]
    links_note: NotRequired[str]
    replayed: NotRequired[bool]  # a retried request_id: nothing was written again
    push: NotRequired[str]  # hosted mode: pushed, or pending with push_note saying why
    push_note: NotRequired[str]
    note: NotRequired[str]
    working_tree: NotRequired[str]  # a file of the commit the working tree could not take, and why


class CaptureReply(TypedDict):
    """brain_capture: the commit that appended the entry to today's log."""

    sha: str
    path: str
    blob: str | None
    parent: NotRequired[str | None]
    heading: NotRequired[str]
    replaced_blob: NotRequired[str | None]
    mode: NotRequired[WriteMode]  # a retried request_id: "append", with replayed
    replayed: NotRequired[bool]
    push: NotRequired[str]
    push_note: NotRequired[str]
    note: NotRequired[str]
    working_tree: NotRequired[str]


MAX_REASON_CHARS = 500

# A move's rewrite of the links to it: (head SHA, moved path, new path, moved bytes) ->
# the new bytes of each note whose links change, by its path before the move.
Relinker = Callable[[str, str, str, bytes], dict[str, bytes]]


class LinksMoved(Conflict):
    """A move's list of linking notes changed on the head it ran on."""


@dataclass(frozen=True)
class WriteRequest:
    """One brain_write, checked: the note as the brain stores its name, the mode and what it needs."""

    path: str
    mode: WriteMode
    data: bytes | None = None  # create, replace, append, edit: the content's bytes
    content: str | None = None
    find: str | None = None  # edit: the exact text to replace
    target: str | None = None  # move: the new path, as the brain stores it
    expected_blob: str | None = None
    reason: str | None = None

    @property
    def subject(self) -> str:
        return f"{self.mode} {self.path}" + (f" -> {self.target}" if self.target else "")

    @property
    def relinks(self) -> bool:
        """Whether the write may rewrite links in other notes (a move of a note)."""
        return self.mode == "move" and is_note_path(self.path)

    def shown(self, path: str) -> str:
        """`path` after the write: the moved note's new name for the note itself."""
        return self.target if path == self.path and self.target else path


def write_request(
    path: str,
    mode: WriteMode,
    content: str | None,
    find: str | None,
    to: str | None,
    expected_blob: str | None,
    reason: str | None,
    stored_path: Callable[[str], str],
) -> WriteRequest:
    """The write's arguments checked (BadInput when they do not fit the mode), its paths
    named as the brain stores them (`stored_path`)."""
    if mode not in WRITE_MODES:
        raise BadInput(f"mode must be one of {', '.join(WRITE_MODES)}")
    path = stored_path(check_path(path))
    data = None
    if mode in ("create", "replace", "append", "edit"):
        if content is None:
            raise BadInput(f"mode {mode} needs content")
        data = check_content(content)
    if mode == "edit":
        if not find:
            raise BadInput("mode edit needs find: the exact text to replace")
        check_text(find, "find")
    if mode == "delete" and (not reason or not reason.strip()):
        raise BadInput("mode delete needs a reason; it is kept in the commit message")
    if reason is not None:
        check_text(reason, "reason")
        if len(reason) > MAX_REASON_CHARS:
            raise BadInput(f"reason is longer than {MAX_REASON_CHARS} characters")
    target = None
    if mode == "move":
        if not to:
            raise BadInput("mode move needs to: the new path")
        target = stored_path(check_path(to))
        if target == path:
            raise BadInput("move needs a different path")
    return WriteRequest(path, mode, data, content, find, target, expected_blob, reason)


def note_changes(req: WriteRequest, view: View, expect: list[str], relinked: Relinker) -> Changes:
    """The files `req` sets on the head `view` shows; Conflict or BadInput when it cannot
    apply there. `expect`: the notes a move rewrites links in, as the caller took them."""
    path, mode = req.path, req.mode
    current_blob = view.blob_of(path)
    if req.expected_blob is not None and current_blob != req.expected_blob:
        raise Conflict(
            f"conflict: {path} is now blob {current_blob or '(absent)'}, "
            f"not the expected {req.expected_blob}; read it again and retry"
        )
    if mode == "create":
        if current_blob is not None:
            raise Conflict(f"{path} already exists (blob {current_blob}); use replace, append or edit")
        return {path: req.data}
    if mode == "append":
        existing = strict_text(view.read(path), path)
        return {path: within_cap(append_text(existing, req.content or "").encode("utf-8"), path, mode)}
    if current_blob is None:
        raise BadInput(f"no note at {path}; use create")
    if mode == "replace":
        return {path: req.data}
    if mode == "edit":
        assert req.find is not None
        existing = strict_text(view.read(path), path)
        edited = edit_text(existing, req.find, req.content or "", path)
        return {path: within_cap(edited.encode("utf-8"), path, mode)}
    if mode == "delete":
        return {path: None}
    return _move_changes(req, view, expect, relinked)


def _move_changes(req: WriteRequest, view: View, expect: list[str], relinked: Relinker) -> Changes:
    """A move's files: the note under its new name, and the notes whose links it rewrites
    (LinksMoved when they are not `expect`)."""
    path, target = req.path, req.target
    assert target is not None
    if view.blob_of(target) is not None:
        raise Conflict(f"{target} already exists; move refuses to overwrite it")
    moved = view.read(path)
    assert moved is not None
    changes: Changes = {path: None, target: moved}
    if is_note_path(path) and view.sha:
        rewritten = relinked(view.sha, path, target, moved)
        if sorted(rewritten) != expect:
            raise LinksMoved(f"the notes linking to {path} changed during the move; nothing was written; retry")
        for source, relinked_bytes in rewritten.items():
            changes[req.shown(source)] = relinked_bytes
    return changes


def write_body(req: WriteRequest, expect: list[str]) -> str:
    """The commit message's body: the reason, and the notes whose links a move rewrote."""
    return "\n".join(
        x
        for x in [
            f"Reason: {' '.join(req.reason.split())}" if req.reason else "",
            ("Links rewritten in: " + ", ".join(req.shown(p) for p in expect)) if expect else "",
        ]
        if x
    )


def write_reply(req: WriteRequest, result: WriteResult, expect: list[str]) -> WriteReply:
    reply: WriteReply = {
        "sha": result.sha,
        "parent": result.parent,
        "path": req.path,
        "mode": req.mode,
        "blob": result.new_blobs.get(req.path),
        "replaced_blob": result.old_blobs.get(req.path),
    }
    if req.target:
        reply["to"] = req.target
        reply["blob"] = result.new_blobs.get(req.target)
        reply["links_rewritten"] = [req.shown(p) for p in expect]
    if result.retries:
        reply["note"] = (
            f"the head moved {result.retries} time(s) while writing; the change was re-applied to the fresh head"
        )
    if result.push:
        reply["push"] = result.push
        if result.push == "pending":
            reply["push_note"] = push_note(result)
    return reply


def push_fields(result: WriteResult) -> dict[str, str]:
    """Hosted mode: the reply's `push` key ("pushed" or "pending", with a note saying why)."""
    if result.push == "pending":
        return {"push": "pending", "push_note": push_note(result)}
    return {"push": result.push} if result.push else {}


def push_note(result: WriteResult) -> str:
    """Why a hosted write's push is pending."""
    return "push pending: the commit is kept here and a background retry pushes it" + (
        f" ({result.push_note})" if result.push_note else ""
    )

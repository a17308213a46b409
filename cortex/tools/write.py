"""brain_write: one note created, replaced, appended to, edited, deleted or moved, as
exactly one commit; the reply names the note's [[links]] that point to no note."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from cortex.brain.note_writes import WriteMode, WriteReply
from cortex.errors import BadInput, Declined, NoNote
from cortex.notes.paths import MAX_CONTENT_BYTES
from cortex.tools.linking import Dangling, dangling_reply
from cortex.tools.tool import WRITE, Caller, ConfirmNeeded, NotePath, RequestId, Tool
from cortex.tools.toolset import Tools

__all__ = ["CONFIRM_SCHEMA", "TOOL", "WriteReply", "WriteRequest", "ask_first", "write"]

# The README's row for it (`cortex tools` prints the table).
SUMMARY = (
    "`create`, `replace`, `append`, `edit` (`find` occurs exactly once), `delete` (needs `reason`), "
    "`move` (to `to`, rewriting the `[[links]]` that point to the note in the same commit); exactly one "
    "commit; names the blob it replaced, and in `links_missing` the note's `[[links]]` that point to no "
    "note; a delete, a move or a replace without `expected_blob` asks you first where the client can ask "
    "(`CORTEX_CONFIRM_WRITES`)"
)


DESCRIPTION = (
    "Write one note as exactly one Git commit. The reply names the new commit, the new blob and the blob it "
    "replaced, and in links_missing the note's [[links]] that point to no note (a link names a note by its "
    "path, file name, alias or title); a write that would delete a note it does not name (a note turned into "
    "a folder) is refused. A delete, a move, or a replace without expected_blob first asks the owner to "
    "confirm, where this client can be asked; declined, nothing changes."
)


@dataclass(frozen=True, kw_only=True)
class WriteRequest:
    path: NotePath
    mode: Annotated[
        WriteMode,
        Field(
            description="create (fails if it exists), replace, append, edit "
            "(find -> content), delete (needs reason), move (to `to`)"
        ),
    ]
    content: Annotated[
        str | None,
        Field(
            description=f"The note text (create, replace), the text to add "
            f"(append) or the replacement (edit); at most "
            f"{MAX_CONTENT_BYTES:,} bytes of UTF-8"
        ),
    ] = None
    find: Annotated[
        str | None, Field(description="edit: the exact text to replace; it must occur exactly once in the note")
    ] = None
    to: Annotated[str | None, Field(description="move: the new path, e.g. archive/old-note.md")] = None
    expected_blob: Annotated[
        str | None, Field(description="The blob id from brain_read: refuse if the note changed since")
    ] = None
    reason: Annotated[
        str | None,
        Field(description="Why (kept in the commit message); required for delete; at most 500 characters"),
    ] = None
    request_id: RequestId = None


def write(tools: Tools, request: WriteRequest, caller: Caller) -> WriteReply | ConfirmNeeded:
    """The write as one commit, then the written note's links that name no note. A delete, a
    move or an unpinned replace asks the owner first where the client can ask (`ask_first`)."""
    r = request
    actor = caller.actor(TOOL.name, r.request_id)
    asking = ask_first(tools, r, caller)
    if isinstance(asking, ConfirmNeeded):
        return asking
    pinned = r.expected_blob or asking  # a confirmed write replaces only the note the owner was shown
    reply = tools.brain.write(
        r.path, r.mode, actor, content=r.content, find=r.find, to=r.to, expected_blob=pinned, reason=r.reason
    )
    if r.mode != "delete" and not reply.get("replayed"):
        reply.update(_dangling(tools, reply["sha"], reply.get("to") or reply["path"]))
    return reply


def _dangling(tools: Tools, sha: str, path: str) -> Dangling:
    """The written note's [[links]] that point to no note at the commit it made."""
    corpus = tools.brain.corpus
    if corpus.built() is None:  # never wait for the first build: say the links were not checked
        return {"links_note": "links not checked: the brain is still being indexed at start-up"}
    return dangling_reply(corpus.peek(sha), path)


def ask_first(tools: Tools, r: WriteRequest, caller: Caller) -> ConfirmNeeded | str | None:
    """The question for the owner before a write that loses text, on its first round; None to
    write now (not such a write, no such note, the client cannot be asked, or CORTEX_CONFIRM_WRITES
    is off). On the second round: the blob the owner was shown when they confirmed this very
    write (the write is pinned to it), else `Declined` or BadInput."""
    confirm = caller.confirm
    losing = r.mode in ("delete", "move") or (r.mode == "replace" and r.expected_blob is None)
    if not losing or not tools.confirm_writes or confirm is None or confirm.unable:
        return None
    try:
        _, blob, note = tools.brain.read(r.path)
    except (NoNote, BadInput):
        return None  # nothing there to lose: the write says what is wrong, as it always has
    digest = hashlib.sha256(json.dumps([r.path, r.mode, r.content, r.find, r.to, r.reason]).encode()).hexdigest()[:16]
    if confirm.action is None:
        key = tools.asked.ask(digest, blob)
        return ConfirmNeeded(_question(r, note.path, len(note.text.encode())), {"confirmation": key})
    shown = tools.asked.answer((confirm.state or {}).get("confirmation"))  # answered once, either way
    if shown is None or shown[0] != digest:
        raise BadInput(
            "the confirmation is not of this write, or was answered already: nothing changed; call brain_write again"
        )
    if confirm.action != "accept" or not confirm.confirmed:
        raise Declined(f"not written: the owner did not confirm the {r.mode} of {note.path}; nothing changed")
    if blob != shown[1]:
        raise BadInput(
            f"{note.path} changed after the owner was asked: nothing changed; call brain_write again to ask anew"
        )
    return shown[1]


def _question(r: WriteRequest, path: str, size: int) -> str:
    if r.mode == "delete":
        return f"Delete {path}? Reason given: {r.reason}. It stays in the brain's Git history."
    if r.mode == "move":
        return f"Move {path} to {r.to}? Notes linking to it are rewritten in the same commit."
    new = len((r.content or "").encode())
    return (
        f"Replace the whole of {path} ({size:,} bytes now, {new:,} after)? The client did not read it "
        "first (no expected_blob), so a change made since would be lost (it stays in the Git history)."
    )


# What the owner is asked for: one box to tick.
CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Go ahead", "description": "Tick to make this change"}},
    "required": ["confirm"],
}

TOOL = Tool("brain_write", DESCRIPTION, SUMMARY, WRITE, WriteRequest, WriteReply, write, asks_client=True)

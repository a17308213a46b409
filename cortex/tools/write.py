"""brain_write: one note created, replaced, appended to, edited, deleted or moved, as
exactly one commit; the reply names the note's [[links]] that point to no note."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from cortex.brain.note_writes import WriteMode, WriteReply
from cortex.notes.paths import MAX_CONTENT_BYTES
from cortex.tools.linking import Dangling, dangling_reply
from cortex.tools.tool import WRITE, Caller, NotePath, RequestId, Tool
from cortex.tools.toolset import Tools

__all__ = ["TOOL", "WriteReply", "WriteRequest", "write"]

# The README's row for it (`cortex tools` prints the table).
SUMMARY = (
    "`create`, `replace`, `append`, `edit` (`find` occurs exactly once), `delete` (needs `reason`), "
    "`move` (to `to`, rewriting the `[[links]]` that point to the note in the same commit); exactly one "
    "commit; names the blob it replaced, and in `links_missing` the note's `[[links]]` that point to no "
    "note"
)


DESCRIPTION = (
    "Write one note as exactly one Git commit. The reply names the new commit, the new blob and the blob it "
    "replaced, and in links_missing the note's [[links]] that point to no note (a link names a note by its "
    "path, file name, alias or title); a write that would delete a note it does not name (a note turned into "
    "a folder) is refused."
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


def write(tools: Tools, request: WriteRequest, caller: Caller) -> WriteReply:
    """The write as one commit, then the written note's links that name no note."""
    r = request
    actor = caller.actor(TOOL.name, r.request_id)
    reply = tools.brain.write(
        r.path, r.mode, actor, content=r.content, find=r.find, to=r.to, expected_blob=r.expected_blob, reason=r.reason
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


TOOL = Tool("brain_write", DESCRIPTION, SUMMARY, WRITE, WriteRequest, WriteReply, write)

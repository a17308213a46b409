"""brain_working: the owner's working state (focus, decisions, questions, handoffs, to-dos),
one Markdown line an item in working/<project>.md; each change one commit
(`cortex.brain.working_state`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, NotRequired, cast

from pydantic import Field
from typing_extensions import TypedDict

from cortex.tools.tool import APPEND, Caller, Tool
from cortex.tools.toolset import Tools

__all__ = ["TOOL", "WorkingReply", "WorkingRequest", "working"]

# The README's row for it (`cortex tools` prints the table).
SUMMARY = (
    "working state: `add` (kinds `focus`, `decision`, `question`, `handoff`, `todo`), `list`, `file` "
    "(into a note that exists, writing the item under `heading` there), `drop` (with a reason), `touch`; "
    "each change one commit"
)


DESCRIPTION = (
    "Working state: what the owner is in the middle of, kept in working/<project>.md as one Markdown line an "
    "item (hand-editable). An item stays open until filed into a note that was written (file also writes it "
    "into that note, as a list item under `heading`, in the same commit), or dropped; it is never deleted, "
    "and reads as aged after 14 days with no change. Each change is one commit."
)


@dataclass(frozen=True, kw_only=True)
class WorkingRequest:
    action: Annotated[
        Literal["add", "list", "file", "drop", "touch"],
        Field(description="add an item, list open items, file one into a note, drop one, or touch one to keep it open"),
    ]
    kind: Annotated[
        Literal["focus", "decision", "question", "handoff", "todo"] | None,
        Field(description="add: the item's kind"),
    ] = None
    text: Annotated[str | None, Field(description="add: the item, one line")] = None
    project: Annotated[str | None, Field(description="add, list: the project key, e.g. kiln (none: general)")] = None
    id: Annotated[str | None, Field(description="file, drop, touch: the item's id, e.g. w7k2a")] = None
    into: Annotated[str | None, Field(description="file: the note (it must exist) to write the item into")] = None
    heading: Annotated[
        str | None,
        Field(
            description="file: the heading of `into` to add the item under (made at the note's end when "
            "missing); default by kind: Focus, Decisions, Questions, Handoffs, To do"
        ),
    ] = None
    reason: Annotated[str | None, Field(description="drop: why")] = None
    include_closed: Annotated[bool, Field(description="list: filed, done and dropped items too")] = False


class WorkingReply(TypedDict):
    """brain_working: a change's commit and the item (`id`, `project`, `state`), or a list's
    `items` (`id`, `kind`, `text`, `project`, `state`, `opened`, `last_change`, `aged`, ...)."""

    sha: str | None
    parent: NotRequired[str | None]
    path: NotRequired[str]
    blob: NotRequired[str | None]
    blobs: NotRequired[dict[str, str | None]]
    id: NotRequired[str]
    project: NotRequired[str]
    state: NotRequired[str]
    filed_into: NotRequired[str]
    heading: NotRequired[str]
    items: NotRequired[list[dict[str, Any]]]
    open: NotRequired[int]
    aged: NotRequired[int]
    closed_not_listed: NotRequired[int]
    push: NotRequired[str]
    push_note: NotRequired[str]
    note: NotRequired[str]


def working(tools: Tools, request: WorkingRequest, caller: Caller) -> WorkingReply:
    """Add, list, file, drop or touch an item, one commit a change."""
    r = request
    args: dict[str, Any]
    if r.action == "list":
        args = {"project": r.project, "include_closed": r.include_closed}
    else:
        args = {"kind": r.kind, "text": r.text, "project": r.project, "id": r.id, "into": r.into, "reason": r.reason}
        if r.action == "file":
            args["heading"] = r.heading
    return cast(WorkingReply, tools.working.act(caller.actor(TOOL.name), r.action, **args))


TOOL = Tool("brain_working", DESCRIPTION, SUMMARY, APPEND, WorkingRequest, WorkingReply, working)

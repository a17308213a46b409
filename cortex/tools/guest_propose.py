"""The guest door's brain_propose: a note change for the owner to review, queued in Redis
(`cortex.guests.queue`); nothing reaches the brain until the owner accepts it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field

from cortex.errors import BadInput
from cortex.guests.queue import MAX_WHY_CHARS
from cortex.notes.paths import check_content, check_path, check_text, in_scope
from cortex.tools.guest_desk import GuestDesk
from cortex.tools.tool import APPEND, Caller, Tool

__all__ = ["ProposeRequest", "TOOL", "propose", "scope_line"]

DESCRIPTION = (
    "Propose a note change (create, replace or append) for the owner to review. The path must be inside the "
    "part of the brain shared with you. Nothing changes until the owner accepts; the reply gives the "
    "proposal's id."
)


@dataclass(frozen=True, kw_only=True)
class ProposeRequest:
    path: Annotated[
        str,
        Field(
            description="The note's path, e.g. notes/public/topic.md (relative, / as separator); it must be inside "
            "the part of the brain shared with you, and a refusal names that part"
        ),
    ]
    content: Annotated[
        str,
        Field(description="The note text (create, replace), or the text to add at the end of the note (append)"),
    ]
    mode: Annotated[
        Literal["create", "replace", "append"],
        Field(
            description="create: a new note (refused at review if it exists); replace: the whole note; "
            "append: add to it"
        ),
    ]
    why: Annotated[
        str | None,
        Field(description=f"Why the owner should accept it, in a sentence (at most {MAX_WHY_CHARS} characters)"),
    ] = None


def propose(desk: GuestDesk, request: ProposeRequest, caller: Caller) -> dict[str, Any]:
    """The proposal checked (path in scope, content, why) and queued; the same one twice is queued once."""
    policy, mode, content = desk.policy(caller), request.mode, request.content
    if mode not in ("create", "replace", "append"):
        raise BadInput("mode must be create, replace or append")
    brain = desk.tools.brain
    path = brain.stored_path(check_path(request.path))
    if not in_scope(path, list(policy.scopes)):
        raise BadInput(f"path is outside this guest's scope; {scope_line(policy.scopes)}")
    brain.check_place(path)
    check_content(content)
    if not content.strip():
        raise BadInput("content is empty")
    why = request.why or ""
    check_text(why, "why")
    if len(why) > MAX_WHY_CHARS:
        raise BadInput(f"why is longer than {MAX_WHY_CHARS} characters")
    proposal, new = desk.queue().admit(
        policy.name, path, mode, content, why, policy.daily_proposals, policy.max_pending
    )
    reply = {
        "id": proposal.id,
        "state": proposal.state,
        "path": proposal.path,
        "mode": proposal.mode,
        "digest": proposal.digest,
        "queued": proposal.created_iso(),
        "note": "queued for the owner's review; nothing reaches the brain until the owner accepts it",
    }
    if not new:
        reply["note"] = "already queued (the same proposal was sent before); " + reply["note"]
    return reply


def scope_line(scopes: tuple[str, ...] | list[str]) -> str:
    """A guest's scope in words ("under notes/public/, or to the note a.md"): the guest needs
    it to choose a path, and it is the guest's own policy, not another note's name."""
    folders = [s for s in scopes if s.endswith("/")]
    notes = [s for s in scopes if not s.endswith("/")]
    said = [f"under {' or '.join(folders)}"] if folders else []
    if notes:
        said.append(f"to the note{'s' if len(notes) > 1 else ''} {' or '.join(notes)}")
    return "it may propose " + ", or ".join(said)


TOOL = Tool("brain_propose", DESCRIPTION, "", APPEND, ProposeRequest, dict[str, Any], propose)

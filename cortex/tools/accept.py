"""brain_accept: a guest's proposal into the brain, one commit with its receipt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NotRequired, cast

from typing_extensions import TypedDict

from cortex.guests.review import Review
from cortex.tools.tool import DECIDE, Caller, ProposalId, Tool

__all__ = ["AcceptReply", "AcceptRequest", "TOOL", "accept"]

# The README's row for it (`cortex tools` prints the table).
SUMMARY = "accept a guest's proposal: one commit with a receipt; a retry returns the same commit"


DESCRIPTION = (
    "Accept a guest proposal: one commit holding the note change and a receipt under .cortex/receipts/. Safe "
    "to retry: a repeated accept returns the original commit."
)


@dataclass(frozen=True, kw_only=True)
class AcceptRequest:
    id: ProposalId


class AcceptReply(TypedDict):
    """brain_accept: the one commit holding the note change and its receipt."""

    id: str
    state: str
    sha: NotRequired[str]
    parent: NotRequired[str | None]
    path: NotRequired[str]
    mode: NotRequired[str]
    guest: NotRequired[str]
    receipt: NotRequired[str]
    note: NotRequired[str]
    push: NotRequired[str]
    push_note: NotRequired[str]


def accept(review: Review, request: AcceptRequest, caller: Caller) -> AcceptReply:
    return cast(AcceptReply, review.accept(caller.actor(TOOL.name), request.id))


TOOL = Tool("brain_accept", DESCRIPTION, SUMMARY, DECIDE, AcceptRequest, AcceptReply, accept)

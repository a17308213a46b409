"""brain_reject: a guest's proposal turned down, with a tombstone so the same is refused again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, NotRequired, cast

from pydantic import Field
from typing_extensions import TypedDict

from cortex.guests.review import Review
from cortex.tools.tool import DECIDE, Caller, ProposalId, Tool

__all__ = ["RejectReply", "RejectRequest", "TOOL", "reject"]

# The README's row for it (`cortex tools` prints the table).
SUMMARY = "reject a guest's proposal with a reason: a tombstone, so the same content is refused again"


DESCRIPTION = (
    "Reject a guest proposal with a reason. A tombstone (path, content digest, reason) is committed under "
    ".cortex/tombstones/, so the same content is refused if sent again."
)


@dataclass(frozen=True, kw_only=True)
class RejectRequest:
    id: ProposalId
    reason: Annotated[str, Field(description="Why, for the record (at most 500 characters)")]


class RejectReply(TypedDict):
    """brain_reject: the tombstone committed for the proposal."""

    id: str
    state: str
    path: NotRequired[str]
    guest: NotRequired[str]
    reason: NotRequired[str]
    tombstone_sha: NotRequired[str]
    note: NotRequired[str]
    push: NotRequired[str]
    push_note: NotRequired[str]


def reject(review: Review, request: RejectRequest, caller: Caller) -> RejectReply:
    return cast(RejectReply, review.reject(caller.actor(TOOL.name), request.id, request.reason))


TOOL = Tool("brain_reject", DESCRIPTION, SUMMARY, DECIDE, RejectRequest, RejectReply, reject)

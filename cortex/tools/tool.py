"""What a tool is: `Tool` holds one tool's name, the description a client's model reads,
what it does to the brain (`Hints`), its request type, its handler and its reply type.
Each tool's module under `cortex/tools/` builds one; `cortex.tools.table` lists them, and
the doors register every tool from that table (`cortex.http.mcp_tools`), so adding a tool
is one module and one line in the table.

A request is a frozen dataclass whose fields are the tool's arguments, each with the
description tools/list shows: the door turns a call's arguments into it once, and the
handler reads it; nothing between re-spells the arguments. `Caller` says who called,
through which door.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar

from pydantic import Field

from cortex.ask.readers import ClientTurn
from cortex.brain.trailers import Actor, check_request_id
from cortex.errors import BadInput
from cortex.guests.policy import GuestPolicy

__all__ = [
    "APPEND",
    "Caller",
    "ConfirmNeeded",
    "Confirmation",
    "DECIDE",
    "Hints",
    "MAX_K",
    "NotePath",
    "ProposalId",
    "READ",
    "RequestId",
    "Tool",
    "WRITE",
    "When",
    "check_k",
]

MAX_K = 50  # hits, notes or commits one reply may hold


@dataclass(frozen=True)
class Hints:
    """What a tool does to the brain, for clients that ask before calling (MCP tool annotations)."""

    read_only: bool
    destructive: bool
    idempotent: bool


READ = Hints(read_only=True, destructive=False, idempotent=True)
WRITE = Hints(read_only=False, destructive=True, idempotent=False)
APPEND = Hints(read_only=False, destructive=False, idempotent=False)
DECIDE = Hints(read_only=False, destructive=True, idempotent=True)


@dataclass(frozen=True)
class Confirmation:
    """What a session offers a write that asks the owner first: `unable`, why the client cannot
    be asked ("" when it can); on the second round, the owner's answer (`action`: accept,
    decline or cancel; `confirmed`: the box ticked) and the first round's `state`."""

    unable: str
    action: str | None = None
    confirmed: bool = False
    state: dict[str, Any] | None = None


@dataclass(frozen=True)
class ConfirmNeeded:
    """A write's first round where the owner is asked first: what to ask, and what the second
    round must find again (the write's digest)."""

    message: str
    state: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class Caller:
    """Who called a tool: the door (named in commits), the client's name, on a trusted door
    the session's offer to brain_ask's reader order (`turn`) and to a write that asks first
    (`confirm`), and on the guest door the guest's policy as it stands at the call."""

    door: str
    client: str = "unknown"
    turn: ClientTurn | None = None
    confirm: Confirmation | None = None  # a trusted door's session, for a write that asks first
    guest: GuestPolicy | None = None

    def actor(self, tool: str, request_id: str | None = None) -> Actor:
        """The commit's author line for a write by `tool`; BadInput on a malformed request id."""
        return Actor(door=self.door, tool=tool, client=self.client, request=check_request_id(request_id))


H = TypeVar("H")  # what the handler works on: the tool set, the review, a guest desk
Q = TypeVar("Q")  # the request


@dataclass(frozen=True)
class Tool(Generic[H, Q]):
    """One tool. `handle(holder, request, caller)` does the work and returns a JSON-ready dict
    of type `reply` (the output schema tools/list shows); `asks_client`: its first round may
    instead ask the client (brain_ask's reader, brain_write's confirmation)."""

    name: str
    description: str  # what the client's model reads in tools/list
    summary: str  # its row in the README's tool table (`cortex tools`)
    hints: Hints
    request: type[Q]
    reply: Any
    handle: Callable[[H, Q, Caller], Any]
    asks_client: bool = False


def check_k(k: int | None, default: int, cap: int = MAX_K) -> int:
    """A count a client asked for: `default` when not given, at most `cap`; BadInput unless a whole number from 1."""
    if k is None:
        return default
    if not isinstance(k, int) or k < 1:
        raise BadInput("k must be a positive whole number")
    return min(k, cap)


# Arguments several tools take, described once.
NotePath = Annotated[
    str, Field(description="A note's path inside the brain, e.g. notes/topic.md (relative, / as separator)")
]
When = Annotated[
    str | None,
    Field(
        description="A commit SHA (7+ hex digits) or an ISO-8601 time: read the brain "
        "as it stood then. Default: the head."
    ),
]
ProposalId = Annotated[str, Field(description="A proposal's id, e.g. p_0123456789abcdef")]
RequestId = Annotated[
    str | None,
    Field(
        description="Any unique id (1-100 of A-Z a-z 0-9 . _ : -) chosen by the "
        "client: a retry with the same id is applied at most once."
    ),
]

"""Who made a commit, in its message: the Cortex-* trailers every write carries, and the
request ids that let a retried write apply at most once.

History reads them back (`CommitInfo.trailers`, `CommitInfo.door`), and a write whose
request id is already in a recent commit is answered from that commit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cortex.errors import BadInput

__all__ = ["REQUEST_LOOKBACK", "REQUEST_TRAILER", "Actor", "check_request_id", "commit_message"]

REQUEST_TRAILER = "Cortex-Request"
# How far back a request_id is looked for: a retry comes seconds after a lost reply.
REQUEST_LOOKBACK = 500
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,100}$")


@dataclass(frozen=True)
class Actor:
    """Who is writing: recorded as commit trailers."""

    door: str
    tool: str
    client: str = "unknown"
    request: str | None = None  # a client's request_id: a retried write applies at most once


def _clean_trailer(value: str) -> str:
    return " ".join(str(value).split())[:100] or "unknown"


def check_request_id(request_id: str | None) -> str | None:
    if request_id is None:
        return None
    if not isinstance(request_id, str) or not _REQUEST_ID.match(request_id):
        raise BadInput("request_id must be 1-100 characters of letters, digits, '.', '_', ':' or '-'")
    return request_id


def commit_message(subject: str, actor: Actor, body: str = "") -> str:
    """`subject`, `body` and the actor's trailers: a commit message as every write makes it."""
    parts = [subject]
    if body:
        parts.append(body)
    parts.append(
        "\n".join(
            [
                f"Cortex-Door: {_clean_trailer(actor.door)}",
                f"Cortex-Tool: {_clean_trailer(actor.tool)}",
                f"Cortex-Client: {_clean_trailer(actor.client)}",
            ]
            + ([f"{REQUEST_TRAILER}: {actor.request}"] if actor.request else [])
        )
    )
    return "\n\n".join(parts) + "\n"

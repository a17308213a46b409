"""brain_history: commits newest first, for one path or the whole brain, hand-made ones too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, NotRequired, cast

from pydantic import Field
from typing_extensions import TypedDict

from cortex.notes.paths import check_text
from cortex.tools.tool import READ, Caller, Tool, check_k
from cortex.tools.toolset import Tools

__all__ = ["HistoryReply", "HistoryRequest", "MAX_HISTORY", "TOOL", "history"]

MAX_HISTORY = 100

# The README's row for it (`cortex tools` prints the table).
SUMMARY = "commits newest first with door/tool/client trailers; hand-made commits too"


DESCRIPTION = (
    "Commits newest first, for one path or the whole brain, with door, tool and client; hand-made commits too."
)


@dataclass(frozen=True, kw_only=True)
class HistoryRequest:
    path: Annotated[str | None, Field(description="A note or folder; default the whole brain")] = None
    limit: Annotated[int | None, Field(description=f"Commits per reply, 1-{MAX_HISTORY}")] = 20
    before: Annotated[str | None, Field(description="A SHA cursor (`next` of the previous reply): older commits")] = (
        None
    )


class HistoryReply(TypedDict):
    """brain_history: commits newest first (`sha`, `time`, `subject`, `message`, `author`,
    `door`, `tool`, `client`, `files`), with a cursor when older ones remain."""

    sha: str | None
    commits: list[dict[str, Any]]
    more: NotRequired[str]


def history(tools: Tools, request: HistoryRequest, caller: Caller) -> HistoryReply:
    brain, path, before = tools.brain, request.path, request.before
    limit = check_k(request.limit, 20, MAX_HISTORY)
    if path is not None:
        check_text(path, "path")
    if before is not None:
        before = brain.resolve_at(before)
    head = brain.head()
    commits, more = brain.history(path, limit, before)
    reply: dict[str, Any] = {
        "sha": head,
        "commits": [
            {
                "sha": c.sha,
                "time": c.time.isoformat(),
                "subject": c.subject,
                "message": c.message.strip(),
                "author": c.author,
                "door": c.door,
                "tool": c.trailers.get("Cortex-Tool"),
                "client": c.trailers.get("Cortex-Client"),
                "files": list(c.files),
            }
            for c in commits
        ],
    }
    if more:
        reply["more"] = f"older commits remain; call again with before={commits[-1].sha}"
    return cast(HistoryReply, reply)


TOOL = Tool("brain_history", DESCRIPTION, SUMMARY, READ, HistoryRequest, HistoryReply, history)

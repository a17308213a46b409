"""brain_capture: a quick entry in today's log, one commit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from cortex.brain.note_writes import CaptureReply
from cortex.tools.tool import APPEND, Caller, RequestId, Tool
from cortex.tools.toolset import Tools

__all__ = ["CaptureReply", "CaptureRequest", "TOOL", "capture"]

# The README's row for it (`cortex tools` prints the table).
SUMMARY = "appends `## HH:MM · tag, tag` to `log/YYYY-MM-DD.md` in the brain's time zone"


DESCRIPTION = (
    "Capture a quick entry in today's log (log/YYYY-MM-DD.md, the brain's time zone) under a `## HH:MM · tags` heading."
)


@dataclass(frozen=True, kw_only=True)
class CaptureRequest:
    text: Annotated[str, Field(description="The entry's text (Markdown)")]
    tags: Annotated[list[str] | None, Field(description="Tags for the entry's heading")] = None
    request_id: RequestId = None


def capture(tools: Tools, request: CaptureRequest, caller: Caller) -> CaptureReply:
    return tools.brain.capture(request.text, caller.actor(TOOL.name, request.request_id), request.tags)


TOOL = Tool("brain_capture", DESCRIPTION, SUMMARY, APPEND, CaptureRequest, CaptureReply, capture)

"""Every tool, by door, in the order tools/list gives them: the doors register these
(`cortex.http.mcp_tools`), and the README's tool table is made from them. A new tool is
a module under `cortex/tools/` that builds a `Tool`, and one line here."""

from __future__ import annotations

import dataclasses
from typing import Any

from cortex.tools import (
    accept,
    ask,
    capture,
    connector_fetch,
    connector_search,
    context,
    corpus,
    guest_ask,
    guest_propose,
    handoff,
    history,
    listing,
    proposals,
    read,
    reject,
    search,
    verify,
    working,
    write,
)
from cortex.tools.tool import Tool

__all__ = ["GUEST_TOOLS", "OWNER_TOOLS", "REVIEW_TOOLS", "call_shape", "tools_table"]

# On every trusted door, over the tool set (`toolset.Tools`).
OWNER_TOOLS: list[Tool[Any, Any]] = [
    read.TOOL,
    write.TOOL,
    capture.TOOL,
    history.TOOL,
    search.TOOL,
    corpus.TOOL,
    listing.TOOL,
    ask.TOOL,
    verify.TOOL,
    context.TOOL,
    working.TOOL,
    handoff.TOOL,
    connector_search.TOOL,  # ChatGPT's connector contract: search, then fetch
    connector_fetch.TOOL,
]
# On the trusted doors of a server with guests, over their review (`guests.review.Review`).
REVIEW_TOOLS: list[Tool[Any, Any]] = [proposals.TOOL, accept.TOOL, reject.TOOL]
# On the guest door, over a guest desk (`guest_desk.GuestDesk`).
GUEST_TOOLS: list[Tool[Any, Any]] = [guest_ask.TOOL, guest_propose.TOOL]


def call_shape(tool: Tool[Any, Any]) -> str:
    """`brain_search(query, k=10, prefix?, ...)`: each argument, `?` when it may be left out."""
    said = []
    for field in dataclasses.fields(tool.request):
        if field.default is dataclasses.MISSING:
            said.append(field.name)
        elif field.default is None:
            said.append(f"{field.name}?")
        else:
            said.append(
                f"{field.name}={str(field.default).lower() if isinstance(field.default, bool) else field.default}"
            )
    return f"{tool.name}({', '.join(said)})"


def tools_table() -> str:
    """The README's tool table, in Markdown: one row an owner tool, in tools/list order."""
    rows = ["| tool | what it does |", "|---|---|"]
    rows += [f"| `{call_shape(t)}` | {t.summary} |" for t in OWNER_TOOLS + REVIEW_TOOLS]
    return "\n".join(rows) + "\n"

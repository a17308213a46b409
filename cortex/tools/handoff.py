"""brain_handoff's reply, and brain_context's share of open items: working state as a
client reads it, next to the project's page, log and linked notes, fenced like the boot
call and under a byte budget of JSON.
"""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass
from typing import Annotated, Any, NotRequired, cast

from pydantic import Field
from typing_extensions import TypedDict

from cortex.brain.brain import Brain
from cortex.brain.working_state import items_at
from cortex.errors import BadInput
from cortex.index.snapshot import Snapshot
from cortex.notes.data_envelope import DATA_NOTICE, fence
from cortex.notes.paths import check_text
from cortex.notes.redact import redact
from cortex.notes.working import check_project, in_working
from cortex.tools.paging import cut_to_fit, fit, json_size
from cortex.tools.tool import READ, Caller, Tool
from cortex.tools.toolset import Tools

__all__ = [
    "HANDOFF_BYTES",
    "LOG_DAYS",
    "MAX_HANDOFF_BYTES",
    "MIN_HANDOFF_BYTES",
    "context_items",
    "HandoffReply",
    "HandoffRequest",
    "TOOL",
    "handoff",
    "project_handoff",
    "linked_notes",
    "project_logs",
    "project_page",
]

HANDOFF_BYTES = 16_000  # brain_handoff's default budget, as brain_context's
MIN_HANDOFF_BYTES = 2_000
MAX_HANDOFF_BYTES = 100_000
LOG_DAYS = 14  # the handoff's log sections: this many days back


def project_handoff(brain: Brain, project: str, budget: int | None = None) -> dict[str, Any]:
    """One project's page, its open items newest first, its log sections of the last
    LOG_DAYS days and the notes its page links to or that link to it, under `budget`
    bytes of JSON as the door sends it, each fenced like the boot call's note text;
    what did not fit is counted."""
    if budget is None:
        budget = HANDOFF_BYTES
    if not isinstance(budget, int) or isinstance(budget, bool) or not MIN_HANDOFF_BYTES <= budget:
        raise BadInput(f"budget must be a whole number of bytes from {MIN_HANDOFF_BYTES}")
    budget = min(budget, MAX_HANDOFF_BYTES)
    key = check_project(project)
    snap = brain.snapshot()
    nonce = secrets.token_hex(6)
    reply: dict[str, Any] = {"sha": snap.sha, "project": key, "notice": DATA_NOTICE, "nonce": nonce}
    left: dict[str, int] = {}
    room = budget - 600 - json_size(reply)  # the left-out lines and field names

    page = project_page(snap, key)
    if page is not None:
        text = redact(snap.notes[page].text)  # masked before the cut
        cap = max(0, room // 3)
        reply["page"] = fence(page, text, nonce)
        if json_size(reply["page"]) > cap:
            cut = f"\n[cut at {cap:,} bytes of JSON; brain_read {page}]"
            start = cut_to_fit(text, cap, lambda start: fence(page, start + cut, nonce))
            reply["page"] = fence(page, start + cut, nonce)
        room -= json_size(reply["page"])
    else:
        reply["page"] = None
        reply["page_missing"] = f"no projects/{key}.md and no note whose frontmatter says project: {key}"

    items = [fence(s.path, s.line(), nonce) for s in items_at(brain, snap, key) if s.item.open]
    reply["open_items"], left["open_items"], room = _fit(items, room, share=0.5)

    logs = project_logs(snap, key, brain.today())
    fenced = [fence(f"{path} {heading}", f"{heading}\n{body}", nonce) for path, heading, body in logs]
    reply["recent_log"], left["recent_log"], room = _fit(fenced, room, share=0.5)

    linked = linked_notes(snap, page) if page else []
    rows = [fence(p, " · ".join(x for x in (p, snap.notes[p].title, _day(snap, p)) if x), nonce) for p in linked]
    reply["linked_notes"], left["linked_notes"], room = _fit(rows, room, share=1.0)

    missed = {k: v for k, v in left.items() if v}
    if missed:
        reply["left_out"] = (
            ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in missed.items())
            + f" (reply kept under {budget:,} bytes; pass budget= up to {MAX_HANDOFF_BYTES:,} for more)"
        )
    return reply


def context_items(brain: Brain, snap: Snapshot, project: str | None, room: int, nonce: str) -> tuple[list[str], int]:
    """brain_context's open items (of `project` if given), newest first, each fenced with
    the reply's `nonce`, within `room` bytes of JSON; and how many did not fit."""
    key = check_project(project) if project else None
    items = [fence(s.path, f"{s.item.project} · {s.line()}", nonce) for s in items_at(brain, snap, key) if s.item.open]
    kept, left, _ = _fit(items, room, share=1.0)
    return kept, left


def project_page(snap: Snapshot, key: str) -> str | None:
    """`projects/<key>.md`, else the first note (by path) whose frontmatter says `project: <key>`."""
    if f"projects/{key}.md" in snap.notes:
        return f"projects/{key}.md"
    for path in sorted(snap.notes):
        value = snap.notes[path].frontmatter.get("project")
        if isinstance(value, str) and value.strip().lower() == key and not in_working(path):
            return path
    return None


def project_logs(snap: Snapshot, key: str, today: dt.date) -> list[tuple[str, str, str]]:
    """(path, heading, body) of the log entries tagged `key` from the last LOG_DAYS days, newest first."""
    out = []
    for path, heading, body in snap.log_entries(today, LOG_DAYS):
        tags = {t.strip().lower() for t in heading.partition("·")[2].split(",")}
        if key in tags:
            out.append((path, heading, body))
    return out


def linked_notes(snap: Snapshot, page: str) -> list[str]:
    """The notes `page` links to and those linking to it, by their last real change, newest first."""
    resolver, back = snap.link_map()
    near = {t for t in (resolver.resolve(lk.target, page) for lk in snap.notes[page].links) if t}
    near |= {source for source, _ in back.get(page, [])}
    near -= {page}
    never = dt.datetime.min.replace(tzinfo=dt.UTC)
    return sorted((p for p in near if not in_working(p)), key=lambda p: (-(snap.real.get(p, never)).timestamp(), p))


def _day(snap: Snapshot, path: str) -> str:
    when = snap.real.get(path)
    return when.date().isoformat() if when else ""


def _fit(rows: list[str], room: int, share: float) -> tuple[list[str], int, int]:
    """The leading `rows` that fit in `share` of `room` bytes: (kept, left out, room left)."""
    kept = fit(rows, int(room * share))
    return kept, len(rows) - len(kept), room - json_size(kept)


# The README's row for it (`cortex tools` prints the table).
SUMMARY = (
    "resume one project: its page, its open items, its log entries of the last 14 days and the notes "
    "linked to or from its page; every body fenced with a per-request nonce; under 16 KB of JSON by "
    "default (`budget` 2,000–100,000 bytes)"
)


DESCRIPTION = (
    "Resume one project: its page (projects/<project>.md or the note whose frontmatter says project: "
    "<project>), its open items newest first (aged ones marked), its log entries tagged with it from the last"
    " 14 days, and the notes its page links to or that link to it, by last real change; fenced like "
    "brain_context, under the budget, saying what it left out."
)


@dataclass(frozen=True, kw_only=True)
class HandoffRequest:
    project: Annotated[str, Field(description="The project key, e.g. kiln")]
    budget: Annotated[int | None, Field(description="Reply size in bytes of JSON, 2,000-100,000 (default 16,000)")] = (
        None
    )


class HandoffReply(TypedDict):
    """brain_handoff: resume one project, every body fenced with `nonce`."""

    sha: str | None
    project: str
    notice: str
    nonce: str
    page: str | None  # None, with page_missing, when the project has no page
    open_items: list[str]
    recent_log: list[str]
    linked_notes: list[str]
    page_missing: NotRequired[str]
    left_out: NotRequired[str]


def handoff(tools: Tools, request: HandoffRequest, caller: Caller) -> HandoffReply:
    check_text(request.project, "project")
    return cast(HandoffReply, project_handoff(tools.brain, request.project, request.budget))


TOOL = Tool("brain_handoff", DESCRIPTION, SUMMARY, READ, HandoffRequest, HandoffReply, handoff)

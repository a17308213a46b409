"""brain_context's boot reply: the profile, the recent log entries and a router of live
notes, fenced, under a byte budget.

The boot call is made every session, so it stays small by default (a real 722-note
vault's router made it 44 KB); a client may ask for more or less.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Annotated, Any, NotRequired, cast

from pydantic import Field
from typing_extensions import TypedDict

from cortex.errors import BadInput
from cortex.index.snapshot import Snapshot
from cortex.notes.data_envelope import DATA_NOTICE, fence, new_nonce
from cortex.notes.redact import redact
from cortex.notes.working import in_working
from cortex.tools.handoff import context_items
from cortex.tools.paging import cut_to_fit, json_size
from cortex.tools.tool import READ, Caller, Tool
from cortex.tools.toolset import Tools

__all__ = [
    "CONTEXT_FIELDS_BYTES",
    "CONTEXT_REPLY_BYTES",
    "LOG_DAYS",
    "LOG_SHARE",
    "MAX_CONTEXT_BYTES",
    "MIN_CONTEXT_BYTES",
    "PROFILE_BYTES",
    "VERIFY_ADVICE",
    "ContextReply",
    "ContextRequest",
    "TOOL",
    "WORKING_SHARE",
    "boot_context",
    "context",
    "router_order",
]

CONTEXT_REPLY_BYTES = 16_000
MIN_CONTEXT_BYTES = 4_000
MAX_CONTEXT_BYTES = 100_000
PROFILE_BYTES = 6_000
LOG_DAYS = 7
# Said in the server's instructions, in brain_context's reply and in brain_verify's description.
VERIFY_ADVICE = (
    "After answering from the notes yourself, call brain_verify with the answer and the verbatim "
    "sentences it relied on (each with its note's path), and tell the user the overall stamp it returns."
)
# Room for the reply's own fields (sha, notice, nonce, left-out lines), and the share of
# the rest the recent logs may take before the router.
CONTEXT_FIELDS_BYTES = 1_000
LOG_SHARE = 1 / 3


def router_order(snap: Snapshot, paths: list[str]) -> list[str]:
    """Router rows best first: the last real change (not an import), then whether the
    profile or a project links to the note (or it is a project), then backlinks, then path."""
    resolver, back = snap.link_map()
    hubs = ["profile.md"] + [p for p in snap.notes if p.startswith("projects/")]
    linked = {p for p in snap.notes if p.startswith("projects/")}
    for hub in hubs:
        if hub in snap.notes:
            linked.update(t for t in (resolver.resolve(lk.target, hub) for lk in snap.notes[hub].links) if t)
    never = dt.datetime.min.replace(tzinfo=dt.UTC)

    def key(p: str) -> tuple:
        when = snap.real.get(p, never)
        return (
            -when.timestamp() if when is not never else float("inf"),
            p not in linked,
            -len({s for s, _ in back.get(p, [])}),
            p,
        )

    return sorted(paths, key=key)


def boot_context(
    snap: Snapshot, today: dt.date, project: str | None, nonce: str, cap: int = CONTEXT_REPLY_BYTES
) -> dict[str, Any]:
    """The boot call: profile, recent log entries and a router of live notes, under `cap` bytes of JSON."""
    reply: dict[str, Any] = {"sha": snap.sha, "notice": DATA_NOTICE, "nonce": nonce, "verify": VERIFY_ADVICE}
    budget = cap - CONTEXT_FIELDS_BYTES - json_size(reply)
    profile = snap.notes.get("profile.md")
    profile_cap = min(PROFILE_BYTES, budget // 3)
    if profile:
        text = redact(profile.text)  # masked before the cut
        if json_size(text) > profile_cap:  # counted as sent: a control character is six bytes of JSON
            said = f"\n[profile cut at {profile_cap} bytes; brain_read profile.md for all]"
            text = cut_to_fit(text, profile_cap - json_size(said) + 2) + said
        reply["profile"] = fence("profile.md", text, nonce)
        budget -= json_size(reply["profile"])
    # Recent logs first so they are never crowded out by the router.
    logs = [
        (path, heading, body)
        for path, heading, body in snap.log_entries(today, LOG_DAYS)
        if not project or project.lower() in heading.lower()
    ]
    log_items, log_left = [], 0
    log_budget = int(budget * LOG_SHARE)
    for path, heading, body in logs:
        text = fence(f"{path} {heading}", f"{heading}\n{body}", nonce)
        size = json_size(text) + 1
        if size > log_budget:
            log_left += 1
            continue
        log_budget -= size
        budget -= size
        log_items.append(text)
    reply["recent_log"] = log_items
    if log_left:
        reply["recent_log_left_out"] = f"{log_left} entr(ies) over the budget; brain_read the log/ files"
    rows = []
    live = [
        p
        for p in snap.notes
        if p != "profile.md" and snap.live(p, today) and not p.startswith("log/") and not in_working(p)
    ]
    if project:
        live = [p for p in live if project in p or project in snap.notes[p].tags]
    live = router_order(snap, live)
    for path in live:
        note = snap.notes[path]
        when = snap.real.get(path)
        row = " · ".join(
            x
            for x in [
                path,
                note.description or note.title,
                ", ".join(note.tags[:5]),
                when.date().isoformat() if when else "",
            ]
            if x
        )
        size = json_size(row) + 1
        if size > budget:
            break
        budget -= size
        rows.append(row)
    reply["router"] = rows
    if len(rows) < len(live):
        reply["router_left_out"] = (
            f"{len(live) - len(rows)} more live note(s) not listed (reply kept under "
            f"{cap:,} bytes; pass budget= up to {MAX_CONTEXT_BYTES:,} for more); "
            "reach them with brain_search or brain_corpus(query=...)"
        )
    return reply


WORKING_SHARE = 0.2  # of brain_context's budget kept for open working items

# The README's row for it (`cortex tools` prints the table).
SUMMARY = (
    "the boot call: profile, the last 7 days of log entries, the open working items, and a router of live "
    "notes ranked by their last real change, then by what `profile.md` and `projects/` link to, then by "
    "backlinks; every body fenced with a per-request nonce; under 16 KB of JSON by default (`budget` "
    "4,000–100,000 bytes); says how many rows it left out"
)


DESCRIPTION = (
    "The boot call: the owner's profile, the last 7 days of log entries, the open working items (focus, "
    "decisions, questions, handoffs; aged ones marked) and a router of live notes (last real change first, "
    "then what the profile and projects link to), under 16 KB by default; it says how many notes and items it"
    " left out. Call this first."
)


@dataclass(frozen=True, kw_only=True)
class ContextRequest:
    project: Annotated[str | None, Field(description="Only log entries tagged with this project")] = None
    budget: Annotated[
        int | None,
        Field(
            description=f"Reply size in bytes of JSON, "
            f"{MIN_CONTEXT_BYTES:,}-{MAX_CONTEXT_BYTES:,} "
            f"(default {CONTEXT_REPLY_BYTES:,})"
        ),
    ] = None


class ContextReply(TypedDict):
    """brain_context: the boot call, every body fenced with `nonce`."""

    sha: str | None
    notice: str
    nonce: str
    verify: str
    profile: NotRequired[str]  # when the brain has a profile.md
    recent_log: list[str]
    router: list[str]
    open_items: list[str]
    recent_log_left_out: NotRequired[str]
    router_left_out: NotRequired[str]
    open_items_left_out: NotRequired[str]


def context(tools: Tools, request: ContextRequest, caller: Caller) -> ContextReply:
    """The boot reply, then the open working items, newest first, in their own share of the budget."""
    project, budget = request.project, request.budget
    if budget is None:
        budget = CONTEXT_REPLY_BYTES
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < MIN_CONTEXT_BYTES:
        raise BadInput(f"budget must be a whole number of bytes from {MIN_CONTEXT_BYTES}")
    brain = tools.brain
    snap = brain.snapshot()
    cap = min(budget, MAX_CONTEXT_BYTES)
    reply = boot_context(snap, brain.today(), project, new_nonce(), cap - int(cap * WORKING_SHARE))
    room = cap - json_size(reply) - 200
    items, left = context_items(brain, snap, project, room, reply["nonce"])
    reply["open_items"] = items
    if left:
        reply["open_items_left_out"] = (
            f"{left} open item(s) over the budget; brain_working(action='list') or brain_handoff lists them"
        )
    return cast(ContextReply, reply)


TOOL = Tool("brain_context", DESCRIPTION, SUMMARY, READ, ContextRequest, ContextReply, context)

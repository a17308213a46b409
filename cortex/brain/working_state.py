"""Working state over a brain: the items of `working/` at a commit, each with its age from
Git; brain_working's changes, one commit each; and brain_handoff's page of one project.

The format is `working.py`'s. Age needs no writer: an item is aged when no commit changed
its line for more than `working.AGED_DAYS` days (`GitStore.line_times`, Git's blame), read
when the item is read.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import secrets
from typing import Any

from cortex.brain.brain import Brain
from cortex.brain.trailers import Actor
from cortex.errors import BadInput
from cortex.index.snapshot import Snapshot
from cortex.notes.data_envelope import DATA_NOTICE, fence
from cortex.notes.redact import redact
from cortex.notes.working import (
    GENERAL,
    Item,
    WorkingError,
    add,
    change,
    check_project,
    in_working,
    is_aged,
    parse_items,
    project_of,
    project_path,
)

__all__ = [
    "ACTIONS",
    "HANDOFF_BYTES",
    "LOG_DAYS",
    "MAX_HANDOFF_BYTES",
    "MIN_HANDOFF_BYTES",
    "Seen",
    "Working",
    "context_items",
    "items_at",
    "linked_notes",
    "project_logs",
    "project_page",
]

HANDOFF_BYTES = 16_000  # brain_handoff's default budget, as brain_context's
MIN_HANDOFF_BYTES = 2_000
MAX_HANDOFF_BYTES = 100_000
LOG_DAYS = 14  # the handoff's log sections: this many days back
ACTIONS = ("add", "list", "file", "drop", "touch")


@dataclasses.dataclass(frozen=True)
class Seen:
    """An item as read at a commit: where it is, when its line last changed, whether aged."""

    item: Item
    path: str
    changed: dt.date | None
    aged: bool

    def row(self) -> dict[str, Any]:
        i = self.item
        out: dict[str, Any] = {"id": i.id, "kind": i.kind, "text": i.text, "project": i.project, "state": i.state}
        if i.opened:
            out["opened"] = i.opened.isoformat()
        if self.changed:
            out["last_change"] = self.changed.isoformat()
        if i.open:
            out["aged"] = self.aged
        if i.into:
            out["filed_into"] = i.into
        if i.reason:
            out["reason"] = i.reason
        if i.closed:
            out["closed"] = i.closed.isoformat()
        if i.block != i.id:
            out["repeats_id"] = f"an earlier line of {self.path} also ends in ^{i.block}; this one is {i.id}"
        return out

    def line(self) -> str:
        """One line for brain_context and the handoff."""
        i = self.item
        when = f"opened {i.opened.isoformat()}" if i.opened else ""
        aged = f"aged: untouched since {self.changed.isoformat()}" if self.aged and self.changed else ""
        return " · ".join(x for x in (f"{i.kind}: {i.text}", when, aged, f"^{i.id}") if x)


def items_at(brain: Brain, snap: Snapshot, project: str | None = None, ages: bool = True) -> list[Seen]:
    """Every item of the working files at `snap` (of one project, if given), newest first.
    `ages=False`: without Git's blame (no item reads as aged), for callers that need only
    which items exist and where."""
    today = brain.today()
    out = []
    paths = [project_path(project)] if project else sorted(p for p in snap.notes if project_of(p))
    for path in paths:
        note = snap.notes.get(path)
        if note is None:
            continue
        key = project_of(path) or GENERAL
        times = []
        if ages:
            try:
                times = brain.store.line_times(snap.sha, path)
            except (KeyError, ValueError, OSError):
                times = []
        for item in parse_items(note.text, key):
            n = item.git_line
            changed = times[n].astimezone(brain.tz).date() if n < len(times) else None
            out.append(Seen(item, path, changed, is_aged(item, changed, today)))
    out.sort(key=lambda s: (s.item.opened or s.changed or dt.date.min, s.item.id), reverse=True)
    return out


class Working:
    """brain_working and brain_handoff over one brain."""

    def __init__(self, brain: Brain):
        self.brain = brain

    def act(self, actor: Actor, action: str, **args: Any) -> dict[str, Any]:
        if action not in ACTIONS:
            raise BadInput(f"action must be one of {', '.join(ACTIONS)}, not {str(action)[:40]!r}")
        try:
            return getattr(self, f"_{action}")(actor, **args)
        except WorkingError as exc:
            raise BadInput(str(exc)) from None

    def _list(self, actor: Actor, project: str | None = None, include_closed: bool = False, **_: Any) -> dict[str, Any]:
        snap = self.brain.snapshot()
        seen = items_at(self.brain, snap, check_project(project) if project else None)
        shown = [s for s in seen if include_closed or s.item.open]
        return {
            "sha": snap.sha,
            "items": [s.row() for s in shown],
            "open": sum(1 for s in seen if s.item.open),
            "aged": sum(1 for s in seen if s.aged),
            "closed_not_listed": 0 if include_closed else sum(1 for s in seen if not s.item.open),
        }

    def _add(
        self, actor: Actor, kind: str | None = None, text: str | None = None, project: str | None = None, **_: Any
    ) -> dict[str, Any]:
        if kind is None or text is None:
            raise BadInput("action add needs kind and text")
        key = check_project(project)
        path = project_path(key)
        taken = {s.item.id for s in items_at(self.brain, self.brain.snapshot(), ages=False)}
        item_id = _new_id(taken)
        day = self.brain.today()
        subject = f"brain_working: add {item_id} to {path}"
        reply = self.brain.rewrite(path, actor, subject, lambda now: add(now, key, kind, text, day, item_id))
        return dict(reply, id=item_id, project=key, state="open")

    def _file(self, actor: Actor, id: str | None = None, into: str | None = None, **_: Any) -> dict[str, Any]:
        if not id or not into:
            raise BadInput("action file needs id and into: a note path that exists")
        snap = self.brain.snapshot()
        target = self.brain.stored_path(into, snap.sha)
        if target not in snap.notes:
            raise BadInput(f"no note at {into} in commit {snap.sha[:12]}: write the note first, then file the item")
        if in_working(target):
            raise BadInput("into must be a note outside working/")
        day = self.brain.today()
        return self._close(actor, id, "file", lambda i: dataclasses.replace(i, state="filed", closed=day, into=target))

    def _drop(self, actor: Actor, id: str | None = None, reason: str | None = None, **_: Any) -> dict[str, Any]:
        if not id or not reason or not reason.strip():
            raise BadInput("action drop needs id and reason")
        why = " ".join(reason.split())[:300]
        day = self.brain.today()
        return self._close(actor, id, "drop", lambda i: dataclasses.replace(i, state="dropped", closed=day, reason=why))

    def _touch(self, actor: Actor, id: str | None = None, **_: Any) -> dict[str, Any]:
        if not id:
            raise BadInput("action touch needs id")
        day = self.brain.today()
        return self._close(actor, id, "touch", lambda i: dataclasses.replace(i, touched=day), must_be_open=True)

    def _close(self, actor: Actor, item_id: str, verb: str, edit, must_be_open: bool = False) -> dict[str, Any]:
        found = [s for s in items_at(self.brain, self.brain.snapshot(), ages=False) if s.item.id == item_id]
        if not found:
            raise BadInput(f"no working item {item_id}; brain_working(action='list') lists them")
        seen = found[0]
        if must_be_open and not seen.item.open:
            raise BadInput(f"item {item_id} is {seen.item.state}, not open")
        if not must_be_open and not seen.item.open:
            raise BadInput(f"item {item_id} is already {seen.item.state}")
        key = seen.item.project
        done: dict[str, Item] = {}

        def rewrite(text: str | None) -> str:
            if text is None:
                raise BadInput(f"{seen.path} is gone")
            new_text, item = change(text, item_id, key, edit)
            done["item"] = item
            return new_text

        reply = self.brain.rewrite(seen.path, actor, f"brain_working: {verb} {item_id} in {seen.path}", rewrite)
        return dict(reply, id=item_id, project=key, state=done["item"].state)

    def handoff(self, project: str, budget: int | None = None) -> dict[str, Any]:
        """One project's page, its open items newest first, its log sections of the last
        LOG_DAYS days and the notes its page links to or that link to it, under `budget`
        bytes of JSON, fenced like the boot call; what did not fit is counted."""
        if budget is None:
            budget = HANDOFF_BYTES
        if not isinstance(budget, int) or isinstance(budget, bool) or not MIN_HANDOFF_BYTES <= budget:
            raise BadInput(f"budget must be a whole number of bytes from {MIN_HANDOFF_BYTES}")
        budget = min(budget, MAX_HANDOFF_BYTES)
        key = check_project(project)
        snap = self.brain.snapshot()
        nonce = secrets.token_hex(6)
        reply: dict[str, Any] = {"sha": snap.sha, "project": key, "notice": DATA_NOTICE, "nonce": nonce}
        left: dict[str, int] = {}
        room = budget - 600 - _size(reply)  # the left-out lines and field names

        page = project_page(snap, key)
        if page is not None:
            text = redact(snap.notes[page].text)  # masked before the cut
            cap = max(0, room // 3)
            if len(text.encode()) > cap:
                text = text.encode()[:cap].decode("utf-8", "ignore") + f"\n[cut at {cap} bytes; brain_read {page}]"
            reply["page"] = fence(page, text, nonce)
            room -= _size(reply["page"])
        else:
            reply["page"] = None
            reply["page_missing"] = f"no projects/{key}.md and no note whose frontmatter says project: {key}"

        items = [s for s in items_at(self.brain, snap, key) if s.item.open]
        reply["open_items"], left["open_items"], room = _fit([s.line() for s in items], room, share=0.5)

        logs = project_logs(snap, key, self.brain.today())
        fenced = [fence(f"{path} {heading}", f"{heading}\n{body}", nonce) for path, heading, body in logs]
        reply["recent_log"], left["recent_log"], room = _fit(fenced, room, share=0.5)

        linked = linked_notes(snap, page) if page else []
        rows = [" · ".join(x for x in (p, snap.notes[p].title, _day(snap, p)) if x) for p in linked]
        reply["linked_notes"], left["linked_notes"], room = _fit(rows, room, share=1.0)

        missed = {k: v for k, v in left.items() if v}
        if missed:
            reply["left_out"] = (
                ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in missed.items())
                + f" (reply kept under {budget:,} bytes; pass budget= up to {MAX_HANDOFF_BYTES:,} for more)"
            )
        return reply


def context_items(brain: Brain, snap: Snapshot, project: str | None, room: int) -> tuple[list[str], int]:
    """brain_context's open items (of `project` if given), newest first, within `room`
    bytes of JSON; and how many did not fit."""
    key = check_project(project) if project else None
    items = [s for s in items_at(brain, snap, key) if s.item.open]
    kept, left, _ = _fit([f"{s.item.project} · {s.line()}" for s in items], room, share=1.0)
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
    never = dt.datetime.min.replace(tzinfo=dt.timezone.utc)
    return sorted((p for p in near if not in_working(p)), key=lambda p: (-(snap.real.get(p, never)).timestamp(), p))


def _day(snap: Snapshot, path: str) -> str:
    when = snap.real.get(path)
    return when.date().isoformat() if when else ""


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def _fit(rows: list[str], room: int, share: float) -> tuple[list[str], int, int]:
    """The leading `rows` that fit in `share` of `room` bytes: (kept, left out, room left)."""
    cap = int(room * share)
    kept, used = [], 2
    for row in rows:
        size = _size(row) + 1
        if used + size > cap:
            break
        kept.append(row)
        used += size
    return kept, len(rows) - len(kept), room - used


def _new_id(taken: set[str]) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    while True:
        item_id = "w" + "".join(secrets.choice(alphabet) for _ in range(4))
        if item_id not in taken:
            return item_id

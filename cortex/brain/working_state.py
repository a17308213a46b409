"""Working state over a brain: the items of `working/` at a commit, each with its age from
Git, and brain_working's changes, one commit each.

The format is `working.py`'s. Age needs no writer: an item is aged when no commit changed
its line for more than `working.AGED_DAYS` days (`GitStore.line_times`, Git's blame), read
when the item is read.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import secrets
from collections.abc import Callable
from typing import Any

from cortex.brain.brain import Brain
from cortex.brain.trailers import Actor
from cortex.errors import BadInput
from cortex.index.snapshot import Snapshot
from cortex.notes.nearest import did_you_mean
from cortex.notes.working import (
    FILED_UNDER,
    GENERAL,
    Item,
    WorkingError,
    add,
    change,
    check_heading,
    check_project,
    file_into,
    filed_line,
    in_working,
    is_aged,
    parse_items,
    project_of,
    project_path,
)

__all__ = ["ACTIONS", "Seen", "Working", "items_at"]

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
    """brain_working over one brain."""

    def __init__(self, brain: Brain):
        self.brain = brain

    def act(self, actor: Actor, action: str, **args: Any) -> dict[str, Any]:
        if action not in ACTIONS:
            raise BadInput(f"action must be one of {', '.join(ACTIONS)}, not {str(action)[:40]!r}")
        try:
            reply: dict[str, Any] = getattr(self, f"_{action}")(actor, **args)
            return reply
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

    def _file(
        self, actor: Actor, id: str | None = None, into: str | None = None, heading: str | None = None, **_: Any
    ) -> dict[str, Any]:
        """Close the item as filed and write it into the note `into`, at the end of its section
        `heading` (made at the note's end when it has none; by default the kind's, `FILED_UNDER`):
        both files in one commit."""
        if not id or not into:
            raise BadInput("action file needs id and into: a note path that exists")
        if heading is not None:
            check_heading(heading)
        snap = self.brain.snapshot()
        target = self.brain.stored_path(into, snap.sha)
        if target not in snap.notes:
            raise BadInput(
                f"no note at {into} in commit {snap.sha[:12]}: write the note first, then file the item"
                + did_you_mean(self.brain.nearest_paths(into, snap.sha))
            )
        if in_working(target):
            raise BadInput("into must be a note outside working/")
        day = self.brain.today()
        done: dict[str, Any] = {}

        def write_into(text: str | None) -> str:
            if text is None:
                raise BadInput(f"{target} is gone: write the note first, then file the item")
            item, source = done["item"], done["path"]
            done["heading"] = check_heading(heading or FILED_UNDER[item.kind])
            return file_into(text, done["heading"], filed_line(item, source, day))

        reply = self._close(
            actor,
            id,
            "file",
            lambda i: dataclasses.replace(i, state="filed", closed=day, into=target),
            also={target: write_into},
            done=done,
        )
        return dict(reply, filed_into=target, heading=done["heading"])

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

    def _close(
        self,
        actor: Actor,
        item_id: str,
        verb: str,
        edit: Callable[[Item], Item],
        must_be_open: bool = False,
        also: dict[str, Any] | None = None,
        done: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Rewrite item `item_id`'s line for `edit`; `also`: other files' edits in the same
        commit, run after it (`done` then holds the item as closed and its file's path)."""
        found = [s for s in items_at(self.brain, self.brain.snapshot(), ages=False) if s.item.id == item_id]
        if not found:
            raise BadInput(f"no working item {item_id}; brain_working(action='list') lists them")
        seen = found[0]
        if must_be_open and not seen.item.open:
            raise BadInput(f"item {item_id} is {seen.item.state}, not open")
        if not must_be_open and not seen.item.open:
            raise BadInput(f"item {item_id} is already {seen.item.state}")
        key = seen.item.project
        done = {} if done is None else done
        done["path"] = seen.path

        def rewrite(text: str | None) -> str:
            if text is None:
                raise BadInput(f"{seen.path} is gone")
            new_text, item = change(text, item_id, key, edit)
            done["item"] = item
            return new_text

        subject = f"brain_working: {verb} {item_id} in {seen.path}" + "".join(f" into {p}" for p in also or {})
        reply = self.brain.rewrite_files(actor, subject, {seen.path: rewrite, **(also or {})})
        return dict(reply, id=item_id, project=key, state=done["item"].state)


def _new_id(taken: set[str]) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    while True:
        item_id = "w" + "".join(secrets.choice(alphabet) for _ in range(4))
        if item_id not in taken:
            return item_id

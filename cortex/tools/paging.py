"""Replies under a size: what a value costs in JSON, text cut into parts on UTF-8
boundaries, the page count, and brain_corpus's pages with their `<index>:<part>` cursors.

A client pays for every byte of a reply in its context, so each tool reply is kept under
a byte budget of JSON (escapes included), and a text too long for one is cut into parts
that a cursor or a page number resumes exactly.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from typing import Any

from cortex.errors import BadInput
from cortex.index.snapshot import Snapshot
from cortex.notes.note import Note
from cortex.notes.redact import redact

__all__ = [
    "CURSOR",
    "REPLY_FIELDS_BYTES",
    "corpus_page",
    "cut_part",
    "cut_to_fit",
    "fit",
    "json_size",
    "jsonable",
    "page_count",
    "parse_cursor",
    "part_budget",
]

CURSOR = re.compile(r"([0-9]{1,9}):([0-9]{1,9})")  # brain_corpus's `after`: <index>:<part>


def jsonable(value: Any) -> Any:
    """`value` with dates as ISO text, keys as text and anything else unknown as its str()."""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def fit(items: list[Any], cap: int) -> list[Any]:
    """The leading `items` whose JSON stays under `cap` bytes."""
    used = 2
    for i, item in enumerate(items):
        used += json_size(item) + 1
        if used > cap:
            return items[:i]
    return items


# Room for a corpus reply's own fields (sha, total_notes, next, more): measured under
# 400 bytes; 2,000 leaves room for a long `more` line and the JSON framing.
REPLY_FIELDS_BYTES = 2_000


def json_size(value: Any) -> int:
    """Bytes `value` takes in a JSON reply (UTF-8, escapes included): what a client's context pays."""
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def cut_to_fit(text: str, cap: int, wrap: Callable[[str], Any] = lambda start: start) -> str:
    """The longest start of `text` whose `wrap(start)` takes at most `cap` bytes of JSON ("" when
    none does). Counted as sent, not in raw bytes: a control character takes six in JSON."""
    if json_size(wrap(text)) <= cap:
        return text
    fits, over = 0, len(text)
    while over - fits > 1:
        mid = (fits + over) // 2
        fits, over = (mid, over) if json_size(wrap(text[:mid])) <= cap else (fits, mid)
    return text[:fits]


def part_budget(text: str, cap: int) -> int:
    """Raw UTF-8 bytes per part of `text` so that each part's JSON stays under the page.

    JSON escaping grows text (quotes, backslashes, tabs and newlines take two bytes
    each; measured up to +10% on real notes, more on code), so the raw budget shrinks
    by the note's own growth ratio. It depends only on the text, so a cursor names the
    same part on every call.
    """
    raw = len(text.encode("utf-8")) or 1
    growth = max(1.0, (json_size(text) - 2) / raw)
    return max(1_000, int((cap - REPLY_FIELDS_BYTES) / growth))


def page_count(data: bytes, size: int) -> int:
    """The pages (or parts) `data` takes at `size` bytes each: the last may be short, and
    even empty text is one page. brain_read's pages and brain_corpus's parts both count so."""
    return max(1, -(-len(data) // size))


def corpus_page(
    snap: Snapshot,
    order: list[str],
    after: str | None,
    cap: int,
    describe: Callable[[Note], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Full notes in `order`, under `cap` bytes of JSON, resuming at cursor `after`.

    A note larger than the cap comes in numbered parts; the cursor is
    `<index>:<part>` so a resumed call continues exactly where this one stopped.
    `describe` gives fields of a note's first part beside its text (what of it is retired).
    """
    start_i, start_part = parse_cursor(after, snap, order, cap) if after else (0, 0)
    items: list[dict[str, Any]] = []
    used = REPLY_FIELDS_BYTES
    i, part = start_i, start_part
    while i < len(order):
        note = snap.notes[order[i]]
        text = redact(note.text)  # masked before it is cut into parts
        data = text.encode("utf-8")
        budget_part = part_budget(text, cap)
        parts = page_count(data, budget_part)
        piece = cut_part(data, part, budget_part) if parts > 1 else text
        item: dict[str, Any] = {"path": note.path, "status": note.status, "blob": snap.blobs[note.path], "text": piece}
        if describe is not None and part == 0:
            item.update(describe(note))
        if parts > 1:
            item["part"] = f"{part + 1} of {parts}"
        size = json_size(item) + 2
        if items and used + size > cap:
            break
        items.append(item)
        used += size
        if part + 1 < parts:
            part += 1
            break  # the rest of a long note starts the next page
        i, part = i + 1, 0
    reply: dict[str, Any] = {"sha": snap.sha, "notes": items, "total_notes": len(order)}
    if i < len(order):
        reply["next"] = f"{i}:{part}"
        reply["more"] = (
            f"{len(order) - i} note(s) not yet returned (reply capped at {cap} bytes); call again with after={i}:{part}"
        )
    return reply


def parse_cursor(after: str, snap: Snapshot, order: list[str], cap: int) -> tuple[int, int]:
    """(note index, part) from a cursor `<index>:<part>`; BadInput unless it points inside this listing."""
    bad = BadInput("after must be a cursor returned by an earlier brain_corpus call (<index>:<part>)")
    m = CURSOR.fullmatch(after) if isinstance(after, str) else None
    if not m:
        raise bad
    i, part = int(m.group(1)), int(m.group(2))
    if i > len(order) or (i == len(order) and part != 0):
        raise BadInput(f"after={after} is past the end: this listing has {len(order)} notes")
    if i < len(order):
        text = redact(snap.notes[order[i]].text)
        if part >= page_count(text.encode("utf-8"), part_budget(text, cap)):
            raise BadInput(f"after={after} names a part that note {i} does not have")
    return i, part


def cut_part(data: bytes, n: int, size: int) -> str:
    """The n-th part of `data`, cut on a UTF-8 character boundary."""
    start = n * size
    end = min(len(data), start + size)
    while start > 0 and start < len(data) and (data[start] & 0xC0) == 0x80:
        start -= 1
    while end < len(data) and (data[end] & 0xC0) == 0x80:
        end -= 1
    return data[start:end].decode("utf-8", errors="replace")

"""Unified diffs shaped for display: rows of (kind, text) that a template escapes.

The console never builds HTML by hand: each row's text goes through Jinja2's
autoescape, and `kind` only picks a CSS class (file, hunk, add, del, ctx).
"""

from __future__ import annotations

import difflib

from cortex.notes.note import decode
from cortex.notes.redact import redact

__all__ = ["MAX_DIFF_ROWS", "Row", "blob_diff", "diff_rows"]

MAX_DIFF_ROWS = 2_000  # per file; a huge rewrite says how much it left out

Row = tuple[str, str]


def diff_rows(
    old: str | None, new: str | None, path: str, limit: int = MAX_DIFF_ROWS, max_chars: int | None = None
) -> list[Row]:
    """Rows of a unified diff from `old` to `new` (None: the file is absent on that side).

    At most `limit` rows and, when given, `max_chars` characters of row text (a
    1 MiB proposal can be one line); the last row says what was left out.
    """
    lines = difflib.unified_diff(
        (old or "").splitlines(),
        (new or "").splitlines(),
        fromfile=f"a/{path}" if old is not None else "/dev/null",
        tofile=f"b/{path}" if new is not None else "/dev/null",
        lineterm="",
    )
    rows: list[Row] = []
    extra_rows = extra_chars = 0
    budget = max_chars if max_chars is not None else -1
    for i, line in enumerate(lines):
        if len(rows) >= limit or budget == 0:
            extra_rows += 1
            extra_chars += len(line)
            continue
        if budget > 0 and len(line) > budget:
            extra_chars += len(line) - budget
            line, budget = line[:budget] + " …", 0
        elif budget > 0:
            budget -= len(line)
        if i < 2:
            kind = "file"  # the ---/+++ header: the first two lines, never content
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "ctx"
        rows.append((kind, line))
    if extra_rows or extra_chars:
        rows.append(("hunk", f"… {extra_rows} more diff lines and {extra_chars:,} more characters not shown"))
    return rows


def blob_diff(path: str, old: bytes | None, new: bytes | None) -> dict:
    """A file's diff for display: redacted text rows, or a note that the file is binary."""
    status = "added" if old is None else "deleted" if new is None else "changed"
    if (old and b"\0" in old) or (new and b"\0" in new):
        return {"path": path, "status": status, "binary": True, "rows": []}
    before = redact(decode(old)) if old is not None else None
    after = redact(decode(new)) if new is not None else None
    return {"path": path, "status": status, "binary": False, "rows": diff_rows(before, after, path)}

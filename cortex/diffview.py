"""Unified diffs shaped for display: rows of (kind, text) that a template escapes.

The console never builds HTML by hand: each row's text goes through Jinja2's
autoescape, and `kind` only picks a CSS class (file, hunk, add, del, ctx).
"""

from __future__ import annotations

import difflib

from .corpus import decode
from .redact import redact

MAX_DIFF_ROWS = 2_000  # per file; a huge rewrite says how much it left out

Row = tuple[str, str]


def diff_rows(old: str | None, new: str | None, path: str, limit: int = MAX_DIFF_ROWS) -> list[Row]:
    """Rows of a unified diff from `old` to `new` (None: the file is absent on that side)."""
    lines = difflib.unified_diff(
        (old or "").splitlines(), (new or "").splitlines(),
        fromfile=f"a/{path}" if old is not None else "/dev/null",
        tofile=f"b/{path}" if new is not None else "/dev/null", lineterm="")
    rows: list[Row] = []
    extra = 0
    for i, line in enumerate(lines):
        if len(rows) >= limit:
            extra += 1
            continue
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
    if extra:
        rows.append(("hunk", f"… {extra} more diff lines not shown"))
    return rows


def blob_diff(path: str, old: bytes | None, new: bytes | None) -> dict:
    """A file's diff for display: redacted text rows, or a note that the file is binary."""
    status = "added" if old is None else "deleted" if new is None else "changed"
    if (old and b"\0" in old) or (new and b"\0" in new):
        return {"path": path, "status": status, "binary": True, "rows": []}
    before = redact(decode(old)) if old is not None else None
    after = redact(decode(new)) if new is not None else None
    return {"path": path, "status": status, "binary": False, "rows": diff_rows(before, after, path)}

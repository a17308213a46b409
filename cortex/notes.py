"""Parsing one note: frontmatter, title, headings and whether the note is retired.

Pure functions, no I/O: everything that decides what a note *says about itself*
lives here so it can be tested without a repository.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import frontmatter
import yaml

# libyaml's safe loader when present: about 10x faster than the pure-Python one,
# which matters when a cold start parses 10,000 frontmatters.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# python-frontmatter's YAML handler does the full parse behind the fast path; it is
# given the safe loader above (its default is the pure-Python one).
_YAML = frontmatter.YAMLHandler()

RETIRED_STATUSES = frozenset({"superseded", "retracted"})
STATUSES = frozenset({"current", "superseded", "retracted", "draft"})

# Frontmatter bigger than this is treated as body, not parsed: a YAML bomb or a
# pasted blob should never cost more than a bounded parse.
MAX_FRONTMATTER_BYTES = 16_384
# The byte cap does not bound what YAML aliases expand to: 350 bytes of
# "billion laughs" anchors load as shared lists that a reply (JSON) would expand
# to 9^9 strings, and `a: &a [*a]` loads as a list that contains itself. Parsed
# frontmatter is walked as a reply would expand it and refused past these.
MAX_FRONTMATTER_VALUES = 10_000
MAX_FRONTMATTER_DEPTH = 32

_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)?---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


@dataclass(frozen=True)
class Note:
    """A parsed note. `body_offset` is where the body starts inside `text`."""

    path: str
    text: str
    body: str
    body_offset: int
    frontmatter: dict[str, Any]
    title: str
    description: str
    tags: tuple[str, ...]
    status: str
    superseded_by: str | None
    valid_from: dt.date | None
    valid_until: dt.date | None
    headings: tuple[str, ...]
    frontmatter_error: str | None = None
    warnings: tuple[str, ...] = field(default=())

    def retired_reason(self, today: dt.date) -> str | None:
        """Why the whole note is retired on `today`, or None when it is live."""
        if self.status in RETIRED_STATUSES:
            reason = f"status: {self.status}"
            if self.superseded_by:
                reason += f" (superseded by {self.superseded_by})"
            return reason
        if self.valid_until is not None and self.valid_until < today:
            return f"valid_until {self.valid_until.isoformat()} has passed"
        return None

    def is_retired(self, today: dt.date) -> bool:
        return self.retired_reason(today) is not None

    def valid_on(self, day: dt.date) -> bool:
        """Whether the note's claim holds on `day` by its validity dates."""
        if self.valid_from is not None and day < self.valid_from:
            return False
        if self.valid_until is not None and day > self.valid_until:
            return False
        return True

    def summary(self) -> dict[str, Any]:
        """The small, JSON-ready description used in replies and the router."""
        out: dict[str, Any] = {"path": self.path, "title": self.title, "status": self.status}
        if self.description:
            out["description"] = self.description
        if self.tags:
            out["tags"] = list(self.tags)
        if self.superseded_by:
            out["superseded_by"] = self.superseded_by
        if self.valid_until:
            out["valid_until"] = self.valid_until.isoformat()
        return out


def split_frontmatter(text: str) -> tuple[str | None, int]:
    """Return the raw YAML frontmatter (or None) and the offset where the body starts."""
    match = _FRONTMATTER.match(text)
    if not match:
        return None, 0
    return match.group(1) or "", match.end()


def _as_date(value: Any) -> dt.date | None:
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value).strip()[:10])
    except ValueError:
        return None


def _as_tags(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        items = re.split(r"[,\s]+", value)
    elif isinstance(value, (list, tuple)):
        items = [str(v) for v in value if v is not None]
    else:
        items = [str(value)]
    return tuple(t.strip().lstrip("#") for t in items if t and t.strip().lstrip("#"))


# A fast path for the frontmatter most notes have: `key: plain words`, dates,
# whole numbers and flow lists of plain words. Anything else (quotes, colons,
# YAML 1.1 booleans like "yes", nesting) goes to the YAML parser. Measured: the
# YAML constructor alone was 1.2 s of a 10,000-note cold start.
_FAST_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):(?: (.*))?$")
_FAST_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9 _./-]*[A-Za-z0-9.]$|^[A-Za-z]$")
_FAST_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_FAST_INT = re.compile(r"^(?:0|[1-9][0-9]{0,8})$")
_YAML_WORDS = frozenset("y n yes no on off true false null".split())


def _fast_scalar(value: str) -> tuple[bool, Any]:
    if _FAST_DATE.match(value):
        try:
            return True, dt.date.fromisoformat(value)
        except ValueError:
            return False, None
    if _FAST_INT.match(value):
        return True, int(value)
    if value.lower() in ("true", "false"):
        return True, value.lower() == "true"
    if _FAST_WORD.match(value) and value.lower() not in _YAML_WORDS and "  " not in value:
        return True, value
    return False, None


def fast_frontmatter(raw: str) -> dict[str, Any] | None:
    """The frontmatter as YAML would read it, or None when it is not of the simple kind."""
    out: dict[str, Any] = {}
    for line in raw.splitlines():
        m = _FAST_KEY.match(line)
        if not m or m.group(1) in out:
            return None
        value = (m.group(2) or "").strip()
        if not value:
            return None
        if value.startswith("[") and value.endswith("]"):
            items = [v.strip() for v in value[1:-1].split(",")] if value[1:-1].strip() else []
            parsed = []
            for item in items:
                ok, v = _fast_scalar(item)
                if not ok or not isinstance(v, str):
                    return None
                parsed.append(v)
            out[m.group(1)] = parsed
            continue
        ok, v = _fast_scalar(value)
        if not ok:
            return None
        out[m.group(1)] = v
    return out


def _load_yaml(raw: str) -> tuple[dict[str, Any], str | None]:
    if len(raw.encode("utf-8", "surrogatepass")) > MAX_FRONTMATTER_BYTES:
        return {}, f"frontmatter larger than {MAX_FRONTMATTER_BYTES} bytes was not parsed"
    fast = fast_frontmatter(raw)
    if fast is not None:
        return fast, None
    try:
        # A safe loader, as python-frontmatter uses: no tag can build an object.
        data = _YAML.load(raw, Loader=_SafeLoader) if raw.strip() else {}
    except yaml.YAMLError as exc:
        return {}, f"frontmatter is not valid YAML: {str(exc).splitlines()[0]}"
    except RecursionError:
        return {}, "frontmatter nests too deeply"
    except Exception as exc:  # noqa: BLE001 - the parser never raises
        # The constructor, not the parser: `date: 2026-02-30` is valid YAML syntax whose
        # timestamp cannot be built (ValueError), and `!!timestamp nope` fails inside
        # PyYAML itself (AttributeError).
        detail = " ".join(str(exc).split())[:200] or exc.__class__.__name__
        return {}, f"frontmatter is not valid YAML: {detail}"
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, "frontmatter is not a mapping"
    too_big = _expansion_error(data)
    if too_big:
        return {}, too_big
    return {str(k): v for k, v in data.items()}, None


def _expansion_error(data: Any) -> str | None:
    """Why `data` is unsafe to expand (aliases, self-reference, depth), or None."""
    left = MAX_FRONTMATTER_VALUES
    on_path: set[int] = set()

    def walk(value: Any, depth: int) -> str | None:
        nonlocal left
        left -= 1
        if left < 0:
            return (f"frontmatter expands to more than {MAX_FRONTMATTER_VALUES} values "
                    "(YAML aliases) and was not parsed")
        if depth > MAX_FRONTMATTER_DEPTH:
            return f"frontmatter nests deeper than {MAX_FRONTMATTER_DEPTH} levels and was not parsed"
        if isinstance(value, dict):
            children = [*value.keys(), *value.values()]
        elif isinstance(value, (list, tuple, set, frozenset)):
            children = list(value)
        else:
            return None
        if id(value) in on_path:
            return "frontmatter refers to itself (a recursive YAML alias) and was not parsed"
        on_path.add(id(value))
        for child in children:
            error = walk(child, depth + 1)
            if error:
                return error
        on_path.discard(id(value))
        return None

    return walk(data, 0)


# The one definition of a Markdown heading line and a code-fence line, shared by the
# parser here, blocks.py (quotes and retirement) and pack.py: an ATX heading starts in
# column 0 and has text, so an indented `## x` inside indented code is no heading.
HEADING_LINE = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")


def is_fence(line: str) -> bool:
    """Whether `line` opens or closes a fenced code block (``` or ~~~)."""
    stripped = line.lstrip()
    return stripped.startswith("```") or stripped.startswith("~~~")


def headings_of(body: str) -> list[tuple[int, str]]:
    """(level, text) of each ATX heading outside fenced code blocks."""
    out: list[tuple[int, str]] = []
    in_fence = False
    for line in body.splitlines():
        if is_fence(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        m = HEADING_LINE.match(line)
        if m:
            out.append((len(m.group(1)), m.group(2).strip()))
    return out


def parse_note(path: str, text: str) -> Note:
    """Parse a note's text. Never raises: bad frontmatter becomes `frontmatter_error`."""
    raw, offset = split_frontmatter(text)
    meta: dict[str, Any] = {}
    error = None
    if raw is not None:
        meta, error = _load_yaml(raw)
    body = text[offset:]
    heads = headings_of(body)
    title = meta.get("title")
    if not isinstance(title, str) or not title.strip():
        first_h1 = next((h for lvl, h in heads if lvl == 1), None)
        title = first_h1 or PurePosixPath(path).stem.replace("-", " ").replace("_", " ")
    status = str(meta.get("status") or "current").strip().lower()
    warnings: list[str] = []
    if status not in STATUSES:
        warnings.append(f"unknown status {status!r}, read as current")
        status = "current"
    superseded_by = meta.get("superseded_by")
    description = meta.get("description")
    return Note(
        path=path,
        text=text,
        body=body,
        body_offset=offset,
        frontmatter=meta,
        title=str(title).strip(),
        description=str(description).strip() if description else "",
        tags=_as_tags(meta.get("tags")),
        status=status,
        superseded_by=str(superseded_by).strip() if superseded_by else None,
        valid_from=_as_date(meta.get("valid_from")),
        valid_until=_as_date(meta.get("valid_until")),
        headings=tuple(h for _, h in heads),
        frontmatter_error=error,
        warnings=tuple(warnings),
    )

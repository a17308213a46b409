"""Parsing one note: frontmatter, title, headings and whether the note is retired.

Pure functions, no I/O: everything that decides what a note *says about itself*
lives here so it can be tested without a repository. What its links point to depends
on the other notes' paths: that is `cortex.notes.links`.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import posixpath
import re
import unicodedata
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import frontmatter
import yaml
from markdown_it.common.utils import unescapeAll

from cortex.notes.redact import might_hold_secret
from cortex.notes.structure import headings, inside, merged, structure

__all__ = [
    "BOM",
    "decode",
    "MAX_FRONTMATTER_BYTES",
    "MAX_FRONTMATTER_DEPTH",
    "MAX_FRONTMATTER_VALUES",
    "RETIRED_STATUSES",
    "STATUSES",
    "Note",
    "WIKILINK",
    "WikiLink",
    "body_tags",
    "code_spans",
    "derived_title",
    "fast_frontmatter",
    "find_section",
    "headings_of",
    "link_key",
    "log_entries",
    "parse_note",
    "sections",
    "split_frontmatter",
    "wikilinks",
    "markdown_links",
]

# libyaml's safe loader when present: about 10x faster than the pure-Python one,
# which matters when a cold start parses 10,000 frontmatters.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# python-frontmatter's YAML handler does the full parse behind the fast path; it is
# given the safe loader above (its default is the pure-Python one).
_YAML = frontmatter.YAMLHandler()


class _UniqueKeysLoader(_SafeLoader):  # type: ignore[misc, valid-type]
    """The safe loader, refusing a mapping that names a key twice. YAML forbids it, and
    PyYAML would keep the last value: `status: retracted` then `status: current` read as
    current, where a person reading the note sees it retracted."""

    def construct_mapping(self, node, deep=False):  # type: ignore[no-untyped-def]
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, Any] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # `<<: *base` may set keys again: that is what it is for
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.setdefault(key, key_node.start_mark)
                except TypeError:
                    continue  # an unhashable key: the constructor below says so
                if first is not key_node.start_mark:
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f"the key {str(key)[:40]!r} is given twice (first on line {first.line + 2})",
                        key_node.start_mark,
                    )
        return super().construct_mapping(node, deep=deep)


# A `status` that retires its note; any other value is the owner's own workflow ("active",
# "done", "evergreen", "seedling") and leaves the note live. The owner adds words of their
# own with CORTEX_RETIRED_STATUSES (`retired_statuses`).
RETIRED_STATUSES = frozenset({"superseded", "retracted", "deprecated", "archived", "obsolete"})
STATUSES = frozenset({"current", "draft"}) | RETIRED_STATUSES


@functools.lru_cache(maxsize=8)
def _extra_statuses(raw: str) -> frozenset[str]:
    return frozenset(w.strip().lower() for w in raw.replace(";", ",").split(",") if w.strip())


def retired_statuses() -> frozenset[str]:
    """The statuses that retire a note: `RETIRED_STATUSES` and the owner's own words
    (CORTEX_RETIRED_STATUSES, comma-separated)."""
    return RETIRED_STATUSES | _extra_statuses(os.environ.get("CORTEX_RETIRED_STATUSES", ""))


# Frontmatter bigger than this is treated as body, not parsed: a YAML bomb or a
# pasted blob should never cost more than a bounded parse.
MAX_FRONTMATTER_BYTES = 16_384
# The byte cap does not bound what YAML aliases expand to: 350 bytes of
# "billion laughs" anchors load as shared lists that a reply (JSON) would expand
# to 9^9 strings, and `a: &a [*a]` loads as a list that contains itself. Parsed
# frontmatter is walked as a reply would expand it and refused past these.
MAX_FRONTMATTER_VALUES = 10_000
MAX_FRONTMATTER_DEPTH = 32

# Matched at the text's start, or after a byte-order mark (editors on Windows write one).
_FRONTMATTER = re.compile(r"---[ \t]*\r?\n(.*?\r?\n)?---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
# An opening `---` line followed by a `key:` line: frontmatter, even when it is never closed.
_UNCLOSED = re.compile(r"---[ \t]*\r?\n[ \t]*[A-Za-z_][\w-]*[ \t]*:")
BOM = "\ufeff"


@dataclass(frozen=True)
class Note:
    """A parsed note. `body_offset` is where the body starts inside `text`.

    Its text is kept until `read_text_from` hands it a source to read it from on
    demand (the corpus does, with the note's blob): a brain's every note need not
    sit in memory for the few a request reads. Equality ignores the text.
    """

    path: str
    _text: str | None = field(repr=False, compare=False)
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
    # Why the note's retirement (status, superseded_by, valid_until, valid_from) could not
    # be read, or None: such a note is never "current", so no quote of it is VERIFIED.
    unreadable: str | None = None
    # Obsidian: frontmatter `aliases` (other titles) and the [[wikilinks]] of the body.
    aliases: tuple[str, ...] = field(default=())
    links: tuple[WikiLink, ...] = field(default=())
    # Whether the text or the path holds a credential needle (`redact.might_hold_secret`):
    # only such a note can read otherwise once masked, so only such a note is masked again
    # for a guest's view (`cortex.index.masked`), without reading every note's text.
    might_hold_secret: bool = True
    _source: Callable[[], str] | None = field(default=None, repr=False, compare=False)

    @property
    def text(self) -> str:
        """The note's whole text: kept, or read from its source."""
        if self._text is not None:
            return self._text
        if self._source is None:
            raise RuntimeError(f"the text of {self.path} was not kept and has no source")
        return self._source()

    @property
    def keeps_text(self) -> bool:
        """Whether the note holds its text in memory (a saved note holds none)."""
        return self._text is not None

    @property
    def reads_lazily(self) -> bool:
        """Whether the note has a source to read its text from when asked (`read_text_from`)."""
        return self._source is not None

    def read_text_from(self, source: Callable[[], str]) -> None:
        """Stop keeping the text; read it from `source` (which must give the same text) when asked."""
        object.__setattr__(self, "_source", source)
        object.__setattr__(self, "_text", None)

    def __getstate__(self) -> dict[str, Any]:
        # A source is a live reader (a Git store); a pickled note carries neither it nor
        # a text it was not keeping: whoever loads it gives it a source again.
        return {**self.__dict__, "_source": None}

    @property
    def body(self) -> str:
        """The text after the frontmatter: sliced on each use, never kept: a kept copy
        held every note's text twice in memory, which a large brain's memory budget cannot spare."""
        return self.text[self.body_offset :] if self.body_offset else self.text

    def retired_reason(self, today: dt.date) -> str | None:
        """Why the whole note is retired on `today`, or None when it is live. A note that
        names its successor (`superseded_by`) is retired whatever its status says."""
        if self.status in retired_statuses():
            reason = f"status: {self.status}"
            if self.superseded_by:
                reason += f" (superseded by {self.superseded_by})"
            return reason
        if self.superseded_by:
            return f"superseded by {self.superseded_by} (superseded_by), though its status says {self.status}"
        if self.valid_until is not None and self.valid_until < today:
            return f"valid_until {self.valid_until.isoformat()} has passed"
        return None

    def is_retired(self, today: dt.date) -> bool:
        return self.retired_reason(today) is not None

    def valid_on(self, day: dt.date) -> bool:
        """Whether the note's claim holds on `day` by its validity dates."""
        if self.valid_from is not None and day < self.valid_from:
            return False
        return self.valid_until is None or day <= self.valid_until

    def summary(self) -> dict[str, Any]:
        """The small, JSON-ready description used in replies and the router."""
        out: dict[str, Any] = {"path": self.path, "title": self.title, "status": self.status}
        if self.description:
            out["description"] = self.description
        if self.aliases:
            out["aliases"] = list(self.aliases)
        if self.tags:
            out["tags"] = list(self.tags)
        if self.superseded_by:
            out["superseded_by"] = self.superseded_by
        if self.valid_until:
            out["valid_until"] = self.valid_until.isoformat()
        if self.unreadable:
            out["unreadable"] = self.unreadable
        return out


def decode(data: bytes) -> str:
    """A note's bytes as text. Hand-made commits can hold any bytes: replace rather than fail the whole brain."""
    return data.decode("utf-8", errors="replace")


def split_frontmatter(text: str) -> tuple[str | None, int]:
    """Return the raw YAML frontmatter (or None) and the offset where the body starts.

    A byte-order mark before the opening `---` is skipped (it stays in the text)."""
    match = _FRONTMATTER.match(text, 1 if text.startswith(BOM) else 0)
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
        data = _YAML.load(raw, Loader=_UniqueKeysLoader) if raw.strip() else {}
    except yaml.MarkedYAMLError as exc:
        # The line in the note: the YAML starts on the note's second line.
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 2}: " if mark is not None else ""
        return {}, f"frontmatter is not valid YAML ({where}{exc.problem or exc.context or 'unreadable'})"
    except yaml.YAMLError as exc:
        return {}, f"frontmatter is not valid YAML ({str(exc).splitlines()[0]})"
    except RecursionError:
        return {}, "frontmatter nests too deeply"
    except Exception as exc:  # noqa: BLE001 - the parser never raises
        # The constructor, not the parser: `date: 2026-02-30` is valid YAML syntax whose
        # timestamp cannot be built (ValueError), and `!!timestamp nope` fails inside
        # PyYAML itself (AttributeError).
        detail = " ".join(str(exc).split())[:200] or exc.__class__.__name__
        return {}, f"frontmatter is not valid YAML ({detail})"
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
            return f"frontmatter expands to more than {MAX_FRONTMATTER_VALUES} values (YAML aliases) and was not parsed"
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


def headings_of(body: str) -> list[tuple[int, str]]:
    """(level, text) of each heading of `body` as CommonMark reads it (ATX or setext,
    never in code), empty headings left out."""
    return [(h.level, h.text) for h in headings(body) if h.text]


# ---------------------------------------------------------------------------
# Obsidian conventions: aliases, body #tags, [[wikilinks]]


def _as_aliases(meta: dict[str, Any]) -> tuple[str, ...]:
    """Frontmatter `aliases` (or `alias`): a list, or one string (Obsidian accepts both)."""
    out: list[str] = []
    for key in ("aliases", "alias"):
        value = meta.get(key)
        items = value if isinstance(value, (list, tuple)) else [value]
        for item in items:
            if isinstance(item, (str, int, float)) and not isinstance(item, bool):
                text = " ".join(str(item).split())
                if text and text not in out:
                    out.append(text)
    return tuple(out)


def code_spans(body: str) -> list[tuple[int, int]]:
    """(start, end) of the code of `body`, sorted and disjoint: code blocks (fenced and
    indented, as CommonMark reads them) and inline code spans. A `#tag` or a `[[link]]`
    written as code is an example, not one."""
    if "`" not in body and "~~~" not in body and "    " not in body and "\t" not in body:
        return []  # no fence, no indented line, no code span: no code (the common case)
    return structure(body).code()


def _outside(spans: list[tuple[int, int]], pos: int) -> bool:
    """Whether `pos` lies outside every span (sorted and disjoint)."""
    return not inside(spans, pos)


# Obsidian's tag: `#` at the start or after whitespace, then letters, digits, `_`, `-`
# and `/` (nesting), with at least one character that is not a digit (#2024 is no tag).
_TAG_NAME = re.compile(r"[^\W][\w/-]*")


def body_tags(body: str) -> tuple[str, ...]:
    """The `#tags` of a note's body, in order, once each; none from code or headings.

    Code and headings are ruled out per match, not by a line-by-line scan, which cost
    3 s more per 10,000 notes at cold start.
    """
    if "#" not in body:
        return ()
    out: list[str] = []
    seen: set[str] = set()
    spans: list[tuple[int, int]] | None = None
    # str.find, then a match at each `#`: a regex search over the whole body found
    # no literal prefix to skip by and cost 1.5 s per 10,000 notes.
    at = body.find("#")
    while at >= 0:
        here, at = at, body.find("#", at + 1)
        if here and not body[here - 1].isspace():
            continue
        m = _TAG_NAME.match(body, here + 1)
        if m is None:
            continue
        tag = m.group().rstrip("/-")
        if not tag or tag.replace("_", "").replace("-", "").replace("/", "").isdigit():
            continue
        key = tag.casefold()
        if key in seen:
            continue
        if spans is None:
            spans = merged(code_spans(body) + [(h.start, h.end) for h in headings(body)])
        if not _outside(spans, here):
            continue
        seen.add(key)
        out.append(tag)
    return tuple(out)


@dataclass(frozen=True)
class WikiLink:
    """One `[[target#heading|alias]]`, or a Markdown link to a note `[alias](url.md#heading)`
    (`url` set: the link as written; `target` is then the note's path from the vault's root,
    with a leading "/", so it resolves by path); `start`/`end` bound the target text (the
    url's path) in the note's body."""

    target: str
    heading: str | None
    alias: str | None
    start: int
    end: int
    embed: bool = False
    url: str | None = None

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"target": self.url if self.url is not None else self.target}
        if self.heading:
            out["heading"] = self.heading
        if self.alias:
            out["alias"] = self.alias
        return out


# A wikilink never spans lines; `]` and `[` cannot be inside one (Obsidian's rule too).
WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n|#^]*)((?:[#^][^\[\]\n|]*)?)(?:\|([^\[\]\n]*))?\]\]")


def wikilinks(body: str) -> tuple[WikiLink, ...]:
    """Every `[[wikilink]]` (and `![[embed]]`) of `body` outside code, in order.

    The target excludes `#heading` and `|alias`; its offsets are in `body`, so a
    rename can replace exactly the target text and nothing else.
    """
    if "[[" not in body:
        return ()
    out: list[WikiLink] = []
    spans: list[tuple[int, int]] | None = None
    at = body.find("[[")
    while at >= 0:
        here, at = at, body.find("[[", at + 2)
        m = WIKILINK.match(body, here - 1 if here and body[here - 1] == "!" else here)
        if m is None:
            continue
        if at >= 0 and at < m.end():
            at = body.find("[[", m.end())
        raw = m.group(2)
        target = raw.strip()
        if not target:
            continue  # [[#heading]]: a link inside the same note
        if spans is None:
            spans = code_spans(body)
        if not _outside(spans, m.start()):
            continue
        start = m.start(2) + len(raw) - len(raw.lstrip())
        heading = m.group(3)[1:].strip() if m.group(3) else None
        alias = m.group(4).strip() if m.group(4) is not None else None
        out.append(WikiLink(target, heading or None, alias or None, start, start + len(target), embed=bool(m.group(1))))
    return tuple(out)


# A Markdown link as CommonMark reads one: `[text](url)`, `[text](<url with spaces>)`, a url's
# balanced parentheses and backslash escapes, an optional title in "", '' or (); not an image
# (`![…](…)`), not a reference's `]`, not an escaped `\[`. The url's own meaning is `destination`'s.
_PUNCT = r"[!-/:-@\[-`{-~]"  # ASCII punctuation: what a backslash escapes
_ESCAPE = rf"\\{_PUNCT}|\\(?!{_PUNCT})"  # an escape, or a backslash that escapes nothing (one way each)
_PLAIN = rf"(?:{_ESCAPE}|[^\x00-\x20\x7f()\\])"  # a plain url ends at a space or a control character
MDLINK = re.compile(
    rf"(?<![!\]\\])\[(?P<text>(?:{_ESCAPE}|[^\[\]\n\\])*)\]\(\s*"
    rf"(?:<(?P<angled>(?:{_ESCAPE}|[^<>\n\\])*)>|(?P<url>(?!<)(?:{_PLAIN}|\({_PLAIN}*\))+))"
    r"(?:\s+(?:\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|\((?:\\.|[^()\\\n])*\)))?\s*\)"
)


def percent_decoded(text: str) -> str:
    """`text` with its `%XX` escapes decoded as UTF-8, as a browser and Obsidian do; as written
    when they are not UTF-8 (`decodeURIComponent` refuses those too). A `%` before no two hex
    digits stays a `%` (`100% done.md`)."""
    try:
        return urllib.parse.unquote(text, errors="strict")
    except UnicodeDecodeError:
        return text


def destination(url: str) -> tuple[int, str, str | None]:
    """A Markdown link's url as written (angle brackets taken off) read as CommonMark and a
    browser or Obsidian read it: (where its path ends in `url`, the path, the heading or None).

    Escapes and entities are taken first (CommonMark's reading); then the first `#` starts the
    fragment, and only then are `%XX` escapes decoded, so `%23` is a `#` of the file's name
    and `%2520` is a literal `%20`. A `#` written as an entity (`&#35;`) counts as part of
    the path: no writer makes one, and finding it would take CommonMark's own entity table.
    """
    cut = next((i for i, c in enumerate(url) if c == "#" and not url[:i].endswith("&")), len(url))
    path = percent_decoded(unescapeAll(url[:cut]))
    heading = percent_decoded(unescapeAll(url[cut + 1 :])) if cut < len(url) else None
    return cut, path, heading


def markdown_links(body: str, path: str) -> tuple[WikiLink, ...]:
    """Every Markdown link of `body` (the note at `path`) to a note, outside code: its url
    read as `destination` does, relative to the note's folder (`../`, a leading `/` for the
    root), a `#heading` kept. A url with a scheme (`https:`), one whose path does not end in
    `.md`, or one leaving the vault is no note's link. Its span and `url` are the url's path
    as written, before any `#`."""
    if "](" not in body:
        return ()
    out: list[WikiLink] = []
    spans = None
    folder = PurePosixPath(path).parent.as_posix()
    for m in MDLINK.finditer(body):
        group = "angled" if m.group("angled") is not None else "url"
        url = m.group(group)
        if re.match(r"[a-z][a-z0-9+.-]*:", url, re.IGNORECASE):
            continue
        cut, decoded, heading = destination(url)
        if not decoded.lower().endswith(".md"):
            continue
        if spans is None:
            spans = code_spans(body)
        if not _outside(spans, m.start()):
            continue
        joined = decoded.lstrip("/") if decoded.startswith("/") else posixpath.join(folder, decoded)
        where = posixpath.normpath(joined)
        if where.startswith("../") or where == "..":
            continue
        text = m.group("text").strip()
        start = m.start(group)
        out.append(WikiLink("/" + where, heading or None, text or None, start, start + cut, url=url[:cut]))
    return tuple(out)


def derived_title(path: str) -> str:
    """The title of a note that gives none (no frontmatter title, no level-1 heading): its file name's."""
    return PurePosixPath(path).stem.replace("-", " ").replace("_", " ")


def link_key(text: str) -> str:
    """How Obsidian compares link text and file names: canonical form, case folded."""
    return unicodedata.normalize("NFC", text).casefold()


def sections(text: str, body_offset: int) -> list[tuple[int, str, int, int]]:
    """(level, heading, start, end) of each section of the note: from its heading to the
    next heading of the same or a higher level (offsets in `text`; headings as
    CommonMark reads them, so none in code)."""
    heads = [(h.level, h.text, body_offset + h.start) for h in headings(text[body_offset:])]
    out = []
    for i, (level, heading, start) in enumerate(heads):
        end = next((s for lvl, _, s in heads[i + 1 :] if lvl <= level), len(text))
        out.append((level, heading, start, end))
    return out


def find_section(text: str, body_offset: int, heading: str) -> tuple[int, int] | None:
    """The (start, end) of the first section whose heading is `heading` (case and Unicode
    form ignored, leading `#`s allowed), or None."""
    want = link_key(" ".join(heading.strip().lstrip("#").split()))
    for _, name, start, end in sections(text, body_offset):
        if link_key(" ".join(name.split())) == want:
            return start, end
    return None


def parse_note(path: str, text: str) -> Note:
    """Parse a note's text. Never raises: bad frontmatter becomes `frontmatter_error`,
    and whatever leaves its retirement unknown becomes `unreadable`."""
    raw, offset = split_frontmatter(text)
    meta: dict[str, Any] = {}
    error = None
    if raw is not None:
        meta, error = _load_yaml(raw)
    elif _UNCLOSED.match(text, 1 if text.startswith(BOM) else 0):
        error = "frontmatter is not closed (no --- line after it)"
    body = text[offset:]
    heads = headings_of(body)
    title = meta.get("title")
    if not isinstance(title, str) or not title.strip():
        first_h1 = next((h for lvl, h in heads if lvl == 1), None)
        title = first_h1 or derived_title(path)
    # A successor named without a status is a superseded note: the field says so itself.
    successor = meta.get("superseded_by")
    default = "superseded" if isinstance(successor, str) and successor.strip() else "current"
    raw_status = meta.get("status")
    status = str(raw_status or default).strip().lower()
    warnings: list[str] = []
    unknown: list[str] = [error] if error else []
    if not isinstance(raw_status, (str, type(None))) or len(status) > 40 or "\n" in status:
        unknown.append(f"status {status[:40]!r} is not a word")  # a list or a mapping is no status
        status = "current"
    superseded_by = meta.get("superseded_by")
    if superseded_by is not None and not isinstance(superseded_by, str):
        unknown.append("superseded_by is not a path")
        superseded_by = None
    dates = {}
    for key in ("valid_from", "valid_until"):
        value = meta.get(key)
        dates[key] = _as_date(value)
        if dates[key] is None and value is not None and value != "":
            unknown.append(f"{key} {str(value)[:40]!r} is not a date (YYYY-MM-DD)")
    description = meta.get("description")
    return Note(
        path=path,
        _text=text,
        body_offset=offset,
        frontmatter=meta,
        title=str(title).strip(),
        description=str(description).strip() if description else "",
        tags=_merge_tags(_as_tags(meta.get("tags")), body_tags(body)),
        status=status,
        superseded_by=superseded_by.strip() or None if superseded_by else None,
        valid_from=dates["valid_from"],
        valid_until=dates["valid_until"],
        headings=tuple(h for _, h in heads),
        frontmatter_error=error,
        warnings=tuple(warnings),
        unreadable=_unreadable(unknown, error),
        aliases=_as_aliases(meta),
        links=tuple(sorted(wikilinks(body) + markdown_links(body, path), key=lambda link: link.start)),
        might_hold_secret=might_hold_secret(text) or might_hold_secret(path),
    )


def _unreadable(problems: list[str], error: str | None) -> str | None:
    """The one-line reason a note's retirement is unknown, or None."""
    if not problems:
        return None
    if error:
        inner = re.search(r"\((.*)\)$", error)
        detail = inner.group(1) if inner else error.removeprefix("frontmatter ")
        return f"frontmatter could not be read ({detail}); its status is unknown"
    return f"{'; '.join(problems)}; its status is unknown"


def _merge_tags(front: tuple[str, ...], body: tuple[str, ...]) -> tuple[str, ...]:
    """Frontmatter tags, then body tags not already among them (compared case-insensitively)."""
    seen = {t.casefold() for t in front}
    return front + tuple(t for t in body if t.casefold() not in seen)


def log_entries(body: str) -> list[tuple[str, str]]:
    """The `## HH:MM · tags` entries of a day log, newest first."""
    entries: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("## "):
            entries.append((line[3:].strip(), []))
        elif entries:
            entries[-1][1].append(line)
    return [(h, "\n".join(lines).strip()) for h, lines in reversed(entries)]

"""A note's Markdown structure, read the way the owner's editor reads it: CommonMark.

Pure functions, no I/O. Everything in Cortex that asks "is this code, a heading, a list
item, a block quote, struck out or hidden?" asks `structure(body)`: the verifier, search
passages, headings and sections, body `#tags` and `[[wikilinks]]`, a move's link rewrite,
the offline reader and the console. The reading is markdown-it-py's token stream (the
CommonMark preset plus tables and strikethrough, HTML on so comments are seen), mapped
back to offsets in the body; nothing here decides structure with line rules of its own.

Obsidian habits CommonMark lacks are added on top, as Obsidian reads them: `%%comments%%`
hide text (across blocks too; an unclosed `%%` hides the rest of the note), a callout
(`> [!note] …`) is a block quote. Wikilinks and `#tags` are found in `cortex.notes.note`,
outside the code ranges given here.

HTML the editor renders strikes or hides text (`cortex.notes.html_elements`): the tags of a
paragraph's inline HTML are paired within it (`Leaf.marks`), and the elements of HTML
blocks are followed across the Markdown blocks after them to their close tag or the end
of their container (`Structure.html_struck`, `html_hidden`, `Structure.outer`). A body
whose lines start with a letter has no HTML block, so the shortcut for plain notes
(`simple_leaves`) loses nothing: its inline HTML is read by the same `Leaf.marks`.

Offsets are in the body string given; lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``
(CommonMark's line endings). The block parse is the costly part (measured: ~20 MB/s on
long chat transcripts, ~8 MB/s on 2.5 KB notes, against ~100 MB/s for the rest of
`parse_note`); inline parsing (code spans, strikethrough, inline HTML) runs only for the
blocks a caller asks about.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from cortex.notes.html_elements import HIDDEN, STRUCK, Elements, tags

__all__ = [
    "Inline",
    "Leaf",
    "Marks",
    "Span",
    "Structure",
    "drop_cached",
    "headings",
    "inside",
    "line_spans",
    "merged",
    "overlaps",
    "parsed",
    "parser",
    "simple_leaves",
    "structure",
]

Span = tuple[int, int]


def parser() -> MarkdownIt:
    """The one Markdown reading: CommonMark, tables, strikethrough; HTML recognised (never trusted)."""
    md = MarkdownIt("commonmark", {"html": True, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    return md


_MD = parser()
_MD.disable("inline")  # block parse only; inline parsing runs per block, on demand (`Leaf.marks`)
_MARKS = "cortex_marks"


InlineRule = Callable[[StateInline, bool], bool]


def _recording(rule: InlineRule, kind: str) -> InlineRule:
    """Wrap an inline rule so a real (not silent) match records its span in the env."""

    def wrapped(state: StateInline, silent: bool) -> bool:
        start, count, pending = state.pos, len(state.tokens), bool(state.pending)
        ok = bool(rule(state, silent))
        if ok and not silent:
            marks = state.env.setdefault(_MARKS, [])
            if kind == "link":  # [text](url): where its text ends, for a reading as shown
                marks.append(("link", start, state.pos, state.md.helpers.parseLinkLabel(state, start, True)))
                return ok
            if kind == "autolink":
                marks.append(("autolink", start, state.pos, None))
                return ok
            # The first push flushes text waiting before the match into a token of its own.
            for tok in state.tokens[count + pending :]:
                if kind == "code" and tok.type == "code_inline":
                    marks.append(("code", start, state.pos, None))
                elif kind == "html" and tok.type == "html_inline":
                    marks.append(("comment" if tok.content.startswith("<!--") else "tag", start, state.pos, tok))
                elif kind == "strike":
                    marks.append(("strike-token", start, start + len(tok.content), tok))
                    start += len(tok.content)
        return ok

    return wrapped


for _name, _kind in (
    ("backticks", "code"),
    ("html_inline", "html"),
    ("strikethrough", "strike"),
    ("link", "link"),
    ("autolink", "autolink"),
):
    _rule = next(r for r in _MD.inline.ruler.__rules__ if r.name == _name)
    _MD.inline.ruler.at(_name, _recording(_rule.fn, _kind))

_LINE_END = re.compile(r"\r\n|\r|\n")


def line_spans(body: str) -> list[Span]:
    """(start, end) of each line of `body`, without its line ending, as CommonMark cuts lines."""
    out: list[Span] = []
    pos = 0
    if "\r" not in body:  # the common case, without a regex match per line
        for line in body.split("\n"):
            out.append((pos, pos + len(line)))
            pos += len(line) + 1
        if len(out) > 1 and out[-1][0] == len(body):
            out.pop()  # the text ends with a line ending: no empty last line
        return out
    for m in _LINE_END.finditer(body):
        out.append((pos, m.start()))
        pos = m.end()
    if pos < len(body) or not out:
        out.append((pos, len(body)))
    return out


def _place(body: str, lines: list[Span], first: int, content: str) -> tuple[Span, ...]:
    """Where each line of `content` (cut by markdown-it from lines `first`, … of `body`) sits.

    markdown-it hands a block's content with container markers (``>``, list indentation)
    and outer whitespace removed, so each content line is the tail of its source line
    (the last one right-stripped, a heading's without its closing ``#``s): the rightmost
    occurrence is the one. A line whose tabs markdown-it expanded is placed by its text
    without the added spaces.
    """
    out: list[Span] = []
    for k, piece in enumerate(content.split("\n")):
        if first + k >= len(lines):
            break
        a, b = lines[first + k]
        src = body[a:b]
        if not piece:
            out.append((b, b))
            continue
        at = src.rfind(piece)
        if at < 0:
            piece = piece.lstrip(" ")
            at = src.rfind(piece) if piece else -1
            if at < 0:  # never seen; keep the line whole rather than guess inside it
                at, piece = 0, src
        out.append((a + at, a + at + len(piece)))
    return tuple(out)


@dataclass(frozen=True)
class Inline:
    """One run of inline Markdown (a paragraph's, a heading's or a table cell's) and where
    each of its lines sits in the body, so inline spans map back to body offsets."""

    content: str
    pieces: tuple[Span, ...]

    def to_body(self, pos: int) -> int:
        """The body offset of char `pos` of `content` (the end of a line maps to its end)."""
        line_starts = self._line_starts
        k = bisect.bisect_right(line_starts, pos) - 1
        a, b = self.pieces[min(k, len(self.pieces) - 1)]
        return min(a + pos - line_starts[k], b)

    @functools.cached_property
    def _line_starts(self) -> list[int]:
        starts, at = [0], 0
        for line in self.content.split("\n")[:-1]:
            at += len(line) + 1
            starts.append(at)
        return starts


@dataclass(frozen=True)
class Marks:
    """Spans of a block, in body offsets: code spans, struck text (``~~`` markers and
    striking HTML tags included) and hidden text (HTML comments and hiding elements)."""

    code: tuple[Span, ...] = ()
    struck: tuple[Span, ...] = ()
    hidden: tuple[Span, ...] = ()
    # Elements left open that a browser keeps open past their paragraph, heading or cell
    # (raw text, ``<template>``, ``<s>``, ``<strike>``): (effect, name, start). Each runs
    # on to its own end tag in a later block, or to the note's end (`Structure.outer`).
    runs_on: tuple[tuple[str, str, int], ...] = ()
    # Markup the editor renders rather than shows as text (`cortex.notes.shown`): each inline
    # link as (start, end of its text, end), each autolink ``<…>``, and each inline HTML tag
    # as (start, end, name in lower case; "" for one that is no element, ``<?…>``).
    links: tuple[tuple[int, int, int], ...] = ()
    autolinks: tuple[Span, ...] = ()
    tags: tuple[tuple[int, int, str], ...] = ()


_NO_MARKS = Marks()
_TAG_NAME = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)")


@dataclass(frozen=True)
class Leaf:
    """A leaf block of the note as CommonMark reads it.

    `kind`: "heading", "paragraph", "list item" (a paragraph directly inside a list item),
    "table row", "code" (fenced or indented) or "html" (an HTML block, a comment included).
    `start`/`end` span its source lines (first line's start to last line's end);
    `pieces` span the text each line holds once container markers are taken off (for a
    code block: the code lines, not the fences). `quote` is its block-quote depth.
    """

    kind: str
    first: int  # 0-based index of its first source line
    last: int  # one past its last source line
    start: int
    end: int
    pieces: tuple[Span, ...]
    level: int = 0  # a heading's level
    text: str = ""  # a heading's text (its inline source, stripped)
    quote: int = 0
    inlines: tuple[Inline, ...] = field(default=(), repr=False)

    def marks(self) -> Marks:
        return _marks(self)


@functools.lru_cache(maxsize=4096)
def _marks(leaf: Leaf) -> Marks:
    if not leaf.inlines:
        return _NO_MARKS
    code: list[Span] = []
    struck: list[Span] = []
    hidden: list[Span] = []
    runs_on: list[tuple[str, str, int]] = []
    links: list[tuple[int, int, int]] = []
    autolinks: list[Span] = []
    tag_spans: list[tuple[int, int, str]] = []
    for inline in leaf.inlines:
        if not any(c in inline.content for c in "`~<["):
            continue
        env: dict = {}
        tokens: list[Token] = []
        _MD.inline.parse(inline.content, _MD, env, tokens)
        at = {id(tok): (a, b) for kind, a, b, tok in env.get(_MARKS, ()) if kind == "strike-token"}
        elements = Elements()
        for kind, a, b, tok in sorted(env.get(_MARKS, ()), key=lambda m: m[1]):
            if kind == "code":
                code.append((inline.to_body(a), inline.to_body(b)))
            elif kind == "comment":
                hidden.append((inline.to_body(a), inline.to_body(b)))
            elif kind == "tag":
                for tag in tags(tok.content):
                    elements.feed(tag, inline.to_body(a), inline.to_body(b))
                name = _TAG_NAME.match(tok.content)
                tag_spans.append((inline.to_body(a), inline.to_body(b), name.group(1).lower() if name else ""))
            elif kind == "link" and a < tok < b:  # `tok` holds where the link's text ends
                links.append((inline.to_body(a), inline.to_body(tok), inline.to_body(b)))
            elif kind == "autolink":
                autolinks.append((inline.to_body(a), inline.to_body(b)))
        # An element the run leaves open ends with its paragraph, heading or cell, but
        # for raw text and templates, which run on (`Structure.outer`).
        end = inline.to_body(len(inline.content))
        elements.end_container(0, end)
        runs_on.extend((el.effect, el.name, el.start) for el in elements.open if el.effect is not None)
        elements.end(end)
        struck.extend(elements.covered(STRUCK))
        hidden.extend(elements.covered(HIDDEN))
        opened: list[int] = []
        for tok in _flatten(tokens):
            if tok.type == "s_open" and id(tok) in at:
                opened.append(at[id(tok)][0])
            elif tok.type == "s_close" and id(tok) in at and opened:
                struck.append((inline.to_body(opened.pop()), inline.to_body(at[id(tok)][1])))
    return Marks(
        tuple(sorted(code)),
        tuple(merged(struck)),
        tuple(merged(hidden)),
        tuple(runs_on),
        tuple(sorted(links)),
        tuple(sorted(autolinks)),
        tuple(sorted(tag_spans)),
    )


def _flatten(tokens: list[Token]) -> Iterator[Token]:
    for tok in tokens:
        yield tok
        if tok.children:
            yield from _flatten(tok.children)


_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_RUNS_ON = re.compile(r"<(?:script|style|template|s|strike)(?![A-Za-z0-9-])", re.IGNORECASE)


@dataclass(frozen=True)
class Structure:
    """A note body's leaf blocks in order, and what of it is code, struck or hidden."""

    body: str
    leaves: tuple[Leaf, ...]
    code_blocks: tuple[Span, ...]  # fenced and indented code, whole lines (fences included)
    # What elements opened in HTML blocks strike or hide, to their close tag (in a later
    # HTML block, when the leaves between are Markdown) or to the end of their container.
    html_struck: tuple[Span, ...] = ()
    html_hidden: tuple[Span, ...] = ()

    @property
    def headings(self) -> list[Leaf]:
        return [leaf for leaf in self.leaves if leaf.kind == "heading"]

    @functools.cached_property
    def outer(self) -> Marks:
        """Struck and hidden text that no one inline run holds: HTML blocks' elements and
        comments, and Obsidian `%%comments%%` (outside code). A leaf's own `marks` add the rest."""
        hidden = list(self.html_hidden)
        end = len(self.body)
        if "<!--" in self.body:
            for leaf in self.leaves:
                if leaf.kind == "html":
                    text = self.body[leaf.start : leaf.end]
                    for m in _COMMENT.finditer(text):
                        # A comment its block leaves open goes on, past the blocks after it.
                        closed = m.group().endswith("-->")
                        hidden.append((leaf.start + m.start(), leaf.start + m.end() if closed else end))
        struck = list(self.html_struck)
        if _RUNS_ON.search(self.body):
            for leaf in self._inline_leaves("<"):
                for effect, name, at in leaf.marks().runs_on:
                    (hidden if effect == HIDDEN else struck).append((at, self._end_tag_after(name, leaf.end)))
        if "%%" in self.body:
            hidden.extend(self._percent_comments())
        return Marks((), tuple(merged(struck)), tuple(merged(hidden)))

    def _end_tag_after(self, name: str, pos: int) -> int:
        """The end of the ``</name>`` after `pos` that closes an element left open before
        it (one opened after `pos` takes the next), outside code; or the body's end."""
        code, depth = None, 0
        for m in re.finditer(rf"<(/?){re.escape(name)}(?![A-Za-z0-9-])[^>]*>", self.body[pos:], re.IGNORECASE):
            code = self.code() if code is None else code
            if inside(code, pos + m.start()):
                continue
            depth += -1 if m.group(1) else 1
            if depth < 0:
                return pos + m.end()
        return len(self.body)

    def struck(self) -> list[Span]:
        """Retired text the editor shows struck through, sorted: ``~~…~~`` and what
        ``<del>``, ``<s>``, ``<strike>`` (or line-through CSS) hold."""
        spans = list(self.outer.struck)
        if "~" in self.body or "<" in self.body:
            spans.extend(s for leaf in self._inline_leaves("~<") for s in leaf.marks().struck)
        return merged(spans)

    def code(self) -> list[Span]:
        """Every code range, sorted: code blocks, and the code spans of every block."""
        spans = list(self.code_blocks)
        if "`" in self.body:
            for leaf in self.leaves:
                if leaf.inlines and any("`" in i.content for i in leaf.inlines):
                    spans.extend(leaf.marks().code)
        return merged(spans)

    def hidden(self) -> list[Span]:
        """Text the editor hides, sorted: HTML comments (inline and whole blocks), what
        hiding HTML elements hold, and Obsidian `%%comments%%` (outside code)."""
        spans = list(self.outer.hidden)
        if "<" in self.body:
            spans.extend(s for leaf in self._inline_leaves("<") for s in leaf.marks().hidden)
        return merged(spans)

    def _inline_leaves(self, chars: str) -> list[Leaf]:
        """The leaves with inline text holding one of `chars` (the only ones whose marks can
        hold anything but code)."""
        return [leaf for leaf in self.leaves if any(c in i.content for i in leaf.inlines for c in chars)]

    def _percent_comments(self) -> list[Span]:
        code = self.code()
        out: list[Span] = []
        open_at = None
        at = self.body.find("%%")
        while at >= 0:
            if not inside(code, at):
                if open_at is None:
                    open_at = at
                else:
                    out.append((open_at, at + 2))
                    open_at = None
            at = self.body.find("%%", at + 2)
        if open_at is not None:
            out.append((open_at, len(self.body)))  # Obsidian hides the rest of the note
        return out


def merged(spans: list[Span]) -> list[Span]:
    """`spans` sorted, with overlapping or touching ones joined: disjoint, for `inside`."""
    out: list[Span] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def inside(spans: list[Span], pos: int) -> bool:
    """Whether offset `pos` lies inside one of `spans` (sorted and disjoint, as `merged` gives)."""
    i = bisect.bisect_right(spans, (pos, float("inf"))) - 1
    return i >= 0 and spans[i][0] <= pos < spans[i][1]


def overlaps(spans: list[Span], start: int, end: int) -> bool:
    """Whether [start, end) shares a char with one of `spans` (sorted and disjoint)."""
    i = bisect.bisect_left(spans, (end, end)) - 1
    return i >= 0 and spans[i][1] > start


def drop_cached() -> None:
    """Forget every note structure and leaf marking kept: a process that reads each note
    once (an embedding worker) keeps no parsed note beyond the one it is reading."""
    structure.cache_clear()
    _marks.cache_clear()


@functools.lru_cache(maxsize=64)
def structure(body: str) -> Structure:
    """The structure of a note's body (text after the frontmatter). Cached on the text."""
    if not body:
        return Structure(body, (), ())
    lines = line_spans(body)
    simple = simple_leaves(body, lines)
    if simple is not None:
        return Structure(body, tuple(simple), ())
    return parsed(body, lines)


# Only these can start a block other than a paragraph or an ATX heading (indentation, block
# quote, list, rule, setext underline, fence, HTML, table, link reference). A body of other lines
# and flat bullet items is read by `simple_leaves` without the parser (parsing every note made a
# cold build of 10,000 short notes 1.34x as long); tests/notes/test_structure.py holds them equal.
_BLOCK_STARTS = frozenset(" \t>-+*_=#`~<|[:0123456789")
_EMPHASIS_START = re.compile(r"[*_]+[^\s*_]")  # "**User:** hi": emphasis, never a list or a rule
_ATX_OPEN = re.compile(r"#{1,6}(?=[ \t]|$)")


def _atx_content(line: str, level: int) -> str:
    """An ATX heading's text as markdown-it cuts it: no closing #s, stripped."""
    end = len(line.rstrip(" \t"))
    tail = end
    while tail > level and line[tail - 1] == "#":
        tail -= 1
    if tail > level and line[tail - 1] in " \t":
        end = tail
    return line[level:end].strip()


def headings(body: str) -> list[Leaf]:
    """The headings of `body` (`structure(body).headings`, without building the rest for a
    plain note: a cold build needs a note's headings, not its paragraphs)."""
    if not body:
        return []
    found = simple_leaves(body, line_spans(body), paragraphs=False)
    return found if found is not None else structure(body).headings


def _text_leaf(
    body: str,
    lines: list[Span],
    kind: str,
    first: int,
    last: int,
    content: str,
    level: int = 0,
    text: str = "",
    quote: int = 0,
) -> Leaf:
    """A leaf of inline text (a heading, a paragraph, an item's paragraph) on lines
    `first`..`last`, its `content` placed back on them."""
    pieces = _place(body, lines, first, content)
    return Leaf(
        kind,
        first,
        last,
        lines[first][0],
        lines[last - 1][1],
        pieces,
        level,
        text,
        quote,
        (Inline(content, pieces),),
    )


def _safe_start(text: str) -> bool:
    """Whether a line (or an item's text) starting with `text` can only be paragraph text."""
    c = text[0]
    return c not in _BLOCK_STARTS or (c in "*_" and _EMPHASIS_START.match(text) is not None)


def simple_leaves(body: str, lines: list[Span], paragraphs: bool = True) -> list[Leaf] | None:
    """The leaves of a body made only of paragraphs, ATX headings and flat bullet lists
    (``- text`` in column 0, one space, its text a paragraph); only its headings when not
    `paragraphs`; None for any other body."""
    if "\x00" in body:  # markdown-it reads NUL as U+FFFD: leave it to the parser
        return None
    leaves: list[Leaf] = []
    first, kind = -1, "paragraph"

    def close(last: int) -> None:
        if not paragraphs:
            return
        skip = 2 if kind == "list item" else 0  # the item's marker
        a0 = lines[first][0] + skip
        content = "\n".join([body[a0 : lines[first][1]], *(body[a:b] for a, b in lines[first + 1 : last])]).strip()
        leaves.append(_text_leaf(body, lines, kind, first, last, content))

    for i, (a, b) in enumerate(lines):
        line = body[a:b]
        if not line.strip(" \t"):
            if first >= 0:
                close(i)
                first = -1
            continue
        c = line[0]
        if c == "#":
            m = _ATX_OPEN.match(line)
            if m:
                if first >= 0:
                    close(i)
                    first = -1
                text = _atx_content(line, m.end())
                leaves.append(_text_leaf(body, lines, "heading", i, i + 1, text, m.end(), text))
                continue
            # "#tag" or seven #s: paragraph text
        elif c in "-*+" and line[1:2] == " " and len(line) > 2 and _safe_start(line[2:]):
            if first >= 0:
                close(i)  # a bullet item interrupts a paragraph or the item before it
            first, kind = i, "list item"
            continue
        elif not _safe_start(line):
            return None
        if first < 0:
            first, kind = i, "paragraph"
    if first >= 0:
        close(len(lines))
    return leaves


def parsed(body: str, lines: list[Span]) -> Structure:
    """The structure from markdown-it's block tokens."""
    tokens = _MD.parse(body)
    leaves: list[Leaf] = []
    code_blocks: list[Span] = []
    quote = 0
    parents: list[str] = []
    i = 0
    row_cells: list[Inline] = []
    row_map = [0, 1]
    html = Elements()  # elements opened in HTML blocks, across the leaves after them
    depth = 0  # block quotes and list items around a token
    while i < len(tokens):
        tok = tokens[i]
        t = tok.type
        if t == "blockquote_open":
            quote += 1
        elif t == "blockquote_close":
            quote -= 1
        if t in ("blockquote_open", "list_item_open"):
            depth += 1
        elif t in ("blockquote_close", "list_item_close"):
            html.end_container(depth, leaves[-1].end if leaves else 0)
            depth -= 1
        if t.endswith("_open") and t not in ("paragraph_open", "heading_open", "tr_open", "th_open", "td_open"):
            parents.append(t)
        elif t.endswith("_close") and t not in ("paragraph_close", "heading_close", "tr_close", "th_close", "td_close"):
            parents.pop()
        if t in ("paragraph_open", "heading_open") and tok.map:
            inline = tokens[i + 1]
            first, last = tok.map
            if t == "heading_open":
                kind, level, text = "heading", int(tok.tag[1]), inline.content.strip()
            else:
                kind = "list item" if parents and parents[-1] == "list_item_open" else "paragraph"
                level, text = 0, ""
            leaves.append(_text_leaf(body, lines, kind, first, last, inline.content, level, text, quote))
            i += 3
            continue
        if t in ("fence", "code_block", "html_block") and tok.map:
            first, last = tok.map
            start, end = lines[first][0], lines[last - 1][1]
            content = tok.content[:-1] if tok.content.endswith("\n") else tok.content
            if t == "fence":
                pieces = _place(body, lines, first + 1, content) if content else ()
                # An unclosed fence runs to the end of its container: no closing line to drop.
                pieces = pieces[: max(0, last - first - 1)]
            else:
                pieces = _place(body, lines, first, content)
            if t == "html_block":
                placed = Inline(content, pieces)
                for tag in tags(content):
                    html.feed(tag, placed.to_body(tag.start), placed.to_body(tag.end), depth)
            else:
                code_blocks.append((start, end))
            kind = "html" if t == "html_block" else "code"
            leaves.append(Leaf(kind, first, last, start, end, pieces, quote=quote))
        elif t == "tr_open" and tok.map:
            row_cells, row_map = [], tok.map
        elif t == "inline" and parents and parents[-1] in ("thead_open", "tbody_open"):
            row_cells.append(Inline(tok.content, ()))
        elif t == "tr_close":
            leaves.append(_table_row(body, lines, row_map, row_cells, quote))
        i += 1
    html.end(len(body))
    return Structure(body, tuple(leaves), tuple(code_blocks), tuple(html.covered(STRUCK)), tuple(html.covered(HIDDEN)))


def _table_row(body: str, lines: list[Span], row_map: list[int], cells: list[Inline], quote: int) -> Leaf:
    """A table row: its line (from the first cell's leading pipe to the last cell), cells placed in order."""
    first = row_map[0]
    a, b = lines[first]
    src = body[a:b]
    cursor = 0
    placed: list[Inline] = []
    for cell in cells:
        at = src.find(cell.content, cursor) if cell.content else -1
        content = cell.content
        if at < 0 and "|" in content:
            # markdown-it hands a cell's escaped pipes (`\|`) unescaped: place it by its source,
            # which is the cell's inline text as written.
            m = re.compile(r"\\?\|".join(map(re.escape, content.split("|")))).search(src, cursor)
            at, content = (m.start(), m.group()) if m else (-1, content)
        if at < 0:
            placed.append(Inline(content, ((a + cursor, a + cursor),)) if not content else Inline("", ()))
            continue
        placed.append(Inline(content, ((a + at, a + at + len(content)),)))
        cursor = at + len(content)
    start = next((p.pieces[0][0] for p in placed if p.pieces), a)
    while start > a and body[start - 1] in " \t|":
        start -= 1
    end = a + len(src.rstrip())
    inlines = tuple(p for p in placed if p.pieces and p.content)
    return Leaf("table row", first, first + 1, a, b, ((start, end),), quote=quote, inlines=inlines)

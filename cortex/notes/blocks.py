"""Blocks of a note and the narrow text normalisation used to match quotes.

Pure functions, no I/O. The verifier (`cortex.ask.quotes`) matches a reader's quote
against the *blocks* of a note after running both through the normalisation below.

What is folded (and nothing else)
=================================

1. **Whitespace and line wrapping.** Every run of Unicode whitespace (anything
   `str.isspace()` accepts: spaces, tabs, newlines, CR, NBSP, thin spaces, ...) becomes
   one ASCII space; leading and trailing whitespace is dropped.
2. **Typographic quotes.** ‘ ’ ‚ ‛ ‹ › become ``'``; “ ” „ ‟ « » become ``"``.
   Primes (′ ″) and fullwidth forms (＂ ＇) are *not* quotes and stay as they are.
3. **Dashes.** ‐ ‑ ‒ – — ― and the minus sign − become ``-``. Fullwidth and
   small-form hyphens stay as they are.
4. **Markdown emphasis.** Backticks are removed; runs of two or more ``~`` are removed
   (a single ``~``, as in "~5 ms", is text); a run of ``*`` / ``_`` is removed when it
   is used as emphasis, i.e. unless it has whitespace (or the edge of the text) on
   both sides (``2 * 3``) or a letter/digit on both sides (``snake_case``, ``5*3``).
5. **Line markers.** A block is read as CommonMark reads it (`cortex.notes.structure`): its
   text is the text of its lines with the container markers (``>``, list bullets and
   numbers, indentation) and a heading's ``#``s already taken off, so a note's line
   markers are exact. A *quote* is a bare string, not a document: `normalize` removes
   the markers a reader may have copied with it, at the start of each line (after any
   indentation): a heading's ``#``s, blockquote ``>`` markers (nested too), list bullets
   ``- `` ``* `` ``+ `` and ordered markers ``1. `` / ``1) ``, except that a ``>`` or a
   number right after a line of prose is text (a hard-wrapped "must stay\\n> 5 ms"); each
   reading of a multi-line quote is tried (`quote_forms`), and since the note's side is
   exact, a reading matches only text that is really there.

Nothing else is folded. Case is **not** folded (quotes must be verbatim, so matching
is case-sensitive). There is no compatibility folding (no NFKC): superscripts
(⁶), subscripts (₂), fullwidth forms (ＡＢＣ１), ligatures (ﬁ), vulgar fractions (½),
ellipsis (…), soft hyphens and zero-width characters all stay distinct, so
``10⁶`` never matches ``106`` and ``ﬁle`` never matches ``file``. Backslash escapes
are not unwrapped. Markup the editor renders rather than shows as text (footnote markers,
link syntax, inline HTML tags) is left out only in a second reading of a block,
`normalize_shown`, whose elisions `cortex.notes.shown` names.

Blocks
======

`blocks_of` gives a note's leaf blocks as CommonMark reads them (`cortex.notes.structure`):
each heading (ATX or setext), paragraph, list item's paragraph (a nested item is its
own block), table row, code block (fenced or indented) and HTML block. A quote must sit
inside one of them: across two list items, two rows or two paragraphs it spans blocks.

Retirement (the brain's house rules): a banner — a line of a block-quoted paragraph, at
any depth and inside list items too, whose first word, after optional ``*``/``_``
emphasis (or an Obsidian callout's ``[!type]``), is one of SUPERSEDED, RETRACTED,
CORRECTION, DEPRECATED in capitals (``> **SUPERSEDED** …``, ``> **SUPERSEDED:** …``,
``> SUPERSEDED …``, ``> _RETRACTED_``) — retires its section: from the banner to the next
heading of the same or a higher level (fewer ``#``) than the heading it sits under; a
banner before any heading retires the whole note. A heading that carries one of those
words in capitals as a whole word (``## SUPERSEDED: the 2025 plan``, ``Old plan
(DEPRECATED)`` underlined with ``===``) retires itself and its section, sub-sections
included. Lower-case or mixed-case words retire nothing. Code is never a banner or a
heading. Struck-through text (``~~…~~``, and what ``<del>``, ``<s>`` or ``<strike>`` hold)
is retired text wherever it is; text in an HTML comment, an Obsidian ``%%comment%%`` or an
HTML element the editor does not show (``<script>``, ``<style>``, ``<template>``,
``hidden``, ``display: none``) is hidden text (`Block.marks`).

In-place corrections ``current claim (was: old claim)``, in any of the shapes
`was_markers` reads (any quoting or none, any case, round or square brackets, full-width
punctuation), are recorded per block as `Correction` spans, each with the claim it
corrects (`claim_units`): its list item, its table row, its heading, or in a paragraph its
sentence (the house rule: "the sentence carries the current claim"). A sentence ends at
``.``, ``!`` or ``?`` and whitespace before anything but a lower-case letter; a full stop
inside the old wording ends nothing, and a marker right after a full stop belongs to the
sentence before it. A marker inside code is an example.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from cortex.notes.note import Note
from cortex.notes.structure import Leaf, Marks, Span, Structure, merged, structure
from cortex.notes.structure import drop_cached as drop_structures

__all__ = [
    "RETIRING_WORDS",
    "Block",
    "Correction",
    "blocks_cached",
    "blocks_of",
    "claim_text",
    "claim_units",
    "sentences",
    "drop_cached",
    "normalize",
    "normalize_pieces",
    "normalize_shown",
    "quote_forms",
    "strip_was_markers",
    "was_markers",
    "WasMarker",
]

RETIRING_WORDS = ("SUPERSEDED", "RETRACTED", "CORRECTION", "DEPRECATED")
_WORDS = "|".join(RETIRING_WORDS)

# A banner, on a line of a block-quoted paragraph once its markers are off: the word
# first, after optional emphasis or an Obsidian callout's [!type] (and its fold sign).
_BANNER_TEXT = re.compile(rf"(?:\[![^\]\n]*\][+-]?[ \t]*)?[*_]{{0,3}}[ \t]*({_WORDS})(?![A-Za-z0-9])")
_RETIRED_HEADING_WORD = re.compile(rf"(?<![A-Za-z0-9])({_WORDS})(?![A-Za-z0-9])")

# How the start of a *quote's* line is read (a quote is a bare string, not a document):
# the markers a reader may have copied along with the text.
_QUOTE_BANNER = re.compile(rf"^ {{0,3}}(?:>[ \t]*)+[*_]{{0,3}}[ \t]*({_WORDS})(?![A-Za-z0-9])")
_QUOTE_HEADING = re.compile(r"[ \t]{0,3}#{1,6}(?:[ \t]+|$)")
_QUOTE_FENCE = re.compile(r"[ \t]*(?:```|~~~)")
_QUOTE_MARKS = re.compile(r"(?:>[ \t]*)+")
_BULLET = re.compile(r"[-*+](?:[ \t]+|$)")
# An ordered marker needs text after it: "4818." alone is a number (an answer of a code), not an
# empty item whose marker is left out (the gate then read the answer as saying nothing).
_ORDERED = re.compile(r"\d{1,9}[.)][ \t]+(?=\S)")

_SINGLE_QUOTES = "‘’‚‛‹›"
_DOUBLE_QUOTES = "“”„‟«»"
_DASHES = "‐‑‒–—―−"
_FOLD = {**{c: "'" for c in _SINGLE_QUOTES}, **{c: '"' for c in _DOUBLE_QUOTES}, **{c: "-" for c in _DASHES}}
# One token per thing that is not copied verbatim.
_TOKEN = re.compile(
    # A single ASCII space between words is copied as plain text (the common case,
    # and the hot path); any other whitespace run is a token folded to one space.
    r"(?P<ws>[^\S ]\s*| \s+)|(?P<emph>[*_]+)|(?P<tick>`+)|(?P<strike>~~+)"
    rf"|(?P<fold>[{_SINGLE_QUOTES}{_DOUBLE_QUOTES}{_DASHES}])"
)

# Kinds of a quote's line, used only to decide whether a line-start marker is a marker.
_BLANK, _FRESH, _PARA, _LIST, _QUOTE = range(5)


def _line_prefix(line: str, prev: int) -> tuple[int, int]:
    """How many chars at the start of a quote's `line` (no line break) are markers, and its kind."""
    stripped = line.lstrip()
    if not stripped:
        return len(line), _BLANK
    pos = len(line) - len(stripped)
    if _QUOTE_FENCE.match(line):
        return pos, _FRESH
    heading = _QUOTE_HEADING.match(line)
    if heading:
        return heading.end(), _FRESH
    kind: int | None = None
    if line[pos] == ">" and prev in (_PARA, _LIST) and not _QUOTE_BANNER.match(line):
        # A hard-wrapped line that happens to begin with ">": text, not a quote.
        return pos, prev
    while True:  # containers nest: "> - > 1. text"
        if line.startswith(">", pos):
            pos = _QUOTE_MARKS.match(line, pos).end()  # type: ignore[union-attr]
            kind = _QUOTE
            continue
        m = _BULLET.match(line, pos)
        if m and m.end() > pos:
            pos, kind = m.end(), _LIST if kind is None else kind
            continue
        m = _ORDERED.match(line, pos)
        if m:
            if kind is None and prev == _PARA:
                return pos, _PARA  # "released in\n2024. Then": the number is text
            pos, kind = m.end(), _LIST if kind is None else kind
            continue
        break
    if kind is not None:
        return pos, kind
    # Lazy continuation: a plain line continues a list item or a blockquote.
    return pos, prev if prev in (_LIST, _QUOTE) else _PARA


def _fold(text: str, start: int, end: int, out: list[str], offs: list[int], last: str) -> str:
    """Append the folded form of `text[start:end]` (one line, or one block piece) to
    `out`, with each char's source offset in `offs`; returns the last char emitted."""
    cursor = start
    for m in _TOKEN.finditer(text, start, end):
        a, b = m.span()
        if a > cursor:
            out.append(text[cursor:a])
            offs.extend(range(cursor, a))
            last = text[a - 1]
        cursor = b
        group = m.lastgroup
        if group == "ws":
            if last != " ":
                out.append(" ")
                offs.append(a)
                last = " "
        elif group == "fold":
            out.append(_FOLD[text[a]])
            offs.append(a)
            last = out[-1]
        elif group == "emph":
            left = text[a - 1] if a > start else " "
            right = text[b] if b < end else " "
            literal = (left.isspace() and right.isspace()) or (left.isalnum() and right.isalnum())
            if literal:
                out.append(text[a:b])
                offs.extend(range(a, b))
                last = text[b - 1]
        # "tick" and "strike": markers, dropped
    if end > cursor:
        out.append(text[cursor:end])
        offs.extend(range(cursor, end))
        last = text[end - 1]
    return last


def _finish(out: list[str], offs: list[int]) -> tuple[str, list[int]]:
    result = "".join(out)
    if result.endswith(" "):
        result, offs = result[:-1], offs[:-1]
    if "  " in result or result.startswith(" "):
        # A dropped marker between two plain spaces ("a `` b") left a double space:
        # rare, so fix it in a second pass rather than slowing the main loop.
        keep = [
            i for i, ch in enumerate(result) if ch != " " or (i > 0 and result[i - 1] != " " and i + 1 < len(result))
        ]
        result = "".join(result[i] for i in keep)
        offs = [offs[i] for i in keep]
    return result, offs


def _normalize(text: str, first_kind: int | None = None) -> tuple[str, list[int]]:
    """`normalize`, optionally pretending the first line was of kind `first_kind`.

    The override lets a quote that starts mid-line be read as if its first line were
    inside a list item or a blockquote; only the context for the next line changes.
    """
    out: list[str] = []
    offs: list[int] = []
    last = " "  # pretend a space was emitted: drops leading whitespace
    prev = _FRESH
    pos = 0
    for index, line in enumerate(text.splitlines(keepends=True)):
        content = line.rstrip("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
        skip, kind = _line_prefix(content, prev)
        if index == 0 and first_kind is not None:
            kind = first_kind
        prev = kind
        start, end = pos + skip, pos + len(line)
        pos = end
        last = _fold(text, start, end, out, offs, last)
    return _finish(out, offs)


def normalize(text: str) -> tuple[str, list[int]]:
    """Normalise a quote for matching (see the module docstring for the rules).

    Returns the normalised string and, for each of its chars, the offset in `text` of
    the char it came from, so a match can be mapped back.
    """
    return _normalize(text)


def normalize_pieces(text: str, pieces: tuple[Span, ...]) -> tuple[str, list[int]]:
    """The normalised form of a block: its `pieces` of `text` (each line's text once its
    container markers are off), folded and joined by one space; offsets are in `text`."""
    out: list[str] = []
    offs: list[int] = []
    last = " "
    for a, b in pieces:
        if last != " " and b > a:
            out.append(" ")
            offs.append(a)
            last = " "
        last = _fold(text, a, b, out, offs, last)
    return _finish(out, offs)


def normalize_shown(
    text: str, pieces: tuple[Span, ...], elided: tuple[tuple[int, int, str], ...]
) -> tuple[str, list[int]]:
    """`normalize_pieces` of a block read as the editor shows it: without the markup
    `elided` names (`cortex.notes.shown.elisions`: [start, end) of `text` and what stands in
    for it, sorted and disjoint). Offsets are in `text`, so a match maps back to its bytes."""
    chars: list[str] = []
    source: list[int] = []
    spans: list[Span] = []
    k = 0
    for a, b in pieces:
        first = len(source)  # one entry per char appended: `shown`'s offset
        pos = a
        while k < len(elided) and elided[k][1] <= a:
            k += 1
        j = k
        while j < len(elided) and elided[j][0] < b:
            x, y, stand_in = elided[j]
            if x > pos:
                chars.append(text[pos:x])
                source.extend(range(pos, x))
            if stand_in and x >= a:
                chars.append(stand_in)
                source.append(x)
            pos = max(pos, min(y, b))
            j += 1
        if b > pos:
            chars.append(text[pos:b])
            source.extend(range(pos, b))
        spans.append((first, len(source)))
    shown = "".join(chars)
    out, offs = normalize_pieces(shown, tuple(spans))
    return out, [source[o] for o in offs]


def quote_forms(quote: str) -> list[str]:
    """The normalised readings of a quote: the plain one first.

    A quote that starts mid-line and spans lines cannot show whether its first line
    sat in a paragraph, a list item or a blockquote, which decides whether a next line
    starting with ``>`` or ``12.`` carries a marker. Each reading is tried; a reading
    only ever differs in whether such a line-start marker is dropped.
    """
    forms = [_normalize(quote)[0]]
    if len(quote.splitlines()) > 1:
        for kind in (_PARA, _LIST, _QUOTE):
            form = _normalize(quote, kind)[0]
            if form not in forms:
                forms.append(form)
    return forms


@dataclass(frozen=True)
class Correction:
    """An in-place correction ``current (was: "old")`` inside a block.

    `start`/`end` span the old wording (inside the quote marks) in the note's full
    text; `marker_start`/`marker_end` span the whole ``(was: "…")``; `unit_start`/
    `unit_end` span the claim it corrects.
    """

    start: int
    end: int
    old: str
    current: str
    marker_start: int
    marker_end: int
    # The claim the marker corrects (see `claim_units`), in the note's full text: a quote
    # overlapping it rests on a corrected claim. `unit` names it for a reply.
    unit_start: int
    unit_end: int
    unit: str  # "list item" | "table row" | "sentence" | "heading"
    # The claim as it stands now: its unit without its markers, struck and hidden text, on
    # one line (`claim_text`): what a quote of the old wording is pointed to.
    claim: str = ""


@dataclass(frozen=True)
class Block:
    """A leaf block of a note's body; offsets are in the note's full text. Immutable: one
    note's blocks are parsed once and shared by every caller (see `blocks_of`).

    `text` is the block's source lines as written (container markers included);
    `pieces` span the text of each line once its markers are off, what quotes match.
    """

    start: int
    end: int
    text: str
    heading: str
    heading_path: tuple[str, ...]
    retired: str | None
    corrections: tuple[Correction, ...] = ()
    # "heading" | "paragraph" | "list item" | "table row" | "code" | "html" | "banner"
    kind: str = "paragraph"
    line: int = 1  # 1-based line of the block's first line in the note's full text
    pieces: tuple[Span, ...] = ()
    _leaf: Leaf | None = field(default=None, repr=False, compare=False)
    _offset: int = field(default=0, repr=False, compare=False)
    _outer: Structure | None = field(default=None, repr=False, compare=False)

    @property
    def level(self) -> int:
        """A heading's level (1 to 6); 0 for any other block."""
        return self._leaf.level if self._leaf is not None and self.kind == "heading" else 0

    def struck_and_hidden(self) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
        """The block's struck and hidden text, as `marks` gives them, without its inline
        parse when nothing can strike or hide it: no ``~`` or ``<`` in it and no ``<`` or
        ``%%`` in its note (a search hit asks this of a passage that may be 80 KB of links)."""
        body = self._outer.body if self._outer is not None else ""
        if not any(c in self.text for c in "~<") and "<" not in body and "%%" not in body:
            return (), ()
        marks = self.marks()
        return marks.struck, marks.hidden

    def marks(self) -> Marks:
        """The block's code spans, struck text and hidden text (note offsets, sorted and
        disjoint): its own inline marks, and what reaches into it from outside (an HTML
        element opened in an earlier HTML block, a `%%comment%%`). Parsed on first use,
        since most blocks are never quoted."""
        if self._leaf is None:
            return Marks()
        own, k = self._leaf.marks(), self._offset
        outer = self._outer.outer if self._outer is not None else Marks()
        a, b = self.start - k, self.end - k

        def spans(inner: tuple[Span, ...], around: tuple[Span, ...]) -> tuple[Span, ...]:
            reach = [s for s in around if s[0] < b and s[1] > a]
            return tuple((x + k, y + k) for x, y in merged([*inner, *reach]))

        return Marks(
            spans(own.code, ()),
            spans(own.struck, outer.struck),
            spans(own.hidden, outer.hidden),
            links=tuple((x + k, y + k, z + k) for x, y, z in own.links),
            autolinks=tuple((x + k, y + k) for x, y in own.autolinks),
            tags=tuple((x + k, y + k, name) for x, y, name in own.tags),
        )


class WasMarker(NamedTuple):
    """One in-place correction marker in a text: [start, end) is the whole ``(was: …)``,
    [old_start, old_end) its old wording (inside its quote marks, when it has them)."""

    start: int
    end: int
    old_start: int
    old_end: int


# The opening of a marker: a bracket, "was" in any case, then a colon (ASCII or full-width),
# or no colon but a quote mark right after ("(was "Tuesday")", whose wording must then be
# quoted whole): "was" alone ("(was born in 1980)") is prose.
_WAS_OPEN = re.compile(r"([(（\[［])\s*was\s*(?:([:：])|(?=[\"'`“”„‟‘’‚‛«»‹›「『＂＇]))", re.IGNORECASE)
_BRACKETS = {"(": re.compile(r"[(（)）]"), "[": re.compile(r"[\[［\]］]")}
_CLOSING = frozenset(")）]］")
# Quote marks that may wrap the old wording, by family: any two of one family pair up
# ("old", “old”, „old“, 'old', ‘old’, «old», »old«, 「old」), as do equal runs of backticks.
_QUOTE_FAMILY = {c: k for k, chars in enumerate(('"“”„‟＂', "'‘’‚‛＇", "«»", "‹›", "「」", "『』")) for c in chars}


def _unquoted(text: str, a: int, b: int) -> tuple[int, int] | None:
    """[a, b) without one pair of quote marks (or backtick runs) wrapping it whole, or
    None when it is not wrapped."""
    if b - a < 2:
        return None
    if text[a] == "`":
        run = len(text[a:b]) - len(text[a:b].lstrip("`"))
        if b - a > 2 * run and text[b - run : b] == "`" * run and text[b - run - 1] != "`":
            return a + run, b - run
        return None
    family = _QUOTE_FAMILY.get(text[a])
    if family is not None and _QUOTE_FAMILY.get(text[b - 1]) == family:
        return a + 1, b - 1
    return None


def was_markers(text: str) -> list[WasMarker]:
    """The in-place correction markers of `text`, in order, never overlapping.

    ``current claim (was: old claim)``, the house rule, in every shape a person writes it:
    any case of "was", round or square brackets, ASCII or full-width (``（was：…）``), the old
    wording quoted in any way (straight, typographic, guillemets, corner brackets, backticks)
    or not at all, and as long as it is. Brackets inside the old wording nest ("(was: every
    18 months (or so))"). A marker never closed runs to the end of `text` (its block): the
    reader cannot tell where the old wording stops, so none of what follows is live.
    Each marker is scanned from where the last one ended, so the work is linear in `text`.
    """
    out: list[WasMarker] = []
    pos = 0
    while True:
        m = _WAS_OPEN.search(text, pos)
        if m is None:
            return out
        bracket = "(" if m.group(1) in "(（" else "["
        depth, close = 0, None
        for br in _BRACKETS[bracket].finditer(text, m.end()):
            if br.group() not in _CLOSING:
                depth += 1
            elif depth:
                depth -= 1
            else:
                close = br.start()
                break
        end = close if close is not None else len(text.rstrip())
        a = m.end() + len(text[m.end() : end]) - len(text[m.end() : end].lstrip())
        b = a + len(text[a:end].rstrip())
        inner = _unquoted(text, a, b)
        if m.group(2) is None and (inner is None or close is None):
            pos = m.end()  # "(was" with no colon is a marker only as (was "old wording")
            continue
        old = inner or (a, b)
        marker_end = close + 1 if close is not None else end
        out.append(WasMarker(m.start(), marker_end, *old))
        pos = marker_end


def strip_was_markers(text: str) -> str:
    """`text` with every in-place correction marker replaced by a space: without its old wording."""
    out, at = [], 0
    for mk in was_markers(text):
        out.append(text[at : mk.start])
        out.append(" ")
        at = mk.end
    return "".join(out) + text[at:] if out else text


_CLAIM_START = re.compile(r"(?:[.!?;][\"'”’)\]]*\s+)|(?:\n[ \t]*(?:(?:>[ \t]*)+|[-*+][ \t]+|\d{1,9}[.)][ \t]+))")
_LEADING_MARKS = re.compile(r"^\s*(?:(?:>[ \t]*)+)?(?:[-*+]|\d{1,9}[.)])?[ \t]*")
_UNIT_OF_KIND = {"heading": "heading", "table row": "table row", "list item": "list item"}


def _corrections(
    text: str, base: int, kind: str, code: tuple[Span, ...], gone: tuple[Span, ...] = ()
) -> list[Correction]:
    """The in-place corrections of a block's `text` (at note offset `base`), none in `code`;
    `gone` (offsets in `text`): its struck and hidden text, which no claim says now."""
    out: list[Correction] = []
    markers = [m for m in was_markers(text) if not any(a <= base + m.start < b for a, b in code)]
    if not markers:
        return out
    units = claim_units(text, [(m.start, m.end) for m in markers], _UNIT_OF_KIND.get(kind, "sentence"))
    lo = 0
    for m, (u_start, u_end, unit) in zip(markers, units, strict=True):
        seg = text[lo : m.start]
        cut = 0
        for c in _CLAIM_START.finditer(seg):
            cut = c.end()
        current = " ".join(_LEADING_MARKS.sub("", seg[cut:]).split())
        out.append(
            Correction(
                start=base + m.old_start,
                end=base + m.old_end,
                old=text[m.old_start : m.old_end],
                current=current,
                marker_start=base + m.start,
                marker_end=base + m.end,
                unit_start=base + u_start,
                unit_end=base + u_end,
                unit=unit,
                claim=claim_text(text, u_start, u_end, merged([*((k.start, k.end) for k in markers), *gone])),
            )
        )
        lo = m.end
    return out


_BEFORE_PUNCTUATION = re.compile(r"\s+(?=[,.;:!?)\]])")


def claim_text(text: str, start: int, end: int, markers: list[tuple[int, int]]) -> str:
    """`text[start:end]` (a claim unit) without the `markers` in it (sorted, disjoint spans
    of `text`: its corrections, struck and hidden text), on one line, without line markers:
    the claim as it reads now ("We meet on Friday at noon." for "We meet on Friday (was:
    Monday) at noon.")."""
    out, at = [], start
    for a, b in markers:
        if a < end and b > at:
            out.append(text[at:a])
            at = max(at, b)
    out.append(text[at:end])
    lines = "".join(out).splitlines()
    return _BEFORE_PUNCTUATION.sub("", " ".join(" ".join(_LEADING_MARKS.sub("", line) for line in lines).split()))


# The end of a sentence: . ! or ? (closing quotes, brackets and emphasis may follow),
# then whitespace; `claim_units` also wants what follows not to be lower case
# ("e.g. the" goes on) nor a correction marker ("Thursday. (was: …)" is one claim).
_SENTENCE_END = re.compile(r"[.!?]+[\"'”’)\]*_`]*\s+")
_SPACES = re.compile(r"\s*")


def _sentence_breaks(text: str, start: int, end: int, markers: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Where sentences of `text[start:end]` end and the next begins: (end, next start).

    A break is a `_SENTENCE_END` followed by something that is not lower case ("e.g.
    the" goes on) and not inside a marker's old wording. A marker right after a
    sentence end belongs to that sentence ("Thursday. (was: "Tuesday")"), so the break
    moves past the marker. `markers` are in text order and do not overlap.
    """
    marker_starts = [a for a, _ in markers]
    closes = dict(markers)
    breaks: list[tuple[int, int]] = []
    for e in _SENTENCE_END.finditer(text, start, end):
        nxt = e.end()
        j = bisect.bisect_right(marker_starts, e.start()) - 1
        if nxt >= end or (j >= 0 and e.start() < markers[j][1]):
            continue  # the unit's last sentence, or a full stop inside old wording
        if nxt in closes:
            after = _SPACES.match(text, closes[nxt], end).end()  # type: ignore[union-attr]
            if after < end and not text[after].islower():
                breaks.append((closes[nxt], after))
        elif not text[nxt].islower():
            breaks.append((e.start() + len(e.group().rstrip()), nxt))
    return breaks


def sentences(text: str) -> list[str]:
    """The sentences of `text`, cut where `claim_units` cuts a paragraph (". " before a
    word that is not lower case)."""
    start, end = len(text) - len(text.lstrip()), len(text.rstrip())
    out, at = [], start
    for stop, nxt in _sentence_breaks(text, start, end, []):
        out.append(text[at:stop])
        at = nxt
    out.append(text[at:end])
    return [s for s in out if s.strip()]


def claim_units(text: str, markers: list[tuple[int, int]], unit: str = "sentence") -> list[tuple[int, int, str]]:
    """For each correction marker span in a block's `text`, the claim it corrects.

    The house rule puts the current claim beside the old one, so a marker corrects the
    unit it is written in, never its neighbours. A list item, a table row or a heading
    is one block, the writer's own boundary of one entry: the unit is the whole block
    (`unit` names it). A paragraph can hold many unrelated facts, and the sentence is
    the only boundary it has (`unit="sentence"`). `markers` are in text order and do not
    overlap (as `WAS` finds them). Returns (start, end, unit name) in `text` offsets.
    """
    end = len(text.rstrip())
    if unit != "sentence":
        return [(0, max(end, m_end), unit) for _, m_end in markers]
    start = len(text) - len(text.lstrip())
    breaks = _sentence_breaks(text, start, end, markers)
    ends, nexts = [e for e, _ in breaks], [n for _, n in breaks]
    out: list[tuple[int, int, str]] = []
    for m_start, m_end in markers:
        k = bisect.bisect_right(nexts, m_start) - 1
        u_start = nexts[k] if k >= 0 else start
        k = bisect.bisect_left(ends, m_end)
        u_end = ends[k] if k < len(ends) else end
        # Old wording may wrap onto the next line; the unit holds the whole marker.
        out.append((u_start, max(u_end, m_end), "sentence"))
    return out


def _retiring_word(heading_text: str) -> str | None:
    m = _RETIRED_HEADING_WORD.search(heading_text)
    return m.group(1) if m else None


def _banner_line(leaf: Leaf, body: str) -> tuple[int, str] | None:
    """(index of the line, word) of the first banner line of a block-quoted paragraph."""
    if not leaf.quote or leaf.kind not in ("paragraph", "list item"):
        return None
    for k, (a, b) in enumerate(leaf.pieces):
        m = _BANNER_TEXT.match(body, a, b)
        if m:
            return k, m.group(1)
    return None


@functools.lru_cache(maxsize=512)
def blocks_cached(text: str, body_offset: int) -> tuple[Block, ...]:
    """The blocks of `text`, whose body starts at `body_offset`: `blocks_of` by text, cached."""
    body = text[body_offset:]
    first_line = text[:body_offset].count("\n") + 1
    blocks: list[Block] = []
    stack: list[tuple[int, str]] = []  # enclosing headings (level, text)
    retirements: list[tuple[int, str]] = []  # (section level, reason); level 0 = note
    read = structure(body)
    for leaf in read.leaves:
        kind = leaf.kind
        lineno = first_line + leaf.first
        if kind == "heading":
            level, htext = leaf.level, leaf.text
            retirements = [r for r in retirements if r[0] < level]
            stack = [s for s in stack if s[0] < level]
            stack.append((level, htext))
            word = _retiring_word(htext)
            if word:
                retirements.append((level, f'section heading "{htext}" (line {lineno}) is marked {word}'))
        banner = _banner_line(leaf, body)
        if banner:
            kind = "banner"
            level = stack[-1][0] if stack else 0
            if not any(r[0] <= level for r in retirements):
                where = "before any heading" if level == 0 else f'under "{stack[-1][1]}"'
                at = lineno + banner[0]
                retirements.append((level, f"under a {banner[1]} banner at line {at} ({where})"))
        btext = body[leaf.start : leaf.end]
        base = body_offset + leaf.start
        corrections: tuple[Correction, ...] = ()
        if kind not in ("code", "html") and _WAS_OPEN.search(btext):
            own = leaf.marks() if any(c in btext for c in "`~<") else Marks()
            outer = read.outer if ("%%" in body or "<" in body) else Marks()
            code = tuple((a + body_offset, b + body_offset) for a, b in own.code)
            gone = tuple(
                (max(a, leaf.start) - leaf.start, min(b, leaf.end) - leaf.start)
                for a, b in (*own.struck, *own.hidden, *outer.struck, *outer.hidden)
                if a < leaf.end and b > leaf.start
            )
            corrections = tuple(_corrections(btext, base, kind, code, gone))
        blocks.append(
            Block(
                start=base,
                end=body_offset + leaf.end,
                text=btext,
                heading=stack[-1][1] if stack else "",
                heading_path=tuple(h for _, h in stack),
                retired=retirements[0][1] if retirements else None,
                corrections=corrections,
                kind=kind,
                line=lineno,
                pieces=tuple((a + body_offset, b + body_offset) for a, b in leaf.pieces),
                _leaf=leaf,
                _offset=body_offset,
                _outer=read,
            )
        )
    return tuple(blocks)


def blocks_of(note: Note, text: str | None = None) -> list[Block]:
    """The note's leaf blocks, each with its heading path and retirement.

    Offsets are in `note.text`; the body is taken as `note.text[note.body_offset:]`
    (what `parse_note` builds). Results are cached on the note's text. `text`: the note's
    text when the caller holds it already (a saved note's is read from Git each time).
    """
    # The blocks are immutable, so the cached ones are handed out as they are: copying
    # them was 15% of a search's passages (4 ms at 10,000 notes).
    return list(blocks_cached(note.text if text is None else text, note.body_offset))


def drop_cached() -> None:
    """Forget every note's blocks kept in memory (and the structures under them)."""
    blocks_cached.cache_clear()
    drop_structures()

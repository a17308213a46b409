"""The quote check of `brain_ask` and `brain_verify`: is a reader's quote in the cited note,
and in live text? (`check_quote`)

Pure functions, no I/O, never raise. The reader model answers with citations
``{tag, quote}``; the caller resolves each tag to a note of the pack and calls
`check_quote`, whose stamps `cortex.ask.stamps.overall_stamp` folds into the reply's.

Matching: the quote and each block are normalised with `cortex.notes.blocks.normalize`
(whitespace, typographic quotes and dashes, Markdown emphasis and line markers; exact
case), then put in Unicode NFC (`cortex.ask.normal_form`), and the normalised quote must be a
substring of one normalised block, read as written or as the editor shows it (without
footnote markers, link syntax and inline HTML tags: `cortex.notes.shown`; each char still
mapped to its byte, so the checks below run on the note's own offsets). No fuzzy matching.
A quote that spans lines and starts mid-line is also tried as if its first line sat in
a list item or a blockquote (`cortex.notes.blocks.quote_forms`): those readings differ
only in whether a later line-start ``>`` or ``12.`` is a marker.

When a quote is too generic to identify one passage (UNVERIFIED), checked in this
order on the normalised quote:

1. it has no word (a token of letters/digits with a letter in it, not counting date
   and time words: month and weekday names and their abbreviations, am/pm, time-zone
   abbreviations, ordinals like ``3rd``, ``10h``, ``T10``): it is only a date, number
   or time ("2026-03-01", "10:30", "1,240");
2. it has fewer than 3 such words ("15 degrees");
3. it has fewer than 12 letters and digits in all;
4. it occurs in 3 or more distinct notes (by path) of the pack, counting the cited one
   (a stock phrase); two notes sharing a passage is normal and still verifies.

CORRECTED: a ``(was: "…")`` marker corrects only its own claim, the list item, table row
or sentence it is written in (`cortex.notes.blocks.claim_units`). A quote that reaches into
such a claim is CORRECTED (one that spans a corrected item and an unchanged one too);
a quote of an unchanged neighbour in the same block is VERIFIED.

A quote that occurs several times in the cited note is fine: every occurrence is
stamped and the weakest stamp is given (so a phrase that appears both in live and in
retired text is SUPERSEDED: quote a longer, distinguishing passage). The reason says
how many occurrences there were when their stamps differ.
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TypedDict

from cortex.ask import own_words
from cortex.ask.normal_form import nfc_with_offsets, normalize_nfc
from cortex.ask.replacement import Replacement, in_note, in_successor
from cortex.ask.stamps import CORRECTED, STRENGTH, SUPERSEDED, UNVERIFIED, VERIFIED, QuoteCheck, one_line
from cortex.notes.blocks import (
    Block,
    blocks_cached,
    blocks_of,
    normalize_pieces,
    normalize_shown,
    quote_forms,
)
from cortex.notes.note import Note
from cortex.notes.shown import elisions
from cortex.notes.structure import merged, overlaps

__all__ = ["GENERIC_NOTES", "MAX_OCCURRENCES", "MIN_ALNUM", "MIN_WORDS", "check_quote", "generic_reason", "too_generic"]

MIN_WORDS = 3
MIN_ALNUM = 12
GENERIC_NOTES = 3
# Bound the work on a pathological note (a phrase repeated thousands of times).
MAX_OCCURRENCES = 256


@dataclass(frozen=True)
class _Indexed:
    blocks: tuple[Block, ...]
    # Per block: normalised NFC text, and for each of its chars the note offsets where
    # the source chars it came from start and end.
    normalised: tuple[tuple[str, tuple[int, ...], tuple[int, ...]], ...]
    body: str  # the blocks' normalised texts joined: detects quotes that span blocks


@functools.lru_cache(maxsize=512)
def _indexed(text: str, body_offset: int) -> _Indexed:
    # Keyed on the note's text: the same text at any SHA gives the same blocks.
    blocks = blocks_cached(text, body_offset)
    normalised = []
    for b in blocks:
        s, offs = normalize_pieces(text, b.pieces)
        s, starts, ends = nfc_with_offsets(s, offs)
        normalised.append((s, tuple(starts), tuple(ends)))
    # The body's normalised form is the blocks' joined by one space (what the blank
    # lines between them fold to); no second pass over the text.
    return _Indexed(blocks, tuple(normalised), " ".join(n[0] for n in normalised if n[0]))


def _index(note: Note) -> _Indexed:
    return _indexed(note.text, note.body_offset)


# What can open markup the editor does not show as text (`cortex.notes.shown`).
_MARKUP = ("[", "<")


@functools.lru_cache(maxsize=512)
def _shown_indexed(text: str, body_offset: int) -> _Indexed | None:
    """The note's blocks read as the editor shows them, or None when that is the raw reading."""
    raw = _indexed(text, body_offset)
    normalised, differs = [], False
    for b, plain in zip(raw.blocks, raw.normalised, strict=True):
        elided = elisions(text, b.pieces, b.marks()) if any(c in b.text for c in _MARKUP) else ()
        if not elided:
            normalised.append(plain)
            continue
        differs = True
        s, offs = normalize_shown(text, b.pieces, elided)
        s, starts, ends = nfc_with_offsets(s, offs)
        normalised.append((s, tuple(starts), tuple(ends)))
    if not differs:
        return None
    return _Indexed(raw.blocks, tuple(normalised), " ".join(n[0] for n in normalised if n[0]))


def _readings(note: Note, shown: bool) -> list[_Indexed]:
    """The note's readings to match a quote in: the raw text, and with `shown` the text as
    the editor shows it (a quote may leave out what the editor does not show as text)."""
    raw = _index(note)
    if not shown or not any(c in note.text for c in _MARKUP):
        return [raw]
    as_shown = _shown_indexed(note.text, note.body_offset)
    return [raw] if as_shown is None else [raw, as_shown]


_DATE_WORDS = frozenset(
    """january february march april may june july august september october november
    december jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday
    thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun am pm
    utc gmt z cet cest bst est edt cst cdt mst mdt pst pdt ist jst""".split()
)
# Tokens that are numbers with a unit-of-time or ordinal tail: 3rd, 10h, 5pm, 01T10, T10Z.
_NUMERIC_TOKEN = re.compile(r"\d+(?:st|nd|rd|th|h|am|pm|z)?(?:t\d+z?)?|t\d+z?", re.IGNORECASE)
_TOKEN = re.compile(r"[^\W_]+")


def generic_reason(nq: str) -> str | None:
    """Why a normalised quote is too short to identify a passage, or None."""
    # A whole table row ("| Ms Novák | 214 | 5521 |") is identified by every cell, numbers too.
    row = nq.strip().startswith("|") and nq.strip().endswith("|") and nq.count("|") >= 4
    words = [
        t
        for t in _TOKEN.findall(nq)
        if row or any(c.isalpha() for c in t) and t.casefold() not in _DATE_WORDS and not _NUMERIC_TOKEN.fullmatch(t)
    ]
    if not words:
        if any(c.isdigit() for c in nq):
            return "quote is only a date, number or time: too generic to identify one passage"
        return "quote has no words: too generic to identify one passage"
    if len(words) < MIN_WORDS:
        return (
            f"quote is too short to identify one passage ({len(words)} word"
            f"{'s' if len(words) != 1 else ''}; at least {MIN_WORDS} needed)"
        )
    alnum = sum(1 for c in nq if c.isalnum())
    if alnum < MIN_ALNUM:
        return f"quote is too short to identify one passage ({alnum} letters/digits; at least {MIN_ALNUM} needed)"
    return None


def too_generic(quote: str) -> str | None:
    """Why `quote` alone is too short to identify one passage (rules 1-3 above), or None."""
    return generic_reason(normalize_nfc(quote))


def _contains(readings: list[_Indexed], forms: list[str]) -> bool:
    # Every block's text is a substring of `body`, so one search per reading suffices.
    return any(f in index.body for index in readings for f in forms)


@dataclass(frozen=True)
class _Occurrence:
    block: Block
    start: int  # the match in the note's full text
    end: int
    norm: str  # the block's normalised text, the match at [i, j)
    starts: tuple[int, ...]
    i: int
    j: int


def _occurrences(readings: list[_Indexed], forms: list[str]) -> list[_Occurrence]:
    """Every place where a reading of the quote occurs inside one block, in any reading
    of the note (the same span found twice counts once)."""
    seen: set[tuple[int, int]] = set()
    out: list[_Occurrence] = []
    for index in readings:
        for block, (s, starts, ends) in zip(index.blocks, index.normalised, strict=True):
            for form in forms:
                i = s.find(form)
                while i != -1:
                    start = starts[i]
                    end = ends[i + len(form) - 1]
                    if (start, end) not in seen:
                        seen.add((start, end))
                        out.append(_Occurrence(block, start, end, s, starts, i, i + len(form)))
                        if len(out) >= MAX_OCCURRENCES:
                            return out
                    i = s.find(form, i + 1)
    return out


def _live_and_retired(occ: _Occurrence) -> tuple[str, str]:
    """The matched text without its retired and hidden parts, and its retired parts.

    Retired: struck text and the old wording of a correction (its whole ``(was: …)``
    marker is left out of the live text). Hidden text is in neither.
    """
    block = occ.block
    marks = block.marks()
    struck, hidden = list(marks.struck), list(marks.hidden)
    markers = [(c.marker_start, c.marker_end) for c in block.corrections]
    old = [(c.start, c.end) for c in block.corrections]
    if not (struck or markers or hidden):
        return occ.norm[occ.i : occ.j], ""
    out_live = merged(struck + markers + hidden)
    retired = merged(struck + old)
    live_chars, retired_chars = [], []
    for k in range(occ.i, occ.j):
        pos = occ.starts[k]
        if not overlaps(out_live, pos, pos + 1):
            live_chars.append(occ.norm[k])
        elif overlaps(retired, pos, pos + 1):
            retired_chars.append(occ.norm[k])
        else:
            retired_chars.append(" ")
    return " ".join("".join(live_chars).split()), " ".join("".join(retired_chars).split())


# A sentence ends at . ! or ? (closing quotes and brackets after it), before a space and a
# character that is no lower-case letter: "e.g. the" goes on.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[^\s\w]|[^\W_a-z])")

# The most of a unit around a quote read, each side: a run-on line of a 400 KB note is
# read near the quote, not whole.
SENTENCE_REACH = 600


def _units_of(occ: _Occurrence) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The whole units the match sits in, live text, smallest first: its sentence(s), its
    line(s), its block; and the words those units hold only as retired text."""
    starts = [0] + [m.end() for m in _SENTENCE_END.finditer(occ.norm)]
    first = starts[bisect.bisect_right(starts, occ.i) - 1]
    after = bisect.bisect_left(starts, occ.j)
    spans = [(first, starts[after] if after < len(starts) else len(occ.norm))]
    lines = [p for p in occ.block.pieces if p[0] < occ.end and p[1] >= occ.start]
    if lines:
        i = bisect.bisect_left(occ.starts, lines[0][0])
        j = bisect.bisect_left(occ.starts, lines[-1][1])
        spans.append((min(i, occ.i), max(j, occ.j)))
    spans.append((0, len(occ.norm)))
    units, retired = [], []
    for i, j in spans:
        i, j = max(i, occ.i - SENTENCE_REACH), min(j, occ.j + SENTENCE_REACH)
        live, old = _live_and_retired(replace(occ, i=i, j=j))
        units.append(unicodedata.normalize("NFC", live.strip()))
        retired.append(old)
    old = " ".join(r for r in retired if r)
    words = (
        {t.key for t in own_words.tokens(old)} - {t.key for u in units for t in own_words.tokens(u)} if old else set()
    )
    return tuple(dict.fromkeys(u for u in units if u)), tuple(sorted(words))


_WORD = re.compile(r"[^\W_]")  # a letter or digit: the quote holds live text


def _first_overlap(spans: tuple[tuple[int, int], ...], start: int, end: int) -> tuple[int, int] | None:
    """The first of `spans` (sorted, disjoint) sharing a char with [start, end), or None."""
    return next((s for s in spans if s[0] < end and s[1] > start), None)


_TAG = re.compile(r"<([A-Za-z][A-Za-z0-9-]*)[^>]{0,80}>")


def _element(text: str, span: tuple[int, int]) -> str | None:
    """The HTML element a struck or hidden span starts with, as ``<tag …>…</tag>`` on one
    line, or None (the span is ``~~…~~`` or a comment)."""
    m = _TAG.match(text, span[0], span[1])
    return f"{' '.join(m.group().split())}…</{m.group(1).lower()}>" if m else None


def _hiding(text: str, span: tuple[int, int]) -> str:
    """What hides a hidden span, for a reason: a comment, or the element."""
    if text.startswith("%%", span[0]):
        return "an Obsidian comment (%% … %%)"
    element = _element(text, span)
    return f"the HTML element {element}" if element else "a comment (<!-- … -->)"


def _distance(a: int, b: int, c: int, d: int) -> int:
    """Gap between spans [a, b) and [c, d); 0 when they touch or overlap."""
    return max(0, c - b, a - d)


def _named(found: Replacement | None, successor: Note | None = None) -> tuple[str, str | None]:
    """The reason's words for the sentence that replaced a quote (in `successor`, or in the
    quote's own note), and the sentence."""
    if found is None:
        return "", None
    at = f'under "{found.heading}" (line {found.line})' if found.heading else f"at line {found.line}"
    lead = f"; {successor.path} says, {at}" if successor is not None else f"; the current version is {at}"
    if not found.sentence:
        return lead, None
    return f'{lead}: "{found.sentence}"', found.sentence


class _Found(TypedDict):
    """Where a quote was found: the part of its QuoteCheck that every stamp shares."""

    path: str
    heading: str
    heading_path: tuple[str, ...]
    block_start: int
    block_end: int
    superseded_by: str | None
    note_retired: str | None
    match_start: int
    match_end: int
    quote: str
    retired_text: str
    context: tuple[str, ...]
    code: str
    units: tuple[str, ...]
    retired_words: tuple[str, ...]


# Words that give a block as a pattern to copy rather than the owner's own text.
_PATTERN_WORDS = r"templates?|examples?|samples?|skeleton|placeholders?|boilerplate|fill (?:it |this |them )?in"
# A code block's section or lead-in ("Example config:", "in this format").
_EXAMPLE = re.compile(rf"(?i)(?<![\w])(?:{_PATTERN_WORDS}|format|layout|e\.g\.|for instance|copy (?:this|the|it))")
# A prose section or note given so: "Trip template (copy for each trip)", a note in templates/.
_TEMPLATE = re.compile(rf"(?i)(?<![\w])(?:{_PATTERN_WORDS}|copy (?:this|for each|it))(?![\w])")


def _code_kind(note: Note, block: Block) -> str:
    """ "" for a block of prose; "template" for one under a heading, title or folder that
    gives it as a template or example; "code" for a fenced or indented code block;
    "example" for one its section introduces as a template, example or format to copy."""
    if block.kind != "code":
        given = [*block.heading_path, note.title, *note.path.split("/")[:-1]]
        return "template" if any(_TEMPLATE.search(g) for g in given) else ""
    before = [b.text for b in blocks_of(note) if b.heading_path == block.heading_path and b.end <= block.start]
    return "example" if _EXAMPLE.search(" ".join([*block.heading_path, *before])) else "code"


def _stamp_occurrence(note: Note, retired_note: str | None, occ: _Occurrence, successor: Note | None) -> QuoteCheck:
    block, start, end = occ.block, occ.start, occ.end
    code = _code_kind(note, block)
    marks = block.marks()
    live, retired_text = _live_and_retired(occ)
    units, retired_words = _units_of(occ)
    common = _Found(
        path=note.path,
        heading=block.heading,
        heading_path=block.heading_path,
        block_start=block.start,
        block_end=block.end,
        superseded_by=note.superseded_by,
        note_retired=retired_note,
        match_start=start,
        match_end=end,
        quote=unicodedata.normalize("NFC", live),
        retired_text=unicodedata.normalize("NFC", retired_text),
        context=(note.title, *note.aliases, *block.heading_path),
        code=code,
        units=units,
        retired_words=retired_words,
    )
    where = f'{note.path} under "{block.heading}"' if block.heading else note.path
    after = f"; the current version is in {note.superseded_by}" if note.superseded_by else ""
    if note.unreadable:
        return QuoteCheck(UNVERIFIED, f"{note.path}: {note.unreadable}", **common)
    hidden = _first_overlap(marks.hidden, start, end)
    if hidden is not None:
        return QuoteCheck(
            UNVERIFIED,
            f"quote is hidden in the note: it sits in {_hiding(note.text, hidden)} of {where}, "
            "which the note's editor does not show",
            **common,
        )
    matched = occ.norm[occ.i : occ.j]
    if retired_note:
        found = in_successor(successor, matched) if successor is not None else None
        said, current = _named(found, successor)
        return QuoteCheck(
            SUPERSEDED,
            f"quote is in {where}, a retired note ({retired_note}); do not answer from it{after}{said}",
            **({**common, "old_claim": current} if current else common),
        )
    if block.retired:
        said, current = _named(in_note(note, block, matched))
        return QuoteCheck(
            SUPERSEDED,
            f"quote sits in retired text of {where} ({block.retired}); do not answer from it{after}{said}",
            **({**common, "old_claim": current} if current else common),
        )
    struck = _first_overlap(marks.struck, start, end)
    if struck is not None:
        shown = _element(note.text, struck) or "~~…~~"
        # Live text after the last struck part: the value that replaced it is in the quote.
        last = max(e for s_, e in marks.struck if s_ < end and e > start)
        if not _WORD.search(note.text[last:end]):  # nothing current beside the struck part
            return QuoteCheck(
                SUPERSEDED,
                f"quote is struck-through text of {where} ({shown} is retired text); do not answer from it",
                **common,
            )
        return QuoteCheck(
            CORRECTED,
            f"quote found in {where}; it holds struck-through text ({shown}), retired beside the current claim",
            old_claim=common["retired_text"],
            **common,
        )
    if block.corrections:
        corrected = _corrected(block, start, end, where, common)
        if corrected is not None:
            return corrected
    return QuoteCheck(VERIFIED, f"quote found in {where}", **common)


def _corrected(block: Block, start: int, end: int, where: str, common: _Found) -> QuoteCheck | None:
    """The stamp of a quote in a block with in-place corrections: SUPERSEDED in an old
    wording, CORRECTED when it reaches into a corrected claim; None when it touches neither."""
    for c in block.corrections:
        overlaps_old = start < c.end and end > c.start
        whole = start <= c.marker_start and end >= c.marker_end
        if overlaps_old and not whole:
            return QuoteCheck(
                SUPERSEDED,
                f"quote sits in the old wording of an in-place correction in {where}: "
                f'(was: "{c.old}") is retired; the current claim is "{c.claim or c.current}"; '
                "do not answer from the old wording",
                old_claim=c.claim or c.current,
                **common,
            )
    # A marker corrects only its own claim (list item, table row or sentence: see
    # `cortex.notes.blocks.claim_units`); a quote of an unchanged neighbour stays VERIFIED.
    # A quote that reaches into a corrected claim at all rests on it: CORRECTED.
    touched = [c for c in block.corrections if start < c.unit_end and end > c.unit_start]
    if not touched:
        return None
    # Show the correction nearest to the quote: the one the answer rests on.
    c = min(touched, key=lambda c: _distance(start, end, c.marker_start, c.marker_end))
    if normalize_nfc(c.old) not in common["retired_text"]:
        common["retired_text"] = " ".join(x for x in (common["retired_text"], normalize_nfc(c.old)) if x)
    return QuoteCheck(
        CORRECTED,
        f'quote found in {where}; the quoted {c.unit} carries an in-place correction, the old wording was "{c.old}"',
        old_claim=c.old,
        **common,
    )


def _unverified(reason: str, note: Note | None, retired: str | None = None) -> QuoteCheck:
    return QuoteCheck(
        UNVERIFIED,
        reason,
        path=note.path if note is not None else "",
        superseded_by=note.superseded_by if note is not None else None,
        note_retired=retired,
    )


def _successor(note: Note, pack: Mapping[str, Note], given: Note | None, today: dt.date) -> Note | None:
    """The live note `note.superseded_by` names: `given` (the caller read it), else the
    pack's note at that path; None when it is retired, unreadable or not at hand."""
    if not note.superseded_by:
        return None
    if given is None:
        name = note.superseded_by.strip().lstrip("/")
        names = {name, name + ".md"}
        given = next((n for n in pack.values() if n is not None and n.path in names), None)
    if given is None or given.unreadable or given.retired_reason(today):
        return None
    return given


def _check(
    quote: str, note: Note | None, pack: Mapping[str, Note], today: dt.date, successor: Note | None = None
) -> QuoteCheck:
    if note is None:
        return _unverified("cites a file not in the pack", None)
    retired = note.retired_reason(today)
    if not isinstance(quote, str) or not quote.strip():
        return _unverified("no quote given (empty quote)", note, retired)
    forms = [unicodedata.normalize("NFC", f) for f in quote_forms(quote)]
    if not forms[0]:
        return _unverified("quote is empty after normalisation", note, retired)
    # Any whole unit, and any fragment that occurs once, is quotable however short: "too
    # short" is only for a short fragment of several places (decided once it is found).
    generic = generic_reason(forms[0])

    # A quote the raw text holds is matched and counted in the raw texts; one that needs
    # the note as shown, in the readings as shown too. Each note's shown reading costs an
    # inline parse of its every block with a link or a tag: 0.9 s for a 400 KB hub note
    # of 8,000 [[links]], so it is read only when the raw text does not hold the quote.
    shown = not _contains(_readings(note, shown=False), forms)
    readings = _readings(note, shown=shown)
    found = _occurrences(readings, forms)
    # Which notes of the pack hold the quote at all (by path; the cited one included).
    holders = {note.path} if found or _contains(readings, forms) else set()
    if generic and len(found) > 1:
        return _unverified(f"{generic}: it occurs {len(found)} times in {note.path}", note, retired)
    for other in pack.values():
        if other is not None and other.path not in holders and _contains(_readings(other, shown), forms):
            holders.add(other.path)
    # A whole unit that occurs once in its note is quotable, however many notes share it.
    if len(holders) >= GENERIC_NOTES and not (len(found) == 1 and _whole_unit(forms[0], found[0])):
        listed = ", ".join(sorted(holders)[:4]) + (", …" if len(holders) > 4 else "")
        return _unverified(
            f"quote is too generic: it occurs in {len(holders)} notes of the pack ({listed})",
            note,
            retired,
        )
    if found:
        after = _successor(note, pack, successor, today) if retired else None
        checks = [_stamp_occurrence(note, retired, occ, after) for occ in found]
        weakest = min(checks, key=lambda c: STRENGTH[c.stamp])  # first weakest: stable
        if len({c.stamp for c in checks}) > 1:
            weakest = _with_reason(
                weakest,
                f"{weakest.reason} (the quote occurs {len(checks)} times in {note.path} "
                "with different stamps; the weakest is given)",
            )
        return weakest
    if _contains(readings, forms):
        return _unverified(
            f"quote spans blocks in {note.path}: it must sit inside one paragraph, list item, table row or heading",
            note,
            retired,
        )
    others = sorted(holders - {note.path})
    if others:
        return _unverified(
            f"quote occurs in {', '.join(others)}, not in the cited file {note.path}",
            note,
            retired,
        )
    if generic:
        return _unverified(generic, note, retired)
    hint = " (quotes must be verbatim: no ellipsis)" if ("…" in quote or "..." in quote) else ""
    return _unverified(f"quote not found in {note.path}{hint}", note, retired)


def _whole_unit(quote: str, occ: _Occurrence) -> bool:
    """Whether the quote is one whole unit of its block (its sentence, line or the block)."""
    said = [t.key for t in own_words.tokens(quote)]
    return any([t.key for t in own_words.tokens(u)] == said for u in _units_of(occ)[0])


def _with_reason(check: QuoteCheck, reason: str) -> QuoteCheck:
    return replace(check, reason=reason)


def check_quote(
    quote: str, note: Note | None, pack: Mapping[str, Note], today: dt.date, successor: Note | None = None
) -> QuoteCheck:
    """Stamp one quote against the note its citation resolved to (None: not in pack).

    `successor`: the note `note.superseded_by` names, when the caller read it (else it is
    looked for in the pack), so a quote of a retired note can name the sentence that
    replaced it. Never raises: anything unexpected becomes UNVERIFIED with the error named.
    """
    try:
        result = _check(quote, note, pack, today, successor)
        return replace(result, reason=one_line(result.reason))
    except Exception as exc:  # the verifier must always answer; say why it could not
        path = getattr(note, "path", "") if note is not None else ""
        return QuoteCheck(
            UNVERIFIED,
            f"the verifier could not check this quote ({type(exc).__name__})",
            path=path if isinstance(path, str) else "",
        )

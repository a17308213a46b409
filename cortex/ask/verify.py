"""The deterministic verifier of `brain_ask`: check a reader's quote, stamp it.

Pure functions, no I/O, never raise. The reader model answers with citations
``{tag, quote}``; the caller resolves each tag to a note of the pack and calls
`check_quote`; `overall_stamp` folds the per-quote stamps into the reply's stamp and
`neutralize_answer` makes sure nothing in the model's own text can pass for a line of
the server's.

Stamps, strongest first: VERIFIED > CORRECTED > SUPERSEDED > UNVERIFIED. The overall
stamp of an answer is the weakest of its quotes. NOT IN BRAIN is outside that order:
`check_quote` never gives it, and it is an overall stamp only for an answer with no
citations (see `overall_stamp`); met among quote checks it counts as UNVERIFIED.

Matching: the quote and each block are normalised with `cortex.notes.blocks.normalize`
(whitespace, typographic quotes and dashes, Markdown emphasis and line markers; exact
case), then put in Unicode NFC, and the normalised quote must be a substring of one
normalised block. NFC is canonical equivalence only: a note saved in NFD (``e`` +
U+0301, as macOS editors write it) and a quote in NFC (``é``) are the same text, while
compatibility forms stay apart (a superscript 6 is not a 6, ``ﬁ`` is not ``fi``). No
fuzzy matching. A quote that spans lines and starts mid-line is
also tried as if its first line sat in a list item or a blockquote
(`cortex.notes.blocks.quote_forms`): those readings differ only in whether a later
line-start ``>`` or ``12.`` is a marker.

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

Grounding (`ungrounded`, used by `overall_stamp`): an answer keeps VERIFIED or
CORRECTED only when every *specific* it states occurs in a quote that is itself VERIFIED
or CORRECTED (outside any old wording ``(was: "…")``). See `specifics` for what counts
as a specific and which spellings count as the same.

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

import datetime as dt
import functools
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from cortex.index.tokenize import STOPWORDS
from cortex.notes.blocks import _WAS, Block, _blocks_cached, hidden_spans, normalize, normalize_pieces, quote_forms
from cortex.notes.note import Note
from cortex.notes.structure import merged, overlaps

VERIFIED = "VERIFIED"
CORRECTED = "CORRECTED"
SUPERSEDED = "SUPERSEDED"
UNVERIFIED = "UNVERIFIED"
NOT_IN_BRAIN = "NOT IN BRAIN"
STAMPS = (VERIFIED, CORRECTED, SUPERSEDED, UNVERIFIED, NOT_IN_BRAIN)

# Higher is stronger. NOT IN BRAIN never meets a quote's stamp; ranked with UNVERIFIED.
STRENGTH = {VERIFIED: 4, CORRECTED: 3, SUPERSEDED: 2, UNVERIFIED: 1, NOT_IN_BRAIN: 1}

MIN_WORDS = 3
MIN_ALNUM = 12
GENERIC_NOTES = 3
# Bound the work on a pathological note (a phrase repeated thousands of times).
MAX_OCCURRENCES = 256

# Prefix of every line the server itself writes around an answer (stamp lines, source
# lines, the SHA line). `neutralize_answer` guarantees no line of the model's answer
# starts with it, so a client can trust exactly the lines that do.
SERVER_LINE_PREFIX = "§ "
# Put in front of an answer line that looks like one of the server's lines.
ANSWER_LINE_PREFIX = "[answer] "


@dataclass(frozen=True)
class QuoteCheck:
    """The stamp of one quote and where it was (or was not) found."""

    stamp: str
    reason: str
    path: str
    heading: str = ""
    block_start: int | None = None
    block_end: int | None = None
    old_claim: str | None = None  # CORRECTED: the old wording; SUPERSEDED in a (was:): the current claim
    superseded_by: str | None = None
    note_retired: str | None = None
    match_start: int | None = None  # the matched span in the note's full text
    match_end: int | None = None
    # The quote as matched (normalised, NFC) without its retired text (struck words, the
    # old wording of a correction): what grounds the answer's specifics. `retired_text`
    # is what was left out, so a reply can say a specific is only there as a retired value.
    quote: str = ""
    retired_text: str = ""


@dataclass(frozen=True)
class _Indexed:
    blocks: tuple[Block, ...]
    # Per block: normalised NFC text, and for each of its chars the note offsets where
    # the source chars it came from start and end.
    normalised: tuple[tuple[str, tuple[int, ...], tuple[int, ...]], ...]
    body: str  # the blocks' normalised texts joined: detects quotes that span blocks


# Chars that NFC may merge into the char before them: combining marks (any canonical
# combining class, and the spacing marks of Indic scripts, class 0) and the Hangul
# vowel and final jamo that compose with a leading syllable.
def _joins_previous(c: str) -> bool:
    return (
        bool(unicodedata.combining(c))
        or unicodedata.category(c) in ("Mn", "Mc", "Me")
        or ("\u1160" <= c <= "\u11ff" or "\ud7b0" <= c <= "\ud7ff")
    )


def nfc_with_offsets(s: str, offs: Sequence[int]) -> tuple[str, list[int], list[int]]:
    """NFC of `s`, with start and end source offsets for each output char.

    `offs[i]` is where char i of `s` came from. Each cluster (a char and the marks that
    follow it) is composed on its own; a composed char spans its whole cluster. Text
    already in NFC (nearly all text) is returned as it is.
    """
    if s.isascii() or unicodedata.is_normalized("NFC", s):
        return s, list(offs), [o + 1 for o in offs]
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i = 0
    while i < len(s):
        j = i + 1
        while j < len(s) and _joins_previous(s[j]):
            j += 1
        piece = unicodedata.normalize("NFC", s[i:j])
        if len(piece) == j - i:  # nothing composed: keep the one-to-one offsets
            starts.extend(offs[i:j])
            ends.extend(o + 1 for o in offs[i:j])
        else:
            starts.extend([offs[i]] * len(piece))
            ends.extend([offs[j - 1] + 1] * len(piece))
        out.append(piece)
        i = j
    text = "".join(out)
    whole = unicodedata.normalize("NFC", s)
    if text != whole:  # a composition across clusters this walk does not know: be coarse
        return whole, [offs[0]] * len(whole), [offs[-1] + 1] * len(whole)
    return text, starts, ends


def normalize_nfc(text: str) -> str:
    """`cortex.notes.blocks.normalize`, then NFC: the form every comparison here is made in."""
    return unicodedata.normalize("NFC", normalize(text)[0])


@functools.lru_cache(maxsize=512)
def _indexed(text: str, body_offset: int) -> _Indexed:
    # Keyed on the note's text: the same text at any SHA gives the same blocks.
    blocks = _blocks_cached(text, body_offset)
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


_DATE_WORDS = frozenset(
    """january february march april may june july august september october november
    december jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday
    thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun am pm
    utc gmt z cet cest bst est edt cst cdt mst mdt pst pdt ist jst""".split()
)
# Tokens that are numbers with a unit-of-time or ordinal tail: 3rd, 10h, 5pm, 01T10, T10Z.
_NUMERIC_TOKEN = re.compile(r"\d+(?:st|nd|rd|th|h|am|pm|z)?(?:t\d+z?)?|t\d+z?", re.IGNORECASE)
_TOKEN = re.compile(r"[^\W_]+")


def _generic_reason(nq: str) -> str | None:
    """Why a normalised quote is too short to identify a passage, or None."""
    words = [
        t
        for t in _TOKEN.findall(nq)
        if any(c.isalpha() for c in t) and t.casefold() not in _DATE_WORDS and not _NUMERIC_TOKEN.fullmatch(t)
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
    return _generic_reason(normalize_nfc(quote))


def _contains(index: _Indexed, forms: list[str]) -> bool:
    # Every block's text is a substring of `body`, so one search per reading suffices.
    return any(f in index.body for f in forms)


@dataclass(frozen=True)
class _Occurrence:
    block: Block
    start: int  # the match in the note's full text
    end: int
    norm: str  # the block's normalised text, the match at [i, j)
    starts: tuple[int, ...]
    i: int
    j: int


def _occurrences(index: _Indexed, forms: list[str]) -> list[_Occurrence]:
    """Every place where a reading of the quote occurs inside one block."""
    seen: set[tuple[int, int]] = set()
    out: list[_Occurrence] = []
    for block, (s, starts, ends) in zip(index.blocks, index.normalised):
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


def _live_and_retired(occ: _Occurrence, hidden: list[tuple[int, int]]) -> tuple[str, str]:
    """The matched text without its retired and hidden parts, and its retired parts.

    Retired: struck text and the old wording of a correction (its whole ``(was: …)``
    marker is left out of the live text). Hidden text is in neither.
    """
    block = occ.block
    struck = list(block.marks().struck) if "~" in block.text else []
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


def _distance(a: int, b: int, c: int, d: int) -> int:
    """Gap between spans [a, b) and [c, d); 0 when they touch or overlap."""
    return max(0, c - b, a - d)


def _stamp_occurrence(note: Note, retired_note: str | None, occ: _Occurrence) -> QuoteCheck:
    block, start, end = occ.block, occ.start, occ.end
    hidden = hidden_spans(note)
    live, retired_text = _live_and_retired(occ, hidden)
    common = dict(
        path=note.path,
        heading=block.heading,
        block_start=block.start,
        block_end=block.end,
        superseded_by=note.superseded_by,
        note_retired=retired_note,
        match_start=start,
        match_end=end,
        quote=unicodedata.normalize("NFC", live),
        retired_text=unicodedata.normalize("NFC", retired_text),
    )
    where = f'{note.path} under "{block.heading}"' if block.heading else note.path
    after = f"; the current version is in {note.superseded_by}" if note.superseded_by else ""
    if note.unreadable:
        return QuoteCheck(UNVERIFIED, f"{note.path}: {note.unreadable}", **common)
    if overlaps(hidden, start, end):
        return QuoteCheck(
            UNVERIFIED,
            f"quote is hidden in the note: it sits in a comment of {where} (<!-- … --> or %% … %%), "
            "which the note's editor does not show",
            **common,
        )
    if retired_note:
        return QuoteCheck(
            SUPERSEDED,
            f"quote is in {where}, a retired note ({retired_note}); do not answer from it{after}",
            **common,
        )
    if block.retired:
        return QuoteCheck(
            SUPERSEDED,
            f"quote sits in retired text of {where} ({block.retired}); do not answer from it{after}",
            **common,
        )
    if "~" in block.text and overlaps(list(block.marks().struck), start, end):
        return QuoteCheck(
            SUPERSEDED,
            f"quote holds struck-through text of {where} (~~…~~ is retired text); do not answer from it",
            **common,
        )
    if block.corrections:
        for c in block.corrections:
            overlaps_old = start < c.end and end > c.start
            whole = start <= c.marker_start and end >= c.marker_end
            if overlaps_old and not whole:
                return QuoteCheck(
                    SUPERSEDED,
                    f"quote sits in the old wording of an in-place correction in {where}: "
                    f'(was: "{c.old}") is retired; the current claim is "{c.current}"; '
                    "do not answer from the old wording",
                    old_claim=c.current,
                    **common,
                )
        # A marker corrects only its own claim (list item, table row or sentence: see
        # `cortex.notes.blocks.claim_units`); a quote of an unchanged neighbour stays VERIFIED.
        # A quote that reaches into a corrected claim at all rests on it: CORRECTED.
        touched = [c for c in block.corrections if start < c.unit_end and end > c.unit_start]
        if touched:
            # Show the correction nearest to the quote: the one the answer rests on.
            c = min(touched, key=lambda c: _distance(start, end, c.marker_start, c.marker_end))
            if normalize_nfc(c.old) not in common["retired_text"]:
                common["retired_text"] = " ".join(x for x in (common["retired_text"], normalize_nfc(c.old)) if x)
            return QuoteCheck(
                CORRECTED,
                f"quote found in {where}; the quoted {c.unit} carries an in-place correction, "
                f'the old wording was "{c.old}"',
                old_claim=c.old,
                **common,
            )
    return QuoteCheck(VERIFIED, f"quote found in {where}", **common)


def _unverified(reason: str, note: Note | None, retired: str | None = None) -> QuoteCheck:
    return QuoteCheck(
        UNVERIFIED,
        reason,
        path=note.path if note is not None else "",
        superseded_by=note.superseded_by if note is not None else None,
        note_retired=retired,
    )


def _check(quote: str, note: Note | None, pack: Mapping[str, Note], today: dt.date) -> QuoteCheck:
    if note is None:
        return _unverified("cites a file not in the pack", None)
    retired = note.retired_reason(today)
    if not isinstance(quote, str) or not quote.strip():
        return _unverified("no quote given (empty quote)", note, retired)
    forms = [unicodedata.normalize("NFC", f) for f in quote_forms(quote)]
    if not forms[0]:
        return _unverified("quote is empty after normalisation", note, retired)
    generic = _generic_reason(forms[0])
    if generic:
        return _unverified(generic, note, retired)

    index = _index(note)
    found = _occurrences(index, forms)
    # Which notes of the pack hold the quote at all (by path; the cited one included).
    holders = {note.path} if found or _contains(index, forms) else set()
    for other in pack.values():
        if other is not None and other.path not in holders and _contains(_index(other), forms):
            holders.add(other.path)
    if len(holders) >= GENERIC_NOTES:
        listed = ", ".join(sorted(holders)[:4]) + (", …" if len(holders) > 4 else "")
        return _unverified(
            f"quote is too generic: it occurs in {len(holders)} notes of the pack ({listed})",
            note,
            retired,
        )
    if found:
        checks = [_stamp_occurrence(note, retired, occ) for occ in found]
        weakest = min(checks, key=lambda c: STRENGTH[c.stamp])  # first weakest: stable
        if len({c.stamp for c in checks}) > 1:
            weakest = _with_reason(
                weakest,
                f"{weakest.reason} (the quote occurs {len(checks)} times in {note.path} "
                "with different stamps; the weakest is given)",
            )
        return weakest
    if _contains(index, forms):
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
    hint = " (quotes must be verbatim: no ellipsis)" if ("…" in quote or "..." in quote) else ""
    return _unverified(f"quote not found in {note.path}{hint}", note, retired)


def _one_line(text: str) -> str:
    """Reasons are one line: quoted wording from a note may carry line breaks."""
    return " ".join(text.split()) if len(text.splitlines()) > 1 else text


def _with_reason(check: QuoteCheck, reason: str) -> QuoteCheck:
    return replace(check, reason=reason)


def check_quote(quote: str, note: Note | None, pack: Mapping[str, Note], today: dt.date) -> QuoteCheck:
    """Stamp one quote against the note its citation resolved to (None: not in pack).

    Never raises: anything unexpected becomes UNVERIFIED with the error named.
    """
    try:
        result = _check(quote, note, pack, today)
        return replace(result, reason=_one_line(result.reason))
    except Exception as exc:  # the verifier must always answer; say why it could not
        path = getattr(note, "path", "") if note is not None else ""
        return QuoteCheck(
            UNVERIFIED,
            f"the verifier could not check this quote ({type(exc).__name__})",
            path=path if isinstance(path, str) else "",
        )


# --- Specifics: what an answer states that a quote must carry ------------------------------

# Digits as written, superscripts, subscripts, vulgar fractions and circled numbers
# included: they are part of a number's spelling ("10⁶" is one specific, never "10" or
# "106"), and are compared as they are, never folded.
_DIGIT = r"0-9\u00b2\u00b3\u00b9\u00bc-\u00be\u2070-\u2079\u2080-\u2089\u2150-\u218b\u2460-\u24ff\u2776-\u2793"
_DIGITS = f"[{_DIGIT}]+"
_MONTHS = {
    m: i
    for i, names in enumerate(
        (
            "january jan",
            "february feb",
            "march mar",
            "april apr",
            "may",
            "june jun",
            "july jul",
            "august aug",
            "september sep sept",
            "october oct",
            "november nov",
            "december dec",
        ),
        1,
    )
    for m in names.split()
}
_WEEKDAYS = {
    d: i
    for i, names in enumerate(
        (
            "monday mon",
            "tuesday tue tues",
            "wednesday wed",
            "thursday thu thur thurs",
            "friday fri",
            "saturday sat",
            "sunday sun",
        )
    )
    for d in names.split()
}
# Month and weekday names count only capitalised ("May", "MAY"), so "may" the verb and
# "sat" the verb are not dates; an abbreviation alone ("Mar", "Sun") is not a date either.
_MONTH = "|".join(sorted({m.capitalize() for m in _MONTHS} | {m.upper() for m in _MONTHS}, key=len, reverse=True))
_MONTH_FULL = "|".join(m.capitalize() for m in _MONTHS if len(m) > 3 or m == "may")
_WEEKDAY = "|".join(sorted({d.capitalize() for d in _WEEKDAYS}, key=len, reverse=True))
_WD = rf"(?:(?P<wd>{_WEEKDAY})\.?,?\s+)?"
_ORD = r"(?:st|nd|rd|th)?"
_NOT_NUM_BEFORE = rf"(?<![{_DIGIT}.,/])"
_NOT_NUM_AFTER = rf"(?![{_DIGIT}]|[.,/][{_DIGIT}])"
_DATES = [
    re.compile(p)
    for p in (
        rf"{_WD}{_NOT_NUM_BEFORE}(?P<y>\d{{4}})-(?P<m>\d{{2}})-(?P<d>\d{{2}}){_NOT_NUM_AFTER}",
        rf"{_WD}(?<![\w.])(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<mn>{_MONTH})\b\.?"
        rf"(?:,?\s+(?P<y>\d{{4}}){_NOT_NUM_AFTER})?",
        rf"{_WD}(?<![\w.])(?P<mn>{_MONTH})\.?\s+(?P<d>\d{{1,2}}){_ORD}(?![{_DIGIT}:.])"
        rf"(?:,?\s+(?P<y>\d{{4}}){_NOT_NUM_AFTER})?",
        rf"(?<![\w.])(?P<mn>{_MONTH})\.?,?\s+(?P<y>\d{{4}}){_NOT_NUM_AFTER}",
        rf"{_NOT_NUM_BEFORE}(?P<y>\d{{4}})-(?P<m>0[1-9]|1[0-2])(?![{_DIGIT}-])",
        rf"(?<![\w.])(?P<mn>{_MONTH_FULL})\b",
        rf"(?<![\w.])(?P<wd>{_WEEKDAY})\b",
    )
]
_AMPM = r"(?P<ap>[AaPp]\.?[Mm]\.?)(?![\w])"
_TIMES = [
    re.compile(p)
    for p in (
        rf"(?<![{_DIGIT}:.,])(?P<h>\d{{1,2}}):(?P<mi>\d{{2}})(?::(?P<s>\d{{2}}))?(?![{_DIGIT}:])(?:\s?{_AMPM})?",
        rf"(?<![{_DIGIT}:.,])(?P<h>\d{{1,2}})(?:\.(?P<mi>\d{{2}}))?\s?{_AMPM}",
    )
]
# Units that make a number an amount: "15 kg" is not "15 lb". Spellings of one unit
# share a key. Any other word after a number ("3 hives") is not part of the specific.
_UNIT_KEYS = {
    "€": "EUR",
    "eur": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "$": "USD",
    "usd": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "£": "GBP",
    "gbp": "GBP",
    "pound": "GBP",
    "pounds": "GBP",
    "¥": "JPY",
    "jpy": "JPY",
    "yen": "JPY",
    "chf": "CHF",
    "%": "%",
    "percent": "%",
    "per cent": "%",
    "ms": "ms",
    "millisecond": "ms",
    "milliseconds": "ms",
    "s": "s",
    "sec": "s",
    "secs": "s",
    "second": "s",
    "seconds": "s",
    "min": "min",
    "mins": "min",
    "minute": "min",
    "minutes": "min",
    "h": "h",
    "hr": "h",
    "hrs": "h",
    "hour": "h",
    "hours": "h",
    "day": "day",
    "days": "day",
    "week": "week",
    "weeks": "week",
    "month": "month",
    "months": "month",
    "year": "year",
    "years": "year",
    "b": "B",
    "kb": "kB",
    "mb": "MB",
    "gb": "GB",
    "tb": "TB",
    "kib": "KiB",
    "mib": "MiB",
    "gib": "GiB",
    "tib": "TiB",
    "k": "k",
    "mm": "mm",
    "cm": "cm",
    "m": "m",
    "km": "km",
    "g": "g",
    "kg": "kg",
    "mg": "mg",
    "t": "t",
    "l": "l",
    "ml": "ml",
    "lb": "lb",
    "lbs": "lb",
    "oz": "oz",
    "psi": "psi",
    "bar": "bar",
    "°c": "°C",
    "°f": "°F",
    "°": "°",
    "w": "W",
    "kw": "kW",
    "kwh": "kWh",
    "wh": "Wh",
    "mah": "mAh",
    "v": "V",
    "a": "A",
    "hz": "Hz",
    "khz": "kHz",
    "mhz": "MHz",
    "ghz": "GHz",
    "x": "x",
    # Length, speed, volume and weight in words: "5 miles" is not "5 km".
    "mi": "mi",
    "mile": "mi",
    "miles": "mi",
    "kilometre": "km",
    "kilometres": "km",
    "kilometer": "km",
    "kilometers": "km",
    "metre": "m",
    "metres": "m",
    "meter": "m",
    "meters": "m",
    "centimetre": "cm",
    "centimetres": "cm",
    "centimeter": "cm",
    "centimeters": "cm",
    "millimetre": "mm",
    "millimetres": "mm",
    "millimeter": "mm",
    "millimeters": "mm",
    "ft": "ft",
    "foot": "ft",
    "feet": "ft",
    "inch": "inch",
    "inches": "inch",
    "yd": "yd",
    "yard": "yd",
    "yards": "yd",
    "mph": "mph",
    "kph": "km/h",
    "km/h": "km/h",
    "litre": "l",
    "litres": "l",
    "liter": "l",
    "liters": "l",
    "millilitre": "ml",
    "millilitres": "ml",
    "milliliter": "ml",
    "milliliters": "ml",
    "gal": "gal",
    "gallon": "gal",
    "gallons": "gal",
    "kilogram": "kg",
    "kilograms": "kg",
    "kilo": "kg",
    "kilos": "kg",
    "gram": "g",
    "grams": "g",
    "milligram": "mg",
    "milligrams": "mg",
    "tonne": "t",
    "tonnes": "t",
    "ton": "ton",
    "tons": "ton",
    "degree": "°",
    "degrees": "°",
    "kcal": "kcal",
    "calorie": "kcal",
    "calories": "kcal",
    "decade": "decade",
    "decades": "decade",
}
_SYMBOL_UNITS = ("€", "$", "£", "¥")
_CODE_UNITS = ("EUR", "USD", "GBP", "JPY", "CHF")
_UNIT_AFTER = "|".join(re.escape(u) for u in sorted(_UNIT_KEYS, key=len, reverse=True))
_NUM = rf"(?P<n>{_DIGITS}(?:[.,]{_DIGITS})*)"
_AMOUNTS = [
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"(?P<u>[€$£¥]|\b(?:{'|'.join(_CODE_UNITS)}))\s?{_NUM}(?![{_DIGIT}]|[^\W_])",
        rf"(?<![^\W\d_]){_NOT_NUM_BEFORE}{_NUM}\s?(?P<u>{_UNIT_AFTER})(?![^\W_])",
    )
]
# Numbers written as words (zero to ninety-nine): "six months" is "6 months".
_SMALL_NUMBERS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_NUMBER_WORD_VALUES = {
    **{w: i for i, w in enumerate(_SMALL_NUMBERS)},
    **{t: 20 + 10 * i for i, t in enumerate(_TENS)},
}
_NUMBER_WORD = (
    rf"(?<![\w-])(?P<nw>(?:{'|'.join(_TENS)})(?:[- ](?:{'|'.join(_SMALL_NUMBERS[1:10])}))?"
    rf"|{'|'.join(sorted(_SMALL_NUMBERS, key=len, reverse=True))})(?![\w-])"
)
_WORD_NUMBER = re.compile(_NUMBER_WORD, re.IGNORECASE)
# A unit after a number word is a word of two letters or more ("one a day" holds no ampere).
_WORD_UNITS = "|".join(re.escape(u) for u in sorted(_UNIT_KEYS, key=len, reverse=True) if len(u) > 1 and u.isalpha())
_WORD_AMOUNT = re.compile(rf"{_NUMBER_WORD}\s(?P<u>{_WORD_UNITS})(?![^\W_])", re.IGNORECASE)


def _word_value(words: str) -> str:
    """The digits of a number written as words: "twenty-one" -> "21"."""
    parts = re.split(r"[- ]", words.casefold())
    return str(sum(_NUMBER_WORD_VALUES[p] for p in parts))


_NUMBER = re.compile(
    rf"(?<![^\W\d_]){_NOT_NUM_BEFORE}(?P<n>{_DIGITS}(?:[.,/]{_DIGITS})*)"
    r"(?:st|nd|rd|th)?(?![^\W_])"
)
_URL = re.compile(r"(?:https?://|www\.)[^\s<>()\[\]\"'`]+", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_WORDISH = re.compile(r"[^\W_][\w]*(?:(?:[-./@:]|'(?=[^\W\d_]))[\w]+)*(?:\+\+|#)?")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_TRAIL = ".,;:!?)]}'\""
# Capitalised words that say nothing specific when they start a name-like run.
_NOT_NAMES = STOPWORDS | frozenset(
    "according also answer based both however note notes per yes no none nothing unknown "
    "please sure thanks there here".split()
)


@dataclass(frozen=True)
class Specific:
    """One specific an answer states: its kind, the text as written, and what is compared."""

    kind: str  # date | time | amount | number | url | email | identifier | name
    text: str
    key: tuple


def _number_key(n: str) -> str:
    """A number's spelling for comparison: thousands commas dropped ("1,800" = "1800")."""
    return n.replace(",", "") if _THOUSANDS.fullmatch(n) else n


def _date_key(m: re.Match) -> tuple | None:
    g = m.groupdict()
    y = int(g["y"]) if g.get("y") else None
    mo = _MONTHS.get((g.get("mn") or "").casefold()) if g.get("mn") else (int(g["m"]) if g.get("m") else None)
    d = int(g["d"]) if g.get("d") else None
    wd = _WEEKDAYS.get(g["wd"].casefold()) if g.get("wd") else None
    if mo is not None and not 1 <= mo <= 12 or d is not None and not 1 <= d <= 31:
        return None
    if wd is None and None not in (y, mo, d):
        try:
            wd = dt.date(y, mo, d).weekday()  # a full date also states its weekday
        except ValueError:
            return None
    return (y, mo, d, wd)


def _time_key(m: re.Match) -> tuple | None:
    h, mi = int(m["h"]), int(m["mi"] or 0)
    sec = int(m["s"]) if m.groupdict().get("s") else None
    ap = (m["ap"] or "").replace(".", "").casefold()
    if ap:
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if ap == "pm" else 0)
    if h > 24 or mi > 59 or (sec is not None and sec > 59):
        return None
    return (h, mi, sec)


def _mask(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def _sentence_start(text: str, pos: int) -> bool:
    """Whether the word at `pos` opens a sentence, a line or a list item."""
    i = pos
    while i > 0 and text[i - 1] in " \t\"'“‘([*_>#-•":
        i -= 1
    # Not after ":" or ";": "Cat: Pim" names Pim (stricter, so safer, than skipping it).
    return i == 0 or text[i - 1] in ".!?\n\r"


def specifics(text: str) -> list[Specific]:
    """The specifics `text` states, in order found (pure; never raises on a str).

    * **url**, **email**: as written (trailing punctuation dropped).
    * **date**: ISO ``2026-03-01``, ``1 March 2026`` / ``1st of March 2026`` / ``March 1,
      2026`` (month names or abbreviations, capitalised), each with an optional weekday
      in front; ``March 2026``; ``2026-03``; ``1 March``; a full month name or a weekday
      alone. All of these are compared as (year, month, day, weekday), so "1 March 2026"
      is the same date as "2026-03-01" (and as "Sunday 1 March 2026"). A date given with
      slashes or dots ("01/03/2026", "1.3.2026") is ambiguous (day or month first) and is
      compared as written, as a number.
    * **time**: ``07:30``, ``7:30 pm``, ``7pm``, ``7.30am``: compared as a 24-hour clock,
      so "7pm" = "19:00" and "7am" = "07:00", but "7:00" (no am/pm) is 07:00.
    * **amount**: a number with a currency (``€1,800``, ``1,800 EUR``, ``1800 euros``)
      or a unit from a closed list (``5 ms``, ``15kg``, ``55 psi``, ``12%``): number and
      unit must both match; spellings of one unit are the same.
    * **number**: any other run of digits, with inner ``.`` ``,`` ``/`` (``3.11.7``,
      ``1,800``, ``2026/2027``, ``10⁶``): compared as written, except that thousands
      commas are dropped ("1,800" = "1800"). Superscripts, subscripts, fractions and
      other digit forms are part of the spelling: "10⁶" is neither "10" nor "106".
    * **identifier**: a word with a digit in it (``T14``, ``esp32``), an inner capital
      (``ThinkPad``, ``VBKA``), an underscore, an inner ``.``/``/`` (``deploy.md``), or
      a ``++``/``#`` tail: as written, case included.
    * **name**: a run of capitalised words ("Alder Apiaries", "Gideon Parch"), less a
      leading function word ("The", "From"). A lone capitalised word that opens a
      sentence is not counted (it cannot be told from an ordinary first word): a
      measured limit, so "Rosa said" is not checked but "said Rosa" is.
    """
    found: list[tuple[int, Specific]] = []
    # Each line normalised as quotes are (emphasis, typographic forms, markers, NFC), so a
    # specific is read the same way in an answer and in a quote; lines are kept apart
    # because a line start is a sentence start.
    work = "\n".join(normalize_nfc(line) for line in text.splitlines())
    for rx, kind in ((_URL, "url"), (_EMAIL, "email")):
        for m in rx.finditer(work):
            lit = m.group().rstrip(_TRAIL)
            found.append((m.start(), Specific(kind, lit, (lit,))))
            work = _mask(work, m.start(), m.start() + len(lit))
    for rx in _DATES:
        for m in rx.finditer(work):
            key = _date_key(m)
            if key is not None:
                found.append((m.start(), Specific("date", m.group().strip(), key)))
                work = _mask(work, m.start(), m.end())
    for rx in _TIMES:
        for m in rx.finditer(work):
            key = _time_key(m)
            if key is not None:
                shown = m.group().strip()
                if shown.endswith(".") and not re.search(r"[AaPp]\.[Mm]\.$", shown):
                    shown = shown[:-1]  # the sentence's full stop, not part of "7pm"
                found.append((m.start(), Specific("time", shown, key)))
                work = _mask(work, m.start(), m.end())
    for rx in _AMOUNTS:
        for m in rx.finditer(work):
            unit = _UNIT_KEYS.get(m["u"].casefold())
            if unit is not None:
                found.append((m.start(), Specific("amount", m.group().strip(), (_number_key(m["n"]), unit))))
                work = _mask(work, m.start(), m.end())
    for m in _WORD_AMOUNT.finditer(work):
        unit = _UNIT_KEYS.get(m["u"].casefold())
        if unit is not None:
            found.append((m.start(), Specific("amount", m.group().strip(), (_word_value(m["nw"]), unit))))
            work = _mask(work, m.start(), m.end())
    for m in _WORD_NUMBER.finditer(work):
        found.append((m.start(), Specific("number", m["nw"], (_word_value(m["nw"]),))))
        work = _mask(work, m.start(), m.end())
    for m in _NUMBER.finditer(work):
        found.append((m.start(), Specific("number", m["n"], (_number_key(m["n"]),))))
        work = _mask(work, m.start(), m.end())
    run: list[tuple[int, str]] = []

    def close_run() -> None:
        if run and not (len(run) == 1 and _sentence_start(work, run[0][0])):
            name = " ".join(w for _, w in run)
            found.append((run[0][0], Specific("name", name, (name,))))
        run.clear()

    prev_end = -1
    for m in _WORDISH.finditer(work):
        word = m.group()
        while word and word[-1] in "-./@:":
            word = word[:-1]
        possessive = word.endswith(("'s", "’s"))
        if possessive:
            word = word[:-2]
        letters = [c for c in word if c.isalpha()]
        is_ident = bool(letters) and (
            any(c.isdigit() for c in word)
            or "_" in word
            or word.endswith(("++", "#"))
            or any(any(c.isupper() for c in part[1:]) for part in word.split("-"))
            and len(letters) > 1
            or any(ch in word[1:-1] for ch in "./")
            and len([p for p in re.split(r"[./]", word) if len(p) > 1]) > 1
        )
        name_word = len(letters) > 1 and word[0].isupper() and not is_ident and word.casefold() not in _NOT_NAMES
        gap = work[prev_end : m.start()] if prev_end >= 0 else ""
        if run and not (gap == " " and name_word):
            close_run()
        if is_ident:
            found.append((m.start(), Specific("identifier", word, (word,))))
        elif name_word:
            run.append((m.start(), word))
            if possessive:  # "Lily's Kitchen": the name is "Lily", then "Kitchen"
                close_run()
        prev_end = m.start() + len(m.group())
    close_run()
    found.sort(key=lambda f: f[0])
    return [f for _, f in found]


def _strip_old_wording(text: str) -> str:
    """A quote without the old wording of in-place corrections: that is retired text."""
    return _WAS.sub(" ", text)


def _occurs(literal: str, text: str) -> bool:
    """`literal` in `text`, not glued to a letter or digit on either side."""
    lit = normalize_nfc(literal)
    if not lit:
        return True
    before = r"(?<![^\W_])" if lit[0].isalnum() else ""
    after = r"(?![^\W_])" if lit[-1].isalnum() else ""
    return re.search(before + re.escape(lit) + after, text) is not None


def _number_occurs(key: str, text: str) -> bool:
    """The number `key` in `text` as a whole number: "16" is not in "2016", "16.5" or "10⁶"."""
    spellings = {key}
    if key.isdigit() and len(key) > 3:  # also with thousands commas: 1800 -> 1,800
        head = len(key) % 3 or 3
        spellings.add(key[:head] + "".join("," + key[i : i + 3] for i in range(head, len(key), 3)))
    return any(re.search(rf"{_NOT_NUM_BEFORE}{re.escape(s)}{_NOT_NUM_AFTER}", text) for s in spellings)


def _date_covers(answer: tuple, quote: tuple) -> bool:
    """Every part the answer's date states (year, month, day, weekday) the quote's states alike."""
    return all(a is None or a == q for a, q in zip(answer, quote))


def _supported(spec: Specific, text: str, facts: list[Specific]) -> bool:
    if spec.kind == "date":
        return any(f.kind == "date" and _date_covers(spec.key, f.key) for f in facts)
    if spec.kind in ("time", "amount"):
        return any(f.kind == spec.kind and f.key == spec.key for f in facts)
    if spec.kind == "number":
        return _number_occurs(spec.key[0], text) or any(f.kind == "number" and f.key == spec.key for f in facts)
    return _occurs(spec.text, text)


def ungrounded(answer: str, quotes: Sequence[str]) -> list[Specific]:
    """The specifics of `answer` that occur in none of `quotes` (pure; see `specifics`).

    Each quote is compared in its normalised NFC form, without the old wording of any
    in-place correction. A date is carried by a quote date that states every part the
    answer's states; a time or an amount by an equal one; a number by the same number
    standing alone; anything else by the same text, not glued to a letter or digit.
    Old wording ``(was: "…")`` in the answer is left out as well.
    """
    texts = [_strip_old_wording(normalize_nfc(q)) for q in quotes if isinstance(q, str)]
    facts = [(t, specifics(t)) for t in texts]
    missing: list[Specific] = []
    # The answer may show a correction's old wording too: that states nothing current.
    for spec in specifics(_strip_old_wording(answer if isinstance(answer, str) else str(answer))):
        if not any(_supported(spec, t, f) for t, f in facts) and spec not in missing:
            missing.append(spec)
    return missing


def _listed(missing: list[Specific]) -> str:
    shown = [m.text for m in missing[:3]]
    more = f" (and {len(missing) - 3} more)" if len(missing) > 3 else ""
    return (shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]) + more


def _says(missing: list[Specific]) -> str:
    them = "it" if len(missing) == 1 else "them"
    return f"the answer says {_listed(missing)}; no quote contains {them}"


def overall_stamp(
    checks: list[QuoteCheck], not_in_brain_claimed: bool, unread_matching: int, answer: str = ""
) -> tuple[str, str]:
    """The reply's stamp and a one-line reason.

    With citations: the weakest of the quotes' stamps; a VERIFIED or CORRECTED answer
    that states a specific no VERIFIED or CORRECTED quote carries (`ungrounded`) is
    UNVERIFIED, and the reason names the specific. Without citations: NOT IN BRAIN only
    when the reader said the brain does not hold the answer and every note of the scope
    that holds a distinctive term of the question was read (`unread_matching == 0`);
    otherwise UNVERIFIED with the count, or "no quote given" when the reader neither
    quoted nor said so.
    """
    try:
        if checks:
            # Unknown stamps and NOT IN BRAIN (never a quote's stamp) count as UNVERIFIED.
            stamps = [c.stamp if c.stamp in (VERIFIED, CORRECTED, SUPERSEDED) else UNVERIFIED for c in checks]
            i = min(range(len(stamps)), key=lambda k: (STRENGTH[stamps[k]], k))
            stamp, n = stamps[i], len(checks)
            if n == 1:
                reason = f"the quote is {stamp}: {checks[0].reason}"
            elif all(s == stamp for s in stamps):
                reason = f"all {n} quotes are {stamp}"
            else:
                reason = f"the weakest of {n} quotes: quote {i + 1} is {stamp}: {checks[i].reason}"
            if stamp in (VERIFIED, CORRECTED) and answer:
                missing = ungrounded(answer, [c.quote for c in checks])
                if missing:
                    quoted = "the quote is" if n == 1 else "the quotes are"
                    retired = [t for c in checks if (t := _strip_old_wording(normalize_nfc(c.retired_text)))]
                    old = [m for m in missing if any(_supported(m, t, specifics(t)) for t in retired)]
                    if old:
                        holds = "the quote holds" if n == 1 else "the quotes hold"
                        return UNVERIFIED, _one_line(
                            f"the answer says {_listed(old)}; {holds} {'it' if len(old) == 1 else 'them'} "
                            f"only as the retired value ({quoted} {stamp})"
                        )
                    return UNVERIFIED, _one_line(f"{_says(missing)} ({quoted} {stamp})")
            if not_in_brain_claimed:
                reason += " (the reader also said the brain does not hold the answer)"
            return stamp, reason
        if not not_in_brain_claimed:
            return UNVERIFIED, "no quote given"
        if not isinstance(unread_matching, int) or unread_matching < 0:
            return UNVERIFIED, ("the reader found nothing, and how many matching notes were not read is unknown")
        if unread_matching == 0:
            return (
                NOT_IN_BRAIN,
                "the reader found nothing, and every note of the scope that holds a distinctive "
                "term of the question was read",
            )
        plural = (
            "notes that hold a distinctive term of the question were"
            if unread_matching != 1
            else ("note that holds a distinctive term of the question was")
        )
        return UNVERIFIED, f"the reader found nothing, but {unread_matching} {plural} not read"
    except Exception as exc:
        return UNVERIFIED, f"the verifier could not combine the stamps ({type(exc).__name__})"


# Line breaks a client might render (what str.splitlines splits on).
_LINE_BREAK = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# Decoration a renderer may hide or a reader may skip before the first word.
_DECORATION = " \t>*_#`~|+-=•·.:()[]{}\"'“”‘’«»"
_SERVER_SHAPED = re.compile(
    r"(?:§|verified|corrected|superseded|unverified|not\s*in\s*brain|stamps?\b|sources?\b"
    r"|tag\s*:|sha(?:-?1|-?256)?\b|commit\b|served\s+(?:from|at)\b|[0-9a-f]{7,64}\b)",
    re.IGNORECASE,
)
_FILE_BANNER = re.compile(r"\s*=+\s*file\b", re.IGNORECASE)
_ORDINAL = re.compile(r"\d{1,9}[.)]")


def _lead(line: str) -> str:
    """The line without leading whitespace, invisible format chars and decoration."""
    for _ in range(2):  # decoration, an optional list number, decoration again
        i = 0
        while i < len(line) and (line[i] in _DECORATION or line[i].isspace() or unicodedata.category(line[i]) == "Cf"):
            i += 1
        line = line[i:]
        m = _ORDINAL.match(line)
        if not m:
            break
        line = line[m.end() :]
    # Fold compatibility forms for *detection* only: ＶＥＲＩＦＩＥＤ looks like VERIFIED.
    return unicodedata.normalize("NFKC", line)


def neutralize_answer(text: str) -> str:
    """Make the model's answer unable to pass for the server's own lines.

    The server writes its stamp, source and SHA lines starting with
    `SERVER_LINE_PREFIX` ("§ "). In the answer:

    * every line break a client might render (CR, LF, VT, FF, NEL, U+2028/9, …)
      becomes "\\n", so there is no hidden line;
    * control characters other than tab and newline, and bidirectional overrides,
      become U+FFFD, so nothing can move or hide text on screen;
    * a line whose first word — after whitespace, invisible format characters and
      Markdown decoration (``> * _ # ` | - = [ ( "`` …) — is shaped like a server line
      is prefixed with `ANSWER_LINE_PREFIX` ("[answer] "): a leading "§", a stamp word
      (VERIFIED, CORRECTED, SUPERSEDED, UNVERIFIED, NOT IN BRAIN), "Stamp", "Source(s)",
      "tag:" (as in "[tag: …]"), "SHA", "commit", "served from/at", or a hex string
      of 7–64 digits; or the line starts with "=" signs and "FILE" ("=== FILE").
      Case is ignored and compatibility forms are folded for this test (NFKC), so
      "Verified:" and "ＶＥＲＩＦＩＥＤ" are caught; a harmless sentence may get the
      prefix, which only costs looks.

    No answer line can therefore start with "§ ", and every server-shaped line visibly
    belongs to the answer.
    """
    try:
        if not isinstance(text, str):
            text = str(text)
        out = []
        for line in _LINE_BREAK.split(text):
            line = "".join(
                "\ufffd"
                if (unicodedata.category(c) == "Cc" and c != "\t")
                or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
                else c
                for c in line
            )
            lead = _lead(line)
            if (
                line.lstrip().startswith("§")
                or _SERVER_SHAPED.match(lead)
                or _FILE_BANNER.match(unicodedata.normalize("NFKC", line))
            ):
                line = ANSWER_LINE_PREFIX + line
            out.append(line)
        return "\n".join(out)
    except Exception:
        # Never raise; fall back to something that certainly cannot pass.
        return ANSWER_LINE_PREFIX + repr(text)

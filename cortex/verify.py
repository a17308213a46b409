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

Matching: the quote and each block are normalised with `cortex.blocks.normalize`
(whitespace, typographic quotes and dashes, Markdown emphasis and line markers; exact
case, no Unicode folding), and the normalised quote must be a substring of one
normalised block. No fuzzy matching. A quote that spans lines and starts mid-line is
also tried as if its first line sat in a list item or a blockquote
(`cortex.blocks.quote_forms`): those readings differ only in whether a later
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
from collections.abc import Mapping
from dataclasses import dataclass, replace

from cortex.blocks import Block, _blocks_cached, normalize, quote_forms
from cortex.notes import Note

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


@dataclass(frozen=True)
class _Indexed:
    blocks: tuple[Block, ...]
    normalised: tuple[tuple[str, tuple[int, ...]], ...]  # per block: text and offsets
    body: str  # the blocks' normalised texts joined: detects quotes that span blocks


@functools.lru_cache(maxsize=512)
def _indexed(text: str, body_offset: int) -> _Indexed:
    # Keyed on the note's text: the same text at any SHA gives the same blocks.
    blocks = _blocks_cached(text, body_offset)
    normalised = []
    for b in blocks:
        s, offs = normalize(b.text)
        normalised.append((s, tuple(offs)))
    # The body's normalised form is the blocks' joined by one space (what the blank
    # lines between them fold to); no second pass over the text.
    return _Indexed(blocks, tuple(normalised), " ".join(s for s, _ in normalised if s))


def _index(note: Note) -> _Indexed:
    return _indexed(note.text, note.body_offset)


_DATE_WORDS = frozenset(
    """january february march april may june july august september october november
    december jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday
    thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun am pm
    utc gmt z cet cest bst est edt cst cdt mst mdt pst pdt ist jst""".split()
)
# Tokens that are numbers with a unit-of-time or ordinal tail: 3rd, 10h, 5pm, 01T10, T10Z.
_NUMERIC_TOKEN = re.compile(
    r"\d+(?:st|nd|rd|th|h|am|pm|z)?(?:t\d+z?)?|t\d+z?", re.IGNORECASE
)
_TOKEN = re.compile(r"[^\W_]+")


def _generic_reason(nq: str) -> str | None:
    """Why a normalised quote is too short to identify a passage, or None."""
    words = [
        t
        for t in _TOKEN.findall(nq)
        if any(c.isalpha() for c in t)
        and t.casefold() not in _DATE_WORDS
        and not _NUMERIC_TOKEN.fullmatch(t)
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
        return (
            f"quote is too short to identify one passage ({alnum} letters/digits; "
            f"at least {MIN_ALNUM} needed)"
        )
    return None


def _contains(index: _Indexed, forms: list[str]) -> bool:
    # Every block's text is a substring of `body`, so one search per reading suffices.
    return any(f in index.body for f in forms)


def _occurrences(index: _Indexed, forms: list[str]) -> list[tuple[Block, int, int]]:
    """Every (block, start, end) where a reading of the quote occurs; note offsets."""
    seen: set[tuple[int, int]] = set()
    out: list[tuple[Block, int, int]] = []
    for block, (s, offs) in zip(index.blocks, index.normalised):
        for form in forms:
            i = s.find(form)
            while i != -1:
                start = block.start + offs[i]
                end = block.start + offs[i + len(form) - 1] + 1
                if (start, end) not in seen:
                    seen.add((start, end))
                    out.append((block, start, end))
                    if len(out) >= MAX_OCCURRENCES:
                        return out
                i = s.find(form, i + 1)
    return out


def _distance(a: int, b: int, c: int, d: int) -> int:
    """Gap between spans [a, b) and [c, d); 0 when they touch or overlap."""
    return max(0, c - b, a - d)


def _stamp_occurrence(
    note: Note, retired_note: str | None, block: Block, start: int, end: int
) -> QuoteCheck:
    common = dict(
        path=note.path,
        heading=block.heading,
        block_start=block.start,
        block_end=block.end,
        superseded_by=note.superseded_by,
        note_retired=retired_note,
        match_start=start,
        match_end=end,
    )
    where = f'{note.path} under "{block.heading}"' if block.heading else note.path
    after = f"; the current version is in {note.superseded_by}" if note.superseded_by else ""
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
    if block.corrections:
        for c in block.corrections:
            overlaps = start < c.end and end > c.start
            whole = start <= c.marker_start and end >= c.marker_end
            if overlaps and not whole:
                return QuoteCheck(
                    SUPERSEDED,
                    f'quote sits in the old wording of an in-place correction in {where}: '
                    f'(was: "{c.old}") is retired; the current claim is "{c.current}"; '
                    "do not answer from the old wording",
                    old_claim=c.current,
                    **common,
                )
        # Show the correction nearest to the quote: the one the answer rests on.
        c = min(block.corrections, key=lambda c: _distance(start, end, c.marker_start, c.marker_end))
        return QuoteCheck(
            CORRECTED,
            f'quote found in {where}; the block carries an in-place correction, '
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
    forms = quote_forms(quote)
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
        checks = [_stamp_occurrence(note, retired, *occ) for occ in found]
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
            f"quote spans blocks in {note.path}: it must sit inside one paragraph, "
            "list or heading",
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


def check_quote(
    quote: str, note: Note | None, pack: Mapping[str, Note], today: dt.date
) -> QuoteCheck:
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


def overall_stamp(
    checks: list[QuoteCheck], not_in_brain_claimed: bool, unread_matching: int
) -> tuple[str, str]:
    """The reply's stamp and a one-line reason.

    With citations: the weakest of the quotes' stamps. Without: NOT IN BRAIN only when
    the reader said the brain does not hold the answer and no unread note of the scope
    shares a word with the question (`unread_matching == 0`); otherwise UNVERIFIED with
    the count, or "no quote given" when the reader neither quoted nor said so.
    """
    try:
        if checks:
            # Unknown stamps and NOT IN BRAIN (never a quote's stamp) count as UNVERIFIED.
            stamps = [c.stamp if c.stamp in (VERIFIED, CORRECTED, SUPERSEDED) else UNVERIFIED
                      for c in checks]
            i = min(range(len(stamps)), key=lambda k: (STRENGTH[stamps[k]], k))
            stamp, n = stamps[i], len(checks)
            if n == 1:
                reason = f"the quote is {stamp}: {checks[0].reason}"
            elif all(s == stamp for s in stamps):
                reason = f"all {n} quotes are {stamp}"
            else:
                reason = f"the weakest of {n} quotes: quote {i + 1} is {stamp}: {checks[i].reason}"
            if not_in_brain_claimed:
                reason += " (the reader also said the brain does not hold the answer)"
            return stamp, reason
        if not not_in_brain_claimed:
            return UNVERIFIED, "no quote given"
        if not isinstance(unread_matching, int) or unread_matching < 0:
            return UNVERIFIED, (
                "the reader found nothing, and how many matching notes were not read is unknown"
            )
        if unread_matching == 0:
            return (
                NOT_IN_BRAIN,
                "the reader found nothing, and every note of the scope that shares a word "
                "with the question was read",
            )
        plural = "notes that share a word with the question were" if unread_matching != 1 else (
            "note that shares a word with the question was"
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
        while i < len(line) and (
            line[i] in _DECORATION or line[i].isspace() or unicodedata.category(line[i]) == "Cf"
        ):
            i += 1
        line = line[i:]
        m = _ORDINAL.match(line)
        if not m:
            break
        line = line[m.end():]
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

"""The stamps of `brain_ask` and how one answer's quote checks fold into its stamp.

Stamps, strongest first: VERIFIED > CORRECTED > BEYOND QUOTES > SUPERSEDED > UNVERIFIED.
The overall stamp of an answer is the weakest of its quotes. NOT IN BRAIN is outside that order:
`cortex.ask.quotes.check_quote` never gives it, and it is an overall stamp only for an
answer with no citations (see `overall_stamp`); met among quote checks it counts as
UNVERIFIED.

Grounding (`cortex.ask.specifics.ungrounded`, used by `overall_stamp`): an answer keeps
VERIFIED or CORRECTED only when every *specific* it states occurs in a quote that is
itself VERIFIED or CORRECTED (outside any old wording ``(was: "…")``), or is a name or an
identifier in that quote's note title, aliases or heading path. See
`cortex.ask.specifics.specifics` for what counts as a specific and which spellings count
as the same.

The gate (`cortex.ask.entail.derive`, last): an answer keeps VERIFIED or CORRECTED only when
it is its live quotes up to the safe edits of `cortex.ask.edit_rules`; otherwise it is
BEYOND QUOTES, the reason naming the rule, or UNVERIFIED where a contradiction detector
(`cortex.ask.claims.contradictions`: polarity, bounds, ranges, signs, ordinals, recurrences,
quantifiers, roles, table columns) reads one and names both sides. A quoted table row is
read by the detectors even when the gate passes it: the gate cannot tell a value's column.

Pure functions, no I/O, never raise.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from enum import StrEnum

from cortex.ask.claims import Conflict, contradictions
from cortex.ask.entail import Derivation, derive, restricted_rest
from cortex.ask.normal_form import normalize_nfc
from cortex.ask.specifics import Specific, specifics, strip_old_wording, supported, ungrounded

__all__ = [
    "BEYOND_QUOTES",
    "CORRECTED",
    "NOT_IN_BRAIN",
    "STRENGTH",
    "SUPERSEDED",
    "UNVERIFIED",
    "VERIFIED",
    "QuoteCheck",
    "Stamp",
    "one_line",
    "overall_stamp",
]


class Stamp(StrEnum):
    """A stamp as replies spell it (a str: it is sent, cached and compared as its text), with
    its `strength`: higher is stronger, and an answer's stamp is its weakest quote's."""

    VERIFIED = "VERIFIED"
    CORRECTED = "CORRECTED"
    BEYOND_QUOTES = "BEYOND QUOTES"
    SUPERSEDED = "SUPERSEDED"
    UNVERIFIED = "UNVERIFIED"
    NOT_IN_BRAIN = "NOT IN BRAIN"

    @property
    def strength(self) -> int:
        return STRENGTH[self]


VERIFIED = Stamp.VERIFIED
CORRECTED = Stamp.CORRECTED
BEYOND_QUOTES = Stamp.BEYOND_QUOTES
SUPERSEDED = Stamp.SUPERSEDED
UNVERIFIED = Stamp.UNVERIFIED
NOT_IN_BRAIN = Stamp.NOT_IN_BRAIN

# Higher is stronger. NOT IN BRAIN never meets a quote's stamp; ranked with UNVERIFIED.
# Keyed by the stamps, so a stamp's text read back from a cache finds its strength too.
# BEYOND QUOTES sits above SUPERSEDED: its quotes are live, only its words go further.
STRENGTH: dict[str, int] = {
    VERIFIED: 5,
    CORRECTED: 4,
    BEYOND_QUOTES: 3,
    SUPERSEDED: 2,
    UNVERIFIED: 1,
    NOT_IN_BRAIN: 1,
}


@dataclass(frozen=True)
class QuoteCheck:
    """The stamp of one quote and where it was (or was not) found."""

    stamp: Stamp
    reason: str
    path: str
    heading: str = ""
    block_start: int | None = None
    block_end: int | None = None
    old_claim: str | None = None  # CORRECTED: the old wording; SUPERSEDED: the claim or sentence now current
    superseded_by: str | None = None
    note_retired: str | None = None
    match_start: int | None = None  # the matched span in the note's full text
    match_end: int | None = None
    # The quote as matched (normalised, NFC) without its retired text (struck words, the
    # old wording of a correction): what grounds the answer's specifics. `retired_text`
    # is what was left out, so a reply can say a specific is only there as a retired value.
    quote: str = ""
    retired_text: str = ""
    # The note's title and aliases and the headings above the quote's block: what the
    # passage is about, so names there ground the answer's (`specifics.ungrounded`).
    context: tuple[str, ...] = ()
    # A quoted table row: (heading, cell) for each column (`cortex.notes.tables.row_cells`),
    # so a value is read with its column; empty for any other block.
    row: tuple[tuple[str, str], ...] = ()
    # "" for prose; "code" for a code block; "example" for one its section gives as a
    # template, example or format to copy, "template" for prose a heading, title or folder
    # gives so (`cortex.ask.quotes`): never evidence of a fact, only of the template.
    code: str = ""
    # A code block's lead-in, the block before it ("I restart everything with:"): its words
    # say what the code does, so the answer's words are read under it as a cell's under its heading.
    lead_in: str = ""
    # The live sentence of its block the quote sits in, when the quote is less than it: the
    # answer is compared with the whole sentence (`entail.derive`), "" when they are one.
    sentence: str = ""


# What a refused answer's reason tells the client's model, so it can answer again and be verified.
HOW_TO_VERIFY = (
    "to be VERIFIED, say what the quote says in its own words: other forms of a word, synonyms, "
    "leaving out whole clauses and reordering clauses are fine"
)


def one_line(text: str) -> str:
    """Reasons are one line: quoted wording from a note may carry line breaks."""
    return " ".join(text.split()) if len(text.splitlines()) > 1 else text


def _listed(missing: list[Specific]) -> str:
    shown = [m.text for m in missing[:3]]
    more = f" (and {len(missing) - 3} more)" if len(missing) > 3 else ""
    return (shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]) + more


def _says(missing: list[Specific]) -> str:
    them = "it" if len(missing) == 1 else "them"
    return f"the answer says {_listed(missing)}; no quote contains {them}"


# An answer about a template or example names it so: "The trip template has …".
_ABOUT_EXAMPLE = re.compile(r"(?i)(?<![\w])(?:templates?|examples?|samples?|placeholders?)(?![\w])")
# An answer about code names it as code: a code span, or one of these words.
_ABOUT_CODE = re.compile(
    r"`|(?i:(?<![\w])(?:command|commands|script|scripts|config|configuration|code|snippet|cron|crontab|shell"
    r"|terminal|alias|syntax|runs? with|file)(?![\w]))"
)


def _code_reason(checks: list[QuoteCheck], answer: str) -> str:
    """Why a quote from a code block or a template cannot carry the answer, or "": a block
    given as a template or example never states a fact of the owner's, unless the answer is
    about the template ("The trip template has …"); any other code only when the answer is
    about code."""
    for i, c in enumerate(checks):
        where = f"quote {i + 1}" if len(checks) > 1 else "the quote"
        if c.code in ("example", "template") and _names_the_template(answer, c.quote):
            continue
        if c.code == "example":
            return f"{where} is in a code block the note gives as a template or example, not a fact of yours"
        if c.code == "template":
            return f"{where} is in a section the note gives as a template or example, not a fact of yours"
        if c.code == "code" and not _ABOUT_CODE.search(answer):
            return f"{where} is in a code block and the answer is not about code"
    return ""


def _contradicted(checks: list[QuoteCheck], answer: str) -> list[Conflict]:
    """The answer's claims its quotes contradict; a table's header row names its columns
    and states no fact of its own."""
    return contradictions(answer, [(c.quote, c.row) for c in _facts(checks)])


def _facts(checks: list[QuoteCheck]) -> list[QuoteCheck]:
    """The quotes that state facts: not a table's heading row, quoted beside its rows (it
    names their columns and claims nothing)."""
    heads = {tuple(h for h, _ in c.row) for c in checks if c.row}
    return [c for c in checks if not (c.row and all(h == v for h, v in c.row)) and _cells(c.quote) not in heads]


def _cells(quote: str) -> tuple[str, ...]:
    """A quoted table row's cells, stripped ("| a | b |" -> ("a", "b")); () for other text."""
    q = quote.strip()
    return tuple(x.strip() for x in q[1:-1].split("|")) if len(q) > 1 and q[0] == q[-1] == "|" else ()


def _names_the_template(answer: str, quote: str) -> bool:
    """Whether the answer calls what it quotes a template or example in words of its own
    (a quote's "Example Lettings" or "Sample Street" is no such word)."""
    own = {w.casefold() for w in re.findall(r"[^\W\d_]+", quote)}
    return any(m.group().casefold() not in own for m in _ABOUT_EXAMPLE.finditer(answer))


def _derived(checks: list[QuoteCheck], answer: str, question: str) -> Derivation:
    """Whether the answer is its live quotes up to the safe edits (`entail.derive`): a table
    cell's words read under its column's heading, a code block's under its lead-in, a name
    from the quoted note's title, aliases or headings."""
    live = [c for c in _facts(checks) if c.stamp in (VERIFIED, CORRECTED)]
    headings = [heading for c in checks for heading, _ in c.row] + [c.lead_in for c in live if c.lead_in]
    headings += [part for c in live if c.code in ("example", "template") for part in c.context]  # "the trip template"
    named = [part for c in checks for part in c.context]
    # Each quote is read alone, unless its sentence goes on, in the quote's clause, with a word
    # that restricts it ("…, except in August"); then, and as a second reading, the sentence.
    readings = [
        [c.quote] if not c.sentence else [c.sentence] if restricted_rest(c.sentence, c.quote) else [c.quote, c.sentence]
        for c in live
    ]
    first = None
    for chosen in itertools.islice(itertools.product(*readings), 8):
        got = derive(answer, list(chosen), question=question, named=named, headings=headings)
        if got:
            return got
        first = got if first is None else first
    return first if first is not None else derive(answer, [], question=question)


def _refused(checks: list[QuoteCheck], answer: str, question: str, quoted: str) -> tuple[Stamp, str] | None:
    """The gate decides (`entail.derive`); a contradiction is the reason a refused answer
    reads, since it says more than "a word changed". A quoted table row is read by the
    detectors either way: the gate cannot tell which column a value stands under."""
    derived = _derived(checks, answer, question)
    if derived and not any(c.row for c in checks):
        return None
    found = _contradicted(checks, answer)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return UNVERIFIED, one_line(f"{found[0].reason}{more} ({quoted})")
    return None if derived else (BEYOND_QUOTES, one_line(f"{derived.said}; {quoted}); {HOW_TO_VERIFY}"))


def overall_stamp(
    checks: list[QuoteCheck],
    not_in_brain_claimed: bool,
    unread_matching: int,
    answer: str = "",
    *,
    question: str = "",
) -> tuple[Stamp, str]:
    """The reply's stamp and a one-line reason.

    With citations: the weakest of the quotes' stamps; a VERIFIED or CORRECTED answer
    that states a specific no VERIFIED or CORRECTED quote carries (`ungrounded`), or a
    claim its quotes contradict (`contradictions`), is UNVERIFIED, and the reason names
    the specific, or the answer's words and the quote's (so is one resting on a code block
    it may not, `_code_reason`); one whose content words are not all in its quotes or the
    `question` is BEYOND QUOTES, naming them. Without citations: NOT IN BRAIN only
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
                # A table row's column headings name what its cells hold ("monthly DD").
                contexts = [(*c.context, *(h for h, _ in c.row)) for c in checks]
                missing = ungrounded(answer, [c.quote for c in checks], contexts)
                quoted = "the quote is" if n == 1 else "the quotes are"
                if missing:
                    retired = [t for c in checks if (t := strip_old_wording(normalize_nfc(c.retired_text)))]
                    old = [m for m in missing if any(supported(m, t, specifics(t)) for t in retired)]
                    if old:
                        holds = "the quote holds" if n == 1 else "the quotes hold"
                        return UNVERIFIED, one_line(
                            f"the answer says {_listed(old)}; {holds} {'it' if len(old) == 1 else 'them'} "
                            f"only as the retired value ({quoted} {stamp})"
                        )
                    return UNVERIFIED, one_line(f"{_says(missing)} ({quoted} {stamp})")
                coded = _code_reason(checks, answer)
                if coded:
                    return UNVERIFIED, one_line(f"{coded} ({quoted} {stamp})")
                refused = _refused(checks, answer, question, f"{quoted} {stamp}")
                if refused:
                    return refused
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

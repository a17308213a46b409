"""The stamps of `brain_ask` and `brain_verify`, and the one place that decides them.

Stamps, strongest first: VERIFIED > CORRECTED > BEYOND QUOTES > SUPERSEDED > UNVERIFIED;
NOT IN BRAIN is an answer with no citations whose absence was proven. `decide` runs the
registered rules (`RULES`) in order and the first that applies gives the stamp; every reply
names that rule's id. Each rule has a one-line meaning and examples that run as tests
(`tests/ask/test_rules.py`); `cortex rules` prints them.

VERIFIED promises only what `cortex.ask.own_words` proves: the answer is its quotes' whole
units in their own words. Anything else quoting live text is BEYOND QUOTES, with the first
difference of a plain diff as the reason, and `verified_answer`: the units themselves,
framed, which would be VERIFIED as they stand.

Pure functions, no I/O, never raise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from cortex.ask import own_words as ow

__all__ = [
    "BEYOND_QUOTES",
    "CORRECTED",
    "NOT_IN_BRAIN",
    "STRENGTH",
    "SUPERSEDED",
    "UNVERIFIED",
    "VERIFIED",
    "RULES",
    "QuoteCheck",
    "Rule",
    "Stamp",
    "Verdict",
    "decide",
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
    heading_path: tuple[str, ...] = ()
    block_start: int | None = None
    block_end: int | None = None
    old_claim: str | None = None  # CORRECTED: the old wording; SUPERSEDED: the claim or sentence now current
    superseded_by: str | None = None
    note_retired: str | None = None
    match_start: int | None = None  # the matched span in the note's full text
    match_end: int | None = None
    # The quote as matched (normalised, NFC) without its retired text (struck words, the
    # old wording of a correction), and what was left out.
    quote: str = ""
    retired_text: str = ""
    # The note's title and aliases and the headings above the quote's block: what the
    # passage is about (the frame "According to <title>:", the question flag).
    context: tuple[str, ...] = ()
    # "" for prose; "code" for a code block; "example" for one its section gives as a
    # template, example or format to copy, "template" for prose a heading, title or folder
    # gives so (`cortex.ask.quotes`): never evidence of a fact, only of the template.
    code: str = ""
    # The whole units the quote sits in, live text: its sentence(s), its line(s), its block.
    # VERIFIED needs the answer to be made of such units (`own_words.matches`).
    units: tuple[str, ...] = ()
    # The words the quote's units hold only as retired text (struck, a `(was: …)`).
    retired_words: tuple[str, ...] = ()


def one_line(text: str) -> str:
    """Reasons are one line: quoted wording from a note may carry line breaks."""
    return " ".join(text.split()) if len(text.splitlines()) > 1 else text


@dataclass(frozen=True)
class Verdict:
    """What `decide` gives: the stamp, why in one line, the rule that decided, and the
    cited units framed, for an answer that is not them (None when there are none)."""

    stamp: Stamp
    reason: str
    rule: str
    verified_answer: str | None = None


@dataclass
class Case:
    """What the rules read: the quote checks, the answer and the absence figures."""

    checks: list[QuoteCheck]
    answer: str
    not_in_brain: bool
    unread: int
    reader_error: str | None = None
    near: str | None = None  # why a miss is no absence: a passage comes close to the question
    said: tuple[ow.Token, ...] = ()
    units: list[list[tuple[ow.Token, ...]]] = field(default_factory=list)


@dataclass(frozen=True)
class Rule:
    """One way a stamp is decided: `applies` returns the reason, or None to pass it on.
    `examples` are (note, quotes, answer, expected stamp) and run as tests."""

    id: str
    stamp: Stamp
    meaning: str
    applies: Callable[[Case], str | None]
    examples: tuple[tuple[str, tuple[str, ...], str], ...] = ()


def _quoted(case: Case) -> str:
    return "the quote is" if len(case.checks) == 1 else "the quotes are"


def _reader_failed(case: Case) -> str | None:
    return case.reader_error


def _absence_near(case: Case) -> str | None:
    if case.checks or not case.not_in_brain or case.unread != 0:
        return None
    return case.near


def _no_quote(case: Case) -> str | None:
    return None if case.checks or case.not_in_brain else "no quote given"


def _absence(case: Case) -> str | None:
    if case.checks or not case.not_in_brain or case.unread != 0:
        return None
    return (
        "the reader found nothing, and every note of the scope that holds a distinctive term of the question was read"
    )


def _absence_unread(case: Case) -> str | None:
    if case.checks:
        return None
    if not isinstance(case.unread, int) or case.unread < 0:
        return "the reader found nothing, and how many matching notes were not read is unknown"
    n = case.unread
    which = (
        "note that holds a distinctive term of the question was"
        if n == 1
        else "notes that hold a distinctive term of the question were"
    )
    return f"the reader found nothing, but {n} {which} not read"


def _weakest(case: Case, stamps: tuple[Stamp, ...]) -> str | None:
    """The first quote whose own check gave one of `stamps`, said as the reply says it."""
    n = len(case.checks)
    for i, c in enumerate(case.checks):
        if c.stamp in stamps or (UNVERIFIED in stamps and c.stamp not in STRENGTH):
            stamp = c.stamp if c.stamp in STRENGTH else UNVERIFIED
            if n == 1:
                return f"the quote is {stamp}: {c.reason}"
            if all(o.stamp == c.stamp for o in case.checks):
                return f"all {n} quotes are {stamp}: {c.reason}"
            return f"the weakest of {n} quotes: quote {i + 1} is {stamp}: {c.reason}"
    return None


def _quote_unchecked(case: Case) -> str | None:
    return _weakest(case, (UNVERIFIED, NOT_IN_BRAIN))


def _quote_retired(case: Case) -> str | None:
    return _weakest(case, (SUPERSEDED,))


def _quote_template(case: Case) -> str | None:
    for i, c in enumerate(case.checks):
        if c.code in ("example", "template"):
            where = f"quote {i + 1}" if len(case.checks) > 1 else "the quote"
            return (
                f"{where} is in a block the note gives as a template or example (its heading or lead-in "
                "says so), not a fact of yours"
            )
    return None


def _states_retired(case: Case) -> str | None:
    live = {t.key for unit in (u for us in case.units for u in us) for t in unit}
    retired = {w for c in case.checks for w in c.retired_words}
    said = [t for t in case.said if t.kind and t.key not in live and t.key in retired]  # a value: certain
    if not said:
        return None
    holds = "the quote holds" if len(case.checks) == 1 else "the quotes hold"
    stamp = CORRECTED if any(c.stamp == CORRECTED for c in case.checks) else VERIFIED
    return f"the answer says '{said[0].text}'; {holds} it only as the retired value ({_quoted(case)} {stamp})"


def _value_conflict(case: Case) -> str | None:
    found = ow.conflicts(case.said, [u for us in case.units for u in us])
    if found is None:
        return None
    said, held = found
    theirs = ", ".join(dict.fromkeys(t.text for t in held))
    who = "the quote says" if len(case.checks) == 1 else "the quotes say"
    return f"the answer says {said.text}; {who} {theirs}"


def _own_words(case: Case) -> str | None:
    if any(c.stamp == CORRECTED for c in case.checks):
        return None
    return _made_of_units(case)


def _own_words_corrected(case: Case) -> str | None:
    if not any(c.stamp == CORRECTED for c in case.checks):
        return None
    return _made_of_units(case)


def _made_of_units(case: Case) -> str | None:
    """Why the answer is its quotes' own words (an answer of no words: the quotes alone), or None."""
    weakest = _weakest(case, (CORRECTED,)) or _weakest(case, (VERIFIED,))
    also = " (the reader also said the brain does not hold the answer)" if case.not_in_brain else ""
    if not case.said:
        return f"{weakest}; no answer beyond the quotes{also}"
    used = ow.matches(case.said, case.units)
    if used is None:
        return None
    n = len(used)
    return f"{weakest}; the answer is {'its' if n == 1 else n} whole unit{'s' if n > 1 else ''}, in its own words{also}"


def _other_words(case: Case) -> str | None:
    flat = [u for us in case.units for u in us]
    if not case.said:
        return f"the answer is empty; {_quoted(case)} live"
    if not flat:
        return "your notes say this in other words: no unit of the quotes could be read"
    differ = ow.first_difference(case.said, ow.closest(case.said, flat))
    return f"your notes say this in other words: {differ}; present verified_answer, or the units word for word"


_NOTE = "# Pip\n\nPip must never be given paracetamol. It is toxic to cats.\n\n- Vet: Wed ~~9am~~ 10am\n"
_QUOTE = ("Pip must never be given paracetamol",)

# In order: the first rule that applies decides.
RULES: tuple[Rule, ...] = (
    Rule(
        "reader-failed", UNVERIFIED,
        "the reader gave no answer (an error, a timeout, a reply it could not read)",
        _reader_failed,
    ),
    Rule(
        "absence-near", UNVERIFIED,
        "no citation, but a passage comes close to the question by words or meaning",
        _absence_near,
    ),
    Rule(
        "no-quote", UNVERIFIED,
        "no citation, and the reader did not say the notes lack the answer",
        _no_quote,
    ),
    Rule(
        "absence-proven", NOT_IN_BRAIN,
        "no citation, and every note holding a distinctive term of the question was read",
        _absence,
    ),
    Rule(
        "absence-unread", UNVERIFIED,
        "no citation, but a note holding a distinctive term of the question was not read",
        _absence_unread,
    ),
    Rule(
        "quote-unchecked", UNVERIFIED,
        "a quote is not in its note, spans blocks, is a repeated fragment, is hidden, "
        "or its note is not in the pack or unreadable",
        _quote_unchecked,
        ((_NOTE, ("Pip must always be given paracetamol",), "Pip must always be given paracetamol."),),
    ),
    Rule(
        "quote-retired", SUPERSEDED,
        "a quote sits in retired text: a banner's section, a (was: …), struck text, a retired note",
        _quote_retired,
        ((_NOTE, ("9am",), "9am"),),
    ),
    Rule(
        "quote-template", UNVERIFIED,
        "a quote sits in a block its heading, lead-in, title or folder gives as a template or example",
        _quote_template,
        (("# Letter\n\nTemplate (change the name):\n\n```\nSam will be absent on 12 May.\n```\n",
          ("Sam will be absent on 12 May.",), "Sam will be absent on 12 May."),),
    ),
    Rule(
        "states-retired", UNVERIFIED, "the answer states a value the unit holds only as retired text",
        _states_retired,
        ((_NOTE, ("Vet: Wed ~~9am~~ 10am",), "Vet: Wed 9am"),),
    ),
    Rule(
        "value-conflict", UNVERIFIED,
        "a number, amount, date, time, version or code of the answer differs from the units' of the same kind",
        _value_conflict,
        ((_NOTE, ("Vet: Wed ~~9am~~ 10am",), "Vet: Wed 11am"),),
    ),
    Rule(
        "own-words", VERIFIED,
        "the answer is whole units of its quotes, each in its own words and order, after at most one frame",
        _own_words,
        ((_NOTE, _QUOTE, "Your notes say: Pip must never be given paracetamol."),
         (_NOTE, (*_QUOTE, "It is toxic to cats"), "It is toxic to cats. Pip must never be given paracetamol")),
    ),
    Rule(
        "own-words-corrected", CORRECTED, "as own-words, and a unit carries an in-place correction",
        _own_words_corrected,
        ((_NOTE, ("Vet: Wed ~~9am~~ 10am",), "Vet: Wed 10am"),),
    ),
    Rule(
        "other-words", BEYOND_QUOTES, "the quotes are live, and the answer puts them in other words",
        _other_words,
        ((_NOTE, _QUOTE, "Pip must be given paracetamol."), (_NOTE, _QUOTE, "Never give Pip paracetamol.")),
    ),
)  # fmt: skip


def decide(
    checks: list[QuoteCheck],
    not_in_brain_claimed: bool,
    unread_matching: int,
    answer: str = "",
    *,
    reader_error: str | None = None,
    near: str | None = None,
) -> Verdict:
    """The reply's stamp, from the first rule of `RULES` that applies. `near`: why a miss is
    no proven absence (the closest passages), when one comes close."""
    try:
        case = Case(list(checks), answer or "", not_in_brain_claimed, unread_matching, reader_error, near)
        if case.checks:
            titles = tuple(c.context[0] for c in checks if c.context)
            case.said = ow.tokens(ow.strip_frame(case.answer, titles), answer=True)
            # A check made without its units (a caller's own) is read as its quote alone.
            case.units = [[ow.tokens(u) for u in (c.units or ((c.quote,) if c.quote else ()))] for c in case.checks]
        for rule in RULES:
            reason = rule.applies(case)
            if reason is not None:
                offered = _offer(case) if rule.id in OFFERING else None
                return Verdict(rule.stamp, one_line(reason), rule.id, offered)
        return Verdict(UNVERIFIED, "no rule applied", "none")
    except Exception as exc:  # the verifier must always answer; say why it could not
        return Verdict(UNVERIFIED, f"the verifier could not decide ({type(exc).__name__})", "error")


# The rules after which the quotes' units, said as they stand, would be VERIFIED.
OFFERING = frozenset({"states-retired", "value-conflict", "other-words"})


def _offer(case: Case) -> str | None:
    """The live units the quotes sit in (each its smallest), framed: VERIFIED as they stand."""
    units = [c.units[0] for c in case.checks if c.stamp in (VERIFIED, CORRECTED) and c.units]
    if not units or len(units) != len(case.checks):
        return None
    return "Your notes say: " + " ".join(dict.fromkeys(units))


def overall_stamp(
    checks: list[QuoteCheck], not_in_brain_claimed: bool, unread_matching: int, answer: str = "", *, question: str = ""
) -> tuple[Stamp, str]:
    """(stamp, reason) of `decide`; `question` is not read: VERIFIED never leans on it."""
    verdict = decide(checks, not_in_brain_claimed, unread_matching, answer)
    return verdict.stamp, verdict.reason

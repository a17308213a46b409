"""What brain_ask and brain_verify reply, as types (the fields a client reads, named in
the tools' output schema (tools/list) and checked against each reply before it is sent),
and the pieces of a reply made from what the asker found: a quote's entry, a lead's, the
coverage line.

A field marked NotRequired is sent only when it says something (a correction's old claim,
the leads of a miss, the reader that was passed over).
"""

from __future__ import annotations

from typing import Any, NotRequired, cast

from typing_extensions import TypedDict

from cortex.ask.leads import Lead
from cortex.ask.stamps import QuoteCheck, Stamp

__all__ = [
    "AskReply",
    "LeadEntry",
    "QuoteEntry",
    "VerifyReply",
    "answered",
    "coverage_line",
    "lead_entry",
    "quote_entry",
    "words_only",
]


class QuoteEntry(TypedDict):
    """One quote of an answer, its stamp and why, and where it was found."""

    quote: str
    stamp: Stamp
    reason: str
    path: str
    heading: str
    old_claim: NotRequired[str]  # CORRECTED: the old wording; SUPERSEDED: the claim now current
    superseded_by: NotRequired[str]  # the note that replaces a retired one, when it says so
    heading_path: NotRequired[list[str]]  # the headings above the quote, outermost first
    paragraph: NotRequired[str]  # the whole block, live text, when the quote's unit is less than it


class LeadEntry(TypedDict):
    """A passage that comes close to a question no reader answered: read it before saying
    the notes lack the answer."""

    path: str
    heading: str
    words: float  # the share of the question's words it holds
    cosine: NotRequired[float]  # how close it is by meaning, when the meaning arm has it


class VerifyReply(TypedDict):
    """brain_verify: the verifier's stamp on an answer the client's own model wrote."""

    answer: str
    stamp: Stamp
    stamp_reason: str
    rule: str  # the id of the rule that decided the stamp (`cortex rules` prints them)
    verified_answer: NotRequired[str]  # the cited units, framed: VERIFIED as they stand
    quotes: list[QuoteEntry]
    coverage: str
    reader: str
    sha: str  # the commit the quotes were checked at
    addresses_question: NotRequired[bool]  # with a question: whether the quotes mention its focus terms
    missing_terms: NotRequired[list[str]]  # the focus terms no quote mentions


class AskReply(VerifyReply):
    """brain_ask: a reader's answer, stamped by the verifier, and what was searched and read."""

    notes_read: int
    unread_matching: int  # notes holding a distinctive term of the question left unread
    cached: bool
    leads: NotRequired[list[LeadEntry]]
    reader_note: NotRequired[str]  # why a reader before the one that read was passed over


def answered(result: dict[str, Any], *, cached: bool, passed: str) -> AskReply:
    """An ask's reply as sent: the stamped result (as cached, or just made), whether it came
    from the cache, and why a reader before the one that read was passed over."""
    reply = cast(AskReply, dict(result, cached=cached))  # `_stamp`'s fields, each of its type
    if passed:
        reply["reader_note"] = passed
    return reply


def lead_entry(lead: Lead) -> LeadEntry:
    """One lead of a reply: where the passage is and how close it came."""
    entry: LeadEntry = {"path": lead.path, "heading": lead.heading, "words": round(lead.words, 2)}
    if lead.cosine is not None:
        entry["cosine"] = round(lead.cosine, 2)
    return entry


def words_only(meaning_line: str) -> str:
    """Why a miss was judged by its words alone, from the meaning arm's line ("meaning: off
    (CORTEX_MEANING=off); lexical only" -> "the meaning arm is off (CORTEX_MEANING=off)")."""
    state = meaning_line.removeprefix("meaning: ").split("; lexical", 1)[0]
    if not state or state.startswith("off"):
        return f"the meaning arm is {state or 'off'}"
    if state.startswith("starting"):
        return "the meaning arm is starting"
    return f"the meaning arm is not ready: {state}"


def quote_entry(quote: str, check: QuoteCheck) -> QuoteEntry:
    """One quote of a reply: the quote, its stamp and why, where it was found."""
    entry: QuoteEntry = {
        "quote": quote,
        "stamp": check.stamp,
        "reason": check.reason,
        "path": check.path,
        "heading": check.heading,
    }
    if check.old_claim:
        entry["old_claim"] = check.old_claim
    if check.superseded_by:
        entry["superseded_by"] = check.superseded_by
    if check.heading_path:
        entry["heading_path"] = list(check.heading_path)
    if len(check.units) > 1 and check.units[-1] != check.units[0]:
        entry["paragraph"] = check.units[-1]
    return entry


def coverage_line(
    in_scope: int,
    counts: dict[str, int],
    *,
    matching: int,
    read: int,
    unread: int,
    by_budget: int,
    packs: int,
    sha: str,
    reader: str,
    tokens: int,
) -> str:
    """What a search covered, in one line: the distinctive terms with their note counts,
    whether every note holding one was read, and what was read in all."""

    def notes(n: int) -> str:
        return f"{n} note{'' if n == 1 else 's'}"

    if counts:
        terms = ", ".join(f"{t}: {notes(n)}" for t, n in sorted(counts.items(), key=lambda x: (x[1], x[0])))
        if not unread:
            state = "all read" if matching else "none to read"
        else:
            state = (
                f"{unread} of those {notes(matching)} not read ({unread - by_budget} by retrieval "
                f"rank, {by_budget} by the pack budget)"
            )
        said = f"distinctive terms: {terms}; {state}"
    else:
        said = "no distinctive term in the question (every content word is common in the scope, or none)"
    return (
        f"searched {in_scope} notes of the scope; {said}; read {notes(read)} in {packs} "
        f"pack{'' if packs == 1 else 's'}; sha {sha[:12]}; reader {reader}; ~{tokens} tokens sent"
    )

"""Whether an answer's quotes are about its question at all: the flag beside the stamp.

VERIFIED certifies an answer against its quotes, not that the quotes answer the question:
"Flying to Porto at 07:40" verifies "at 07:40" whatever the question was, Lisbon
included. So where the question is known the reply says whether its quotes mention the
question's focus terms (`addressing`).

The focus terms are the question's content words (`pack.question_terms`: stop words,
question words and framing words left out, "Rosa's" read as "rosa"), less the owner's own
name. A term is mentioned when a quote found in a note, or that note's title, aliases or
the headings above the quote, holds it in any inflected or derived form (`pack.variants`:
"flights" mentions "flight"); a word the question writes in lower case is not mentioned by
a name in a title or heading (`readers.proper_only`: "studio assistant" is not "Home
Assistant"). Every term must be mentioned: a quote about the flight that never says
Lisbon may be about another flight.

Pure functions, no I/O, never raise on well-formed checks.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from cortex.ask.pack import question_terms, variants
from cortex.ask.readers import proper_only
from cortex.ask.specifics import live_context
from cortex.ask.stamps import QuoteCheck
from cortex.index.tokenize import tokenize

__all__ = ["SHOWN_TERMS", "addressing", "focus_terms", "unmentioned"]

SHOWN_TERMS = 5  # named in the stamp's reason; `missing_terms` lists them all


def focus_terms(question: str, owner: Collection[str] = ()) -> list[str]:
    """The question's focus terms, in order: its content words less the owner's name (`owner`)."""
    return [t for t in question_terms(question) if t not in owner]


def unmentioned(question: str, terms: Sequence[str], found: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
    """The `terms` of `question` that no (quote, its title, aliases and headings) of `found` mentions."""
    words: set[str] = set()
    for quote, context in found:
        words.update(tokenize(quote))
        around = [live_context(c) for c in context]
        words.update(set(tokenize(" ".join(around))) - proper_only(question, around))
    return [t for t in terms if not variants(t) & words]


def _listed(terms: list[str]) -> str:
    shown = [f'"{t}"' for t in terms[:SHOWN_TERMS]]
    more = f" (and {len(terms) - SHOWN_TERMS} more)" if len(terms) > SHOWN_TERMS else ""
    return (shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]) + more


def addressing(question: str, terms: Sequence[str], checks: Sequence[QuoteCheck]) -> tuple[dict[str, Any], str]:
    """(the reply's fields, the clause the stamp's reason gains, or "") for an answer's quote checks.

    `{"addresses_question": True}` when every focus term is mentioned; else False with
    `missing_terms`, and a clause naming them. No fields without quote checks: a reply
    with no quote already says that nothing answered.
    """
    if not checks:
        return {}, ""
    # Only a quote found in a note says anything; a quote not found is the reader's text.
    found = [(f"{c.quote} {c.retired_text}", c.context) for c in checks if c.block_start is not None]
    missing = unmentioned(question, terms, found)
    if not missing:
        return {"addresses_question": True}, ""
    return (
        {"addresses_question": False, "missing_terms": missing},
        f"but no quote, nor its note's title, aliases or headings, mentions {_listed(missing)} "
        "of the question: the quotes may answer another question",
    )

"""What a question is about and what it asks for, and whether quotes say it: the flag
beside the stamp, and the offline reader's test of a passage.

VERIFIED certifies an answer against its quotes, not that the quotes answer the question:
"Flying to Porto at 07:40" verifies "at 07:40" whatever the question was, Lisbon
included. So where the question is known the reply says whether its quotes mention the
question's focus terms (`addressing`).

The focus terms are the question's content words (`question.question_terms`: stop words,
question words and framing words left out, "Rosa's" read as "rosa"), less the owner's own
name. A term is mentioned when a quote found in a note, or that note's title, aliases or
the headings above the quote, holds it in any inflected or derived form (`pack.variants`:
"flights" mentions "flight"); a word the question writes in lower case is not mentioned by
a name in a title or heading (`proper_only`: "studio assistant" is not "Home
Assistant"). Every term must be mentioned: a quote about the flight that never says
Lisbon may be about another flight.

What a question asks for (`question.expects`): the kind of specific its form names ("How much" a
number or amount, "When" a date or time, "Who" a name, "Where … online" a link). The words
of that form ("cost" in "What does the jar cost?", "large" in "How large is the deposit?")
name the answer, not its topic: a quote mentions them by holding a specific of that kind
("12 EUR"), a unit word of the question ("kilometres") by an amount in that unit
("286 km"), and a number word ("four") by its digits.

Pure functions, no I/O, never raise on well-formed checks.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

from cortex.ask.pack import variants
from cortex.ask.question import Question, as_question
from cortex.ask.specifics import CURRENCIES, Specific, live_context, specifics, unit_of
from cortex.ask.stamps import QuoteCheck
from cortex.index.tokenize import tokenize

__all__ = [
    "SHOWN_TERMS",
    "addressing",
    "answers_kind",
    "by_specifics",
    "proper_only",
    "unmentioned",
]

SHOWN_TERMS = 5  # named in the stamp's reason; `missing_terms` lists them all
_CONNECTOR = re.compile(r"[-./@:'_]+")  # what joins a compound's parts, as the tokenizer reads them


def answers_kind(spec: Specific, wants: frozenset[str] | set[str] | tuple[str, ...]) -> bool:
    """Whether `spec` is of a kind the question asks for. A number written as a word
    alone ("one cracked slate") answers no "how much": it grounds, but never qualifies.
    "money" is an amount in a currency: a price is not "142,000 km"."""
    if spec.kind == "number" and spec.text[:1].isalpha():
        return False
    return spec.kind in wants or ("money" in wants and spec.kind == "amount" and spec.key[1] in CURRENCIES)


def proper_only(question: str | Question, titles: list[str]) -> set[str]:
    """Terms the question writes in lower case that `titles` write only inside a name.

    Titles and headings are in sentence case, so a capital after a title's first word
    marks a name ("Home Assistant", "Vellmoor Public Library"). A lower-case word of the
    question ("Rosa's studio assistant") is a common noun, not that name: a passage may
    not count it as covered through such a title (it still may when it says it itself).
    """
    named: set[str] = set()
    plain: set[str] = set()
    for title in titles:
        words = title.split()
        for i, w in enumerate(words):
            (named if i and w[:1].isupper() else plain).update(tokenize(w))
    return (named - plain) & as_question(question).lower


def unmentioned(
    question: str | Question, terms: Sequence[str], found: Sequence[tuple[str, Sequence[str]]]
) -> list[str]:
    """The `terms` of `question` that no (quote, its title, aliases and headings) of `found` mentions.

    A word that names what the question asks for (`asked_words`) is mentioned by a specific
    of the kind asked; a unit word by an amount in that unit.
    """
    q = as_question(question)
    words: set[str] = set()
    for quote, context in found:
        words.update(tokenize(quote))
        around = [live_context(c) for c in context]
        words.update(set(tokenize(" ".join(around))) - proper_only(q, around))
    missing = [t for t in terms if not (_forms(t) & words or _as_digits(t) & words)]
    if not missing:
        return []
    held: list[Specific] = [x for quote, _ in found for x in specifics(quote)]
    wants = q.wants
    asked = q.asked if wants and any(answers_kind(x, wants) for x in held) else frozenset()
    units = {x.key[1] for x in held if x.kind == "amount"}
    return [t for t in missing if not (t in asked or (unit_of(t) or "") in units)]


@functools.lru_cache(maxsize=4096)
def _forms(term: str) -> frozenset[str]:
    """What mentions `term`: its word forms (`pack.variants`), less a compound's parts alone:
    "Django 5.0 with HTMX" mentions "django" and "htmx", not the package "django-htmx"."""
    parts = {p for p in _CONNECTOR.split(term) if p}
    return variants(term) - parts if len(parts) > 1 else variants(term)


def by_specifics(question: str | Question, terms: Sequence[str]) -> set[str]:
    """The `terms` a quote may mention by a specific rather than by the word: the words naming
    what is asked, unit words and number words. No index of words holds them."""
    asked = as_question(question).asked
    return {t for t in terms if t in asked or unit_of(t) or _as_digits(t)}


@functools.lru_cache(maxsize=4096)
def _as_digits(term: str) -> frozenset[str]:
    """A number word's digits ("four" -> {"4"}): a quote says "4 months" for "four months"."""
    return frozenset(x.key[0] for x in specifics(term) if x.kind == "number" and term.isalpha())


def _listed(terms: list[str]) -> str:
    shown = [f'"{t}"' for t in terms[:SHOWN_TERMS]]
    more = f" (and {len(terms) - SHOWN_TERMS} more)" if len(terms) > SHOWN_TERMS else ""
    return (shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]) + more


def addressing(
    question: str | Question, terms: Sequence[str], checks: Sequence[QuoteCheck]
) -> tuple[dict[str, Any], str]:
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

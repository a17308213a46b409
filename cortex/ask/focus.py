"""What a question is about and what it asks for, and whether quotes say it: the flag
beside the stamp, and the offline reader's test of a passage.

VERIFIED certifies an answer against its quotes, not that the quotes answer the question:
"Flying to Porto at 07:40" verifies "at 07:40" whatever the question was, Lisbon
included. So where the question is known the reply says whether its quotes mention the
question's focus terms (`addressing`).

The focus terms are the question's content words (`pack.question_terms`: stop words,
question words and framing words left out, "Rosa's" read as "rosa"), less the owner's own
name. A term is mentioned when a quote found in a note, or that note's title, aliases or
the headings above the quote, holds it in any inflected or derived form (`pack.variants`:
"flights" mentions "flight"); a word the question writes in lower case is not mentioned by
a name in a title or heading (`proper_only`: "studio assistant" is not "Home
Assistant"). Every term must be mentioned: a quote about the flight that never says
Lisbon may be about another flight.

What a question asks for (`expects`): the kind of specific its form names ("How much" a
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
from collections.abc import Collection, Sequence
from typing import Any

from cortex.ask.pack import question_terms, variants
from cortex.ask.specifics import CURRENCIES, Specific, live_context, specifics, unit_of
from cortex.ask.stamps import QuoteCheck
from cortex.index.tokenize import tokenize

__all__ = [
    "SHOWN_TERMS",
    "addressing",
    "answers_kind",
    "asked_words",
    "expects",
    "focus_terms",
    "by_specifics",
    "proper_only",
    "unmentioned",
]

SHOWN_TERMS = 5  # named in the stamp's reason; `missing_terms` lists them all
_CONNECTOR = re.compile(r"[-./@:'_]+")  # what joins a compound's parts, as the tokenizer reads them

_NUMERIC = frozenset({"number", "amount", "time", "date"})
_EXPECTS = [
    # Where online asks for a link. A form's words that name the answer, where not all of
    # them do, are its group `ask`: "salary" is what is asked about, "cost" only how.
    (
        re.compile(r"\bwhere\b[^?]*\b(?P<ask>online)\b|\b(?P<link>url|web address|link)\b(?= (?:of|for|to)\b)", re.I),
        frozenset({"url"}),
    ),
    # A measure asks for a quantity with its unit: "How tall…" is not answered by a bare
    # count; a price by money (a bare number may be a year); a version or a number
    # by a number or an identifier; opening hours by a time.
    (re.compile(r"\bhow (?:tall|high|far|heavy|wide|deep|fast)\b", re.I), frozenset({"amount"})),
    (
        re.compile(
            r"(?<![\w-])(?:(?P<ask>cost|costs|price|prices|fee|fees|charge|charged|pay|paid)|rent|salary)(?![\w-])",
            re.I,
        ),
        frozenset({"money"}),
    ),
    (re.compile(r"\b(?:which|what) (?:[\w-]+ )?(?P<ask>version)\b", re.I), frozenset({"number", "identifier"})),
    (re.compile(r"\bnumber\b", re.I), frozenset({"number", "identifier"})),
    (re.compile(r"\b(?:opening|what) hours\b", re.I), frozenset({"time"})),
    (re.compile(r"\b(?:what|which) time\b", re.I), frozenset({"time"})),
    (re.compile(r"\bwhen\b|\b(?:what|which) (?:date|day|month|year)\b", re.I), frozenset({"date", "time"})),
    (
        re.compile(r"\bhow (?:much|many|tall|high|big|far|heavy|fast|large|wide)\b", re.I),
        frozenset({"number", "amount"}),
    ),
    (re.compile(r"\bhow (?:long|old)\b", re.I), _NUMERIC),
    (re.compile(r"\bwhat (?:share|percentage|proportion|fraction)\b|\bpercent(?:age)?\b", re.I), frozenset({"amount"})),
    (re.compile(r"\b(?:what|which) temperature\b|\bhow (?:hot|cold|warm)\b", re.I), frozenset({"amount"})),
    (re.compile(r"^\s*who\b|\bwho (?:is|was|are|were|does|did|will)\b", re.I), frozenset({"name"})),
]


def expects(question: str) -> frozenset[str] | None:
    """The kinds of specific (`cortex.ask.specifics.specifics`) an answer to `question` must hold.

    "How much …" wants a number, "When …" a date or time, "What time …" a time, "Who …"
    a name, "How tall …" an amount with its unit, "… cost?" a number, "Which version …"
    a number or identifier: a passage without one cannot answer, however many words it
    shares. The first matching form decides. None when the question's form says nothing.
    """
    found = _asked(question)
    return found[0] if found else None


def _asked(question: str) -> tuple[frozenset[str], str] | None:
    """(the kinds the first matching form asks for, the words of every form that matches), or None."""
    found = [(kinds, _asking(m)) for rx, kinds in _EXPECTS for m in [rx.search(question)] if m]
    return (found[0][0], " ".join(w for _, w in found)) if found else None


def _asking(m: re.Match[str]) -> str:
    """The words of a matched form that name the answer: its named groups when it has
    any, else the whole match."""
    named = [g for g in m.groupdict().values() if g]
    return " ".join(named) if m.re.groupindex else m.group()


def asked_words(question: str) -> set[str]:
    """The question's terms that name what it asks for rather than what it is about: the
    words of the forms that `expects` reads ("cost", "large", "version")."""
    found = _asked(question)
    return set(tokenize(found[1])) if found else set()


def answers_kind(spec: Specific, wants: frozenset[str] | set[str] | tuple[str, ...]) -> bool:
    """Whether `spec` is of a kind the question asks for. A number written as a word
    alone ("one cracked slate") answers no "how much": it grounds, but never qualifies.
    "money" is an amount in a currency: a price is not "142,000 km"."""
    if spec.kind == "number" and spec.text[:1].isalpha():
        return False
    return spec.kind in wants or ("money" in wants and spec.kind == "amount" and spec.key[1] in CURRENCIES)


def focus_terms(question: str, owner: Collection[str] = ()) -> list[str]:
    """The question's focus terms, in order: its content words less the owner's name (`owner`)."""
    return [t for t in question_terms(question) if t not in owner]


def proper_only(question: str, titles: list[str]) -> set[str]:
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
    lower = set(tokenize(" ".join(w for w in question.split() if not w[:1].isupper())))
    return (named - plain) & lower


def unmentioned(question: str, terms: Sequence[str], found: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
    """The `terms` of `question` that no (quote, its title, aliases and headings) of `found` mentions.

    A word that names what the question asks for (`asked_words`) is mentioned by a specific
    of the kind asked; a unit word by an amount in that unit.
    """
    words: set[str] = set()
    for quote, context in found:
        words.update(tokenize(quote))
        around = [live_context(c) for c in context]
        words.update(set(tokenize(" ".join(around))) - proper_only(question, around))
    missing = [t for t in terms if not (_forms(t) & words or _as_digits(t) & words)]
    if not missing:
        return []
    held: list[Specific] = [x for quote, _ in found for x in specifics(quote)]
    wants = expects(question)
    asked = asked_words(question) if wants and any(answers_kind(x, wants) for x in held) else set()
    units = {x.key[1] for x in held if x.kind == "amount"}
    return [t for t in missing if not (t in asked or (unit_of(t) or "") in units)]


@functools.lru_cache(maxsize=4096)
def _forms(term: str) -> frozenset[str]:
    """What mentions `term`: its word forms (`pack.variants`), less a compound's parts alone:
    "Django 5.0 with HTMX" mentions "django" and "htmx", not the package "django-htmx"."""
    parts = {p for p in _CONNECTOR.split(term) if p}
    return variants(term) - parts if len(parts) > 1 else variants(term)


def by_specifics(question: str, terms: Sequence[str]) -> set[str]:
    """The `terms` a quote may mention by a specific rather than by the word: the words naming
    what is asked, unit words and number words. No index of words holds them."""
    asked = asked_words(question)
    return {t for t in terms if t in asked or unit_of(t) or _as_digits(t)}


@functools.lru_cache(maxsize=4096)
def _as_digits(term: str) -> frozenset[str]:
    """A number word's digits ("four" -> {"4"}): a quote says "4 months" for "four months"."""
    return frozenset(x.key[0] for x in specifics(term) if x.kind == "number" and term.isalpha())


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

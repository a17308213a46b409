"""A question as every step of an ask reads it, worked out once (`read_question`): its
words (the tokenizer's), its content terms (`question_terms`: stop, question and framing
words left out), the owner's own name among them, its focus terms (the content terms less
that name), what it asks for (`expects`: the kind of specific its form names) and the words
of that form. brain_ask makes one `Question` per ask and hands it to retrieval, the packs,
the reader, the leads and the addressing flag; the pure checks that brain_verify and the
tests call with a question's text take either (`as_question`).

Pure functions, no I/O.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cortex.index.tokenize import STOPWORDS, tokenize

if TYPE_CHECKING:
    from cortex.index.snapshot import Snapshot

__all__ = [
    "FRAMING",
    "Question",
    "as_question",
    "asked_words",
    "expects",
    "focus_terms",
    "owner_words",
    "question_digest",
    "question_terms",
    "read_question",
]


@dataclass(frozen=True)
class Question:
    """One question, read once."""

    text: str
    tokens: tuple[str, ...]  # the tokenizer's words, in order
    terms: tuple[str, ...]  # content terms that may be evidence (`question_terms`)
    owner: frozenset[str]  # the owner's own name's words (profile.md's title)
    focus: tuple[str, ...]  # `terms` less `owner`
    wants: frozenset[str] | None  # the kinds of specific an answer must hold (`expects`)
    asked: frozenset[str]  # the words naming what is asked for (`asked_words`)
    lower: frozenset[str]  # the words of the words it writes in lower case (`focus.proper_only`)

    @property
    def normalised(self) -> str:
        """The question as the answer cache keys it: its words, space-joined."""
        return " ".join(self.tokens)


def read_question(text: str, owner: Collection[str] = ()) -> Question:
    """`text` read once; `owner`: the owner's own name's words (`owner_words`)."""
    tokens = tuple(tokenize(text))
    terms = tuple(_terms_of(tokens))
    own = frozenset(owner)
    return Question(
        text=text,
        tokens=tokens,
        terms=terms,
        owner=own,
        focus=tuple(t for t in terms if t not in own),
        wants=expects(text),
        asked=frozenset(asked_words(text)),
        lower=frozenset(tokenize(" ".join(w for w in text.split() if not w[:1].isupper()))),
    )


def as_question(question: str | Question) -> Question:
    """A question's text read (with no owner's name), or the Question itself."""
    return question if isinstance(question, Question) else read_question(question)


def owner_words(snap: Snapshot) -> set[str]:
    """The owner's own name (the title of profile.md): no evidence, and no focus of a
    question, since every note is theirs and most say "I" ("What is Nils's accountant?"
    asks about "accountant")."""
    profile = snap.notes.get("profile.md")
    return set(tokenize(profile.title)) - {"profile"} if profile is not None else set()


def question_digest(question: str) -> str:
    return hashlib.sha256(question.encode("utf-8", "replace")).hexdigest()[:16]


# Words that frame a question rather than say what it is about; never evidence,
# however rare they are in a brain ("What is the name of…", "the best time to…").
FRAMING = frozenset(
    """
many much long often far big exactly according name names named called call best time
times kind sort way ways thing things anything something everything ever usually currently
get gets got go goes went come comes came use used using make made say says said tell know
mention mentioned note notes brain please must might shall ought
didn don doesn isn wasn aren weren won wouldn couldn shouldn haven hasn hadn
""".split()
)
_APOSTROPHE_TAILS = ("s", "t", "re", "ll", "ve", "d", "m")


def question_terms(question: str) -> list[str]:
    """The question's content terms that may be evidence, in order, without repeats.

    Stopwords and framing words are dropped, and so are the leftovers of possessives
    and contractions: "Rosa's" gives "rosa", "didn't" gives nothing.
    """
    return _terms_of(tokenize(question))


def _terms_of(tokens: Collection[str]) -> list[str]:
    out: list[str] = []
    for t in tokens:
        if "'" in t:
            head, _, tail = t.rpartition("'")
            if tail in _APOSTROPHE_TAILS:
                continue  # its parts are terms of their own
        if t in STOPWORDS or t in FRAMING or (len(t) == 1 and t.isalpha()) or t in out:
            continue
        if out and not out[-1].isascii() and t in tokenize(out[-1]):
            continue  # "škoda" then "skoda": one word, spelled with and without accents
        out.append(t)
    return out


def focus_terms(question: str, owner: Collection[str] = ()) -> list[str]:
    """The question's focus terms, in order: its content words less the owner's name (`owner`)."""
    return [t for t in question_terms(question) if t not in owner]


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

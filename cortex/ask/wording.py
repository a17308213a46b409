"""Whether an answer's words are its quotes' words: the check behind BEYOND QUOTES.

A verified quote and an answer that keeps its numbers and names can still say different
things: "Keep the starter in the fridge" answered "Keep the starter in the freezer". So an
answer keeps VERIFIED or CORRECTED only when every content word of it (a noun, verb,
adjective, adverb) occurs in a verified quote or in the question (an answer may restate it)
in some form of it (a name may come from the quoted note's title, aliases or headings, a
table cell's word from its column heading): the same lemma ("bought" ~ "buy", "mice" ~ "mouse", by
simplemma's English dictionary) or the same fold as search uses (`cortex.ask.pack.variants`:
"insures" ~ "insurance"). `unquoted` names the words that are not.

What is not a content word here:

* specifics (numbers, dates, times, amounts, identifiers, URLs: `cortex.ask.specifics`
  checks them, units included, so "20 mins" is "20 minutes");
* function words (`cortex.index.tokenize.STOPWORDS`), words that frame an answer ("the notes
  say", `cortex.ask.claim_words.META`), the negations (`cortex.ask.claims` checks polarity), and
  `LIGHT`, a short list of verbs that carry little of a claim ("take", "have", "use",
  "is") with the modals, in any of their forms.

A word of another script must occur as written (the lemma dictionary is English); a run of
CJK characters is one word, so a CJK answer must repeat its quote's runs. Pure functions, no I/O, never raise on a str.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Sequence

from cortex.ask import claim_words
from cortex.ask.clauses import stated_spans
from cortex.ask.lexicon import lemma
from cortex.ask.normal_form import normalize_nfc
from cortex.ask.pack import variants
from cortex.ask.specifics import specifics, strip_old_wording
from cortex.index.tokenize import STOPWORDS

__all__ = ["LIGHT", "Unquoted", "unquoted"]

# Words that may pass though no quote holds them: light verbs and modals (in any form,
# by lemma), pronouns the stopword list lacks, and a bound's filler ("the latest" keeps
# "latest" checked; "at" and "the" are stopwords). Kept short: each word here is a word the
# answer may add unchecked.
LIGHT = frozenset(
    """be have do get take use make go let
    can could may might must shall should will would ought
    us everyone someone anyone something anything there here yes okay ok""".split()
)
# The negations and refusals: `cortex.ask.claims` reads polarity, so "isn't" for "does
# not" is the same statement.
_NEGATIONS = frozenset("not no never none nothing nobody nowhere neither nor cannot without".split())
# Words that name what an amount is ("costs €4" for a cell under "new price"): they pass
# beside an amount of the answer, as `cortex.ask.focus` lets "cost" be mentioned by one.
_MONEY = frozenset("cost price fee charge pay".split())
_WORD = re.compile(r"[^\W\d_](?:[\w'’-]*[^\W_])?")
_CONTRACTION = re.compile(r"(?i)['’](?:s|t|re|ve|ll|d|m)$")


@functools.lru_cache(maxsize=16384)
def _keys(word: str) -> frozenset[str]:
    """The spellings two words match by: the word, its lemma and its search fold."""
    if not word.isascii():
        return frozenset({word})
    return frozenset({word, lemma(word)}) | variants(word)


def _split(text: str) -> list[str]:
    """The casefolded words of `text`, split at hyphens and contractions ("isn't" -> "is";
    "e-bike" -> "e", "bike")."""
    out: list[str] = []
    for m in _WORD.finditer(text):
        raw = _CONTRACTION.sub("", m.group())
        out += [part.casefold() for part in re.split(r"[-'’]", raw) if part]
    return out


def _said(answer: str, recurrences: bool) -> list[str]:
    """The answer's words less what the claims check compares as values: each specific with
    its bound and sign ("no later than 18:00"), and its recurrences when the quotes state one."""
    work, values, found = stated_spans(strip_old_wording(answer))
    chars = list(work)
    for start, end in values + (found if recurrences else []):
        chars[start:end] = " " * (end - start)
    return _split("".join(chars))


def _light(word: str, quantified: bool) -> bool:
    return (
        len(word) < 2
        or (quantified and word in claim_words.QUANTIFIERS)
        or word in claim_words.ORDINAL_WORDS
        or word in STOPWORDS
        or word in claim_words.META
        or word in claim_words.CONTRACTIONS
        or word in _NEGATIONS
        or word in claim_words.COUNT_WORDS
        or word in LIGHT
        or lemma(word) in LIGHT
    )


class Unquoted:
    """The content words of an answer that its quotes, question and context lack, with the
    quote's words the answer has in their place where a word-by-word comparison shows one."""

    def __init__(self, words: list[str], instead: dict[str, str]):
        self.words = words
        self.instead = instead

    def __bool__(self) -> bool:
        return bool(self.words)

    @property
    def reason(self) -> str:
        """One line a client can repeat: "the answer says 'freezer'; the quote says 'fridge'"."""
        first = self.words[0]
        if first in self.instead:
            more = len(self.words) - 1
            tail = f" (and {more} more word{'s' if more > 1 else ''} no quote holds)" if more else ""
            return f"the answer says '{first}'; the quote says '{self.instead[first]}'{tail}"
        shown = ", ".join(f"'{w}'" for w in self.words[:4])
        extra = f" and {len(self.words) - 4} more" if len(self.words) > 4 else ""
        return f"the answer says {shown}{extra}, which no quote holds"


def unquoted(
    answer: str,
    quotes: Sequence[str],
    *,
    question: str = "",
    contexts: Sequence[Sequence[str]] = (),
    headings: Sequence[str] = (),
) -> Unquoted:
    """The content words of `answer` in no form in `quotes` or `question`, in the answer's
    order, each once. A word of `contexts` (each quote's note title, aliases and headings
    above it) passes only as a name, capitalised in the answer ("Give Pip one" under "Pip
    the cat"; "the bike" is not said by a note titled "Bikes"); a word of `headings` (a quoted
    table row's column headings) passes as any word: a cell is read under its heading.

    A quantifier ("every", "always") passes only when a quote states one, and a recurrence
    ("once a year") only when a quote states one: the claims check compares them then, and
    only then. Ordinals, signs and bounds on a specific are always compared there."""
    if not isinstance(answer, str):
        return Unquoted([], {})
    texts = [normalize_nfc(q) for q in quotes if isinstance(q, str)]
    quoted = [_split(t) for t in texts]
    held = _held(quoted + [_split(normalize_nfc(t)) for t in (question, *headings) if isinstance(t, str)])
    named = _held([_split(normalize_nfc(c)) for group in contexts for c in group if isinstance(c, str)])
    capitalised = {w.casefold() for w in re.findall(r"(?<![\w'’-])[A-Z][\w'’-]*", answer) for w in _split(w)}
    quantified = any(w in claim_words.QUANTIFIERS for words in quoted for w in words)
    priced = any(s.kind == "amount" for s in specifics(answer))
    said = _said(answer, recurrences=any(claim_words.RECURRENCE.search(t) for t in texts))
    missing: list[str] = []
    for w in said:
        if w in missing or _light(w, quantified) or not _keys(w).isdisjoint(held):
            continue
        if (w in capitalised and not _keys(w).isdisjoint(named)) or (priced and lemma(w) in _MONEY):
            continue
        missing.append(w)
    return Unquoted(missing, _instead(said, quoted, missing, quantified) if missing else {})


def _held(texts: list[list[str]]) -> set[str]:
    """Every spelling (`_keys`) of every word of `texts`."""
    out: set[str] = set()
    for words in texts:
        for w in words:
            out |= _keys(w)
    return out


def _instead(said: list[str], quoted: list[list[str]], missing: list[str], quantified: bool) -> dict[str, str]:
    """For each missing word, the quote's content words that stand in its place when the
    answer is compared with the quote it is closest to word by word ("freezer" -> "fridge")."""
    if not quoted:
        return {}
    best = max(quoted, key=lambda q: difflib.SequenceMatcher(None, said, q, autojunk=False).ratio())
    out: dict[str, str] = {}
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, said, best, autojunk=False).get_opcodes():
        if op != "replace":
            continue
        theirs = [w for w in best[j1:j2] if not _light(w, quantified)]
        for w in said[i1:i2]:
            if w in missing and theirs and w not in out:
                out[w] = " ".join(theirs)
    return out

"""Text cut into clauses, each read for what it claims beside its words.

`read` cuts an answer or a quote into clauses and reads each one's claims: whether it is
negated, the bound and the sign on each of its specifics, the direction of its
comparisons, its ordinals, recurrences and quantifiers, and its capitalised words (the
names it pairs with roles). `row_clauses` reads a table row as one clause a column, each
cell with its row's first cell and its heading. `cortex.ask.claims` aligns the clauses of an
answer with those of its quotes and compares these readings.

It is a reading of English by word lists and a few rules, not a parse, so it is built to
be compared the same way on both sides: an answer and a quote are read by the same
function, and a reading it cannot settle is read the same way in both.

Pure functions, no I/O, never raise on a str.

Clauses
=======

A text (in the form `cortex.ask.specifics.located` reads it: each line normalised as quotes
are) is cut into sentences at ``.`` ``!`` ``?`` and whitespace before anything but a lower-
case letter (not after an abbreviation such as "Dr" or "e.g"), at ``;``, at a spaced dash,
and at a line break before a list item, a quote, a heading or a table row or beside a blank
line (any other line break is a hard wrap: an answer that copies a wrapped quote reads as
the quote does). A sentence is cut into clauses before "and", "but" (and "yet", "whereas",
"while", "although", "though", "however"), ", not" / ", never", "except", "excluding",
"without", "instead of", "rather than", "if", "unless", "because", "after" / "before" /
"once" with a subject after them ("after Legal approved it"), a relative ", who /
which / where …," and a parenthesis, and at a comma before a new subject (a pronoun or a
capitalised word) or a gapped clause; never inside a specific, a range or a bound
("between 16 and 17", "no more than 3").

A clause after "and" or a comma that is a thing, a preposition and a value, its verb left
out, with the preposition echoed by the clause before ("… replaced at 42,000 miles and the
rear ones at 51,000", "…, the dog's on the 15th") is *gapped* (`Clause.gapped`): its value
is its thing's, and the clause before lends it its verb (`claims._paired_elsewhere`).

A clause with fewer than two words of its own beside its names, counting its numbers,
amounts, dates and times ("the cat", "not on Sundays", "Ana"), is *elliptical*; it, and a
clause that opens with a pronoun ("but it covers hiking"), borrows the words, names and
specifics of the nearest full clause of its sentence (before it, else after it), through
what that one borrowed, and only of kinds it does not state itself ("and Mia's at 8:50"
borrows no name and no time). Borrowed words count half in an alignment.

A clause shares the negation of the clause before it when it has no cue of its own, does
not open with a subject, and follows "and", a listing comma, a parenthesis or the end of a
relative clause ("does not cover skiing and snowboarding" denies both); after "but" a clause
is affirmative unless it says otherwise ("doesn't run on Mondays but on Tuesdays"). An
elliptical clause that opens its sentence takes the negation of the "and" clause after it
("Ana and Ben do not walk the dog").

What a clause claims
====================

* **negation**: not, no, never, none, nothing, nobody, nowhere, neither, nor, n't, cannot,
  without, except, excluding, instead of, rather than, no longer, and the verbs that refuse
  (refuse, forbid, prohibit, ban, deny, reject, decline, exclude, disallow, unable). "no
  more than", "not before", "no later than" and the like are bounds, not negations, and a
  negation right before "more than", "over", "less than" or "under" is the bound's, turned
  round ("shouldn't have more than 2" is "at most 2"); "not only", "not just", "whether or
  not" and "No." before a number are neither.
* **bounds** on a number, amount, time or date: gt (more than, over, above, after, heavier
  than…), lt (less than, under, below, before, earlier than…), ge (at least, no less than,
  a minimum of, "or more", "and later", "+", onwards…), le (at most, up to, no more than, a
  maximum of, within, "or less", no later than…), from (from, since, as of), until (until,
  till, through), and the two ends of a closed range (lo, hi: "16 to 17", "16-17", "from
  16 through 17", "between 16 and 17").
* **signs** on the same: minus ("-5", "minus 5", "5 below zero"), plus or minus ("±2",
  "+/-2"), about ("~5", "≈5", about, around, approximately, roughly, circa, "or so").
* **directions** not on a number, by pairs of opposites: after/before, above/below,
  over/under, later/earlier, more/less, higher/lower, heavier/lighter, longer/shorter,
  older/younger, larger/smaller, faster/slower, warmer/colder, cheaper/dearer,
  maximum/minimum.
* **ordinals**: first … twelfth, 1st, 2nd …, last and final (-1), penultimate and "second to
  last" (-2); not "at first", "first of all", "at last", nor "last" before a span of time.
* **recurrences** as (every n, unit): daily, weekly, fortnightly, biweekly, monthly,
  quarterly, yearly, "every other week", "every 3 days", "once a week", "on Thursdays";
  "twice a week" is its own; weekdays and weekends are their own.
* **quantifiers** by class: all (all, every, each, both, always, everyone, everybody,
  everything, and "every day", which is not "most days"), some (some, several, a few, a
  couple, sometimes, occasionally), most (most, mostly, usually, generally, the majority),
  only (only, solely, exclusively); not "€5 each", a price a piece.
* **capitals**: capitalised words that are not function words, months or weekdays.
* **looks back**: was, were, used to, previously, formerly, before, old, earlier, prior,
  former, originally, no longer: the clause speaks of a past value.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cortex.ask import claim_words
from cortex.ask.lexicon import lemma
from cortex.ask.specifics import Specific, located
from cortex.index.tokenize import STOPWORDS, tokenize

__all__ = ["Clause", "Value", "forms", "group", "keys_of", "read", "row_clauses"]


@dataclass(frozen=True)
class Value:
    """A specific as a clause states it, with the bound and the sign on it.

    `bound` is "" (none), gt, ge, lt, le, from, until, or lo / hi (the ends of a closed
    range); `signs` holds "-" (minus), "±" (plus or minus) and "~" (about). `said` is the
    words that state it: "over 20 kg", "16 to 17", "-5 °C".
    """

    spec: Specific
    start: int
    end: int
    bound: str = ""
    signs: frozenset[str] = frozenset()
    said: str = ""


@dataclass
class Clause:
    """One clause of a text and what it claims (see the module docstring).

    `words` are its content words (casefolded, no stopwords, no numbers, no cue words);
    `capitals` its capitalised words (casefolded); `negation` the words that negate it
    ("does not cover"; for a clause that shares another's negation, those words), "" when
    it is affirmative. A table cell's clause has `column` (its heading) and `retired` (the
    heading says the column holds old values).
    """

    text: str
    sentence: int
    opener: str = ""
    words: frozenset[str] = frozenset()
    capitals: frozenset[str] = frozenset()
    values: tuple[Value, ...] = ()
    negation: str = ""
    directions: tuple[tuple[str, int, str], ...] = ()  # (pair, side, said)
    ordinals: tuple[tuple[int, str], ...] = ()
    recurrences: tuple[tuple[tuple, str], ...] = ()
    quantifiers: tuple[tuple[str, str], ...] = ()
    looks_back: bool = False
    gapped: bool = False  # "and the rear ones at 51,000": a thing and its value, the verb left out
    column: str = ""
    retired: bool = False
    cell: tuple[frozenset[str], tuple[Value, ...]] = (frozenset(), ())  # a table cell's own words and values
    heading_words: frozenset[str] = frozenset()  # a table cell's clause: its heading's words
    own_cue: bool = False
    # Borrowed by an elliptical clause from the nearest full clause of its sentence.
    borrowed_words: frozenset[str] = frozenset()
    borrowed_capitals: frozenset[str] = frozenset()
    borrowed_values: tuple[Value, ...] = ()
    # The names of the elliptical clauses that borrowed from this one: "Ana" of "Ana and
    # Ben walk the dog" stands beside "Ben" as a subject of "walk the dog".
    lent_capitals: frozenset[str] = frozenset()
    row: str = ""  # a table cell's clause: its row's first cell
    names: frozenset[str] = frozenset()  # capitalised words that do not open the clause
    # Every form of `words`, and of `borrowed_words` (`forms`): two words match when their
    # forms meet.
    keys: frozenset[str] = field(default=frozenset(), repr=False)
    borrowed_keys: frozenset[str] = field(default=frozenset(), repr=False)

    @property
    def elliptical(self) -> bool:
        stated = [v for v in self.values if v.spec.kind in claim_words.NUMERIC]
        return len(self.words - self.names) + len(stated) < 2


@functools.lru_cache(maxsize=8192)
def forms(word: str) -> frozenset[str]:
    """A word and its lemma (`cortex.ask.lexicon`): two words are forms of one when these meet."""
    return frozenset({word, lemma(word)})


def keys_of(words: frozenset[str]) -> frozenset[str]:
    """Every form of every word of `words`."""
    return frozenset().union(*(forms(w) for w in words)) if words else frozenset()


def _spans_overlap(spans: Sequence[tuple[int, int]], a: int, b: int) -> bool:
    return any(s < b and a < e for s, e in spans)


def _values(work: str, found: list[tuple[int, int, Specific]]) -> tuple[list[Value], list[tuple[int, int]]]:
    """Each specific with its bound and sign, and the spans the cue words take."""
    taken: list[tuple[int, int]] = []
    out: list[Value] = []
    ranges: dict[int, tuple[str, int, int]] = {}
    numeric = [(i, f) for i, f in enumerate(found) if f[2].kind in claim_words.NUMERIC]
    for (i, (a1, b1, _)), (j, (a2, b2, _)) in zip(numeric, numeric[1:]):
        if j != i + 1 or i in ranges:
            continue
        between = claim_words.RANGE_BETWEEN.fullmatch(work, b1, a2)
        if not between:
            continue
        opener = claim_words.RANGE_OPENER.search(work, max(0, a1 - 14), a1)
        if "and" in between.group().casefold() and not (opener and opener.group().casefold().startswith("between")):
            continue
        start = opener.start() if opener else a1
        ranges[i], ranges[j] = ("lo", start, b2), ("hi", start, b2)
        taken.append((start, b2))
    for i, (a, b, spec) in enumerate(found):
        if spec.kind not in claim_words.NUMERIC:
            out.append(Value(spec, a, b, said=spec.text))
            continue
        signs: set[str] = set()
        lead = a
        while sign := claim_words.SIGN_BEFORE.search(work, max(0, lead - 16), lead):  # "about −5": two signs
            kinds = {k for k, v in sign.groupdict().items() if v}
            signs |= {"-" if "minus" in k else "±" if k == "pm" else "~" for k in kinds if k != "plus"}
            taken.append((sign.start(), lead))
            lead = sign.start()
        tail = b
        after = claim_words.SIGN_AFTER.match(work, b)
        if after:
            signs.add("-" if after["minus"] else "~")
            tail = after.end()
            taken.append((b, tail))
        if i in ranges:
            bound, start, end = ranges[i]
            out.append(Value(spec, a, b, bound, frozenset(signs), work[start:end]))
            continue
        bound, start, end = "", lead, tail
        prefix = claim_words.PREFIX.search(work, max(0, lead - 48), lead)
        if prefix and prefix.group().strip().casefold() == "by" and spec.kind not in ("time", "date"):
            prefix = None  # "down by 5 kg" is no bound; "by 18:00" is a deadline
        post = claim_words.POSTFIX.match(work, tail)
        if work.startswith("+", tail) and not work[tail + 1 : tail + 2].isalnum():
            bound, end = "ge", tail + 1
        elif post:
            bound, end = ("ge" if post["ge"] else "le"), post.end()
        if end > tail:
            taken.append((tail, end))
        if prefix and (not bound or prefix.lastgroup == "from"):
            # "from March onwards" is open, as "March onwards" is; "over 5 or more" keeps "over".
            bound = bound or next(k for k, v in prefix.groupdict().items() if v)
            start = prefix.start()
            taken.append((start, lead))
        out.append(Value(spec, a, b, bound, frozenset(signs), work[start:end].strip()))
    return out, taken


def _protected(values: list[Value], taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    spans = [(v.start, v.end) for v in values] + taken
    return sorted(spans)


def _sentences(work: str, protected: list[tuple[int, int]], breaks: set[int]) -> list[tuple[int, int]]:
    """Sentence spans of `work`; `breaks` are the offsets of the line breaks that end one."""
    out: list[tuple[int, int]] = []
    start = 0
    for m in claim_words.SENTENCE_END.finditer(work):
        if _spans_overlap(protected, m.start(), m.end()):
            continue
        punct = m.group()[:1]
        if punct == "\n" and m.start() not in breaks:
            continue
        if punct in ".!?":
            nxt = work[m.end() : m.end() + 1]
            word = re.search(r"([\w.]+)[.!?]*$", work[start : m.start() + 1])
            if nxt.islower() or (word and word.group(1).casefold().rstrip(".") in claim_words.ABBREVIATIONS):
                continue
        out.append((start, m.start() + (1 if punct in ".!?" else 0)))
        start = m.end()
    out.append((start, len(work)))
    return [(a, b) for a, b in out if work[a:b].strip()]


# A sentence that opens with what `claim_words.CUT` cuts off at its end: the phrase up to its comma.
_FRONTED = re.compile(
    r"\s*(?:(?P<neg>except|excluding|without)|if|unless|because)\b[^,;()]*?(?P<comma>,\s+)(?=\S)", re.IGNORECASE
)


def _cuts(work: str, a: int, b: int, protected: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """Clause spans of the sentence `work[a:b]`, each with how it opens."""
    out: list[tuple[int, int, str]] = []
    start, opener, in_relative = a, "", False
    fronted = _FRONTED.match(work, a, b)
    if fronted and not _spans_overlap(protected, fronted.start("comma"), fronted.end("comma")):
        # "Except on Sundays, the shuttle runs" is cut as "the shuttle runs, except on Sundays" is.
        out.append((a, fronted.start("comma"), "neg" if fronted["neg"] else "sub"))
        start = fronted.end("comma")
    for m in claim_words.CUT.finditer(work, start, b):
        kind = m.lastgroup or ""
        if m.start() == start or _spans_overlap(protected, m.start(), m.end()):
            continue
        if in_relative and kind in ("comma", "subj"):
            kind = "close"  # the comma that ends a relative clause: the clause before it goes on
        elif kind == "then":
            # "… after Legal approved it": a clause of its own when a subject follows.
            word = re.match(r"[^\W\d_]+\s+([^\W\d_]+)", work[m.end() : b])
            if not word or not _subject_word(word.group(1)):
                continue
            kind = "sub"
        elif kind in ("comma", "subj"):
            word = re.match(r"[^\W\d_]+", work[m.end() : b])
            if kind == "subj" and word and _subject_word(word.group()):
                pass  # a new subject
            elif _gapped(_to_next_cut(work, m.end(), b), m.end(), protected, work[start : m.start()]):
                kind = "gap"  # ", the dog's on the 15th": a gapped clause after a listing comma
            else:
                continue
        out.append((start, m.start(), opener))
        start, opener = m.end(), kind
        in_relative = kind == "rel"
    out.append((start, b, opener))
    for k in range(1, len(out)):
        (ps, pe, _), (s, e, o) = out[k - 1], out[k]
        if o == "and" and _gapped(work[s:e], s, protected, work[ps:pe]):
            out[k] = (s, e, "gap")
    return [(s, e, o) for s, e, o in out if any(ch.isalnum() for ch in work[s:e])]


# A gapped clause once its values are blanked: "and the search rewrite on ___", ", the
# dog's on the ___": a thing (with its article or owner) and a preposition, no verb.
_GAPPED = re.compile(
    r"\s*(?:and\s+)?(?:the|a|an|my|our|his|her|their|its)\s+(?:[^\W\d_][\w'’-]*\s+){0,2}[^\W\d_][\w'’-]*"
    r"\s+(?P<prep>at|on|in|for|by|from|until|with)\s+(?:the\s+)?(?:st|nd|rd|th)?[\s.;!?]*",
    re.IGNORECASE,
)


def _gapped(text: str, base: int, values: Sequence[tuple[int, int]], before: str) -> bool:
    """Whether `text` (at `base` of the work) is a gapped clause of the clause `before` it:
    `_GAPPED` once its values are blanked, with one at least, and its preposition in
    `before` too ("… replaced at 42,000 miles and the rear ones at 51,000"). Without that
    echo, "Uncovered, the lasagne bakes for 15 minutes" would read its verb as a thing."""
    inside = [(a, b) for a, b in values if base <= a and b <= base + len(text)]
    m = _GAPPED.fullmatch(_mask(text, inside, base)) if inside else None
    return m is not None and re.search(rf"\b{m['prep']}\b", before, re.IGNORECASE) is not None


def _to_next_cut(work: str, a: int, b: int) -> str:
    """`work[a:b]` up to its next comma, semicolon or "and": one listed item ("the red miso
    with 12%, and the barley miso with 10%")."""
    nxt = re.search(r"[,;]|\s+and\s", work[a:b])
    return work[a : a + nxt.start()] if nxt else work[a:b]


def _subject_word(word: str) -> bool:
    """Whether `word` opens a new subject: a pronoun, or a capitalised word no stopword."""
    return word.casefold() in claim_words.PRONOUNS or (word[0].isupper() and word.casefold() not in STOPWORDS)


def _mask(text: str, spans: Sequence[tuple[int, int]], base: int) -> str:
    chars = list(text)
    for s, e in spans:
        for k in range(max(s - base, 0), min(e - base, len(chars))):
            chars[k] = " "
    return "".join(chars)


_PARTICLE = re.compile(r"(?i)(?<![\w'])(on|off)(?=\s*(?:$|[,.;:!?)]|(?:and|or|but|then)(?![\w'])))")


def _content(text: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(content words, capitalised words, those of them that do not open the clause) of a
    clause's text with its specifics masked."""
    words = set()
    for t in tokenize(text):
        if "'" in t or any(c.isdigit() for c in t) or len(t) < 2:
            continue
        if t in STOPWORDS or t in claim_words.META or t in claim_words.CUE_WORDS or t in claim_words.CONTRACTIONS:
            continue
        words.add(t)
    capitals, names = set(), set()
    for k, m in enumerate(re.finditer(r"(?<![\w'])[^\W\d_][\w'-]*", text)):
        w = m.group()
        key = w.casefold().split("'")[0]
        if not w[0].isupper() or key not in words or key in claim_words.MONTHS or key in claim_words.WEEKDAY_NAMES:
            continue
        capitals.add(key)
        if k > 0:
            names.add(key)
    return frozenset(words), frozenset(capitals), frozenset(names)


def _negation(text: str) -> str:
    """The words that negate `text` (a clause, cues of bounds masked), or ""."""
    if text.strip(" ,.!:-").casefold() in ("no", "yes"):
        return ""  # an answer's "No," to the question, not a claim of its own
    skip = [(m.start(), m.end()) for m in claim_words.NOT_NEGATION.finditer(text)]
    for m in claim_words.NEGATION.finditer(text):
        if _spans_overlap(skip, m.start(), m.end()):
            continue
        start, end = m.start(), m.end()
        if m.group().casefold() == "n't":
            start = text.rfind(" ", 0, start) + 1
        before = re.search(r"(\w+)\s+$", text[:start])
        if before and before.group(1).casefold() in claim_words.AUX:
            start = before.start(1)
        after = re.match(r"(?:\s+(?:(?:a|an|the|be|been|to|on|in|at|for|of|by|any)\b))*\s+[\w'-]+", text[end:])
        if after:
            end += after.end()
        return " ".join(text[start:end].split())
    return ""


def _phrase(text: str, m: re.Match, words: int = 1) -> str:
    tail = re.match(r"(?:\s+[\w'-]+){0,%d}" % words, text[m.end() :])
    return " ".join((m.group() + (tail.group() if tail else "")).split())


# A negation right before "more than", "over", "less than", "under", "fewer than": it
# turns the bound round ("not more than 2" is "at most 2").
_NEGATED_BOUND = re.compile(
    r"(?:n't|\bnot|\bnever)\s+(?:[\w'-]+\s+){0,2}?(?:more|over|above|less|fewer|under|below)\b", re.I
)
_FLIP = {"gt": "le", "lt": "ge"}


def _read_clause(
    work: str, s: int, e: int, opener: str, sentence: int, values: list[Value], taken: list[tuple[int, int]]
) -> Clause:
    """The clause `work[s:e]`: its words, the values it states, and the cues read around them."""
    raw = work[s:e]
    own = tuple(v for v in values if s <= v.start < e)
    numeric_spans = [(v.start, v.end) for v in own if v.spec.kind in claim_words.NUMERIC]
    masked = _mask(raw, taken, s)
    words, capitals, names = _content(_mask(masked, numeric_spans, s))
    # "with the lid on" / "with it off": a particle that ends a phrase states a state, so the
    # 20 minutes of "lid on" are not the 25 of "it off". Read unmasked: "on Tuesdays" is none.
    words |= {m.group(1).casefold() for m in _PARTICLE.finditer(raw)}
    dates = [(v.start, v.end) for v in own if v.spec.kind == "date"]
    recurrences, every, rec_spans = _recurrences(masked, s)
    rest = _mask(masked, rec_spans + dates, s)
    directions = []
    for m in claim_words.DIRECTION.finditer(rest):
        pair, side = claim_words.DIRECTIONS[m.group().casefold()]
        directions.append((pair, side, _phrase(masked, m, 2)))
    negation = _negation(masked)
    if negation and _NEGATED_BOUND.search(raw):
        # "shouldn't have more than 2 cups" says "no more than 2 cups": the negation is the bound's.
        flipped = [
            dataclasses.replace(v, bound=_FLIP[v.bound], said=f"not {v.said}") if v.bound in _FLIP else v for v in own
        ]
        if flipped != list(own):
            own, negation = tuple(flipped), ""
    return Clause(
        text=claim_words.LEADING_JOIN.sub("", " ".join(raw.strip(" ,;:-().!?").split())),
        sentence=sentence,
        opener="and" if opener == "gap" else opener,
        words=words,
        capitals=capitals,
        names=names,
        values=own,
        negation=negation,
        own_cue=bool(negation),
        directions=tuple(directions),
        ordinals=tuple(_ordinals(rest, masked)),
        recurrences=tuple(recurrences),
        quantifiers=tuple(every + _quantifiers(rest, masked, own, s)),
        looks_back=bool(claim_words.LOOKS_BACK.search(raw)),
        gapped=opener == "gap",
        keys=keys_of(words),
    )


def _recurrence_key(g: dict[str, str]) -> tuple[Any, ...]:
    """What a recurrence match's named groups say, as a key two spellings share ("every other
    week" = "fortnightly"; "twice a month" = "2 times a month")."""
    if "other" in g:
        return (2, claim_words.UNITS[g["ou"].casefold()])
    if "n" in g:
        n = g["n"].casefold()
        count = int(n) if n.isdigit() else claim_words.COUNT_WORDS.get(n) or claim_words.ORDINAL_WORDS[n]
        return (count, claim_words.UNITS[g["nu"].casefold()])
    if "wd" in g:
        return ("weekdays",)
    if "we" in g:
        return ("weekends",)
    if "u1" in g:
        return (1, claim_words.UNITS[g["u1"].casefold()])
    if "twice" in g:
        t = g["twice"].casefold().split()[0]
        return (
            "times",
            2 if t == "twice" else int(t) if t.isdigit() else claim_words.COUNT_WORDS[t],
            claim_words.UNITS[g["tu"].casefold()],
        )
    if "named" in g:
        return claim_words.NAMED_RECURRENCE[g["named"].casefold()]
    return (1, "week")


def _recurrences(
    masked: str, s: int
) -> tuple[list[tuple[tuple[Any, ...], str]], list[tuple[str, str]], list[tuple[int, int]]]:
    """The clause's recurrences (key, phrase), the "every …" among them as a quantifier, and
    their spans in the work text (the clause starts at `s`)."""
    recurrences: list[tuple[tuple[Any, ...], str]] = []
    every: list[tuple[str, str]] = []
    spans = []
    for m in claim_words.RECURRENCE.finditer(masked):
        spans.append((m.start() + s, m.end() + s))
        key = _recurrence_key({k: v for k, v in m.groupdict().items() if v})
        recurrences.append((key, " ".join(m.group().split())))
        if re.match(r"(?i)(?:every|each) (?!other|second|alternate)", m.group()):
            every.append(("all", " ".join(m.group().split())))  # "every day" is also "not most days"
    plural = [m for _, m in recurrences if m.casefold() in claim_words.PLURAL_WEEKDAYS]
    if plural and len(plural) < len(recurrences):
        # "fortnightly on Tuesdays": the plural names the day, the other word the recurrence.
        recurrences = [(k, m) for k, m in recurrences if m not in plural]
    return recurrences, every, spans


def _ordinals(rest: str, masked: str) -> list[tuple[int, str]]:
    """The clause's ordinals ("second", "3rd", "last", "penultimate") with their phrases."""
    skip = [(m.start(), m.end()) for m in claim_words.NOT_ORDINAL.finditer(rest)]
    ordinals = []
    for m in claim_words.ORDINAL.finditer(rest):
        if _spans_overlap(skip, m.start(), m.end()):
            continue
        if m["pen"]:
            value = -2
        elif m["last"]:
            value = -1
        elif m["word"]:
            value = claim_words.ORDINAL_WORDS[m["word"].casefold()]
        else:
            value = int(m["n"])
        ordinals.append((value, _phrase(masked, m)))
    return ordinals


def _quantifiers(rest: str, masked: str, own: tuple[Value, ...], s: int) -> list[tuple[str, str]]:
    """The clause's quantifiers (class, phrase): "all", "most", "some", "none" and kin."""
    skip = [(m.start(), m.end()) for m in claim_words.NOT_QUANTIFIER.finditer(rest)]
    quantifiers = []
    for m in claim_words.QUANTIFIER.finditer(rest):
        if _spans_overlap(skip, m.start(), m.end()):
            continue
        if m["q"] and m["q"].casefold() == "each" and re.search(r"\S", rest[: m.start()][-1:] or "x") is None:
            # "€5 each": a price a piece, not "every one of them".
            if any(v.end - s <= m.start() and m.start() - (v.end - s) <= 1 for v in own):
                continue
        klass = "some" if m["few"] else claim_words.QUANTIFIERS[m["q"].casefold()]
        quantifiers.append((klass, _phrase(masked, m)))
    return quantifiers


def _opens_with_pronoun(clause: Clause) -> bool:
    """Whether `clause` opens with a pronoun ("but it covers hiking"): it borrows the
    words of the clause before, as an elliptical clause does, for what "it" stands for."""
    first = re.match(
        r"\s*(?:and|but|yet|or|so|if|unless|because|when|whenever|after|before|once)?\s*([^\W\d_]+)",
        clause.text,
        re.IGNORECASE,
    )
    return first is not None and first.group(1).casefold() in claim_words.PRONOUNS - {"i", "you", "we", "there"}


def _opens_with_subject(clause: Clause) -> bool:
    first = re.match(r"\s*(?:and|but|yet|or|,)?\s*([^\W\d_][\w'-]*)", clause.text, re.IGNORECASE)
    if not first:
        return False
    word = first.group(1)
    return word.casefold() in claim_words.PRONOUNS or (word[0].isupper() and word.casefold() in clause.capitals)


def group(kind: str) -> str:
    """What a specific of `kind` stands beside in a pairing: an amount and a number are
    both values, an identifier, URL and e-mail address all ids; a date, a time and a name
    are each their own."""
    return {"amount": "number", "identifier": "id", "url": "id", "email": "id"}.get(kind, kind)


def _borrow(c: Clause, source: Clause) -> None:
    """`c` borrows from `source` what it does not state itself, through what `source`
    borrowed ("and climbing" after "but it covers hiking" is about the policy too): a
    clause with a name of its own borrows no names ("and Mia's at 8:50" is not about
    Tom), one with a time of its own no time."""
    words = source.words | source.borrowed_words
    if c.capitals:
        c.borrowed_capitals = frozenset()
        words -= source.capitals | source.borrowed_capitals
    else:
        c.borrowed_capitals = source.capitals | source.borrowed_capitals
    c.borrowed_words = words
    c.borrowed_keys = keys_of(words)
    stated = {group(v.spec.kind) for v in c.values}
    c.borrowed_values = tuple(v for v in source.values + source.borrowed_values if group(v.spec.kind) not in stated)


def _settle(clauses: list[Clause]) -> None:
    """Borrowed words and shared negations (see the module docstring), in place."""
    for i, c in enumerate(clauses):
        if not c.elliptical and not (i and _opens_with_pronoun(c) and clauses[i - 1].sentence == c.sentence):
            continue
        same = [k for k, o in enumerate(clauses) if o.sentence == c.sentence and not o.elliptical]
        before = [k for k in same if k < i]
        after = [k for k in same if k > i]
        source = clauses[before[-1]] if before else clauses[after[0]] if after else None
        if source is not None:
            _borrow(c, source)
            if not c.values and c.words <= c.capitals:
                source.lent_capitals |= c.capitals  # "Ana" of "Ana and Ben walk …": a subject beside it
    for i, c in enumerate(clauses):
        if c.own_cue or i == 0 or clauses[i - 1].sentence != c.sentence:
            continue
        k = i - 1
        while k > 0 and clauses[k].opener in ("rel", "paren", "sub") and clauses[k - 1].sentence == c.sentence:
            k -= 1  # what follows a relative clause or a parenthesis continues the clause before it
        prev = clauses[k]
        # After "but" a clause is affirmative unless it says otherwise ("… but on Tuesdays").
        if c.opener in ("and", "paren", "close", "neg") and not _opens_with_subject(c):
            c.negation = prev.negation
    for i in range(len(clauses) - 1, -1, -1):
        c = clauses[i]
        first = i == 0 or clauses[i - 1].sentence != c.sentence
        if first and c.elliptical and not c.own_cue and i + 1 < len(clauses):
            nxt = next(
                (o for o in clauses[i + 1 :] if o.sentence == c.sentence and o.opener not in ("rel", "paren")), None
            )
            if nxt is not None and nxt.opener == "and":
                c.negation = nxt.negation


def _line_breaks(text: str, work: str) -> set[int]:
    """The offsets in `work` (one line of it for each line of `text`) of the line breaks
    that end a sentence: before a line that opens a block, and around a blank line."""
    lines = text.splitlines()
    out: set[int] = set()
    at = 0
    for i, line in enumerate(lines[:-1]):
        at = work.index("\n", at) if "\n" in work[at:] else len(work)
        nxt = lines[i + 1]
        if not line.strip() or not nxt.strip() or claim_words.BLOCK_START.match(nxt):
            out.add(at)
        at += 1
    return out


def read(text: str, sentence: int = 0, whole: bool = False) -> list[Clause]:
    """The clauses of `text`, in order; sentences are numbered from `sentence`. `whole`:
    read it as one clause (a table cell with its row's first cell and its heading)."""
    if not isinstance(text, str) or not text.strip():
        return []
    work, found = located(text)
    values, taken = _values(work, found)
    if whole:
        return [_read_clause(work, 0, len(work), "", sentence, values, taken)]
    protected = _protected(values, taken)
    clauses: list[Clause] = []
    for n, (a, b) in enumerate(_sentences(work, protected, _line_breaks(text, work)), sentence):
        for s, e, opener in _cuts(work, a, b, protected):
            clauses.append(_read_clause(work, s, e, opener, n, values, taken))
    _settle(clauses)
    return clauses


def row_clauses(row: Sequence[tuple[str, str]], sentence: int = 0) -> list[Clause]:
    """A table row read as one clause a column past the first: the row's first cell, the
    column's heading and its cell, read whole. A column whose heading holds a word of
    `claim_words.RETIRED_HEADINGS` holds retired values (`Clause.retired`)."""
    if len(row) < 2:
        return read(" ".join(cell for _, cell in row), sentence)
    label = row[0][1]
    out: list[Clause] = []
    for n, (heading, cell) in enumerate(row[1:], sentence):
        if not cell.strip():
            continue
        c = read(f"{label} | {heading} | {cell}", n, whole=True)[0]
        own = read(cell, n, whole=True)[0]
        c.cell = (own.words, own.values)
        c.heading_words = read(heading, n, whole=True)[0].words if heading.strip() else frozenset()
        c.column, c.row = heading, label
        c.retired = bool(set(tokenize(heading)) & claim_words.RETIRED_HEADINGS)
        out.append(c)
    return out

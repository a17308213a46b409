"""Which claims of an answer its quotes contradict, beyond the specifics it states.

An answer can keep every word and every specific of its quote and still say the opposite:
"does not cover skiing" -> "covers skiing". `contradictions` reads the answer and its
verified quotes into clauses (`cortex.ask.clauses`), aligns each clause of the answer with
the quote clause that supports it, and compares what the two claim.
`cortex.ask.stamps.overall_stamp` keeps an answer VERIFIED or CORRECTED only when there is
no contradiction, and names the first in the reason: "the answer says 'covers'; the quote
says 'does not cover'".

Alignment
=========

An answer clause rests on the quote clause that says it word for word, if one does; else on
the quote clauses that account for the most of its content words (in any of their forms,
`cortex.ask.pack.variants`) and specifics, own or borrowed (an elliptical clause borrows,
see `cortex.ask.clauses`), and among those on the best scored: a shared word counts 1, a
shared specific 1.5, either 1/2 when one side only borrowed it. It must share at least one
of its own words or specifics, and the score at least half their number. When several quote
clauses tie, the answer must agree with every one of them: a tie is a clause the reading
cannot tell apart, and a contradiction of either is not VERIFIED. An answer clause that
rests on nothing is left to the specifics check (`cortex.ask.specifics.ungrounded`). Only
quote clauses that share a word form or a specific with an answer clause are compared with
it; past `MAX_PAIRS` such pairs the answer is not checked and fails closed.

What must agree
===============

Between an answer clause and each quote clause it rests on:

* **polarity**: both negated or neither ("isn't covered" keeps "does not cover").
* **who does what**: the answer may not put a name or a specific of another quote clause
  in place of one this clause has (a name for a name, an amount or number for an amount or
  number, a date for a date, a time for a time) when everything else it takes from that
  other clause is in this one too ("Ben walks the dog" for "Ana walks the dog and Ben feeds
  the cat"); nor pair this clause's name with a word of another named clause ("Ben is the
  plumber" where Ana is); nor name two of its names in the opposite order with the same
  words between them ("Ben lent Ana €200"); nor take a part of this clause and a part of
  another of the same frame, leaving out a part of each ("the red key opens the gate" for
  "the red key opens the shed and the blue key opens the gate"). A table row is one clause
  a column: the row's first cell, the column's heading and the cell, so a value belongs to
  its row and its column; two columns of one row may be joined ("went up from €3 to €4"),
  but not one column's value under the other's heading ("opens at 13:00" where 13:00 is
  under "closes").
* **comparisons** not on a number: a word whose opposite the quote clause uses and which it
  does not use itself (after for before, heavier for lighter).
* **ordinals**: every ordinal of the answer is among the quote clause's, or when that states
  none, in some quote ("the first Thursday" is not "the third Thursday").
* **recurrences** and **quantifiers**: when the quote clause states one, the answer's is
  among its ("every Thursday" is not "every other Thursday"; "some" is not "all").
* **table columns**: nothing the answer takes from a cell of a column whose heading says it
  is old (old, previous, former, was …, `cortex.ask.claim_words.RETIRED_HEADINGS`), and that no
  live clause holds, unless the answer says it as a past value (was, used to, previously,
  before, or the start of a change "from €3 to €4").

For each specific the answer states, against the same specific in the clauses it rests on,
or when they lack it, anywhere in the quotes:

* **bounds and ranges**: the same bound, up to equivalents: "at most" = "up to" = "no more
  than"; "over" = "more than" = "heavier than"; "at least" = "or more" = "and later" = "and
  older" = "+";
  "from" and "since" start a span, "until" and "till" end one; each end of a closed range
  may stand as a start or an end, but a closed range is not an open one ("16 to 17" is not
  "16 and later"), nor the reverse. A bound or a span is not dropped: "open from June" is
  not "open in June", nor "closed on 3 March" "closed from 3 March to 28 April", nor "24
  months" "18 to 24 months"; an end of a span of bare numbers may stand alone ("iOS 16"
  of "iOS 16 to 17").
* **signs**: minus and plus-or-minus kept, and an "about" of the quote kept (an answer may
  say "about" where the quote is exact).
* **polarity**: a specific the quotes hold only in negated clauses is not stated in an
  affirmative one, nor the reverse ("not on Sundays"); nor a word the quotes hold only in a
  negated fragment ("… without a password").
* **table columns**: a value the quotes hold only in retired columns, as above.

A clause of the answer that copies a quoted table row as it is restates it (an extractive
reader answers so), unless the row has a retired column: a bare row does not say which of
its values is current.

Limits, measured on eval/claims.jsonl and the tests: it reads words, not grammar. An
antonym is not a negation ("closed" neither contradicts nor restates "not open"); a bound or
quantifier the answer adds where its quote states none is not checked; a passive that
reverses two names, a gapped clause ("the blue folder holds the mortgage papers and the
green one the car documents"), and a bound whose direction depends on what it measures
("8 and older") are not read.

Pure functions, no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from cortex.ask import claim_words
from cortex.ask.clauses import Clause, Value, forms, group, keys_of, read, row_clauses
from cortex.ask.lexicon import irregular_past, lemma
from cortex.ask.specifics import Specific, located, strip_old_wording
from cortex.index.tokenize import STOPWORDS, tokenize

__all__ = ["KINDS", "Conflict", "contradictions"]

KINDS = (
    "condition",
    "polarity",
    "comparison",
    "range",
    "sign",
    "ordinal",
    "recurrence",
    "quantifier",
    "column",
    "roles",
    "unchecked",
)
# At most this many (answer clause, quote clause sharing a word with it) pairs are compared;
# past it the answer is not checked and fails closed. About 70 µs a pair here (1.4 s at
# the cap); a 20,000-character answer of common words against 20 long quotes was 1.3
# million pairs. A real answer is a few hundred.
MAX_PAIRS = 20_000

# An answer's bound, and the bounds of the quote's same specific that support it.
_SUPPORTS = {
    "gt": {"gt"},
    "lt": {"lt"},
    "ge": {"ge", "from"},
    "le": {"le", "until"},
    "from": {"from", "ge", "lo"},
    "until": {"until", "le", "hi"},
    "lo": {"", "lo", "from"},
    "hi": {"", "hi", "until"},
}
# The bounds a specific must keep: one side of it only. Either end of a closed range (lo,
# hi) may stand alone.
_ONE_SIDED = frozenset({"gt", "lt", "ge", "le", "from", "until"})
# A shared specific is stronger evidence than a shared word: "The ferry runs on Tuesdays"
# rests on "… but on Tuesdays", not on "The ferry does not run on Mondays".
_VALUE_WEIGHT = 1.5
# Words shown with the word a reason quotes: "is covered", "on Sundays".
_LEADS = frozenset("is are was were be been will can may has have had on in at for to by".split())


@dataclass(frozen=True)
class Conflict:
    """One claim of the answer that a quote contradicts: its kind (one of `KINDS`), the
    answer's words and the quote's."""

    kind: str
    said: str
    quoted: str

    @property
    def reason(self) -> str:
        if self.kind == "unchecked":
            return f"the answer is too long to check its claims ({self.said}; at most {self.quoted})"
        if self.kind == "condition":
            return f"the answer leaves out the quote's condition '{self.quoted}'"
        if self.kind == "column":
            return (
                f"the answer says '{self.said}'; the quote holds it only in the table's "
                f"'{self.quoted}' column, a retired value"
            )
        return f"the answer says '{self.said}'; the quote says '{self.quoted}'"


def contradictions(answer: str, quotes: Sequence[tuple[str, Sequence[tuple[str, str]]]]) -> list[Conflict]:
    """The claims of `answer` that its `quotes` contradict, in the answer's order.

    `quotes` are (text, row): a verified quote's live text, and for a table row its cells
    under their headings (`cortex.notes.tables.row_cells`; empty otherwise). Old wording
    ``(was: "…")`` in the answer states nothing current and is left out.
    """
    if not isinstance(answer, str):
        return []
    clauses: list[Clause] = []
    cells: list[Clause] = []  # the quoted rows' cells, each under its column's heading
    restated: set[str] = set()  # rows an answer may copy as they are: no retired column
    for text, row in quotes:
        mine = row_clauses(row, len(clauses) + 1) if row else read(text, len(clauses) + 1)
        cells += mine if row else []
        if row and not any(c.retired for c in mine):
            restated |= {c.text.casefold() for c in read(text)}
        clauses += mine
    if not clauses:
        return []
    index = _Index(clauses)
    said = [(c, index.near(c)) for c in read(strip_old_wording(answer)) if c.text.casefold() not in restated]
    pairs = sum(len(near) for _, near in said)
    if pairs > MAX_PAIRS:
        return [Conflict("unchecked", f"{pairs:,} pairs of clauses to compare", f"{MAX_PAIRS:,}")]
    out: list[Conflict] = _range_as_points([c for c, _ in said], clauses) + _headed_elsewhere(answer, cells)
    conditions = [c for c in (_condition(q) for q in clauses) if c is not None]
    kept = _kept_conditions(answer, [c for c, _ in said], conditions)
    for clause, near in said:
        found = _conflicts(clause, near, index.ordinals)
        sentences = {q.sentence for q in _aligned(clause, near)} if conditions else set()
        found += [
            Conflict("condition", clause.text, c.said)
            for i, c in enumerate(conditions)
            if c.sentence in sentences and i not in kept
        ]
        for conflict in found:
            if conflict not in out:
                out.append(conflict)
    return out


# A condition a claim depends on: "only when we are away", "unless it rains", "if …";
# after "only", also what the claim needs ("allowed on Fridays only with sign-off").
_CONDITION = re.compile(
    r"(?i)(?<![\w'])(?P<only>only\s+)?(?P<cue>if|when|whenever|unless|except|provided|providing|as long as"
    r"|so long as|on condition that|in case|subject to|(?<=only\s)(?:with|after|upon))(?![\w'])"
)
_NEGATIVE_CUES = frozenset({"unless", "except"})


@dataclass(frozen=True)
class _Condition:
    """A quote clause's condition: its sentence, whether it is "only …", whether it is a
    negative one (unless, except), its words and values, and how the quote says it."""

    sentence: int
    only: bool
    negative: bool
    words: frozenset[str]
    values: tuple[Value, ...]
    said: str


def _condition(q: Clause) -> _Condition | None:
    m = _CONDITION.search(q.text)
    if m is None or q.row:
        return None
    said = q.text[m.start() :].strip(" ,.;:")
    rest = read(q.text[m.end() :], whole=True)
    words, values = (rest[0].words, rest[0].values) if rest else (frozenset(), ())
    negative = m["cue"].casefold() in _NEGATIVE_CUES
    return _Condition(q.sentence, bool(m["only"]), negative, words, values, said)


def _holds(clause: Clause, c: _Condition) -> bool:
    """Whether `clause` has every word and value of the condition `c`, in some form."""
    return all(_word_in(w, clause) for w in c.words) and all(_has(clause, v) for v in c.values)


def _kept_conditions(answer: str, said: list[Clause], conditions: list[_Condition]) -> set[int]:
    """The indexes of the `conditions` the answer keeps: it says a condition of the same
    kind ("only" kept, "unless" as "unless" or "except"; "except in August" also as a negated
    clause, "but not in August") with the condition's words and values."""
    if not conditions:
        return set()
    whole = read(answer, whole=True)
    cues_said = list(_CONDITION.finditer(answer))
    only = re.search(r"(?i)(?<![\w'])only(?![\w'])", answer) is not None
    out = set()
    for i, c in enumerate(conditions):
        kept = any((m["cue"].casefold() in _NEGATIVE_CUES) == c.negative and (only or not c.only) for m in cues_said)
        if c.negative and not c.only and not kept:
            kept = any(x.negation and _holds(x, c) for x in said)
        if kept and whole and _holds(whole[0], c):
            out.add(i)
    return out


def _value_keys(v: Value) -> list[tuple]:
    """Keys under which two values `_same` calls the same always meet."""
    spec = v.spec
    if spec.kind == "date":
        return [("date", i, p) for i, p in enumerate(spec.key) if p is not None]
    if spec.kind in ("number", "amount"):
        return [("number", spec.key[0])]
    return [(spec.kind, spec.key)]


class _Index:
    """The quotes' clauses by every form of their words and by their values, so an answer
    clause is compared only with the clauses that share something with it: comparing
    each with each took 225 s for a 20,000-character answer against 20 quotes."""

    def __init__(self, clauses: list[Clause]):
        self.clauses = clauses
        self.ordinals = {v for c in clauses for v, _ in c.ordinals}
        self.by_key: dict[object, set[int]] = {}
        for i, c in enumerate(clauses):
            for f in c.keys | c.borrowed_keys:
                self.by_key.setdefault(f, set()).add(i)
            for v in c.values + c.borrowed_values:
                for k in _value_keys(v):
                    self.by_key.setdefault(k, set()).add(i)

    def near(self, a: Clause) -> list[Clause]:
        """The clauses that share a word form or a value with `a` (own or borrowed)."""
        keys: set[object] = set(a.keys | a.borrowed_keys)
        for v in a.values + a.borrowed_values:
            keys.update(_value_keys(v))
        found = set().union(*(self.by_key.get(k, ()) for k in keys)) if keys else set()
        return [self.clauses[i] for i in sorted(found)]


def _word_in(word: str, clause: Clause, borrowed: bool = True) -> bool:
    """Whether a form of `word` is a form of a word of `clause` (`borrowed`: or of a word
    it borrowed)."""
    f = forms(word)
    return not f.isdisjoint(clause.keys) or (borrowed and not f.isdisjoint(clause.borrowed_keys))


def _same(a: Value, b: Value) -> bool:
    """Whether two values state the same specific (a date: one covers the other's parts)."""
    return _same_spec(a.spec, b.spec)


def _same_spec(x: Specific, y: Specific) -> bool:
    if x.kind == "date" or y.kind == "date":
        if x.kind != y.kind:
            return False
        pairs = [(p, q) for p, q in zip(x.key, y.key) if p is not None and q is not None]
        return bool(pairs) and all(p == q for p, q in pairs)
    if {x.kind, y.kind} == {"number", "amount"}:
        return bool(x.key[0] == y.key[0])
    return x.kind == y.kind and x.key == y.key


def _has(clause: Clause, v: Value, borrowed: bool = True) -> bool:
    pool = clause.values + (clause.borrowed_values if borrowed else ())
    return any(_same(v, w) for w in pool)


def _score(a: Clause, q: Clause) -> float:
    score = 0.0
    for w in a.words:
        score += 1.0 if _word_in(w, q, borrowed=False) else 0.5 if _word_in(w, q) else 0.0
    for w in a.borrowed_words:
        score += 0.5 if _word_in(w, q) else 0.0
    for v in a.values:
        score += _VALUE_WEIGHT if _has(q, v, borrowed=False) else 0.5 if _has(q, v) else 0.0
    return score


def _aligned(a: Clause, quoted: list[Clause]) -> list[Clause]:
    """The quote clauses `a` rests on: one that says it word for word, else the best
    scored, when it shares at least one of `a`'s own words or values and at least half of
    them."""
    same = [q for q in quoted if q.text.casefold() == a.text.casefold()]
    if same:
        return same
    own = len(a.words) + len(a.values)
    # Ranked by how many of `a`'s words and values a clause accounts for at all (its own
    # or borrowed), then by the score.
    scored = [((_covered(a, q), _score(a, q)), q) for q in quoted if _shares_own(a, q)]
    best = max((k for k, _ in scored), default=(0, 0.0))
    if best[1] < 1.0 or best[1] < 0.5 * own:
        return []
    return [q for k, q in scored if k == best]


def _covered(a: Clause, q: Clause) -> int:
    return sum(_word_in(w, q) for w in a.words) + sum(_has(q, v) for v in a.values)


def _shares_own(a: Clause, q: Clause) -> bool:
    return any(_word_in(w, q) for w in a.words) or any(_has(q, v) for v in a.values)


def _conflicts(a: Clause, quoted: list[Clause], ordinals: set[int]) -> list[Conflict]:
    """What `a` claims that the quote clauses contradict; `quoted` are those that share a
    word or value with it (no other clause can align with it, hold a name or value of it,
    or cross it), `ordinals` every ordinal the quotes state."""
    out: list[Conflict] = []
    aligned = _aligned(a, quoted)
    for q in aligned:
        out += _against(a, q, quoted, ordinals)
    items = {id(c): _items(a, c) for c in quoted}
    for q in aligned:
        for r in quoted:
            if r is q:
                continue
            # Two cells of one row are two columns of one fact, which an answer may join
            # ("from €3 to €4"); it may not give one column's value under another's heading.
            same_row = bool(q.row) and q.row == r.row
            if _column_swap(a, q, r) if same_row else _crossed(items[id(q)], items[id(r)]):
                out.append(Conflict("roles", a.text, r.text))
                break
    out += _values_against(a, aligned, quoted)
    home = _paired_elsewhere(a, quoted)
    if home is not None and not any(c.kind == "roles" for c in out):
        out.append(Conflict("roles", a.text, home.text))
    order = {k: i for i, k in enumerate(KINDS)}
    return sorted(out, key=lambda c: order[c.kind])


def _paired_elsewhere(a: Clause, quoted: list[Clause]) -> Clause | None:
    """The quote clause whose thing `a` gives another thing's values, if any: every word of
    `a` the quotes hold is in that clause (or, for a gapped clause, in the clause whose verb
    it leaves out), which holds none of `a`'s values but values of their kinds, while another
    clause, lacking a word of `a` that is this one's own, holds them ("the potatoes at 180 °C
    for 30 minutes" from "the potatoes at 200 °C for 40 minutes and the parsnips at 180 °C
    for 30 minutes"; "the rear tyres were replaced at 42,000 miles" from "front tyres were
    replaced at 42,000 miles and the rear ones at 51,000"). Scoring aligns such an answer
    with the values' clause, where its words look merely extra."""
    words = [w for w in a.words if any(_word_in(w, q, borrowed=False) for q in quoted)]
    if not words or not a.values:
        return None
    for q in quoted:
        if any(_has(q, v) for v in a.values):
            continue
        kinds = {group(y.spec.kind) for y in q.values}
        for v in (v for v in a.values if group(v.spec.kind) in kinds):
            for r in (r for r in quoted if r is not q and _has(r, v, borrowed=False)):
                if all(_word_in(w, q) or (q.gapped and _word_in(w, r)) for w in words) and any(
                    _word_in(w, q, borrowed=False) and not _word_in(w, r) for w in words
                ):
                    return q
    return None


def _against(a: Clause, q: Clause, quoted: list[Clause], ordinals: set[int]) -> list[Conflict]:
    """What `a` claims against the quote clause `q` it is aligned with (`ordinals`: every
    ordinal the quotes state)."""
    out: list[Conflict] = []
    if bool(a.negation) != bool(q.negation) and _negation_against(a, q, quoted):
        out.append(Conflict("polarity", a.negation or _echo(a, q), q.negation or _echo(q, a)))
    for pair, side, said in a.directions:
        sides = {s for p, s, _ in q.directions if p == pair}
        if sides and side not in sides:
            out.append(Conflict("comparison", said, next(t for p, s, t in q.directions if p == pair)))
    if a.ordinals:
        mine = {v for v, _ in q.ordinals}
        for value, said in a.ordinals:
            if value not in (mine or ordinals):
                out.append(Conflict("ordinal", said, q.ordinals[0][1] if q.ordinals else q.text))
    for family, kind in ((a.recurrences, "recurrence"), (a.quantifiers, "quantifier")):
        theirs = q.recurrences if kind == "recurrence" else q.quantifiers
        keys = {k for k, _ in theirs}
        for key, said in family:
            if keys and key not in keys:
                out.append(Conflict(kind, said, theirs[0][1]))
    if _swap(a, q, quoted) or _reversed(a, q) or _voice_swapped(a, q):
        out.append(Conflict("roles", a.text, q.text))
    if q.retired:
        stale = _stale(a, q, quoted)
        if stale:
            out.append(Conflict("column", stale, q.column))
    return out


def _negation_against(a: Clause, q: Clause, quoted: list[Clause]) -> bool:
    """Whether the one negation between `a` and `q` bears on what the other says: not where
    the word it negates is absent from the other ("water is fine" beside "no food"), nor
    where another quote clause negates that word as the answer does ("not calls" aligned
    with "Jenny Marsh, 07700 900123" while "no calls" stands beside it)."""
    negated, other = (a, q) if a.negation else (q, a)
    word = _negated_word(negated.negation)
    if word is None:
        return True
    if not _word_in(word, other, borrowed=False) and word not in re.findall(r"[^\W\d_]+", other.text.casefold()):
        return False  # a date's name counts too ("not on Sundays")
    return not (a.negation and any(c is not q and c.negation and _word_in(word, c) for c in quoted))


_WORD_NEGATIONS = frozenset("neither nor nobody none nothing nowhere".split())  # a clause's, not a word's


def _negated_word(negation: str) -> str | None:
    """The word a negation bears on ("does not cover" -> "cover"), or None when it names none
    or bears on its whole clause ("Neither Ana nor Ben has a key")."""
    words = [w.strip(".,;:!?()\"'").casefold() for w in negation.split()]
    if not words or not _WORD_NEGATIONS.isdisjoint(words):
        return None
    last = words[-1]
    if not last.isalpha() or last in claim_words.AUX or claim_words.NEGATION.fullmatch(last):
        return None
    return last


def _echo(a: Clause, negated: Clause) -> str:
    """The words of the affirmative clause `a` that the reason shows against the negated
    clause's negation: the word its negation bears on ("does not cover" -> "covers"), with
    an auxiliary or preposition before it ("is covered", "on Sundays"), else `a`'s text."""
    cue = negated.negation.split()
    words = a.text.split()
    for target in reversed(cue):
        t = target.strip(".,;:!?()\"'").casefold()
        for i, raw in enumerate(words):
            w = raw.strip(".,;:!?()\"'").casefold()
            if w and not forms(t).isdisjoint(forms(w)):
                before = words[i - 1].casefold() if i else ""
                start = i - 1 if before in _LEADS else i
                return " ".join(words[start : i + 1]).strip(".,;:!?()\"'")
    return a.text


def _items(a: Clause, q: Clause) -> tuple[set[str], set[str]]:
    """(what of `a` the clause `q` holds, what of `q` the clause `a` lacks), as words and
    the texts of specifics; own words and specifics only."""
    held = {w for w in a.words if _word_in(w, q, borrowed=False)}
    held |= {v.spec.text for v in a.values if _has(q, v, borrowed=False)}
    lacked = {w for w in q.words if not _word_in(w, a, borrowed=False)}
    lacked |= {v.spec.text for v in q.values if not _has(a, v, borrowed=False) and not _named_in(v, a)}
    return held, lacked


def _named_in(v: Value, a: Clause) -> bool:
    """Whether `a` has the name `v` among its words: a name opening a sentence is read as a
    word, not a name ("Kasia takes the second watch")."""
    words = tokenize(v.spec.text)
    return v.spec.kind == "name" and bool(words) and all(_word_in(t, a, borrowed=False) for t in words)


def _crossed(one: tuple[set[str], set[str]], other: tuple[set[str], set[str]]) -> bool:
    """Whether an answer clause pairs a part of one quote clause with a part of another of
    the same frame ("the red key opens the gate" for "the red key opens the shed and the
    blue key opens the gate"), given `_items` of it against each: it takes something from
    each that the other lacks, each holds something it leaves out, and all three share a
    word or specific."""
    (held1, lacked1), (held2, lacked2) = one, other
    return bool(held1 - held2 and held2 - held1 and lacked1 and lacked2 and held1 & held2)


def _column_swap(a: Clause, q: Clause, r: Clause) -> bool:
    """Whether `a` gives the value of `q`'s cell under the heading of `r`, another column
    of the same row ("opens at 13:00" where 13:00 is under "closes")."""

    def holds(words: frozenset[str], values: tuple[Value, ...]) -> bool:
        return any(not forms(w).isdisjoint(keys_of(words)) for w in a.words) or any(
            _same(v, x) for v in a.values for x in values
        )

    q_words, q_values = q.cell
    r_words, r_values = r.cell
    q_heading, r_heading = q.heading_words - r.heading_words, r.heading_words - q.heading_words
    return (
        holds(r_heading, ())
        and holds(q_words - r_words, q_values)
        and not holds(q_heading, ())
        and not holds(r_words - q_words, r_values)
    )


_JOINS = frozenset("and or nor with & plus as well both".split())


def _reversed(a: Clause, q: Clause) -> bool:
    """Whether `a` names two of `q`'s names in the opposite order with the same words between
    them ("Ben lent Ana €200" for "Ana lent Ben €200"); not two names joined by "and"."""
    shared = [x for x in a.capitals if x in q.capitals]
    if len(shared) < 2:
        return False

    def order(text: str) -> list[tuple[int, int, str]]:
        found = []
        for x in shared:
            m = re.search(rf"(?<![\w'])({re.escape(x)})(?:'s)?(?![\w'])", text, re.IGNORECASE)
            if m:
                found.append((m.start(), m.end(), x))
        return sorted(found)

    def between(text: str, first: tuple[int, int, str], second: tuple[int, int, str]) -> list[str]:
        return [w.casefold() for w in re.findall(r"[\w'€$£%.:]+", text[first[1] : second[0]])]

    in_a, in_q = order(a.text), order(q.text)
    for i in range(len(in_a) - 1):
        x, y = in_a[i], in_a[i + 1]
        qx = next((t for t in in_q if t[2] == x[2]), None)
        qy = next((t for t in in_q if t[2] == y[2]), None)
        if qx is None or qy is None or qx[0] < qy[0]:
            continue
        words = between(a.text, x, y)
        if words and words == between(q.text, qy, qx) and set(words) - _JOINS:
            return True
    return False


_PASSIVE_AUX = frozenset("is are was were be been being get gets got gotten".split())
# A word after one of these is a noun, not the verb of its clause ("for 15 minutes").
_NOT_BEFORE_VERB = STOPWORDS - {"i", "you", "he", "she", "it", "we", "they", "who", "which", "that"}
_TOKEN = re.compile(r"[^\W\d_][\w'-]*")
# Roles are read in clauses of at most this many words: each word may be the verb, and its
# sides are read afresh (a 3,000-word clause took 2.3 s, against 0.08 s without the reading).
_VOICE_WORDS = 60


# What follows "by" when it is a deadline, not who does it: "by the end of May", "by Friday".
_BY_WHEN = re.compile(
    r"(?:the\s+)?(?:\d|first|second|third|fourth|fifth|last|next|end|start|beginning|middle|time|then|"
    r"tomorrow|tonight|today|noon|midnight|"
    + "|".join(sorted(claim_words.MONTHS | set(claim_words.WEEKDAY_NAMES)))
    + r")"
)


def _sides(text: str, verbs: frozenset[str] = frozenset()) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """For each word of `text` that may be its verb, by lemma: (who does it, to whom), as
    the lemmas of the content words on each side. A passive ("the inventory is generated
    by Terraform") puts the words after "by" first."""
    tokens = [m.group().casefold() for m in _TOKEN.finditer(text)]
    if len(tokens) > _VOICE_WORDS:
        return {}
    words = [t.removesuffix("n't").removesuffix("n’t") for t in tokens]  # "isn't" -> "is"

    def content(part: list[str]) -> frozenset[str]:
        part = [w.split("'")[0].split("’")[0] for w in part]
        return frozenset(lemma(w) for w in part if w not in STOPWORDS and w not in _PASSIVE_AUX and len(w) > 1)

    out: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
    passive: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
    for i, w in enumerate(words):
        if w in STOPWORDS or w in _PASSIVE_AUX or len(w) < 3:
            continue
        before = [x for x in words[max(0, i - 3) : i] if x not in ("not", "never", "also", "always")][-1:]
        if before and before[0] in _PASSIVE_AUX and (w.endswith(("ed", "en")) or lemma(w) != w):
            # A passive: who does it follows "by"; without "by" it is not said.
            by = words.index("by", i + 1) if "by" in words[i + 1 :] else len(words)
            if _BY_WHEN.match(" ".join(words[by + 1 :])) or {"latest", "earliest"} & set(words[by + 1 :]):
                by = len(words)  # "paid by the third rehearsal at the latest": a deadline, no agent
            agent, patient = content(words[by + 1 :]), content(words[:i])
            if agent and patient:
                passive.setdefault(lemma(w), _apart(agent, patient))
            continue
        if (
            i
            and words[i - 1] not in _NOT_BEFORE_VERB
            and (w.endswith(("s", "ed")) and not w.endswith("ss") or lemma(w) in verbs or irregular_past(w))
        ):
            agent, patient = content(words[:i]), content(words[i + 1 :])  # "the NAS backs up the laptop"
            if agent and patient:
                out.setdefault(lemma(w), _apart(agent, patient))
    # A clause read as passive has its verb found: the -s words before it are nouns
    # ("Hana's shifts are covered by Ben").
    return passive or out


def _apart(agent: frozenset[str], patient: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """The two sides less the words both hold ("Dr Patel replaced Dr Moss": "dr" tells no one
    apart), so a role is told by the words that are its own."""
    return agent - patient, patient - agent


def _voice_swapped(a: Clause, q: Clause) -> bool:
    """Whether `a` puts who does something in the place of to whom, around a verb both say,
    in either voice ("Ansible generates the Terraform inventory", "the Terraform inventory
    is generated by Ansible" for "Terraform generates the Ansible inventory")."""
    # A verb one side shows by its -s or -ed is the verb of the other's bare form too
    # ("parents host" and "the family hosts").
    mine = _sides(a.text, frozenset(_sides(q.text)))
    theirs = _sides(q.text, frozenset(mine))
    for verb, (agent, patient) in mine.items():
        if verb not in theirs:
            continue
        q_agent, q_patient = theirs[verb]
        if (agent & q_patient and not agent & q_agent) or (patient & q_agent and not patient & q_patient):
            return True
    return False


def _swap(a: Clause, q: Clause, quoted: list[Clause]) -> bool:
    """Whether `a` pairs `q`'s context with a name or specific of another quote clause in
    place of one of `q`'s own (see the module docstring, who does what)."""
    others = [c for c in quoted if c is not q]
    a_words = a.words | a.borrowed_words
    shared_q = {w for w in a.words if _word_in(w, q)}

    def moved(found_in: list[Clause], x: str = "") -> bool:
        # Everything else the answer shares with the clause it took x from is in q too.
        return bool(found_in) and all({w for w in a.words if w != x and _word_in(w, c)} <= shared_q for c in found_in)

    for x in a.capitals | a.borrowed_capitals:
        if _word_in(x, q) or x in q.lent_capitals:
            continue
        holders = [c for c in others if x in c.capitals]
        if moved(holders, x) and any(y not in a_words | a.lent_capitals and not _word_in(y, a) for y in q.capitals):
            return True
    # A word of another named clause paired with this clause's name ("Ben is the plumber"
    # where the plumber is Ana): the word belongs to someone the answer does not name. Not
    # another cell of q's own row: a row's cells are one fact's columns.
    if any(_word_in(y, a) for y in q.capitals):
        for w in a.words - a.capitals:
            if _word_in(w, q):
                continue
            holders = [c for c in others if _word_in(w, c, borrowed=False) and not (q.row and c.row == q.row)]
            if moved(holders, w) and all(any(not _word_in(z, a) for z in c.capitals) for c in holders):
                return True
    # A word of another clause in place of one of this clause's own, the rest this clause's
    # ("the green folder holds the mortgage papers" where the green one holds the car's).
    # Said where this clause says its own word (between the same two words), so a gapped
    # clause's missing verb is not taken for one ("the heated pool at 7:00"); not in a row,
    # whose cells are one fact's columns.
    for w in a.words - a.capitals if not q.row else ():
        if _word_in(w, q):
            continue
        holders = [c for c in others if _word_in(w, c, borrowed=False) and not c.row]
        if moved(holders, w) and any(
            not _word_in(y, a) and not any(_word_in(y, c) for c in holders) and _in_place_of(a.text, w, q.text, y)
            for y in q.words - q.capitals
        ):
            return True
    a_values = a.values + a.borrowed_values
    for val in a.values:
        kind = group(val.spec.kind)
        if kind == "name" or _has(q, val, borrowed=False):
            continue  # names are paired by their capitals, above
        holders = [c for c in others if _has(c, val, borrowed=False)]
        if not moved(holders):
            continue
        for y in q.values:
            if group(y.spec.kind) == kind and not any(_same(y, v) for v in a_values):
                return True
    return False


def _in_place_of(text: str, word: str, other: str, instead: str) -> bool:
    """Whether `word` stands in `text` between the same words as `instead` in `other`."""
    mine, theirs = (
        [t.casefold() for t in re.findall(r"[\w'’-]+", unicodedata.normalize("NFC", x))] for x in (text, other)
    )
    word, instead = (unicodedata.normalize("NFC", w).casefold() for w in (word, instead))
    for i in (i for i, t in enumerate(mine) if t == word):
        for j in (j for j, t in enumerate(theirs) if t == instead):
            before = i > 0 and j > 0 and mine[i - 1] == theirs[j - 1]
            after = i + 1 < len(mine) and j + 1 < len(theirs) and mine[i + 1] == theirs[j + 1]
            if before and after:
                return True
    return False


def _values_against(a: Clause, aligned: list[Clause], quoted: list[Clause]) -> list[Conflict]:
    """Each specific of `a` against the same specific in the quotes: bound, sign, polarity
    and table column."""
    out: list[Conflict] = []
    if not a.negation:
        # What the quotes deny only in a negated fragment ("… without a password", "except
        # in August") is not said affirmatively.
        for word in sorted(a.words):
            holders = [c for c in quoted if _word_in(word, c, borrowed=False)]
            if holders and all(c.negation and c.own_cue and c.elliptical for c in holders):
                out.append(Conflict("polarity", _echo(a, holders[0]), holders[0].negation))
                break
    for v in a.values:
        near = [(c, w) for c in aligned for w in c.values if _same(v, w)]
        everywhere = [(c, w) for c in quoted for w in c.values if _same(v, w)]
        found = near or everywhere
        if not found:
            continue
        if v.bound and not any(w.bound in _SUPPORTS[v.bound] for _, w in found):
            w = found[0][1]
            ranged = {v.bound, w.bound} & {"lo", "hi"}  # a closed range on one side
            out.append(Conflict("range" if ranged else "comparison", v.said, w.said))
        elif not v.bound and all(_dropped(w) for _, w in found) and not _bound_words(a, found):
            # A bound or a span dropped: "open from June" is not "open in June", "by 18:00"
            # not "at 18:00", "over 23 kg" not "23 kg", "closed on 3 March" not "closed from
            # 3 March to 28 April", "24 months" not "18 to 24 months".
            w = found[0][1]
            out.append(Conflict("range" if w.bound in ("from", "until", "lo", "hi") else "comparison", v.said, w.said))
        if not any(_signs_agree(v.signs, w.signs) for _, w in found):
            w = found[0][1]
            out.append(Conflict("sign", v.said, w.said))
        # A clause that borrowed the value says it too ("… for the Etsy income if it stays under").
        said_by = everywhere + [(c, w) for c in quoted for w in c.borrowed_values if _same(v, w)]
        if everywhere and all(bool(c.negation) != bool(a.negation) for c, _ in said_by):
            c, w = everywhere[0]
            if _negation_against(a, c, quoted):
                out.append(Conflict("polarity", a.negation or _echo(a, c), c.negation or _echo(c, a)))
        if everywhere and not _looks_back(a, v) and all(c.retired for c, _ in everywhere):
            if not any(c.retired for c in aligned):  # said once already, by the aligned clause
                out.append(Conflict("column", v.said, everywhere[0][0].column))
    return out


def _dropped(w: Value) -> bool:
    """Whether a quote's value `w` said bare in an answer drops its bound: a one-sided bound,
    or an end of a closed span of time, money or an amount. An end of a span of bare numbers
    may stand alone: "iOS 16" is one of "iOS 16 to 17"."""
    return w.bound in _ONE_SIDED or (w.bound in ("lo", "hi") and w.spec.kind != "number")


def _headed_elsewhere(answer: str, cells: list[Clause]) -> list[Conflict]:
    """A value of a quoted row said under another column's heading ("room 5578, extension
    310" of "| Dr Lee | 310 | 5578 |" under Room and Extension). One clause may say every
    cell of a row, so each of the row's values is read with the heading words between it
    and the row's values beside it: those before it
    when the answer names headings first ("room 310"), after it when it names them after
    ("a 4.54% rate, a £0 fee"), whichever side holds heading words for more values."""
    if not cells:
        return []
    # A line in table form copies a row: its cells stand in their columns by place.
    prose = "\n".join(line for line in answer.splitlines() if not line.lstrip().startswith("|"))
    work, located_values = located(strip_old_wording(prose))
    found = [
        (a, b, holders)
        for a, b, spec in located_values
        for holders in [[c for c in cells if any(_same_spec(spec, v.spec) for v in c.cell[1])]]
        if holders
    ]
    headings = keys_of(frozenset().union(*(c.heading_words for c in cells)))
    ends = [0, *(b for _, b, _ in found)]
    starts = [a for a, _, _ in found] + [len(work)]
    befores = [keys_of(frozenset(tokenize(work[ends[k] : a]))) & headings for k, (a, _, _) in enumerate(found)]
    afters = [keys_of(frozenset(tokenize(work[b : starts[k + 1]]))) & headings for k, (_, b, _) in enumerate(found)]
    first = sum(map(bool, befores)) - sum(map(bool, afters))
    if first == 0:
        return []  # no telling which side names a value's column
    out: list[Conflict] = []
    for k, (_, b, holders) in enumerate(found):
        near = befores[k] if first > 0 else afters[k]
        own = keys_of(frozenset().union(*(c.heading_words for c in holders)))
        if near - own and not near & own:
            out.append(Conflict("roles", " ".join(work[ends[k] : b].split()).strip(" ,;:"), holders[0].text))
    return out


def _range_as_points(said: list[Clause], quoted: list[Clause]) -> list[Conflict]:
    """Both ends of a quote's closed range said in one sentence of the answer as two points
    without bounds ("valid on 20 December and 6 January" for "from 20 December to 6
    January"); one end alone may stand, and a range of counts or versions is its ends."""
    out = []
    for n in dict.fromkeys(a.sentence for a in said):
        points = [v for a in said if a.sentence == n for v in a.values if not v.bound]
        ends: dict[str, set[str]] = {}
        for c in quoted:
            for w in c.values:
                # A span of time; "iOS 16 and 17" is all of "16 to 17".
                if w.bound in ("lo", "hi") and w.spec.kind in ("date", "time") and any(_same(v, w) for v in points):
                    ends.setdefault(w.said, set()).add(w.bound)
        text = " ".join(a.text for a in said if a.sentence == n)
        out += [Conflict("range", text, r) for r, found in ends.items() if found == {"lo", "hi"}]
    return out


def _bound_words(a: Clause, found: list[tuple[Clause, Value]]) -> bool:
    """Whether `a` states, away from its value, a bound that one in `found` supports."""
    said = {(m.lastgroup or "").removesuffix("_post") for m in claim_words.BOUND_ANYWHERE.finditer(a.text)}
    return any(w.bound in _SUPPORTS.get(k, ()) or k == w.bound for k in said for _, w in found)


def _stale(a: Clause, q: Clause, quoted: list[Clause]) -> str:
    """What `a` takes from the retired cell of `q` that no live clause holds, or ""."""
    live = [c for c in quoted if not c.retired]
    words, values = q.cell
    for v in a.values:
        if any(_same(v, w) for w in values) and not _looks_back(a, v) and not any(_has(c, v, False) for c in live):
            return v.said
    if a.looks_back:
        return ""
    for w in sorted(a.words):
        if not forms(w).isdisjoint(keys_of(words)) and not any(_word_in(w, c, False) for c in live):
            return w
    return ""


def _looks_back(a: Clause, v: Value) -> bool:
    """Whether `a` states `v` as a past value: "was €3", "used to", or a change from it."""
    return a.looks_back or v.bound in ("lo", "from")


def _signs_agree(a: frozenset[str], q: frozenset[str]) -> bool:
    return ("-" in a) == ("-" in q) and ("±" in a) == ("±" in q) and ("~" not in q or "~" in a)

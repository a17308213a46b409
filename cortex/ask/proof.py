"""What the offline reader must see in one sentence before it answers. Pure functions.

The offline reader has no model, so it answers only what a passage proves (issue 41). One
sentence of its quote, read as the owner sees it (`cortex.notes.shown.visible`: no link
address, image path, comment or tag), must hold

- every focus term of the question that its note's names and headings do not give
  (`focus.unmentioned`): "9 vans left late" is no answer to how many vans the solver
  plans, though the sentence before it names the solver;
- a value of the kind asked (`question.expects`), and for "how many <things>" a count of
  those things: "48 hours" counts no supers;
- for "why", a reason ("because", "since", "so that", "due to", …);
- for "what year", a year; for "what year is <thing>", not only dates of things done with
  it ("Bought from a farmer, March 2024");
- for a measure, an amount in its units (a temperature in degrees, not "85 g"); for a day
  the question names, that day in the sentence or the passage's names;
- for "what <thing> number", the thing's number right after it ("plot 17"), not a number
  of something else ("3 rows");
- no focus term only in a parenthesis that holds no value of the kind asked: "rebooked to
  26 November (the 19th clashed with the late week)" dates the booking, not the late week;
- what is, not what may, must or will be: a clause naming the asked things under a rule, a
  permission, a plan, a condition or a bound ("Cap at five hives on plot 23", "The canoe
  may be kept in the boathouse") proves nothing unless the question asks about the rule;
- a sentence opening with someone the question and the passage's names do not name
  ("Nora, born 2019 — birthday 9 February" for Erik's birthday) is about them, for a
  question about the owner or a named person;
- for "where on / in the <place>", a position within it ("along the east side", "behind
  the door"), not the place again ("hives at the allotment, plot 23");
- for a personal question ("my …", "I …", the owner's name), nothing that gives the asked
  thing to someone else ("their accountant", "Anna's bike", a sentence opening with a link
  to another note and no "I" or "my") or defines it ("Blood type is a classification …",
  a glossary's "**Blood pressure**: the force of the blood against …", anything under a
  glossary's title or heading);
  and for "what is my <thing>", the thing with a value after it ("<thing>: …", "<thing>
  is …") or named as the owner's ("… is my <thing>").

When no sentence does, the reader answers nothing and the asker's miss names the
passage as a lead, for the client's own model to read.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Mapping, Sequence

from cortex.ask.focus import answers_kind, unmentioned
from cortex.ask.question import Question, as_question
from cortex.ask.specifics import Specific, located, specifics, strip_old_wording
from cortex.index.tokenize import STOPWORDS, tokenize
from cortex.notes.blocks import sentences
from cortex.notes.shown import visible

__all__ = ["disagree", "personal", "proving_sentence"]

_WHY = re.compile(r"^\W*why\b|\bwhy (?:is|are|was|were|do|does|did|not|has|have)\b", re.I)
# A reason. "as" is left out: it is in every other sentence and proves nothing.
_REASON = re.compile(
    r"\b(?:because|since|due to|owing to|thanks to|so that|so|therefore|thus|hence|reasons?|caused?|"
    r"otherwise|in order to|to (?:avoid|keep|stop|prevent|make|get|save|let)|needs?|requires?|depends? on)\b|→|->",
    re.I,
)
# "What plot number is our allotment?", "What is the chassis number …": the number of a thing.
_NUMBER_OF = re.compile(r"\b(?P<thing>[^\W\d_][\w-]*)\s+(?:number|no\.?|#)(?!\w)", re.I)
# The thing's number right after it: "plot 17", "plot no. 17", "chassis number VF7…".
_NUMBERED = r"(?:\s*(?:numbers?|no\.?|#|nr\.?|is|was|are|=|:))*\s*[#:]?\s*[\w-]*\d"
_PAST = re.compile(r"\b(?:was|were|used to|old|former|previous(?:ly)?|before|originally|first)\b", re.I)
_STRUCK = re.compile(r"~~.*?~~|<(del|s|strike)\b[^>]*>.*?</\1>", re.S | re.I)
# A measure asked, and the units that measure it: "What temperature …" is not answered by
# "85 g". Amounts in other units prove nothing; a unit not listed here is not judged.
_MEASURES = (
    (re.compile(r"\b(?:what|which) temperature\b|\bhow (?:hot|cold|warm)\b", re.I), {"°C", "°F", "°", "K"}),
    (re.compile(r"\bhow (?:tall|high|far|wide|deep)\b", re.I), {"mm", "cm", "m", "km", "in", "ft", "mi", "yd"}),
    (re.compile(r"\bhow heavy\b|\b(?:what|which) weight\b", re.I), {"mg", "g", "kg", "t", "lb", "oz", "st"}),
)
# "What year …" wants a year; "What year is my Citroën?" the thing's year, not the date of
# something done with it.
_WHAT_YEAR = re.compile(r"\b(?:what|which) year\b", re.I)
_YEAR_OF = re.compile(r"\bwhat year (?:is|was|are|were)\b", re.I)
_DONE = re.compile(
    r"\b(?:bought|sold|purchased|acquired|got|moved|booked|paid|registered|imported|collected|inherited|"
    r"rented|leased|insured|serviced|repaired|fitted|delivered|ordered)\b(?:\W+\w+){0,8}?\W+$",
    re.I,
)
_YEAR = re.compile(r"(?<!\d)(?:1[89]|2[01])\d\d(?!\d)")
_HOW_MANY = re.compile(r"\bhow many ([^\W\d_][\w-]*)", re.I)
# "How many <things> do I own / does Nils have?": a count of the things held (the verb ends
# the question; "has Nils read" is no holding).
_OWNED = re.compile(r"\bhow many\b[^?]*\s(?:own|owns|have|has|possess|possesses|keep|keeps)\W*$", re.I)
# A state said of the things right after their name, before their value ("supers on: 0",
# "kayaks out: 2", "chairs needed: 12"): a count of those in that state, not of those held.
# The state closes the name: a value follows ("supers on: 0"), not a place ("hives on Hollins Farm").
_IN_A_STATE = re.compile(
    r"\s+(?:on|off|out|left|used|needed|missing|due|lost|sold|lent|borrowed|broken|wanted|ordered)"
    r"(?=\s*(?:[:=(|–—-]|\d|[.;,]|$))",
    re.I,
)
# A rule, a permission, a plan or a condition: what may, must or will be, not what is. A
# clause saying one ("The hives may move to plot 23") proves neither where the hives are nor
# how many there are, unless the question asks about the rule itself ("How many may I keep?").
# "may" in lower case only: "3 May" is a date.
_RULE = re.compile(
    r"\b(?:(?-i:may)|must|should|shall|could|might|would|will|can|allow(?:s|ed)?|permit(?:s|ted)?|capped|limited|"
    r"plan(?:s|ned)? to|intend(?:s|ed)? to|want(?:s|ed)? to|hope(?:s|d)? to|aim(?:s|ed)? (?:to|for)|going to|"
    r"if|unless)\b",
    re.I,
)
# A bound set on the things named after it ("Cap at five hives", "at most 3 guests"); after
# them it bounds something else ("the solver, time limit 90 seconds").
_BOUND = re.compile(r"\b(?:caps?|limits?|at most|no more than|not more than|up to|max(?:imum)?|min(?:imum)?)\b", re.I)
# "Where on the allotment …" asks for a position within a place the question names; a
# sentence that only puts the thing at that place ("hives at the allotment, plot 23") gives none.
_WHERE_WITHIN = re.compile(r"\bwhere\s+(?:on|in|at|inside|within|around)\s+(?:the|my|our|this|that|\w+['’]s)\b", re.I)
_POSITION = re.compile(
    r"\b(?:along|alongside|beside|behind|under|underneath|beneath|below|above|over|next to|near|nearest|opposite|"
    r"between|facing|inside|in front of|on top of|by the|left|right|sides?|ends?|edges?|corners?|back|front|top|"
    r"bottom|middle|centre|center|rear|north|south|east|west|\w+ward|(?:north|south)-?(?:east|west)(?:ern)?|"
    r"(?:north|south|east|west)ern|floor|level|storey|shelf|shelves|drawer|cupboard|room|row|aisle|bay|bed|stand|"
    r"spot|position|gate|door|wall|hedge|fence|path)\b",
    re.I,
)
_CLAUSE = re.compile(r"\s*(?:[;:—–]|\s-\s|,\s*(?:but|and|so|while)\b)\s*", re.I)
_PERSONAL = re.compile(r"\b(?:[Mm]y|[Mm]ine|[Mm]e|[Oo]urs?|I)\b")
_WHAT_IS_MINE = re.compile(r"\b(?:what|which)\b[^?]*?\b(?:is|are|was|were)\b[^?]*?(?:\bmy\b|\bour\b|['’]s\b)", re.I)
_FIRST_PERSON = re.compile(r"\b(?:I|[Mm]y|[Mm]e|[Mm]ine|[Ww]e|[Oo]urs?|[Uu]s)\b")
# Right before a term: the thing is someone else's.
_OTHERS = re.compile(r"(?:\b(?:their|his|her|your|its)|\b[A-Z][\w-]*['’]s|\]\]['’]s)\s+$")
_DEFINES = re.compile(
    r"^\W*(?:(?:an?|the)\s+)?[^.:;]{1,60}?\s(?:is|are)\s+(?:an?|the|one of)\s|"
    r"\b(?:means|refers to|is defined as|stands for)\b",
    re.I,
)
# A glossary's entry: "**Blood pressure**: the force of the blood against the artery walls",
# or a table's row "| eGFR | estimated glomerular filtration rate … |".
_ENTRY = re.compile(r"^\W*(?:\*\*|__)?(?P<term>[^:*_|\n]{1,60}?)(?:\*\*|__)?\s*[:—–|]\s+(?P<rest>\S.*)$", re.S)
# A question about a named person's thing: "When is Erik's birthday?", "… Élodie's …".
_NAMED_OWNER = re.compile(r"\b(?P<name>[^\W\d_][\w-]*)['’]s\b")
# A sentence that opens with a person, then a comma, a bracket, a dash or "'s": "Nora, born
# 2019 — …". Not a colon: "Goal: 20 books" is a label.
_OPENS_WITH_NAME = re.compile(
    r"^\W*(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)?(?P<name>[^\W\d_]{2,})(?:\s*[,(—–]|['’]s\b)"
)
# A note or section of definitions: what it says of a thing is no value of the owner's.
_GLOSSARY = re.compile(r"\b(?:glossary|definitions|abbreviations|acronyms|jargon|dictionary)\b", re.I)
_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
_MONTHS = frozenset("january february march april may june july august september october november december".split())
_TITLES = frozenset("dr mr mrs ms mx prof sir".split())
_OPENS_WITH_LINK = re.compile(r"^\s*(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)?!?\[")
# The thing, a few words that qualify it ("rate for small jobs"), then its value.
_VALUE_AFTER = re.compile(
    r"(?:\s+[\w'’-]+){0,4}?\s*(?:\*\*|__)?\s*(?:[:=|—–]|-\s|\((?!was\b)|\b(?:is|are|was|were)\b)\s*\S", re.I
)
_MINE_BEFORE = re.compile(r"\b(?:is|are|was|were|['’]s)\s+(?:my|our|[A-Z][\w-]*['’]s)\s+$", re.I)
# Words that make a thing a stand-in for the real one, or one no longer in place.
_STAND_IN = frozenset("mock practice trial sample dummy draft example fake test template former previous ex".split())
_OF = re.compile(r"\s+of\s", re.I)
_WORD = re.compile(r"[^\W_][\w'’-]*")


def personal(question: str | Question, owner: Collection[str] = ()) -> bool:
    """Whether `question` asks about the owner: "my", "I", "our", or the owner's name
    (`owner`: its casefolded words)."""
    q = as_question(question)
    return bool(_PERSONAL.search(q.text)) or any(t in owner for t in q.tokens)


def proving_sentence(
    question: str | Question,
    quote: str,
    *,
    focus: Sequence[str],
    forms: Mapping[str, frozenset[str]],
    names: Sequence[str],
    wants: frozenset[str] | None,
    owner: Collection[str] = (),
) -> str | None:
    """The first sentence of `quote` that proves an answer to `question` (the module's
    rules), as the owner sees it; None when none does.

    `focus`: the question's focus terms, `forms` their word forms; `names`: what the
    passage is read with (its note's title and aliases, its headings, a table's header
    row); `wants`: the kinds of value asked (`question.expects`); `owner`: the owner's name.
    """
    question = as_question(question)
    mine = personal(question, owner)
    text = question.text
    valued = mine and bool(_WHAT_IS_MINE.search(text)) and wants is None
    why = bool(_WHY.search(text))
    counted = _HOW_MANY.search(text)
    year_asked = bool(_WHAT_YEAR.search(text))
    deeds = bool(_YEAR_OF.search(text))
    past = bool(_PAST.search(text))
    glossary = any(_GLOSSARY.search(n) for n in names)
    about_someone = mine or any(m["name"][0].isupper() for m in _NAMED_OWNER.finditer(text))
    measure = next((units for rx, units in _MEASURES if rx.search(text)), None)
    dated = [x for x in specifics(text) if x.kind == "date" and x.key[2] is not None]
    numbered = _NUMBER_OF.search(text) if wants and "number" in wants else None
    within = bool(_WHERE_WITHIN.search(text))
    ruled = bool(_RULE.search(text) or _BOUND.search(text))
    for raw in sentences(quote):
        shown = visible(raw)
        # A key word only in retired text ("(was: Hamburg)", "~~Hamburg~~") is not in the note
        # as it stands, unless the question asks about the past.
        current = shown if past else _STRUCK.sub(" ", strip_old_wording(shown))
        if unmentioned(question, focus, [(current, names)]):
            continue
        if wants and not _has_value(raw if "url" in wants else shown, wants, counted.group(1) if counted else ""):
            continue
        if why and not _REASON.search(shown):
            continue
        if measure and not any(x.kind == "amount" and x.key[1] in measure for x in specifics(shown)):
            continue
        if year_asked and not _YEAR.search(" ".join(s.text for s in specifics(shown) if s.kind in ("date", "number"))):
            continue  # "what year" wants a year, not "Sunday mornings"
        if deeds and _only_dates_of_deeds(shown):
            continue
        if dated and not any(_same_day(d, x) for d in dated for x in specifics(" ; ".join((shown, *names)))):
            continue
        if numbered and not _numbered(shown, numbered.group("thing"), forms):
            continue
        if _aside(shown, question, focus, names, wants):
            continue
        if counted and _OWNED.search(text) and _counted_in_a_state(shown, counted.group(1), forms):
            continue
        if _another_kind(shown, question, focus, forms):
            continue
        if not ruled and _only_a_rule(shown, focus, forms):
            continue
        if within and not _POSITION.search(shown):
            continue
        if _another_head(shown, text, forms):
            continue
        if mine and (glossary or _elsewhere(raw, shown, focus, forms)):
            continue
        if about_someone and _someone_else(shown, question, names):
            continue
        if valued and not _valued(shown, focus, forms):
            continue
        return shown
    return None


def disagree(one: str, other: str, wants: frozenset[str] | None) -> bool:
    """Whether two sentences that prove when something is give different dates (or, with
    no date in one, different times) and share none ("Monday 2 November" in a log,
    "Tuesday 3 November (was: Monday 2 November)" in the dentist's note; old wording is no
    value): two notes that disagree prove neither, and
    the reader names both as leads. Counts are left alone: two notes may count different
    things ("11 supers" owned, "2 supers" on one hive)."""
    for kind in ("date", "time"):
        if not wants or kind not in wants:
            continue
        mine = [s for s in specifics(strip_old_wording(one)) if s.kind == kind]
        theirs = [s for s in specifics(strip_old_wording(other)) if s.kind == kind]
        if mine and theirs:
            return not any(_same_value(a, b) for a in mine for b in theirs)
    return False


def _only_dates_of_deeds(shown: str) -> bool:
    """Whether every date of the sentence is the date of something done ("Bought from a
    farmer near Tuam, March 2024"): no year of the thing itself."""
    work, found = located(shown)
    dates = [a for a, _, x in found if x.kind == "date" or (x.kind == "number" and _YEAR.fullmatch(x.text))]
    return bool(dates) and all(_DONE.search(work[:a]) for a in dates)


def _same_day(asked: Specific, found: Specific) -> bool:
    """Whether `found` is the day the question names ("3 October" in "2026-10-03"; not
    "October" alone)."""
    return found.kind == "date" and found.key[2] == asked.key[2] and _same_value(asked, found)


def _same_value(a: Specific, b: Specific) -> bool:
    """Whether two specifics may state the same value: a date covers another's parts."""
    if a.kind != b.kind:
        return False
    if a.kind == "date":
        pairs = [(x, y) for x, y in zip(a.key, b.key, strict=True) if x is not None and y is not None]
        return all(x == y for x, y in pairs)
    return a.key == b.key


def _has_value(text: str, wants: frozenset[str], counted: str) -> bool:
    """Whether `text` holds a value of a kind in `wants`; for "how many <counted>", a bare
    count or an amount in that unit ("12 km" for kilometres), never one in another."""
    unit = _unit(counted) if counted else None
    for spec in specifics(text):
        if not answers_kind(spec, wants):
            continue
        if counted and spec.kind == "amount" and spec.key[1] != unit:
            continue  # "48 hours" is no count of supers
        return True
    return False


def _numbered(shown: str, thing: str, forms: Mapping[str, frozenset[str]]) -> bool:
    """Whether the sentence gives the asked thing's number right after the thing ("plot
    17", "chassis number VF7…"), not a number of something else ("3 rows")."""
    term = next(iter(tokenize(thing)), thing.casefold())
    return any(re.match(_NUMBERED, shown[end:], re.I) for _, end in _term_spans(shown, [term], forms))


# What a parenthesis holds: "(the 19th clashed with the late week)". Not a dash: '"Slow
# German" — for listening practice' describes the thing before it.
_ASIDE = re.compile(r"\([^()]*\)")


def _aside(
    shown: str, question: Question, focus: Sequence[str], names: Sequence[str], wants: frozenset[str] | None
) -> bool:
    """Whether a focus term stands only in a parenthesis that holds no value of the kind
    asked: a side remark, not what the sentence is about ("NCT rebooked to 26 November (the
    19th clashed with the late week)" dates the NCT, not the late week; "Scoil Íde (new
    teacher this year)" names no teacher). "(currently AS-2026-041)" holds its value."""
    outside = _ASIDE.sub(" ", shown)
    missing = unmentioned(question, focus, [(outside, names)]) if outside != shown else []
    if not missing:
        return False
    holding = [
        m.group()
        for m in _ASIDE.finditer(shown)
        if len(unmentioned(question, missing, [(m.group(), ())])) < len(missing)
    ]
    return not any(_has_value(a, wants, "") if wants else specifics(a) for a in holding)


def _counted_in_a_state(text: str, counted: str, forms: Mapping[str, frozenset[str]]) -> bool:
    """Whether `text` names the counted things (in any form) with a state right after them."""
    term = next(iter(tokenize(counted)), counted.casefold())
    return any(_IN_A_STATE.match(text, end) for _, end in _term_spans(text, [term], forms))


def _unit(word: str) -> str | None:
    """The unit key `word` names when counted ("kilometres" -> "km"), or None."""
    found = [s for s in specifics(f"2 {word}") if s.kind == "amount"]
    return str(found[0].key[1]) if found else None


def _term_spans(text: str, focus: Sequence[str], forms: Mapping[str, frozenset[str]]) -> list[tuple[int, int]]:
    """Where the words of `text` that are forms of a focus term stand."""
    wanted = set().union(*(forms.get(t, frozenset({t})) for t in focus)) if focus else set()
    return [m.span() for m in _WORD.finditer(text) if set(tokenize(m.group())) & wanted]


def _another_kind(shown: str, question: Question, focus: Sequence[str], forms: Mapping[str, frozenset[str]]) -> bool:
    """Whether the sentence names only a stand-in for an asked thing: each time it names a
    focus term, a word of `_STAND_IN` the question lacks stands right before ("mock exam"
    for the exam, "sample invoice", "former accountant")."""
    asked = set(question.tokens)
    before: dict[str, list[bool]] = {}
    words = list(_WORD.finditer(shown))
    for i, m in enumerate(words):
        for t in (t for t in focus if set(tokenize(m.group())) & forms.get(t, frozenset({t}))):
            prev = words[i - 1].group().casefold() if i else ""
            before.setdefault(t, []).append(prev in _STAND_IN and prev not in asked)
    return any(all(v) for v in before.values())


def _only_a_rule(shown: str, focus: Sequence[str], forms: Mapping[str, frozenset[str]]) -> bool:
    """Whether every clause of the sentence that names a focus term states a rule, a
    permission, a plan or a condition (`_RULE`), or opens its naming of them with a bound
    (`_BOUND` within the four words before the first), rather than saying what is: "Cap at five
    hives on plot 23; the allotment committee allows six" says where the hives may be, not
    where they are."""
    naming = [(c, spans) for c in _CLAUSE.split(shown) for spans in [_term_spans(c, focus, forms)] if spans]
    return bool(naming) and all(
        _RULE.search(c) or _BOUND.search(_words_before(c, spans[0][0], 4)) for c, spans in naming
    )


def _words_before(text: str, at: int, n: int) -> str:
    """The last `n` words of `text` before index `at`."""
    return " ".join(m.group() for m in list(_WORD.finditer(text[:at]))[-n:])


def _elsewhere(raw: str, shown: str, focus: Sequence[str], forms: Mapping[str, frozenset[str]]) -> bool:
    """Whether a sentence is about someone or something other than the owner: the asked
    thing is someone else's ("their accountant", "[[Anna]]'s bike"), or, with no "I", "my"
    or "we" in it, the sentence opens with a link to another note or defines the thing."""
    if any(_OTHERS.search(raw[:a]) for a, _ in _term_spans(raw, focus, forms)):
        return True
    if _FIRST_PERSON.search(shown):
        return False
    return bool(_OPENS_WITH_LINK.match(raw)) or bool(_DEFINES.search(shown)) or _describes(shown, focus, forms)


def _describes(shown: str, focus: Sequence[str], forms: Mapping[str, frozenset[str]]) -> bool:
    """Whether the sentence is a glossary's entry for an asked thing: the thing, a colon
    and a description of six words or more that opens in lower case with no number or name
    ("Resting heart rate: beats per minute when fully at rest"), not a value ("Car: a 2015
    Škoda Octavia") nor a label of its own ("Good: hessian sacking from the roaster")."""
    m = _ENTRY.match(shown)
    words = m["rest"].split() if m and _term_spans(m["term"], focus, forms) else []
    return (
        len(words) >= 6
        and words[0][:1].islower()
        and not any(w[:1].isupper() or any(c.isdigit() for c in w) for w in words[:3])
    )


def _someone_else(shown: str, question: Question, names: Sequence[str]) -> bool:
    """Whether a sentence opens with a person neither the question nor the passage's names
    name ("Nora, born 2019 — birthday 9 February" in Erik's note): it is about that person."""
    m = _OPENS_WITH_NAME.match(unicodedata.normalize("NFC", shown))  # "Élodie" written in NFD too
    if m is None or not m["name"][0].isupper():
        return False
    name = m["name"].casefold()
    known = set(question.tokens) | set(tokenize(" ".join(names)))
    ordinary = name in STOPWORDS or name in _MONTHS or name in _WEEKDAYS or name in _TITLES
    return not ordinary and name not in known and not _FIRST_PERSON.search(shown)


# "What folding bike …", "Which electric pump …": the asked thing, a lower-case word before it.
_WHAT_KIND = re.compile(
    r"\b(?i:what|which)\s+(?P<kind>[a-z][\w-]*)\s+(?P<thing>[a-z][\w-]*)\s+(?:do|does|did|is|are|was|were|have|has)\b"
)


def _another_head(shown: str, text: str, forms: Mapping[str, frozenset[str]]) -> bool:
    """Whether the sentence has the kind the question asks for ("What folding bike …")
    only before another thing ("folding lock") and never names the thing asked."""
    m = _WHAT_KIND.search(text)
    if m is None:
        return False
    kind, thing = (next(iter(tokenize(m[g])), m[g]) for g in ("kind", "thing"))
    words = [m.group() for m in _WORD.finditer(shown)]
    keys = [set(tokenize(w)) for w in words]
    if any(k & forms.get(thing, frozenset({thing})) for k in keys):
        return False
    at = [i for i, k in enumerate(keys) if k & forms.get(kind, frozenset({kind})) and words[i].islower()]
    return bool(at) and all(i + 1 < len(words) and words[i + 1].isalpha() and not keys[i + 1] <= STOPWORDS for i in at)


def _valued(shown: str, focus: Sequence[str], forms: Mapping[str, frozenset[str]]) -> bool:
    """Whether an asked thing stands with a value: "<thing>: …", "<thing> is …", "… is my
    <thing>", "<thing> of <a number, date or name>", or in a table cell."""
    for a, b in _term_spans(shown, focus, forms):
        if _VALUE_AFTER.match(shown, b) or _MINE_BEFORE.search(shown[:a]):
            return True
        if _OF.match(shown, b) and specifics(shown[b:]):  # "payment terms of 14 days"
            return True
    return False

"""Whether an answer is its quotes, up to edits known to keep the truth: the gate of VERIFIED.

The answer is aligned onto its quotes word by word, in order, clause by clause. Every
difference must be one of the safe edits of `cortex.ask.edit_rules.SAFE` (a word's other
form or a synonym, "my" for "your", a whole clause left out, clauses or two coordinated
items reordered, passive for active, "X is Y" for "Y is X", the question's own words, ...).
Any other difference (a word left out that is not empty, a word changed, added or moved)
refuses VERIFIED, and `Derivation.reason` says which rule refused it, quoting both sides.

This is built the other way round from a list of contradictions: an edit nobody has thought
of is not among the safe ones, so it fails closed.

Pure functions, no I/O; never raise on a str.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cortex.ask import edit_rules as R
from cortex.ask.claim_words import BLOCK_START
from cortex.ask.lexicon import PREFIXES, form_class, is_verb, lemma, same_form, same_sense, verb_weight
from cortex.ask.normal_form import normalize_nfc
from cortex.ask.specifics import Specific, located, strip_old_wording, supported
from cortex.notes.shown import visible

__all__ = ["Derivation", "Tok", "derive", "takes_number", "tokens", "units"]

# The subject an agentless passive leaves unsaid: it stands for any words before the verb.
AGENT = "*agent*"
# What a clause may consist of and claim nothing ("Yes.", "According to your notes:").
_NO_CLAIM = frozenset({"empty-word", "framing"})
# Answers longer than this many tokens, or quotes longer than QUOTE_TOKENS, are not aligned:
# they fail closed.
MAX_TOKENS = 400
QUOTE_TOKENS = 2_000
# The claims an answer clause is aligned onto: those sharing the most words with it. With 4,
# every verdict on eval/claims.jsonl and both blind sets (746 cases) is as with all claims
# (4 refusals name another word), and a 100-word paragraph's quote costs 10-35 ms, not 0.1-0.9 s.
CANDIDATES = 4
_NUMERIC = frozenset({"date", "time", "amount", "number"})
_TOKEN = re.compile(
    r"(?P<w>[^\W_]+(?:['’-][^\W_]+)*)|(?P<p>[;:,()|]|[.!?](?=\s|$)|\s[-–—]\s|\n)",
)
_CONTRACTED = {
    "isn't": ["is", "not"], "aren't": ["are", "not"], "wasn't": ["was", "not"], "weren't": ["were", "not"],
    "don't": ["do", "not"], "doesn't": ["does", "not"], "didn't": ["did", "not"], "can't": ["can", "not"],
    "won't": ["will", "not"], "wouldn't": ["would", "not"], "couldn't": ["could", "not"],
    "shouldn't": ["should", "not"], "haven't": ["have", "not"], "hasn't": ["has", "not"],
    "hadn't": ["had", "not"], "mustn't": ["must", "not"], "cannot": ["can", "not"],
    "let's": ["let", "us"],
}  # fmt: skip
_CLITIC = {"re": "are", "ve": "have", "ll": "will", "m": "am", "d": "would"}
# A sign written against its number, read as the word it says.
_SIGN_CHARS = {"−": "−", "-": "−", "+": "+", "±": "±", "~": "~"}
_FOOTNOTE = re.compile(r"\[\^[^\]\s]{1,40}\]")
# Struck text (~~£28~~ £30): the owner's old value, which the quote no longer claims.
_STRUCK = re.compile(r"~~[^~\n]+~~")
_IS_BEFORE = frozenset("it that there here what who where when he she this".split())


@dataclass(frozen=True)
class Tok:
    """One word of a text as the gate compares it: `key` is the casefolded word, "§" for a
    number, date, time or amount (`spec`), "," or ":" for the marks the rules read."""

    text: str
    key: str
    spec: Specific | None = None
    tense: str = ""  # set on a verb the voice rule made active: its tense class
    bounded: bool = False  # a date a bound or span bears on ("before 14 March", "1 May–31 Aug")


@dataclass
class Unit:
    """A stretch of a quote that states a claim of its own: a sentence, a clause joined to
    it by ", and" / ", but" / ", which" ..., or an aside in brackets. `droppable`: the
    answer may leave it out whole (rule `whole-clause`)."""

    toks: list[Tok]
    droppable: bool
    source: int  # which quote
    cell: bool = False  # a table row's cell: left out only when the answer names its columns


@dataclass
class Derivation:
    """The gate's verdict: `ok`, else the rule that refused and its reason."""

    ok: bool
    rule: str = ""
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok

    @property
    def said(self) -> str:
        """The reason with its rule, its bracket left open for the caller's own words."""
        return f"{self.reason} (rule {self.rule}"


def _lines(text: str) -> str:
    """`text` normalised line by line as quotes are (a list item's or heading's marker left
    out); a line that opens a block, or follows a blank line, starts a clause, and any other
    line goes on its paragraph: a wrapped line ends no clause."""
    out: list[str] = []
    blank = True
    for line in text.splitlines():
        if not line.strip():
            blank = True
            continue
        opens = blank or BLOCK_START.match(line) is not None
        out.append(("\n" if opens and out else " ") + normalize_nfc(line))
        blank = False
    return "".join(out).strip()


def tokens(text: str) -> list[Tok]:
    """The words and marks of `text` as the gate reads them: contractions opened ("isn't"
    -> "is not"), a possessive "'s" a word of its own, each number, date, time or amount one
    token, names and identifiers as words."""
    return list(_tokens(text))


_NUMBER_SIGN = re.compile(r"\b(?:No|no|Nr|nr)\.(?=\s?\d)")


# A stamp reads a quote, its sentence and the answer more than once (each reading, the
# sentence's rest): each text is tokenized once.
@functools.lru_cache(maxsize=1024)
def _tokens(text: str) -> tuple[Tok, ...]:
    text = _NUMBER_SIGN.sub("number", text)  # "No. 16" is number 16: no "no", no sentence end
    work, found = located(_FOOTNOTE.sub("", visible(strip_old_wording(_lines(_STRUCK.sub("", text))))))
    spans = [(s, e, spec) for s, e, spec in found if spec.kind in _NUMERIC]
    out: list[Tok] = []
    pos = 0
    for s, e, spec in [*spans, (len(work), len(work), None)]:
        if s < pos:
            continue
        if e - s > 1 and work[e - 1] == "." and re.match(r"\s+[A-Z]", work[e:]):
            e -= 1  # "test 4 June. Probably …": the full stop ends the sentence, not the date
        span = bool(out and out[-1].spec and spec is not None and work[pos:s].strip() in ("-", "–", "—"))
        if span:
            out.append(Tok(work[pos:s].strip(), "–"))  # "6–9", "Mon-Thu", "Mar–Nov": a span
        else:
            out += _words(work[pos:s])
        if spec is not None:
            signed = not span and spec.kind != "date" and s > 0 and work[s - 1] in _SIGN_CHARS
            if signed and (s < 2 or not work[s - 2].isdigit()):
                out.append(Tok(work[s - 1], _SIGN_CHARS[work[s - 1]]))  # "−5 °C", "UTC+9": the sign is a word
            out.append(Tok(work[s:e], "§", spec))
        pos = e
        if spec is not None and re.match(r"(?:st|nd|rd|th)\b", work[e : e + 3]):
            pos = e + 2  # "the 22nd": the ordinal's suffix is the number's, kept in its text
            out[-1] = Tok(work[s:pos], "§", spec)
    return tuple(_bounded(_ranges(_phrases(_do_support(_clitic_s(out))))))


def _bounded(toks: list[Tok]) -> list[Tok]:
    """Each date a bound or span bears on, marked: "before March" says more than "before 14
    March", so such a date is said whole (`_same`)."""
    out = list(toks)
    for k, t in enumerate(toks):
        if t.spec is not None and t.spec.kind == "date":
            before = toks[k - 1].key if k else ""
            if before in R.DATE_BOUNDS or (k + 1 < len(toks) and toks[k + 1].key == "–"):
                out[k] = Tok(t.text, t.key, t.spec, t.tense, bounded=True)
    return out


def _clitic_s(toks: list[Tok]) -> list[Tok]:
    """A possessive "'s" before a participle, "-ing", "been", "not" or a preposition is "is"
    or "has" ("the starter's kept", "Mum's staying", "Dr Okafor's been my GP")."""
    out = list(toks)
    for k, t in enumerate(toks[:-1]):
        if t.key != "'s":
            continue
        nxt = toks[k + 1].key
        if nxt in ("been", "got"):
            out[k] = Tok(t.text, "has")
        elif nxt in R.FUNCTION or nxt in R.RESTRICTS or form_class(nxt) not in ("plain",) or toks[k + 1].spec:
            out[k] = Tok(t.text, "is")
    return out


def _ranges(toks: list[Tok]) -> list[Tok]:
    """A span of two numbers or dates said any way ("from 6 to 9", "between 6 and 9", "6–9",
    "Monday through Thursday") as the two with "–" between, and a bound after its number ("£40 or
    more", "by 10:00 at the latest") before it: the claims check compares both."""
    out: list[Tok] = []
    k = 0
    while k < len(toks):
        t = toks[k]
        if (
            t.key in ("from", "between")
            and k + 3 < len(toks)
            and toks[k + 1].spec
            and toks[k + 2].key in R.SPAN_JOIN
            and toks[k + 3].spec
        ):
            out += [toks[k + 1], Tok(toks[k + 2].text, "–")]
            k += 3
            continue
        spans = t.key in R.SPAN_JOIN and t.key != "and"  # "Monday and Thursday" is two days, no span
        if spans and out and out[-1].spec and k + 1 < len(toks) and toks[k + 1].spec:
            out.append(Tok(t.text, "–"))
            k += 1
            continue
        if t.spec is not None:
            for words, meaning in R.POST_BOUNDS:
                n = len(words)
                if tuple(x.key for x in toks[k + 1 : k + 1 + n]) == words:
                    if not (out and out[-1].key == meaning):
                        out.append(Tok(" ".join(x.text for x in toks[k + 1 : k + 1 + n]), meaning))
                    out.append(t)
                    k += 1 + n
                    break
            else:
                out.append(t)
                k += 1
            continue
        out.append(t)
        k += 1
    return out


def _phrases(toks: list[Tok]) -> list[Tok]:
    """Each phrase of `edit_rules.PHRASES` as one word, its meaning's name ("no more than"
    and "at most" are both "≤"), where the rule's context holds (a bound before a number)."""
    out: list[Tok] = []
    i = 0
    while i < len(toks):
        for words, meaning, before_number in R.PHRASE_LIST:
            n = len(words)
            if tuple(t.key for t in toks[i : i + n]) == words and (not before_number or _number_at(toks, i + n)):
                out.append(Tok(" ".join(t.text for t in toks[i : i + n]), meaning))
                i += n
                break
        else:
            out.append(toks[i])
            i += 1
    return out


def _number_at(toks: list[Tok], i: int) -> bool:
    """Whether a number, date, time or amount starts at `toks[i]`, its sign included."""
    if i < len(toks) and (toks[i].key in R.SIGNS or toks[i].key in ("minus", "negative")):
        i += 1
    return i < len(toks) and toks[i].spec is not None


def _do_support(toks: list[Tok]) -> list[Tok]:
    """ "does (not) cover" as "(not) cover", "did (not) cover" as "(not) covered": the
    auxiliary's tense moves onto the verb, so it compares with the verb said plainly."""
    out: list[Tok] = []
    for i, t in enumerate(toks):
        if t.key in ("do", "does", "did") and i + 1 < len(toks):
            k = i + 2 if toks[i + 1].key == "not" else i + 1
            if (
                k < len(toks)
                and toks[k].key.isalpha()
                and toks[k].key not in R.FUNCTION
                and form_class(toks[k].key) == "plain"
            ):
                continue
        prev = [x.key for x in toks[max(0, i - 2) : i]]
        if t.key.isalpha() and t.key not in R.FUNCTION and ("did" in prev[-1:] or prev == ["did", "not"]):
            out.append(Tok(t.text, t.key, tense="past"))
            continue
        out.append(t)
    return out


def _words(text: str) -> list[Tok]:
    out: list[Tok] = []
    for m in _TOKEN.finditer(text):
        if m.group("p"):
            mark = m.group("p").strip() or "\n"
            out.append(Tok(mark, {"(": "(", ")": ")", ",": ",", ":": ":", "~": "~"}.get(mark, "|")))
            continue
        raw = m.group("w").replace("’", "'")
        low = raw.casefold()
        if low in _CONTRACTED:
            out += [Tok(raw, k) for k in _CONTRACTED[low]]
            continue
        if low.endswith("n't"):
            out += [Tok(raw, low[:-3]), Tok(raw, "not")]
            continue
        head, _, tail = low.rpartition("'")
        if head and tail == "s":
            out += [Tok(raw[: len(head)], head), Tok("'s", "is" if head in _IS_BEFORE else "'s")]
        elif head and tail in _CLITIC:
            out += [Tok(raw, head), Tok(raw, _CLITIC[tail])]
        else:
            parts = [part for part in re.split(r"['-]", low) if part]
            if len(parts) == 2 and parts[0] in PREFIXES:
                parts = ["-".join(parts)]  # "re-felted" is one verb, so voice can read it
            out += [Tok(raw, part) for part in parts]
    return out


def units(text: str, source: int = 0) -> list[Unit]:
    """The claims of a quote: its sentences, each cut at a clause joined by a comma and a
    joining word (", and", ", but", ", which"), at a bracketed aside, and at "and"/"but"
    before a new subject. Conditions ("if", "unless", "only when") stay with their clause."""
    return _units(tokens(text), source)


def _units(toks: list[Tok], source: int = 0) -> list[Unit]:
    out: list[Unit] = []
    cur: list[Tok] = []
    cur_drop = True
    cell = False  # the last unit closed at a table's "|"
    aside: list[Tok] | None = None

    def close(drop: bool, in_row: bool = False) -> None:
        nonlocal cur
        if any(t.key not in R.MARKS for t in cur):
            out.append(Unit(cur, drop, source, in_row))
        cur = []

    skip = -1
    for i, t in enumerate(toks):
        nxt = toks[i + 1].key if i + 1 < len(toks) else ""
        if i <= skip:
            continue
        if aside is None and t.key == "," and nxt in R.RELATIVES and (end := _relative_end(toks, i)):
            # ", which is quite stiff," inside a sentence: an aside the main clause goes on after
            held = toks[i + 1 : end]
            out.append(Unit(held, not any(a.spec or a.key in R.RESTRICTS for a in held), source))
            skip = end
            continue
        if aside is not None:
            if t.key == ")":
                keep = any(a.spec or a.key in R.RESTRICTS for a in aside)
                if keep:
                    cur += aside
                else:
                    out.append(Unit(aside, True, source))
                aside = None
            else:
                aside.append(t)
            continue
        if t.key == "(":
            aside = []
        elif t.key == "|" and t.text == "?":
            cur = []  # a question claims nothing: no answer follows from it
        elif t.key == "|":
            in_row = t.text == "|" or cell
            close(cur_drop and not in_row, in_row)  # a table's cell is no claim of its own
            cell = t.text == "|"
            cur_drop = True
        elif t.key == "," and nxt in R.CLAUSE_JOINS:
            close(cur_drop)
            cur_drop = True
        elif t.key in ("and", "but") and nxt in R.NEW_SUBJECT and len(cur) >= 2 and not _collective(toks):
            close(cur_drop)
            cur_drop = True
            cur.append(t)
        else:
            cur.append(t)
    if aside:
        cur += aside
    close(cur_drop)
    return out


def _relative_end(toks: list[Tok], at: int) -> int:
    """Where a relative clause opened by the comma at `at` ends with a comma of its own that
    the main clause goes on after ("The stopcock, which is quite stiff, is under the sink"),
    or 0: it runs to its sentence's end, or a joining word follows ("…, and Sam")."""
    for j in range(at + 2, len(toks) - 1):
        if toks[j].key == "|":
            return 0
        if toks[j].key == ",":
            following = toks[j + 1].key
            return 0 if following in R.CLAUSE_JOINS or following in ("or", "|", ",") else j
    return 0


def restricted_rest(sentence: str, quote: str) -> bool:
    """Whether the rest of `sentence` outside `quote`, in the quote's own clause, holds a word
    that restricts it ("The bins go out on Tuesday, except in August"): then the quote alone
    is no claim of the note's, and the answer is compared with the whole sentence."""
    at = sentence.find(quote)
    if at < 0:
        return True
    ends = " | " if quote.rstrip()[-1:] in (".", "!", "?", ";") else " "  # the quote's own full stop
    rest = units(f"{sentence[:at]} zzquotezz{ends}{sentence[at + len(quote) :]}")
    mark = next((u for u in rest if any(t.key == "zzquotezz" for t in u.toks)), None)
    return mark is None or any(t.key in R.RESTRICTS for t in mark.toks)


def _collective(toks: list[Tok]) -> bool:
    return any(t.key in R.COLLECTIVE for t in toks)


# --- comparing two words ------------------------------------------------------------------


@functools.lru_cache(maxsize=65536)
def _same(a: Tok, q: Tok) -> str:
    """The safe edit that makes answer word `a` quote word `q`, or "" when none does."""
    if a.spec is not None or q.spec is not None:
        if a.spec is not None and q.spec is not None and a.spec.kind == q.spec.kind:
            if (a.bounded or q.bounded) and not supported(q.spec, a.text, [a.spec]):
                return ""  # a bounded date is said whole: every part the quote states
            return "number-form" if supported(a.spec, q.text, [q.spec]) else ""
        return ""
    if a.key == q.key and not (a.tense or q.tense):
        return "same-word"
    if a.key in R.COPULA and q.key in R.COPULA or {a.key, q.key} == {"'s", "is"}:
        return "same-word"  # "The lido's open" is "The lido is open"
    if R.PERSON.get(q.key) == a.key or R.PERSON.get(a.key) == q.key:
        return "person"
    if R.PAST_COPULA.get(a.key) == R.PAST_COPULA.get(q.key) is not None:
        return "person"  # "I was" -> "you were"
    if a.tense or q.tense:
        ta = a.tense or form_class(a.key)
        tq = q.tense or form_class(q.key)
        ta, tq = ("past" if ta not in ("plain", "ing") else ta), ("past" if tq not in ("plain", "ing") else tq)
        if ta == tq and (lemma(a.key) == lemma(q.key) or same_sense(lemma(a.key), lemma(q.key))):
            return "voice"
        return ""
    if not (a.key.isalpha() and q.key.isalpha()) or a.key in R.FUNCTION or q.key in R.FUNCTION:
        return ""
    if same_form(a.key, q.key):
        return "same-word"
    if same_sense(a.key, q.key):
        return "synonym"
    return ""


# --- aligning -----------------------------------------------------------------------------


@dataclass
class _Ctx:
    """What the answer may add besides the quote: the question's words, the quoted notes'
    titles and headings (names), a table's column headings (any word)."""

    asked: frozenset[str]
    named: frozenset[str]
    headed: frozenset[str]
    asked_specs: frozenset[str] = frozenset()  # the question's numbers and dates, as written
    asked_dates: frozenset[tuple] = frozenset()  # and its dates as read ("Tuesday" is "Tue")
    # The question's words as written (casefolded), each with the tense "did" gave it.
    asked_words: frozenset[tuple[str, str]] = frozenset()
    # The question's words each with the preposition after it ("escalate to"), as lemmas.
    asked_pairs: frozenset[tuple[str, str]] = frozenset()


def _addable(t: Tok, ctx: _Ctx, capital: bool) -> str:
    """The safe edit that lets the answer add word `t`, or ""."""
    k = t.key
    if k == AGENT:
        return "voice"
    if k in R.MARKS or k in R.EMPTY:
        return "empty-word"
    if k in R.FRAMING:
        return "framing"
    if k in R.PRONOUN:
        return "pronoun"
    if k == "your":
        return "person"  # "The router is …" said to its owner as "Your router is …"
    if k in ctx.asked and k in R.PERSON.values():
        return "question-words"  # "my dentist?" answered "your dentist …"
    if t.spec is None and k not in R.NEGATIONS and k not in R.FUNCTION and lemma(k) in ctx.headed:
        return "context"  # a column's heading said with its cell ("new price €4"); the claims check pairs them
    if t.spec is None and k not in R.RESTRICTS and k not in R.FUNCTION:
        if _asked_form(t, ctx) and k not in R.TENSE_WORDS:  # "Was it insured?" adds no "was" to "is insured"
            return "question-words"  # in the question's tense: "Did Tom sell …?" adds no "sold"
        if capital and lemma(k) in ctx.named:
            return "context"
    return ""


def _asked_form(t: Tok, ctx: _Ctx) -> bool:
    """Whether word `t` is a word of the question in the same form and tense ("Does it
    cover …?" restates no "did not cover")."""
    return any(same_form(t.key, w) and t.tense == tense for w, tense in ctx.asked_words)


def _droppable(t: Tok, ctx: _Ctx) -> str:
    """The safe edit that lets the answer leave out quote word `t`, or ""."""
    k = t.key
    if k in R.MARKS or k in R.EMPTY:
        return "empty-word"
    if t.spec is None and k not in R.RESTRICTS and _asked_form(t, ctx):
        return "question-words"  # in the same tense: "Is it …?" leaves no quote's "was" out
    if t.spec is not None and (t.text.casefold() in ctx.asked_specs or t.spec.key in ctx.asked_dates):
        return "question-words"  # "When does the Sunday ride leave?" answered "It leaves at 8am"
    return ""


def _drops(quote: list[Tok], ans: list[Tok], ctx: _Ctx) -> list[bool]:
    """Which quote words a safe edit lets the answer leave out: `_droppable` and `_excused`,
    a preposition between two words of the question ("lessons with Mr Grant" said "they"),
    and one the question says after the same word ("escalate to" of "Who do I escalate to?")."""
    drop = [_excused(_droppable(t, ctx), t, ans, False) for t in quote]
    if any(t.key in R.TENSE_WORDS for t in ans):  # the answer says a tense: the quote's is kept
        kept = [t.key in R.TENSE_WORDS and _droppable(t, ctx) == "question-words" for t in quote]
        drop = [d and not k for d, k in zip(drop, kept)]
    drop = [d or takes_number(quote, j) for j, d in enumerate(drop)]  # "for 25 minutes" said "25 mins"
    for j in range(1, len(quote) - 1):
        if not drop[j] and quote[j].key in R.PREPOSITIONS and drop[j - 1] and drop[j + 1]:
            asked = [_droppable(quote[x], ctx) == "question-words" for x in (j - 1, j + 1)]
            drop[j] = all(asked)
    for j in range(1, len(quote)):  # "Who do I escalate to?" answered "Mark" from "escalate to Mark"
        if not drop[j] and drop[j - 1] and (lemma(quote[j - 1].key), quote[j].key) in ctx.asked_pairs:
            drop[j] = _droppable(quote[j - 1], ctx) == "question-words"
    return drop


def _excused(rule: str, t: Tok, other: list[Tok], answer_side: bool) -> bool:
    """Whether `rule` excuses word `t`: the question's or the context's words only when the
    other side does not hold the word itself."""
    if not rule:
        return False
    if rule not in ("question-words", "context"):
        return True
    if t.key == "'s":  # a possessive: the other side's "is" is no "'s" of its own
        return not any(o.key == "'s" for o in other)
    return not any(_same(t, o) if answer_side else _same(o, t) for o in other)


def _free(ans: list[Tok], quote: list[Tok], ctx: _Ctx, caps: list[bool]) -> list[bool]:
    """Which answer words a safe edit lets the answer add: `_addable` and `_excused`, and a
    preposition that brings in a word of the question or a name of the context ("to Lisbon"
    from a note titled "Lisbon trip")."""
    rules = [_addable(t, ctx, cap) for t, cap in zip(ans, caps)]
    free = [_excused(rule, t, quote, True) for rule, t in zip(rules, ans)]
    for i in range(len(ans) - 1):
        brings = rules[i + 1] in ("question-words", "context") and free[i + 1]
        if not free[i] and ans[i].key in R.PREPOSITIONS and brings:
            free[i] = True
        if not free[i] and takes_number(ans, i):
            free[i] = True  # rule number-form: "on the 17th" for a table's "17th", "for 30 minutes"
    return free


def takes_number(toks: list[Tok], i: int) -> bool:
    """Whether `toks[i]` is the preposition the date, time or quantity after it takes
    (`edit_rules.BEFORE_NUMBER`), or the "of" after an amount: added to a quote's bare one,
    or left out of it."""
    if i + 1 >= len(toks):
        return False
    skip = toks[i + 1].key in ("the", "~") and i + 2 < len(toks)  # "on the 22nd", "at ~50%"
    nxt = toks[i + 2] if skip else toks[i + 1]
    kind = nxt.spec and nxt.spec.kind
    if kind == "number" and re.fullmatch(r"\d+(?:st|nd|rd|th)", nxt.text, re.IGNORECASE):
        kind = "ordinal"  # "on the 22nd"
    elif kind == "number" and re.fullmatch(r"(?:1[6-9]|20)\d\d", nxt.text):
        kind = "year"  # "in 2021"
    if toks[i].key == "of":  # "0.8 litres of water" for "800ml water"
        before = toks[i - 1].spec if i > 0 else None
        return before is not None and before.kind == "amount"
    return kind in R.BEFORE_NUMBER.get(toks[i].key, ())


@dataclass
class _Aligned:
    cost: int
    matches: int
    pairs: list[tuple[int, int, str]]  # (answer index, quote index, rule)


def _align(ans: list[Tok], quote: list[Tok], ctx: _Ctx, caps: list[bool]) -> _Aligned:
    """The order-keeping alignment of `ans` onto `quote` with the fewest unaccounted words
    (then the most matches): an LCS under `_same`."""
    n, m = len(ans), len(quote)
    # The question's words excuse a word only where the other side lacks it: a word both
    # sides hold is aligned, or it has moved.
    add = [0 if free else 1 for free in _free(ans, quote, ctx, caps)]
    drop = [0 if free else 1 for free in _drops(quote, ans, ctx)]
    inf = (1 << 30, 0)
    best = [[inf] * (m + 1) for _ in range(n + 1)]
    best[n][m] = (0, 0)
    for i in range(n, -1, -1):
        for j in range(m, -1, -1):
            if i == n and j == m:
                continue
            options = []
            if i < n:
                c, k = best[i + 1][j]
                options.append((c + add[i], k))
            if j < m:
                c, k = best[i][j + 1]
                options.append((c + drop[j], k))
            if i < n and j < m and _same(ans[i], quote[j]):
                c, k = best[i + 1][j + 1]
                options.append((c, k - 1))
            if i < n and j < m and ans[i].key == AGENT and _agent_word(quote[j]):  # an agent left unsaid
                options.append(best[i][j + 1])
            best[i][j] = min(options)
    pairs: list[tuple[int, int, str]] = []
    i = j = 0
    while i < n or j < m:
        here = best[i][j]
        if i < n and j < m and (rule := _same(ans[i], quote[j])) and best[i + 1][j + 1] == (here[0], here[1] + 1):
            pairs.append((i, j, rule))
            i, j = i + 1, j + 1
        elif i < n and best[i + 1][j] == (here[0] - add[i], here[1]):
            i += 1
        else:
            if i < n and ans[i].key == AGENT and j < m and _agent_word(quote[j]) and best[i][j + 1] == here:
                pairs.append((i, j, "voice"))
            j += 1
    return _Aligned(best[0][0][0], -best[0][0][1], pairs)


def _agent_word(t: Tok) -> bool:
    """A word an unsaid agent may stand for: no auxiliary, modal, restriction or number, and
    no "to": "Going to book the Olive Tree" is a plan, not "the Olive Tree is booked"."""
    return t.spec is None and t.key not in R.PASSIVE_AUX | R.RESTRICTS | R.MARKS and t.key != "to"


# --- the variants the reordering rules allow ------------------------------------------------
# A variant is the clause's words as (index in the clause, word) in their new order; a word
# of the clause a variant leaves out ("by", the auxiliary of a passive) is accounted for.

_Var = list[tuple[int, Tok]]


def _voice_active(v: _Var) -> list[_Var]:
    """ "X is serviced [in May] by Y …" as "Y service X [in May] …": the verb keeps the
    auxiliary's tense, a particle ("backed up") stays with it or goes behind X, and the agent
    ends where a phrase of its own opens, or runs to the clause's end."""
    for k, (_, t) in enumerate(v):
        if t.key not in R.PASSIVE_AUX:
            continue
        p = k + 1
        neg = []  # "isn't covered by": the negation goes before the active verb
        while p < len(v) and (v[p][1].key in ("not", "never") or v[p][1].key.endswith("ly")):
            neg.append(v[p])
            p += 1
        by = next((b for b in range(p + 1, min(p + 2 + R.ADJUNCT_WORDS, len(v))) if v[b][1].key == "by"), None)
        if by is None or form_class(v[p][1].key) in ("plain", "ing"):
            continue
        if any(x.key in R.MARKS or x.key in R.CLAUSE_JOINS for _, x in v[p + 1 : by]):
            return []
        end = by + 1
        while end < len(v) and v[end][1].key not in R.AGENT_END and v[end][1].spec is None:
            end += 1
        if end == by + 1:
            return []
        tense = "past" if t.key in R.PAST_COPULA else "plain"
        verb = [(v[p][0], Tok(v[p][1].text, v[p][1].key, tense=tense))]
        between, ends = v[p + 1 : by], {end}
        if not any(x.key in R.MARKS for _, x in v[end:]):
            ends.add(len(v))
        out = []
        for e in sorted(ends):
            agent, rest = v[by + 1 : e], v[e:]
            out.append(agent + neg + verb + v[:k] + between + rest)
            if between and between[0][1].key in R.PARTICLES:
                out.append(agent + neg + verb + between[:1] + v[:k] + between[1:] + rest)
        return out
    return []


def _agentless_active(v: _Var) -> _Var | None:
    """ "Pets are not allowed in the flat" as "<someone> not allow pets in the flat", and
    "Biscuit is given her tablet" as "give Biscuit her tablet": the passive with no "by"."""
    for k, (_, t) in enumerate(v):
        if t.key not in R.PASSIVE_AUX or k == 0:
            continue
        p = k + 1
        neg = []
        while p < len(v) and (v[p][1].key in ("not", "never") or v[p][1].key.endswith("ly")):
            neg.append(v[p])
            p += 1
        if p >= len(v) or form_class(v[p][1].key) in ("plain", "ing") or not v[p][1].key.isalpha():
            continue
        if v[p][1].key in R.FUNCTION or any(x.key == "by" for _, x in v[p:]):
            return None
        tense = "past" if t.key in R.PAST_COPULA else "plain"
        verb = (v[p][0], Tok(v[p][1].text, v[p][1].key, tense=tense))
        return [(-1, Tok("", AGENT))] + neg + [verb] + v[:k] + v[p + 1 :]
    return None


def _front_moved(v: _Var) -> list[_Var]:
    """A phrase at the clause's front ("On Sundays, …", "In May …", "Every 90 days, …") moved
    to its end: up to its comma, else each of its first 2 to 4 words."""
    if not v or v[0][1].key not in R.FRONTABLE:
        return []
    comma = next((k for k, (_, t) in enumerate(v[:8]) if t.key == ","), None)
    cuts = [comma] if comma is not None and 0 < comma < len(v) - 1 else list(range(2, min(5, len(v) - 1)))
    ends, inside = [], []
    for cut in cuts:  # the phrase put behind the clause, or inside it before any word
        front, rest = v[:cut], v[cut + 1 :] if cut == comma else v[cut:]
        if sum(t.key not in R.EMPTY for _, t in front) < 2 or len(rest) > 30:
            continue  # one word is no phrase: moving it is rule word-moved
        ends.append(rest + front)
        inside += [rest[:at] + front + rest[at:] for at in range(len(rest) - 1, 0, -1)]
    return ends + inside  # the clause's end first: another rule may build on those (`REORDERINGS`)


def _halves_swapped(v: _Var) -> _Var | None:
    """ "A …, and B …" as "B … and A …": the two clauses around the one "and" or ";" of a
    sentence, where no word claims an order."""
    at = [k for k, (_, t) in enumerate(v) if t.key in ("and", ";")]
    if len(at) != 1 or any(t.key in R.ORDER for _, t in v):
        return None
    k = at[0]
    left = v[:k] if v[k - 1][1].key != "," else v[: k - 1]
    return v[k + 1 :] + [v[k]] + left


def _copula_swapped(v: _Var) -> _Var | None:
    """ "X is Y" as "Y is X": the two sides of the clause's one copula, each kept whole."""
    at = [k for k, (_, t) in enumerate(v) if t.key in R.COPULA or t.key in R.PAST_COPULA]
    if len(at) != 1 or at[0] in (0, len(v) - 1):
        return None
    k = at[0]
    if form_class(v[k + 1][1].key) not in ("plain",) and v[k + 1][1].spec is None:
        return None  # "is booked", "is staying": an auxiliary, not a copula
    return v[k + 1 :] + [v[k]] + v[:k]


def _converse(v: _Var) -> list[_Var]:
    """ "X is [the week] after Z" as "Z is [the week] before X": the two sides of the clause's
    one copula traded round a word of `edit_rules.CONVERSE`, said as its converse."""
    at = [k for k, (_, t) in enumerate(v) if t.key in R.COPULA or t.key in R.PAST_COPULA]
    if len(at) != 1 or at[0] == 0:
        return []
    k = at[0]
    out = []
    for c in range(k + 1, min(k + 1 + R.ADJUNCT_WORDS, len(v) - 1)):
        if v[c][1].key in R.MARKS:
            break
        for other in R.CONVERSE.get(v[c][1].key, ()):
            tie = c + 1 if v[c + 1][1].key in ("than", "of") else c  # "older than", "north of"
            end = next((e for e in range(tie + 1, len(v)) if v[e][1].key in R.MARKS), len(v))
            if end == tie + 1:
                continue
            said = (v[c][0], Tok(other, other))
            out.append(v[tie + 1 : end] + v[k:c] + [said] + v[c + 1 : tie + 1] + v[:k] + v[end:])
    return out


def _fronted(v: _Var) -> _Var | None:
    """ "If A, B" as "B if A": a fronted condition or time clause moved behind its clause."""
    if not v or v[0][1].key not in R.SUBORDINATE:
        return None
    comma = next((k for k, (_, t) in enumerate(v) if t.key == ","), None)
    if comma is None or comma == len(v) - 1:
        return None
    return v[comma + 1 :] + v[:comma]


def _items_sorted(v: _Var, quote: list[Tok]) -> list[_Var]:
    """ "A, B and C" said in the quote's order of its items, each item a run of up to
    `ITEM_WORDS` words kept whole, the commas and the "and" or "or" where they stand, where no
    word of the clause claims an order. The first and last items' lengths are tried each."""
    if any(t.key in R.ORDER for _, t in v):
        return []
    out: list[_Var] = []
    for k, (_, t) in enumerate(v):
        if t.key not in ("and", "or") or not 0 < k < len(v) - 1:
            continue
        inner, end = _inner_items(v, k)
        for first in _runs(v, end, -1):
            for last in _runs(v, k + 1, 1):
                items = [first, *inner, last]
                order = [_first_at(v[s:e], quote) for s, e in items]
                if None in order or len(set(order)) < len(order) or order == sorted(order):  # type: ignore[type-var]
                    continue
                ranked = [items[i] for i in sorted(range(len(items)), key=lambda i: order[i])]  # type: ignore[arg-type, return-value]
                listed: _Var = []
                for i, (s, e) in enumerate(ranked):
                    listed += v[s:e] + (v[items[i][1] : items[i + 1][0]] if i + 1 < len(items) else [])
                if _holds(quote, [t for _, t in listed], as_list=True):  # the quote says this very list
                    out.append(v[: first[0]] + listed + v[last[1] :])
    return out


_COMMA = Tok(",", ",")


def _holds(quote: list[Tok], run: list[Tok], *, as_list: bool = False) -> bool:
    """Whether `run` stands in `quote` word for word (`_same`), as one stretch, articles
    aside and an "and" where a comma stands ("a midge net, walking boots and a head torch"
    for the quote's "midge net, walking boots, head torch"). `as_list`: a stretch that is no
    list of its own does not count: one that opens after the clause's first word and runs
    up to a verb is an object, "and" and the next clause's subject ("Ana walks the dog and
    Ben feeds the cat" holds no list "the dog and Ben")."""
    quote, run = ([_COMMA if t.key == "and" else t for t in x if t.key not in R.ARTICLES] for x in (quote, run))
    n = len(run)
    for j in range(len(quote) - n + 1):
        if all(_same(a, q) for a, q in zip(run, quote[j : j + n])):
            after = quote[j + n] if j + n < len(quote) else None
            opens = j == 0 or quote[j - 1].key in R.MARKS
            verb = after is not None and (after.key in R.TENSE_WORDS or after.key in R.MODALS or is_verb(after.key))
            if not (as_list and verb and not opens):
                return True
    return False


def _inner_items(v: _Var, k: int) -> tuple[list[tuple[int, int]], int]:
    """The items between commas before the "and" at `k`, and where the first item ends."""
    end = k - 1 if v[k - 1][1].key == "," else k
    inner: list[tuple[int, int]] = []
    while len(inner) < R.ITEMS - 2:
        start = end
        while start > 0 and end - start < R.ITEM_WORDS and v[start - 1][1].key not in R.MARKS | {"and", "or"}:
            start -= 1
        if not (0 < start < end and v[start - 1][1].key == ","):
            break
        inner.insert(0, (start, end))
        end = start - 1
    return inner, end


def _runs(v: _Var, at: int, way: int) -> list[tuple[int, int]]:
    """The runs of 1 to `ITEM_WORDS` words from `at` forward (way 1) or ending at `at`
    (way -1), none crossing a mark or another "and"/"or"."""
    out = []
    for n in range(1, R.ITEM_WORDS + 1):
        s, e = (at, at + n) if way == 1 else (at - n, at)
        if s < 0 or e > len(v) or any(t.key in R.MARKS or t.key in ("and", "or") for _, t in v[s:e]):
            break
        out.append((s, e))
    return out


def _first_at(run: _Var, quote: list[Tok]) -> int | None:
    """Where in the quote the first word of `run` that is not an empty word stands."""
    word = next((t for _, t in run if t.key not in R.EMPTY), None)
    return None if word is None else next((j for j, q in enumerate(quote) if _same(word, q)), None)


def _adjuncts_swapped(v: _Var) -> list[_Var]:
    """ "… in April by Dave" as "… by Dave in April": two runs of the phrases that end the
    clause, each opened by a preposition, swapped whole (each keeps its own object)."""
    starts = [k for k in range(1, len(v)) if v[k][1].key in R.ADJUNCT_OPENS and v[k - 1][1].key not in R.ADJUNCT_OPENS]
    chain: list[int] = []
    for k in reversed(starts):  # the phrases that run to the clause's end, no mark between
        end = chain[0] if chain else len(v)
        if any(t.key in R.MARKS or t.key in R.CLAUSE_JOINS for _, t in v[k:end]) or len(chain) == R.ADJUNCTS:
            break
        chain.insert(0, k)
    cuts = chain + [len(v)]
    return [
        v[: cuts[a]] + v[cuts[b] : cuts[c]] + v[cuts[a] : cuts[b]] + v[cuts[c] :]
        for a in range(len(cuts))
        for b in range(a + 1, len(cuts))
        for c in range(b + 1, len(cuts))
    ]


def _only_moved(v: _Var) -> _Var | None:
    """ "X only feeds the cat when …" as "X feeds the cat only when …": an "only" before the
    clause's verb said before the condition or phrase it restricts, the first after it. The
    word after "only" must be mostly a verb and the word before it not ("eats only fish" is
    no such "only"); never an "only" before a subject ("Only Ana walks the dog"): at the
    clause's front, only an imperative's ("Only add the yolk if …": a verb, then a determiner)."""
    at = [k for k, (_, t) in enumerate(v) if t.key == "only"]
    if len(at) != 1 or at[0] + 2 >= len(v):
        return None
    k = at[0]
    verb, after = v[k + 1][1], v[k + 2][1]
    if verb.key in R.NEW_SUBJECT or not verb.key.isalpha() or verb.text[:1].isupper() or verb_weight(verb.key) < 0:
        return None
    if k > 0 and verb_weight(v[k - 1][1].key) > 0:
        return None
    if k == 0 and not (after.key in R.DETERMINERS or after.spec is not None):
        return None
    to = next((e for e in range(k + 2, len(v)) if v[e][1].key in R.SUBORDINATE | R.ADJUNCT_OPENS), None)
    if to is None or any(t.key in R.MARKS for _, t in v[k:to]):
        return None
    return v[:k] + v[k + 1 : to] + [v[k]] + v[to:]


def _amount_after(v: _Var) -> list[_Var]:
    """ "the £1,067 deposit" as "deposit £1,067": an amount before the one to three words it
    measures said after them, as a note's "Deposit £1,067" does (rule amount-moved)."""
    out = []
    for k in range(len(v) - 1):
        spec = v[k][1].spec
        if spec is None or spec.kind != "amount" or (k and v[k - 1][1].key not in R.DETERMINERS):
            continue  # an amount that opens a noun phrase: "the £1,067 deposit", not "is 1.2 m draft"
        for n in range(1, 4):
            run = v[k + 1 : k + 1 + n]
            if len(run) < n or any(t.key in R.FUNCTION or t.key in R.MARKS or t.spec is not None for _, t in run):
                break
            out.append(v[:k] + run + [v[k]] + v[k + 1 + n :])
    return out


def _variants(toks: list[Tok], *, answer: bool) -> list[tuple[_Var, str]]:
    """The clause as written, and as each reordering rule may say it. An unsaid agent stands
    only in the answer (the alignment lets it stand for quote words, never the other way)."""
    plain: _Var = list(enumerate(toks))
    out: list[tuple[_Var, str]] = [(plain, "")]
    makers = (
        (_voice_active, "voice"), (_agentless_active, "voice"), (_copula_swapped, "copula-swap"),
        (_fronted, "fronted-clause"), (_halves_swapped, "reorder-clauses"), (_converse, "converse"),
        (_only_moved, "only-moved"),
    )  # fmt: skip
    for make, rule in makers:
        if answer or make is not _agentless_active:
            out += [(v, rule) for v in _listed(make(plain))]
    out += [(v, "fronted-clause") for v in _front_moved(plain)]
    if answer:
        out += [(v, "reorder-adjuncts") for v in _adjuncts_swapped(plain)]
        out += [(v, "amount-moved") for v in _amount_after(plain)]
    more = []
    for v, rule in out[1:]:  # one reordering on top of another: "On Sundays, X is Y-ed"
        if rule == "voice":
            continue
        for make, rule2 in makers[:2]:
            if answer or make is not _agentless_active:
                more += [(w, f"{rule}+{rule2}") for w in _listed(make(v))]
    return out + more[: R.REORDERINGS]


def _listed(made: _Var | list[_Var] | None) -> list[_Var]:
    """A reordering rule's variants as a list: a rule makes one, several or none."""
    if not made:
        return []
    return made if made and isinstance(made[0], list) else [made]  # type: ignore[list-item]


# --- the gate -----------------------------------------------------------------------------


def _clauses(answer: list[Tok]) -> list[tuple[list[Tok], list[bool]]]:
    """The answer's clauses (cut as `units` cuts a quote), each with which words were
    written with a capital."""
    out = []
    for u in _units(answer):
        toks = [t for t in u.toks if t.key not in ("(", ")")]
        caps = [t.text[:1].isupper() for t in toks]
        out.append((toks, caps))
    return out


def _keys(text: str) -> frozenset[str]:
    return frozenset(k for t in tokens(text) for k in (t.key, lemma(t.key)) if t.spec is None)


def _word_key(t: Tok) -> str:
    """What two words share when a claim is ranked for an answer clause: a lemma, or a
    number's own text (every number is "§")."""
    return t.text.casefold() if t.spec is not None else lemma(t.key)


def _best(
    toks: list[Tok], caps: list[bool], claims: list[Unit], candidates: list[list[int]], ctx: _Ctx, used: Any = ()
) -> Any:
    """The alignment of one answer clause, over the candidate claims that share most words
    with it (`CANDIDATES`) and every reordering of either side, with the fewest unaccounted
    words (then the most matched)."""
    said = {_word_key(t) for t in toks}
    keys = [{_word_key(t) for t in c.toks} for c in claims]

    # The most of the clause's words a candidate holds, then the fewest claims.
    def rank(cand: list[int]) -> tuple[int, int]:
        held = set().union(*(keys[u] for u in cand))
        return (-len(said & held), len(cand))

    # A table row's cells in the answer's order: a row's columns claim no order of their own
    # (which column a value is under stays the column rule's, `claims`).
    in_answer = []
    for cand in candidates:
        if len(cand) > 1 and all(claims[u].cell for u in cand):
            at = {u: min((i for i, t in enumerate(toks) if _word_key(t) in keys[u]), default=len(toks)) for u in cand}
            rows = list(dict.fromkeys(claims[u].source for u in cand))  # each row's own cells, rows kept in order
            ordered = [u for r in rows for u in sorted((u for u in cand if claims[u].source == r), key=at.__getitem__)]
            if ordered != cand:
                in_answer.append(ordered)
    ranked = sorted(in_answer + candidates, key=rank)[:CANDIDATES]
    answer_variants = _variants(toks, answer=True)
    best = None
    for cand in ranked:
        quote = [t for u in cand for t in claims[u].toks]
        owner = [(u, k) for u in cand for k in range(len(claims[u].toks))]
        qvars = _variants(quote, answer=False) if len(cand) == 1 else [(list(enumerate(quote)), "")]
        for qv, qrule in qvars:
            q_toks = [t for _, t in qv]
            for av, arule in answer_variants:
                if qrule and arule:
                    continue
                a_toks = [t for _, t in av]
                a_caps = [caps[i] for i, _ in av]
                got = _align(a_toks, q_toks, ctx, a_caps)
                # Of equal alignments, a claim no earlier clause used ("| 6 | Dunmere | 6 |": each "6" its own cell).
                score = (got.cost, -got.matches, sum(u in used for u in cand), len(cand))
                if best is None or score < best[0]:
                    best = (score, cand, got, a_toks, a_caps, qv, owner)
    return best


def _left_over(
    claims: list[Unit],
    used: dict[int, set[int]],
    order: dict[int, list[tuple[int, int]]],
    answer_clauses: list,
    ctx: _Ctx,
) -> list[tuple[int, str, str]]:
    """What the answer leaves out of the claims it uses, and a claim said out of its order."""
    problems: list[tuple[int, str, str]] = []
    for u, seen_at in order.items():  # one claim said over two answer clauses keeps its order
        spans: dict[int, tuple[int, int]] = {}
        for ci, k in seen_at:
            lo, hi = spans.get(ci, (k, k))
            spans[ci] = (min(lo, k), max(hi, k))
        ranges = [spans[ci] for ci in sorted(spans)]
        if any(a[1] > b[0] for a, b in zip(ranges, ranges[1:])) and not _halves_apart(claims[u].toks, ranges):
            problems.append(
                (len(answer_clauses), "word-moved", f"the answer says '{_said(claims[u].toks)}' in another order")
            )
    said = [t for toks, _ in answer_clauses for t in toks]
    for u, seen in used.items():
        drops = _drops(claims[u].toks, said, ctx)
        left = [t for k, t in enumerate(claims[u].toks) if k not in seen and not drops[k]]
        if left:
            problems.append((len(answer_clauses), "word-left-out", f"the answer leaves out '{_said(left)}'"))
    return problems


def _halves_apart(toks: list[Tok], ranges: list[tuple[int, int]]) -> bool:
    """Rule reorder-clauses over two answer clauses: "A and B" said as "B, and A", each answer
    clause wholly on one side of the claim's one "and" or ";", each side in its own order."""
    joins = [k for k, t in enumerate(toks) if t.key in ("and", ";")]
    if len(joins) != 1 or any(t.key in R.ORDER for t in toks):
        return False
    j = joins[0]
    sides = [[r for r in ranges if r[1] < j], [r for r in ranges if r[0] > j]]
    in_order = all(a[1] <= b[0] for side in sides for a, b in zip(side, side[1:]))
    return in_order and len(sides[0]) + len(sides[1]) == len(ranges)


def _candidates(claims: list[Unit]) -> list[list[int]]:
    """What one answer clause may be aligned onto: one claim; two claims of one quote, next
    to each other, in either order; all of a quote's claims in their order (a table row's
    cells said as a sentence), or of two quoted rows one after the other."""
    candidates: list[list[int]] = [[i] for i in range(len(claims))]
    for a in range(len(claims) - 1):
        if claims[a].source == claims[a + 1].source:
            candidates += [[a, a + 1], [a + 1, a]]
    sources = sorted({u.source for u in claims})
    wholes = {s: [i for i, u in enumerate(claims) if u.source == s] for s in sources}
    candidates += [whole for whole in wholes.values() if len(whole) > 2]
    # Two quoted table rows said in one sentence, in their order ("Zoe does gymnastics on
    # Tuesday and Noah chess on Thursday").
    rows = [s for s in sources if all(claims[i].cell for i in wholes[s])]
    candidates += [wholes[a] + wholes[b] for a, b in zip(rows, rows[1:])]
    return candidates


# A lead-in that frames the answer ("According to your notes, …"), left out before aligning.
_FRAME = re.compile(
    r"(?i)^\s*(?:(?:yes|yep|right)\b[,.!]?\s*)?(?:(?:according to|from|per|based on) (?:your|the|my) (?:notes?|brain)"
    r"|(?:your|the) notes? (?:says?|say|shows?|states?|mentions?)(?: that)?"
    r"|you (?:wrote|noted|recorded)(?: that)?|here(?: is|'s) what (?:your|the) notes? (?:says?|shows?))[,:.]?\s*"
)


_REPLY = re.compile(r"(?i)^\s*(yes|yeah|yep|no|nope)\b(?!\.\s?\d)[,.!;:]?\s*")  # not "No. 16"


def derive(
    answer: str,
    quotes: Sequence[str],
    *,
    question: str = "",
    named: Sequence[str] = (),
    headings: Sequence[str] = (),
) -> Derivation:
    """Whether `answer` follows from `quotes` by the safe edits (`edit_rules.SAFE`); `named`:
    titles and headings (a name may come from them), `headings`: a table's column headings."""
    if not isinstance(answer, str) or not answer.strip():
        return Derivation(True)
    asked = _keys(question) - R.SIGNS - R.PHRASES.keys() - {"–"}  # a sign, bound or span is never restated
    person = {R.PERSON[k] for k in asked if k in R.PERSON}  # the question's "my", said back as "your"
    asked_toks = tokens(question)
    specs = frozenset(t.text.casefold() for t in asked_toks if t.spec is not None)
    ctx = _Ctx(
        asked=(asked - R.FUNCTION) | person | (asked & R.PERSON.keys()),
        named=_keys(" ".join(named)),
        headed=_keys(" ".join(headings)),
        asked_specs=specs,
        asked_dates=frozenset(t.spec.key for t in asked_toks if t.spec is not None and t.spec.kind == "date"),
        asked_words=frozenset((t.key, t.tense) for t in asked_toks if t.key in asked - (R.FUNCTION - R.PERSON.keys()))
        | {(w, "") for w in person},
        asked_pairs=frozenset(
            (lemma(a.key), b.key) for a, b in zip(asked_toks, asked_toks[1:]) if b.key in R.PREPOSITIONS
        ),
    )
    claims = [u for i, q in enumerate(quotes) if isinstance(q, str) for u in units(q, i)]
    reply = _REPLY.match(answer)
    rest = _FRAME.sub("", answer[reply.end() :] if reply else answer, count=1)
    said = tokens(rest)
    if not said and any(c.isalnum() for c in rest):  # fail closed: text the tokenizer could not read
        shown = " ".join(rest.split())[:60]
        return Derivation(False, "word-added", f"the answer says '{shown}', which the gate cannot read")
    if reply and (refused := _replied(reply.group(1).casefold(), said, question, ctx)) is not None:
        return refused
    verdict = _judge(said, claims, ctx)
    if not verdict and verdict.rule not in ("relative-time", "too-long"):
        quoted = [t for u in claims for t in u.toks]
        # rule reorder-items: the answer's lists said in the quotes' order of their items
        variants = [[t for _, t in v] for v in _items_sorted(list(enumerate(said)), quoted)[: R.ITEM_TRIES]]
        variants += _possessive(said, quoted)  # rule possessive: "the MOT for the car" as "the car's MOT"
        if any(_judge(v, claims, ctx) for v in variants):
            return Derivation(True)
    return verdict


def _possessive(said: list[Tok], quoted: list[Tok]) -> list[list[Tok]]:
    """The answer with each "[the] Y of/for [the] X" or "Y belonging to X" said "X's Y" where a
    quote says "X's Y" (one word each, by lemma): one relation of owner and owned."""
    pairs = zip(quoted, quoted[1:], quoted[2:])
    owned = {(lemma(x.key), lemma(y.key)) for x, s, y in pairs if s.key == "'s"}
    out = []
    for i in range(1, len(said) - 1):
        link = 2 if said[i].key == "belonging" and said[i + 1].key == "to" else 1 if said[i].key in R.OWNED_BY else 0
        if not link:
            continue
        j = i + link + (i + link < len(said) and said[i + link].key == "the")
        if j < len(said) and (lemma(said[j].key), lemma(said[i - 1].key)) in owned:
            k = i - 1 - (i >= 2 and said[i - 2].key == "the")
            out.append([*said[:k], said[j], Tok("'s", "'s"), said[i - 1], *said[j + 1 :]])
    return out + _of_owner(said, quoted)


def _of_owner(said: list[Tok], quoted: list[Tok]) -> list[list[Tok]]:
    """The other way round: the answer's "X's Y" said "the Y of the X" where a quote says
    so, Y up to `ITEM_WORDS` words ("the month's last working day")."""
    out = []
    for i in range(1, len(said) - 1):
        if said[i].text.replace("’", "'") != "'s":  # "'s" read as "is" too: the quote decides
            continue
        owner, k = said[i - 1], i - 1 - (i >= 2 and said[i - 2].key in R.ARTICLES)
        for n in range(1, min(R.ITEM_WORDS, len(said) - i - 1) + 1):
            owned = said[i + 1 : i + 1 + n]
            if any(t.key in R.MARKS for t in owned):
                break
            of = [*owned, Tok("of", "of"), Tok("the", "the"), owner]
            if _holds(quoted, of):
                out.append([*said[:k], Tok("the", "the"), *of, *said[i + 1 + n :]])
    return out


def _replied(word: str, said: list[Tok], question: str, ctx: _Ctx) -> Derivation | None:
    """A "yes" or "no" claims what the question asks (rule reply-word): kept only before a
    claim of the answer's own whose negation agrees with it (none after "yes", one after
    "no"), and never to a question that holds a negation of its own ("Isn't it open?")."""
    shown = word.capitalize()
    if not any(_addable(t, ctx, False) not in _NO_CLAIM for t in said):
        return Derivation(False, "reply-word", f"the answer says only '{shown}': say what the quote says")
    denies = any(t.key in R.NEGATIONS for t in said)
    asked_no = any(t.key in R.NEGATIONS for t in tokens(question))
    if asked_no or denies != (word in R.REPLY_NO):
        return Derivation(False, "reply-word", f"the answer's '{shown}' is not what the rest of it says")
    return None


def _judge(said: list[Tok], claims: list[Unit], ctx: _Ctx) -> Derivation:
    """The gate on the answer's words `said`: each of its clauses aligned onto the claims."""
    answer_clauses = [c for c in _clauses(said) if any(_addable(t, ctx, False) not in _NO_CLAIM for t in c[0])]
    if not answer_clauses:
        return Derivation(True)
    deictic = next((t for c, _ in answer_clauses for t in c if t.key in R.DEICTIC), None)
    if deictic is not None:
        return Derivation(
            False,
            "relative-time",
            f"the answer says '{deictic.text}', which the note said on its own day, not today's: give the date",
        )
    too_long = sum(len(t) for t, _ in answer_clauses) > MAX_TOKENS or sum(len(u.toks) for u in claims) > QUOTE_TOKENS
    if too_long or not claims:
        return Derivation(
            False,
            "too-long" if claims else "word-added",
            "the answer is too long to compare with its quotes" if claims else "no quote to compare with",
        )
    candidates = _candidates(claims)
    used: dict[int, set[int]] = {}
    order: dict[int, list[tuple[int, int]]] = {}  # per claim: (answer clause, word) aligned
    problems: list[tuple[int, str, str]] = []  # (answer clause, rule, reason), in answer order
    for ci, (toks, caps) in enumerate(answer_clauses):
        best = _best(toks, caps, claims, candidates, ctx, used)
        assert best is not None
        _, cand, got, a_toks, a_caps, qv, owner = best
        matched_a = {i for i, _, _ in got.pairs}
        matched_q = {j for _, j, _ in got.pairs}
        present = {qv[j][0] for j in range(len(qv))}
        used.update({u: used.get(u, set()) for u in cand})
        for j in matched_q:
            u, k = owner[qv[j][0]]
            used[u].add(k)
            if qv[j][1].key not in R.EMPTY:  # an empty word keeps no order ("which is reached")
                order.setdefault(u, []).append((ci, k))
        for i in range(len(owner)):
            if i not in present:  # left out by the reordering rule itself ("by")
                u, k = owner[i]
                used[u].add(k)
        q_toks = [t for _, t in qv]
        free = _free(a_toks, q_toks, ctx, a_caps)
        added = [a_toks[i] for i in range(len(a_toks)) if i not in matched_a and not free[i]]
        drops = _drops(q_toks, a_toks, ctx)
        left = [q_toks[j] for j in range(len(qv)) if j not in matched_q and not drops[j]]
        if added:
            problems.append(_added_reason(ci, added, left, [t for _, t in qv]))
        elif not any(qv[j][1].key not in R.EMPTY | R.FUNCTION for j in matched_q) and any(
            _addable(t, ctx, False) == "question-words" for t in a_toks
        ):
            # rule question-words: restated beside the quote's words, never alone ("Am I
            # allergic to cats?" answered "You're allergic to cats" from no quote of it)
            problems.append((ci, "question-words", f"the answer says '{_said(toks)}', which no quote states"))
    problems += _left_over(claims, used, order, answer_clauses, ctx)
    # A row's cell may be left out when the answer says which column each value it keeps is in.
    columns = any(lemma(t.key) in ctx.headed for toks, _ in answer_clauses for t in toks if t.key not in R.FUNCTION)
    for u in range(len(claims)):
        # rule whole-clause; a claim of the question's words alone ("| Tue |") says nothing more
        left_out = u not in used and not claims[u].droppable and not (claims[u].cell and columns)
        if left_out and not all(_drops(claims[u].toks, [], ctx)):
            problems.append((len(answer_clauses), "word-left-out", f"the answer leaves out '{_said(claims[u].toks)}'"))
    if problems:
        _, rule, reason = min(problems, key=lambda p: p[0])
        return Derivation(False, rule, reason)
    return Derivation(True)


def _said(toks: Sequence[Tok]) -> str:
    words = [t.text for t in toks if t.key not in R.MARKS]
    shown = " ".join(words[:8])
    return shown + (" …" if len(words) > 8 else "")


def _added_reason(ci: int, added: list[Tok], left: list[Tok], quote: list[Tok]) -> tuple[int, str, str]:
    """Why answer words no safe edit accounts for refuse VERIFIED: moved, changed or added."""
    moved = [a for a in added if any(_same(a, q) for q in quote)]
    if moved:
        return (
            ci,
            "word-moved",
            f"the answer puts '{moved[0].text}' in another part of the sentence than the quote does",
        )
    if left:
        return (ci, "word-changed", f"the quote says '{_said(left)}', the answer '{_said(added)}'")
    return (ci, "word-added", f"the answer says '{_said(added)}', which the quote does not")

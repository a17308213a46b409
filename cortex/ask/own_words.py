"""VERIFIED's one check: is the answer its quotes' own words?

A client repeats VERIFIED as "your notes say this", so the check admits only differences
that cannot change what a unit claims (docs/DESIGN.md, "What VERIFIED promises", says why
for each). Both sides are read into the same tokens (`tokens`):

- letter case, whitespace and line wraps, punctuation, Markdown marks, typographic quotes
  and dashes are not tokens (a sign, a comparison or a unit symbol next to a number is);
- a contraction is its two words ("doesn't" = "does not");
- a number, amount, date or time is one token of its value ("£6k" = "£6,000", "14/02/2025"
  = "14 Feb 2025" where only one reading exists, "7:30pm" = "19:30");
- in the answer, struck text and a `(was: …)` aside are left out (they say what is not so).

The answer (after one leading frame from `FRAMES`) must be one or more of the cited
units, each whole and once, in any order (`matches`). Anything else is another wording;
`first_difference` says where, from a plain diff, and `conflicts` names a value of the
answer that differs from the one of the same kind the units hold.

Pure functions, no I/O.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cache, lru_cache

__all__ = ["FRAMES", "Token", "conflicts", "first_difference", "matches", "strip_frame", "tokens"]

# The leading frames an answer may open with; "according to <title>" takes the note's title.
FRAMES = ("your notes say", "the notes say", "from your notes", "from the notes", "according to your notes")

MONTHS = {
    m: i + 1
    for i, names in enumerate(
        (
            "january jan",
            "february feb",
            "march mar",
            "april apr",
            "may",
            "june jun",
            "july jul",
            "august aug",
            "september sep sept",
            "october oct",
            "november nov",
            "december dec",
        )
    )  # fmt: skip
    for m in names.split()
}
NUMBER_WORDS = {
    w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())
}
# Contractions with one reading; "'s" and "'d" have several and stay as written.
CONTRACTED = {"can't": "can not", "cannot": "can not", "won't": "will not", "shan't": "shall not"}
SUFFIXES = (("n't", " not"), ("'re", " are"), ("'ve", " have"), ("'ll", " will"), ("'m", " am"))
CURRENCY = {"£": "GBP", "$": "USD", "€": "EUR", "¥": "JPY", "gbp": "GBP", "usd": "USD", "eur": "EUR"}

_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"  # noqa: E501
_DAY = r"(?P<d>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<y>\d{4}))?"
_SCANNER = re.compile(
    "|".join(
        (
            r"(?P<iso>\d{4})-(?P<im>\d\d)-(?P<id>\d\d)",
            r"(?P<n1>\d{1,2})[/.](?P<n2>\d{1,2})[/.](?P<ny>\d{4}|\d\d)(?![\d/]|\.\d)",
            rf"{_DAY}(?:\s+of)?\s+(?P<m>{_MONTH})(?![\w]){_YEAR}",
            rf"(?P<m2>{_MONTH})\s+(?P<d2>[0-3]?\d)(?:st|nd|rd|th)?(?![\w]){_YEAR.replace('y>', 'y2>')}",
            r"(?P<h>[01]?\d)(?:[:.](?P<mi>[0-5]\d))?\s*(?P<ap>[ap])\.?m\.?(?![\w])",
            r"(?P<h24>[0-2]?\d):(?P<mi24>[0-5]\d)(?![\d:])",
            r"(?P<cur>[£$€¥])\s?(?P<amt>\d[\d,]*(?:\.\d+)?)\s?(?P<mult>k|m|bn)?(?![\w])",
            r"(?P<ver>v?\d+(?:\.\d+){2,})",
            r"(?P<code>[^\W\d_]{1,4}-?\d+[^\W_]*|\d{5,}(?![\d,.]))",  # "BA117", "GB-4417", an account number
            r"(?P<sign>(?<![\d.,])[-−+])?(?P<num>\d[\d,]*(?:\.\d+)?)(?!\d)(?!\s*[ap]\.?m(?!\w))(?P<unit>%|°[cf]?|\+|(?:st|nd|rd|th)(?![\w]))?",
            r"(?P<cmp>[<>≤≥~±×=])",
            r"(?P<box>\[[ xX]\])",  # a task's box: a Markdown mark
            r"(?P<word>[^\W_]+(?:['’][^\W_]+)*)",
        )
    ),
    re.IGNORECASE,
)
# A line's Markdown markers (quote, bullet, number, heading), read off as the note's side is.
_MARKERS = re.compile(r"^[ \t]*(?:>[ \t]*)*(?:[-*+][ \t]+|\d{1,9}[.)][ \t]+|#{1,6}[ \t]+)?", re.M)
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")  # inline HTML: markup, as Markdown marks are
_DASHES = str.maketrans(dict.fromkeys("‐‑‒–—―−", "-"))  # as the note's side is read (notes.blocks)
_STRUCK = re.compile(r"~~.*?~~|<(del|s|strike)\b[^>]*>.*?</\1>|\(was:[^)]*\)", re.S | re.I)


@dataclass(frozen=True)
class Token:
    """One token: `key` compares, `kind` says what a value is ("" for a word), `text` is
    as written (for reasons)."""

    key: str
    kind: str
    text: str


def _number(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace(",", "")).normalize()
    except InvalidOperation:
        return None


def _value(m: re.Match[str]) -> tuple[str, str] | None:
    """(key, kind) of a value match, or None where it has more than one reading."""
    g = m.groupdict()
    if g["iso"]:
        return f"date:{g['iso']}-{g['im']}-{g['id']}", "date"
    if g["n1"]:
        a, b, y = int(g["n1"]), int(g["n2"]), g["ny"]
        if a > 12 >= b:
            day, month = a, b
        elif b > 12 >= a:
            day, month = b, a
        elif a == b:
            day = month = a
        else:
            return None  # 03/04/2025: two readings, compared as written
        year = y if len(y) == 4 else None
        return (f"date:{year}-{month:02d}-{day:02d}" if year else f"date:--{month:02d}-{day:02d}"), "date"
    if g["m"] or g["m2"]:
        month = MONTHS[(g["m"] or g["m2"]).lower().rstrip(".")]
        day, year = int(g["d"] or g["d2"]), g["y"] or g["y2"]
        return (f"date:{year}-{month:02d}-{day:02d}" if year else f"date:--{month:02d}-{day:02d}"), "date"
    if g["h"]:
        hour = int(g["h"]) % 12 + (12 if g["ap"].lower() == "p" else 0)
        return f"time:{hour:02d}:{g['mi'] or '00'}", "time"
    if g["h24"]:
        hour = int(g["h24"])
        if hour > 23:
            return None
        if hour <= 12 and not g["h24"].startswith("0"):
            return f"clock:{hour}:{g['mi24']}", "clock"  # morning or evening: equal only as written
        return f"time:{hour:02d}:{g['mi24']}", "time"
    if g["cur"]:
        amount = _number(g["amt"])
        if amount is None:
            return None
        scale = {"k": 1000, "m": 1_000_000, "bn": 1_000_000_000}.get((g["mult"] or "").lower(), 1)
        return f"amount:{CURRENCY[g['cur']]}:{(amount * scale).normalize():f}", f"amount:{CURRENCY[g['cur']]}"
    if g["ver"]:
        return f"version:{g['ver'].lower().lstrip('v')}", "version"
    if g["code"]:
        return f"code:{g['code'].upper().replace('-', '')}", "code"
    if g["num"]:
        if g["num"].startswith("0") and len(g["num"]) > 1 and "." not in g["num"]:
            return f"code:{g['num']}", "code"  # a phone number's part, a PIN: its digits as written
        value = _number(g["num"])
        if value is None:
            return None
        sign = "-" if (g["sign"] or "") in "-−" and g["sign"] else ("+" if g["sign"] == "+" else "")
        unit = (g["unit"] or "").lower()
        unit = "ord" if unit in ("st", "nd", "rd", "th") else unit
        return f"number:{sign}{value:f}{unit}", "number"
    return None


def _expand(word: str) -> list[str]:
    low = word.lower().replace("’", "'")
    if low in CONTRACTED:
        return CONTRACTED[low].split()
    for suffix, full in SUFFIXES:
        if low.endswith(suffix) and len(low) > len(suffix):
            return [low[: -len(suffix)], full.strip()]
    return [low]


@lru_cache(maxsize=4096)
def tokens(text: str, answer: bool = False) -> tuple[Token, ...]:
    """The tokens of `text`; for an answer, its struck text and `(was: …)` asides left out."""
    text = _TAG.sub(" ", unicodedata.normalize("NFC", text).translate(_DASHES))
    if answer:
        text = _MARKERS.sub("", _STRUCK.sub(" ", text))
    out: list[Token] = []
    for m in _SCANNER.finditer(text):
        raw = m.group(0)
        if m.group("word"):
            low = m.group("word").lower()
            if low in NUMBER_WORDS:
                out.append(Token(f"number:{NUMBER_WORDS[low]}", "number", raw))
                continue
            out.extend(Token(w, "", raw) for w in _expand(m.group("word")))
        elif m.group("cmp"):
            out.append(Token(raw, "", raw))
        elif m.group("box"):
            continue
        else:
            value = _value(m)
            if value is None:  # two readings: its words and numbers as written
                out.extend(Token(p.lower(), "", p) for p in re.findall(r"[^\W_]+", raw))
            else:
                out.append(Token(value[0], value[1], raw.rstrip(".")))
    return tuple(out)


def strip_frame(answer: str, titles: tuple[str, ...] = ()) -> str:
    """The answer without one leading frame ("Your notes say:", "According to <title>:")."""
    said = tokens(answer, answer=True)
    keys = [t.key for t in said]
    frames = [tuple(t.key for t in tokens(f)) for f in FRAMES]
    frames += [tuple(t.key for t in tokens(f"according to {title}")) for title in titles if title]
    for frame in sorted(frames, key=len, reverse=True):
        if frame and tuple(keys[: len(frame)]) == frame:
            # Cut after the frame's last token and any "that" or punctuation after it.
            last = said[len(frame) - 1].text
            at = answer.lower().find(last.lower(), _offset_of(answer, said, len(frame) - 1))
            rest = answer[at + len(last) :]
            return re.sub(r"^[\s:,;—–-]*(?:that\b)?[\s:]*", "", rest, flags=re.I)
    return answer


def _offset_of(answer: str, said: tuple[Token, ...], k: int) -> int:
    at = 0
    for t in said[:k]:
        found = answer.lower().find(t.text.lower(), at)
        at = found + len(t.text) if found >= 0 else at
    return at


def matches(answer: tuple[Token, ...], units: list[list[tuple[Token, ...]]]) -> list[int] | None:
    """Which unit of each quote the answer is made of, in the answer's order: the answer is
    one or more whole units, each quote's at most once (`units[q]` are quote q's candidate
    units: its sentence, line and block). (quote index, …) or None."""
    keys = tuple(t.key for t in answer)
    if not keys:
        return None
    cands = [(q, tuple(t.key for t in u)) for q, us in enumerate(units) for u in us if u]

    @cache
    def walk(at: int, used: frozenset[int]) -> tuple[int, ...] | None:
        if at == len(keys):
            return ()
        for q, unit in cands:
            if q not in used and keys[at : at + len(unit)] == unit:
                rest = walk(at + len(unit), used | {q})
                if rest is not None:
                    return (q, *rest)
        return None

    found = walk(0, frozenset())
    return list(found) if found is not None else None


def closest(answer: tuple[Token, ...], units: list[tuple[Token, ...]]) -> tuple[Token, ...]:
    """The unit the answer is nearest to, by a plain diff of their tokens."""
    keys = [t.key for t in answer]
    return max(units, key=lambda u: difflib.SequenceMatcher(None, keys, [t.key for t in u], autojunk=False).ratio())


def first_difference(answer: tuple[Token, ...], unit: tuple[Token, ...]) -> str:
    """The first place where the answer's words leave the unit's, in words."""
    a, u = [t.key for t in answer], [t.key for t in unit]
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, u, a, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        theirs, ours = _said(unit[i1:i2]), _said(answer[j1:j2])
        where = f" before '{unit[i2].text}'" if i2 < len(unit) else (f" after '{unit[i1 - 1].text}'" if i1 else "")
        if op == "delete":
            return f"the unit has '{theirs}'{where}; the answer does not"
        if op == "insert":
            return f"the answer has '{ours}'{where}; the unit does not"
        return f"the unit says '{theirs}', the answer '{ours}'"
    return "the answer repeats a unit, or leaves a quote's unit out"


def _said(seq: tuple[Token, ...]) -> str:
    """Tokens as written: a contraction read as two tokens is said once."""
    return " ".join(t.text for k, t in enumerate(seq) if k == 0 or t.text != seq[k - 1].text)


def conflicts(answer: tuple[Token, ...], units: list[tuple[Token, ...]]) -> tuple[Token, list[Token]] | None:
    """A value of the answer that none of the units holds anywhere, where they hold values of
    its kind (a bare number's kind is the word after it): (the answer's value, the units').
    Only where certain: a number with no word after it, or one that differs only in its sign
    ("minus 5" for "−5"), is no conflict."""
    anywhere = {t.key for unit in units for t in unit if t.kind}
    held: dict[str, list[Token]] = {}
    for unit in units:
        for k, t in enumerate(unit):
            if t.kind:
                held.setdefault(_kind(unit, k), []).append(t)
    for k, t in enumerate(answer):
        kind = _kind(answer, k)
        if not t.kind or t.key in anywhere or kind == "number ":
            continue
        theirs = [o for o in held.get(kind, []) if _unsigned(o.key) != _unsigned(t.key)]
        if theirs and len(theirs) == len(held[kind]):
            return t, theirs
    return None


def _unsigned(key: str) -> str:
    """A value as compared for a conflict: without its sign ("minus 5" may say "−5"), a date
    without its year ("14 March" says part of "14 March 1991")."""
    if key.startswith("date:"):
        return "date:" + key[-5:]
    return key.replace(":-", ":").replace(":+", ":")


def _kind(seq: tuple[Token, ...], k: int) -> str:
    """A value's kind; a bare number's with the word after it ("2 tablets" and "1 tablet": one
    kind; "48 hours" and "2 days": two)."""
    t = seq[k]
    if t.kind != "number":
        return t.kind
    if k + 1 < len(seq) and not seq[k + 1].kind:
        return f"number {seq[k + 1].key.removesuffix('s')}"
    return f"number {seq[k - 1].key}<" if k and not seq[k - 1].kind else "number "

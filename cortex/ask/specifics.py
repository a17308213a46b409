"""The dates, times, amounts, numbers and names a text states: what the offline reader asks of a passage.

`specifics` reads the dates, times, amounts, numbers, URLs, e-mail addresses,
identifiers and names a text states, each with the key it is compared by (so
"1 March 2026" is "2026-03-01" and "7pm" is "19:00"). The offline reader asks a
sentence for the kind of specific a question wants (`cortex.ask.proof`), and the
question flag reads which of a question's terms a specific stands for
(`cortex.ask.focus`). The stamp does not read them: VERIFIED compares values by
`cortex.ask.own_words` alone.

Pure functions, no I/O.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass

from cortex.ask.normal_form import normalize_nfc
from cortex.ask.own_words import MONTHS
from cortex.index.tokenize import STOPWORDS
from cortex.notes.blocks import strip_was_markers

__all__ = [
    "CURRENCIES",
    "NAMING",
    "Specific",
    "live_context",
    "located",
    "specifics",
    "strip_old_wording",
    "unit_of",
]

# Digits as written, superscripts, subscripts, vulgar fractions and circled numbers
# included: they are part of a number's spelling ("10⁶" is one specific, never "10" or
# "106"), and are compared as they are, never folded.
_DIGIT = r"0-9\u00b2\u00b3\u00b9\u00bc-\u00be\u2070-\u2079\u2080-\u2089\u2150-\u218b\u2460-\u24ff\u2776-\u2793"
_DIGITS = f"[{_DIGIT}]+"
_MONTHS = MONTHS  # a month's name or abbreviation -> its number, one table (`own_words`)
_WEEKDAYS = {
    d: i
    for i, names in enumerate(
        (
            "monday mon",
            "tuesday tue tues",
            "wednesday wed",
            "thursday thu thur thurs",
            "friday fri",
            "saturday sat",
            "sunday sun",
        )
    )
    for d in names.split()
}
# Month and weekday names count only capitalised ("May", "MAY"), so "may" the verb and
# "sat" the verb are not dates. Alone, a month's full name is a date; its abbreviation only
# where a word of time, a bracket, a cell or a span says so ("review in Jan", "(Apr)",
# "Mar–Nov"), since "Jan" is also a name ("serviced by Jan"). A weekday's abbreviation alone
# counts only where it is no word ("Sun", "Sat" and "Wed" are words).
_MONTH = "|".join(sorted({m.capitalize() for m in _MONTHS} | {m.upper() for m in _MONTHS}, key=len, reverse=True))
_MONTH_FULL = "|".join(m.capitalize() for m in _MONTHS if len(m) > 3 or m == "may")
_MONTH_ABBR = "|".join(sorted((m.capitalize() for m in _MONTHS if len(m) <= 4 and m != "may"), key=len, reverse=True))
_MONTH_CUE = (
    "".join(
        rf"(?<=\b[{w[0].upper()}{w[0]}]{w[1:]} )|"
        for w in "in until till from since before after early late mid of end".split()
    )
    + r"(?<=\()|(?<=[–/|-])|(?<=[–/|-] )"
)
_WEEKDAY = "|".join(sorted({d.capitalize() for d in _WEEKDAYS}, key=len, reverse=True))
_ALONE = {d.capitalize() for d in _WEEKDAYS if len(d) > 3 or d in ("mon", "tue", "thu", "fri")}
_WEEKDAY_ALONE = "|".join(sorted(_ALONE, key=len, reverse=True))
_WD = rf"(?:(?P<wd>{_WEEKDAY})\.?,?\s+)?"
_ORD = r"(?:st|nd|rd|th)?"
_NOT_NUM_BEFORE = rf"(?<![{_DIGIT}.,/])"
_NOT_NUM_AFTER = rf"(?![{_DIGIT}]|[.,/][{_DIGIT}])"
_DATES = [
    re.compile(p)
    for p in (
        rf"{_WD}{_NOT_NUM_BEFORE}(?P<y>\d{{4}})-(?P<m>\d{{2}})-(?P<d>\d{{2}}){_NOT_NUM_AFTER}",
        # 14/06/2014: day first, read only where no month-first reading exists (day > 12)
        rf"{_NOT_NUM_BEFORE}(?P<sd>\d{{1,2}})[/.](?P<m>\d{{1,2}})[/.](?P<y>\d{{4}}){_NOT_NUM_AFTER}",
        rf"{_WD}(?<![\w.])(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<mn>{_MONTH})\b\.?"
        rf"(?:,?\s+(?P<y>\d{{4}}){_NOT_NUM_AFTER})?",
        # "June 21." ends a sentence; "June 21.5" and "June 21:30" are no dates
        rf"{_WD}(?<![\w.])(?P<mn>{_MONTH})\.?\s+(?P<d>\d{{1,2}}){_ORD}(?![{_DIGIT}:])(?!\.[{_DIGIT}])"
        rf"(?:,?\s+(?P<y>\d{{4}}){_NOT_NUM_AFTER})?",
        rf"(?<![\w.])(?P<mn>{_MONTH})\.?,?\s+(?P<y>\d{{4}}){_NOT_NUM_AFTER}",
        rf"{_NOT_NUM_BEFORE}(?P<y>\d{{4}})-(?P<m>0[1-9]|1[0-2])(?![{_DIGIT}-])",
        # 05/2025: a month and its year
        rf"{_NOT_NUM_BEFORE}(?P<m>0?[1-9]|1[0-2])/(?P<y>\d{{4}}){_NOT_NUM_AFTER}",
        # 26/03 or 03/26 with no year: read only where one order alone makes a date
        rf"{_NOT_NUM_BEFORE}(?P<a>\d{{1,2}})/(?P<b>\d{{1,2}}){_NOT_NUM_AFTER}",
        rf"(?<![\w.])(?P<mn>{_MONTH_FULL})\b",
        rf"(?:{_MONTH_CUE})(?P<mn>{_MONTH_ABBR})\b\.?",
        rf"(?<![\w.])(?P<mn>{_MONTH_ABBR})\b(?=\s?[–-])",  # the first month of a span
        rf"(?<![\w.])(?P<wd>{_WEEKDAY_ALONE})s?\b",  # "Tuesdays" names the day "Tuesday" does
    )
]
_AMPM = r"(?P<ap>[AaPp]\.?[Mm]\.?)(?![\w])"
_TIMES = [
    re.compile(p)
    for p in (
        rf"(?<![{_DIGIT}:.,])(?P<h>\d{{1,2}}):(?P<mi>\d{{2}})(?::(?P<s>\d{{2}}))?(?![{_DIGIT}:])(?:\s?{_AMPM})?",
        rf"(?<![{_DIGIT}:.,])(?P<h>\d{{1,2}})(?:\.(?P<mi>\d{{2}}))?\s?{_AMPM}",
        r"(?i)(?<![\w:.,])(?:12\s?)?(?P<noon>noon|midday|midnight)\b",  # "12 noon" is "midday"
    )
]
# Units that make a number an amount: "15 kg" is not "15 lb". Spellings of one unit
# share a key. Any other word after a number ("3 hives") is not part of the specific.
_UNIT_KEYS = {
    "€": "EUR",
    "eur": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "$": "USD",
    "usd": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "£": "GBP",
    "gbp": "GBP",
    "pound": "GBP",
    "pounds": "GBP",
    "¥": "JPY",
    "jpy": "JPY",
    "yen": "JPY",
    "chf": "CHF",
    "%": "%",
    "percent": "%",
    "per cent": "%",
    "ms": "ms",
    "millisecond": "ms",
    "milliseconds": "ms",
    "s": "s",
    "sec": "s",
    "secs": "s",
    "second": "s",
    "seconds": "s",
    "min": "min",
    "mins": "min",
    "minute": "min",
    "minutes": "min",
    "h": "h",
    "hr": "h",
    "hrs": "h",
    "hour": "h",
    "hours": "h",
    "day": "day",
    "days": "day",
    "week": "week",
    "weeks": "week",
    "wk": "week",
    "wks": "week",
    "month": "month",
    "months": "month",
    "year": "year",
    "years": "year",
    "yr": "year",
    "yrs": "year",
    "b": "B",
    "kb": "kB",
    "mb": "MB",
    "gb": "GB",
    "tb": "TB",
    "kib": "KiB",
    "mib": "MiB",
    "gib": "GiB",
    "tib": "TiB",
    "k": "k",
    "mm": "mm",
    "cm": "cm",
    "m": "m",
    "km": "km",
    "g": "g",
    "kg": "kg",
    "mg": "mg",
    "t": "t",
    "l": "l",
    "ml": "ml",
    "lb": "lb",
    "lbs": "lb",
    "oz": "oz",
    "psi": "psi",
    "bar": "bar",
    "°c": "°C",
    "°f": "°F",
    "degrees celsius": "°C",
    "degrees centigrade": "°C",
    "degrees fahrenheit": "°F",
    "°": "°",
    "w": "W",
    "kw": "kW",
    "kwh": "kWh",
    "wh": "Wh",
    "mah": "mAh",
    "v": "V",
    "a": "A",
    "hz": "Hz",
    "khz": "kHz",
    "mhz": "MHz",
    "ghz": "GHz",
    "x": "x",
    # Length, speed, volume and weight in words: "5 miles" is not "5 km".
    "mi": "mi",
    "mile": "mi",
    "miles": "mi",
    "kilometre": "km",
    "kilometres": "km",
    "kilometer": "km",
    "kilometers": "km",
    "metre": "m",
    "metres": "m",
    "meter": "m",
    "meters": "m",
    "centimetre": "cm",
    "centimetres": "cm",
    "centimeter": "cm",
    "centimeters": "cm",
    "millimetre": "mm",
    "millimetres": "mm",
    "millimeter": "mm",
    "millimeters": "mm",
    "ft": "ft",
    "foot": "ft",
    "feet": "ft",
    "inch": "inch",
    "inches": "inch",
    "yd": "yd",
    "yard": "yd",
    "yards": "yd",
    "mph": "mph",
    "kph": "km/h",
    "km/h": "km/h",
    "litre": "l",
    "litres": "l",
    "liter": "l",
    "liters": "l",
    "millilitre": "ml",
    "millilitres": "ml",
    "milliliter": "ml",
    "milliliters": "ml",
    "gal": "gal",
    "gallon": "gal",
    "gallons": "gal",
    "kilogram": "kg",
    "kilograms": "kg",
    "kilo": "kg",
    "kilos": "kg",
    "gram": "g",
    "grams": "g",
    "milligram": "mg",
    "milligrams": "mg",
    "tonne": "t",
    "tonnes": "t",
    "ton": "ton",
    "tons": "ton",
    "degree": "°",
    "degrees": "°",
    "kcal": "kcal",
    "calorie": "kcal",
    "calories": "kcal",
    "decade": "decade",
    "decades": "decade",
}
_CODE_UNITS = ("EUR", "USD", "GBP", "JPY", "CHF")
CURRENCIES = frozenset(_CODE_UNITS)  # the unit keys of money
_UNIT_AFTER = "|".join(re.escape(u) for u in sorted(_UNIT_KEYS, key=len, reverse=True))
_NUM = rf"(?P<n>{_DIGITS}(?:[.,]{_DIGITS})*)"
_AMOUNTS = [
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"(?P<u>[€$£¥]|\b(?:{'|'.join(_CODE_UNITS)}))\s?{_NUM}(?![{_DIGIT}]|[^\W_])",
        rf"(?<![^\W\d_]){_NOT_NUM_BEFORE}{_NUM}\s?(?P<u>{_UNIT_AFTER})(?![^\W_])",
    )
]
# Numbers written as words (zero to ninety-nine): "six months" is "6 months".
_SMALL_NUMBERS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_NUMBER_WORD_VALUES = {
    **{w: i for i, w in enumerate(_SMALL_NUMBERS)},
    **{t: 20 + 10 * i for i, t in enumerate(_TENS)},
}
_NUMBER_WORD = (
    rf"(?<![\w-])(?P<nw>(?:{'|'.join(_TENS)})(?:[- ](?:{'|'.join(_SMALL_NUMBERS[1:10])}))?"
    rf"|{'|'.join(sorted(_SMALL_NUMBERS, key=len, reverse=True))})(?![\w-])"
)
_WORD_NUMBER = re.compile(_NUMBER_WORD, re.IGNORECASE)
# A unit after a number word is a word of two letters or more ("one a day" holds no ampere).
_WORD_UNITS = "|".join(re.escape(u) for u in sorted(_UNIT_KEYS, key=len, reverse=True) if len(u) > 1 and u.isalpha())
_WORD_AMOUNT = re.compile(rf"{_NUMBER_WORD}\s(?P<u>{_WORD_UNITS})(?![^\W_])", re.IGNORECASE)


def _word_value(words: str) -> str:
    """The digits of a number written as words: "twenty-one" -> "21"."""
    parts = re.split(r"[- ]", words.casefold())
    return str(sum(_NUMBER_WORD_VALUES[p] for p in parts))


_NUMBER = re.compile(
    rf"(?<![^\W\d_]){_NOT_NUM_BEFORE}(?P<n>{_DIGITS}(?:[.,/]{_DIGITS})*)"
    r"(?:st|nd|rd|th)?(?![^\W_])"
)
_URL = re.compile(r"(?:https?://|www\.)[^\s<>()\[\]\"'`]+", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_WORDISH = re.compile(r"[^\W_][\w]*(?:(?:[-./@:]|'(?=[^\W\d_]))[\w]+)*(?:\+\+|#)?")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_TRAIL = ".,;:!?)]}'\""
# Capitalised words that say nothing specific when they start a name-like run.
_NOT_NAMES = STOPWORDS | frozenset(
    "according also answer based both however note notes per yes no none nothing unknown "
    "please sure thanks there here".split()
)


@dataclass(frozen=True)
class Specific:
    """One specific an answer states: its kind, the text as written, and what is compared."""

    kind: str  # date | time | amount | number | url | email | identifier | name
    text: str
    key: tuple


def _number_key(n: str) -> str:
    """A number's spelling for comparison: thousands commas dropped ("1,800" = "1800")."""
    return n.replace(",", "") if _THOUSANDS.fullmatch(n) else n


def _date_key(m: re.Match) -> tuple | None:
    g = m.groupdict()
    y = int(g["y"]) if g.get("y") else None
    mo = _MONTHS.get((g.get("mn") or "").casefold()) if g.get("mn") else (int(g["m"]) if g.get("m") else None)
    d = int(g["d"]) if g.get("d") else None
    if g.get("a"):  # day and month with no year, in the one order that makes a date
        a, b = int(g["a"]), int(g["b"])
        if (a > 12) == (b > 12) or a == 0 or b == 0 or {a, b} == {24, 7}:  # "24/7" is all the time
            return None
        d, mo = (a, b) if a > 12 else (b, a)
    if g.get("sd"):
        d = int(g["sd"])
        if d <= 12 and d != mo:  # 03/04/2026: the 3rd of April or March the 4th
            return None
    wd = _WEEKDAYS.get(g["wd"].casefold()) if g.get("wd") else None
    if mo is not None and not 1 <= mo <= 12 or d is not None and not 1 <= d <= 31:
        return None
    if wd is None and y is not None and mo is not None and d is not None:
        try:
            wd = dt.date(y, mo, d).weekday()  # a full date also states its weekday
        except ValueError:
            return None
    return (y, mo, d, wd)


def _time_key(m: re.Match) -> tuple | None:
    if m.groupdict().get("noon"):
        return (0 if m["noon"].casefold() == "midnight" else 12, 0, None)
    h, mi = int(m["h"]), int(m["mi"] or 0)
    sec = int(m["s"]) if m.groupdict().get("s") else None
    ap = (m["ap"] or "").replace(".", "").casefold()
    if ap:
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if ap == "pm" else 0)
    if h > 24 or mi > 59 or (sec is not None and sec > 59):
        return None
    return (h, mi, sec)


def _mask(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def _sentence_start(text: str, pos: int) -> bool:
    """Whether the word at `pos` opens a sentence, a line or a list item."""
    i = pos
    while i > 0 and text[i - 1] in " \t\"'“‘([*_>#-•":
        i -= 1
    # Not after ":" or ";": "Cat: Pim" names Pim (stricter, so safer, than skipping it).
    return i == 0 or text[i - 1] in ".!?\n\r"


def specifics(text: str) -> list[Specific]:
    """The specifics `text` states, in order found (pure; never raises on a str).

    * **url**, **email**: as written (trailing punctuation dropped).
    * **date**: ISO ``2026-03-01``, ``1 March 2026`` / ``1st of March 2026`` / ``March 1,
      2026`` (month names or abbreviations, capitalised), each with an optional weekday
      in front; ``March 2026``; ``2026-03``; ``1 March``; a full month name or a weekday
      alone (or its plural: "Tuesdays" is the day "Tuesday" is). All of these are compared
      as (year, month, day, weekday), so "1 March 2026" is the same date as "2026-03-01"
      (and as "Sunday 1 March 2026"). A date given with
      slashes or dots ("01/03/2026", "1.3.2026") is ambiguous (day or month first) and is
      compared as written, as a number.
    * **time**: ``07:30``, ``7:30 pm``, ``7pm``, ``7.30am``: compared as a 24-hour clock,
      so "7pm" = "19:00" and "7am" = "07:00", but "7:00" (no am/pm) is 07:00.
    * **amount**: a number with a currency (``€1,800``, ``1,800 EUR``, ``1800 euros``)
      or a unit from a closed list (``5 ms``, ``15kg``, ``55 psi``, ``12%``): number and
      unit must both match; spellings of one unit are the same.
    * **number**: any other run of digits, with inner ``.`` ``,`` ``/`` (``3.11.7``,
      ``1,800``, ``2026/2027``, ``10⁶``): compared as written, except that thousands
      commas are dropped ("1,800" = "1800"). Superscripts, subscripts, fractions and
      other digit forms are part of the spelling: "10⁶" is neither "10" nor "106".
    * **identifier**: a word with a digit in it (``T14``, ``esp32``), an inner capital
      (``ThinkPad``, ``VBKA``), an underscore, an inner ``.``/``/`` (``deploy.md``), or
      a ``++``/``#`` tail: as written, case included.
    * **name**: a run of capitalised words ("Alder Apiaries", "Gideon Parch"), less a
      leading function word ("The", "From"). A lone capitalised word that opens a
      sentence is not counted (it cannot be told from an ordinary first word): a
      measured limit, so "Rosa said" is not checked but "said Rosa" is.
    """
    return [spec for _, _, spec in located(text)[1]]


# How a match of each literal pattern is read: (where the specific ends, the specific, where
# the text masked after it ends), or None when the match is no specific of that kind. The
# patterns run in this order, each over the text the earlier ones left unmasked.
_Reading = tuple[int, Specific, int] | None


def _read_literal(kind: str) -> Callable[[re.Match[str]], _Reading]:
    def read(m: re.Match[str]) -> _Reading:
        lit = m.group().rstrip(_TRAIL)  # trailing punctuation is the sentence's
        return m.start() + len(lit), Specific(kind, lit, (lit,)), m.start() + len(lit)

    return read


def _read_date(m: re.Match[str]) -> _Reading:
    key = _date_key(m)
    return None if key is None else (m.end(), Specific("date", m.group().strip(), key), m.end())


def _read_time(m: re.Match[str]) -> _Reading:
    key = _time_key(m)
    if key is None:
        return None
    shown = m.group().strip()
    if shown.endswith(".") and not re.search(r"[AaPp]\.[Mm]\.$", shown):
        shown = shown[:-1]  # the sentence's full stop, not part of "7pm"
    return m.start() + len(shown), Specific("time", shown, key), m.end()


def _read_amount(m: re.Match[str]) -> _Reading:
    unit = _UNIT_KEYS.get(m["u"].casefold())
    if unit is None:
        return None
    return m.end(), Specific("amount", m.group().strip(), (_number_key(m["n"]), unit)), m.end()


def _read_word_amount(m: re.Match[str]) -> _Reading:
    unit = _UNIT_KEYS.get(m["u"].casefold())
    if unit is None:
        return None
    return m.end(), Specific("amount", m.group().strip(), (_word_value(m["nw"]), unit)), m.end()


def _read_word_number(m: re.Match[str]) -> _Reading:
    return m.end(), Specific("number", m["nw"], (_word_value(m["nw"]),)), m.end()


def _read_number(m: re.Match[str]) -> _Reading:
    return m.end("n"), Specific("number", m["n"], (_number_key(m["n"]),)), m.end()


_LITERALS: list[tuple[re.Pattern[str], Callable[[re.Match[str]], _Reading]]] = [
    (_URL, _read_literal("url")),
    (_EMAIL, _read_literal("email")),
    *((rx, _read_date) for rx in _DATES),
    *((rx, _read_time) for rx in _TIMES),
    *((rx, _read_amount) for rx in _AMOUNTS),
    (_WORD_AMOUNT, _read_word_amount),
    (_WORD_NUMBER, _read_word_number),
    (_NUMBER, _read_number),
]


def located(text: str) -> tuple[str, list[tuple[int, int, Specific]]]:
    """`text` as specifics are read in (each line normalised as quotes are, then NFC), and
    each specific `specifics` finds there with its span in that form, in text order.

    `cortex.ask.proof` reads what stands before a date in it.
    """
    found: list[tuple[int, int, Specific]] = []
    # Each line normalised as quotes are (emphasis, typographic forms, markers, NFC), so a
    # specific is read the same way in an answer and in a quote; lines are kept apart
    # because a line start is a sentence start.
    work = work_text = "\n".join(normalize_nfc(line) for line in text.splitlines())
    for rx, read in _LITERALS:
        for m in rx.finditer(work):
            reading = read(m)
            if reading is not None:
                end, spec, masked_to = reading
                found.append((m.start(), end, spec))
                work = _mask(work, m.start(), masked_to)
    found += _words(work)
    found.sort(key=lambda f: f[0])
    return work_text, found


def _is_identifier(word: str, letters: int) -> bool:
    """A word with a digit, an underscore or a ``++``/``#`` tail; or, of two letters or more,
    one with an inner capital in a part; or one with an inner ``.``/``/`` between two parts of
    two characters or more (``deploy.md``, not ``e.g``)."""
    return letters > 0 and (
        any(c.isdigit() for c in word)
        or "_" in word
        or word.endswith(("++", "#"))
        or (any(any(c.isupper() for c in part[1:]) for part in word.split("-")) and letters > 1)
        or (any(ch in word[1:-1] for ch in "./") and len([p for p in re.split(r"[./]", word) if len(p) > 1]) > 1)
    )


def _words(work: str) -> list[tuple[int, int, Specific]]:
    """The identifiers and names of `work` (its literal specifics masked): a name is a run of
    capitalised words one space apart, but for a lone one opening a sentence."""
    found: list[tuple[int, int, Specific]] = []
    run: list[tuple[int, str]] = []

    def close_run() -> None:
        if run and not (len(run) == 1 and _sentence_start(work, run[0][0])):
            name = " ".join(w for _, w in run)
            found.append((run[0][0], run[-1][0] + len(run[-1][1]), Specific("name", name, (name,))))
        run.clear()

    prev_end = -1
    for m in _WORDISH.finditer(work):
        word = m.group()
        while word and word[-1] in "-./@:":
            word = word[:-1]
        possessive = word.endswith(("'s", "’s"))
        if possessive:
            word = word[:-2]
        letters = sum(1 for c in word if c.isalpha())
        is_ident = _is_identifier(word, letters)
        name_word = letters > 1 and word[0].isupper() and not is_ident and word.casefold() not in _NOT_NAMES
        gap = work[prev_end : m.start()] if prev_end >= 0 else ""
        if run and not (gap == " " and name_word):
            close_run()
        if is_ident:
            found.append((m.start(), m.start() + len(word), Specific("identifier", word, (word,))))
        elif name_word:
            run.append((m.start(), word))
            if possessive:  # "Lily's Kitchen": the name is "Lily", then "Kitchen"
                close_run()
        prev_end = m.start() + len(m.group())
    close_run()
    return found


def strip_old_wording(text: str) -> str:
    """A quote without the old wording of in-place corrections: that is retired text."""
    return strip_was_markers(text)


# What a note's title, aliases and headings may ground: what a passage is about (the trip
# is to Lisbon), never what it states (the time, the price), which the quote must carry.
NAMING = frozenset({"name", "identifier"})
# Retired or hidden text in a heading or title: struck, commented out, or a correction's
# old wording. Read by pattern, not by CommonMark: an unclosed mark is left in (and
# CommonMark would not retire it either), and dropping more than it would only grounds less.
_NOT_LIVE = re.compile(r"~~.*?~~|<!--.*?-->|%%.*?%%", re.DOTALL)


def unit_of(word: str) -> str | None:
    """The unit key a word names ("kilometres" -> "km"), as amounts are compared; None if none."""
    return _UNIT_KEYS.get(word.casefold())


def live_context(text: str) -> str:
    """A title, alias or heading as it may ground a name: normalised, NFC, retired text out."""
    return normalize_nfc(strip_old_wording(_NOT_LIVE.sub(" ", text)))

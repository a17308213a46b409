"""The words and patterns that mark what a clause claims, for `cortex.ask.clauses`.

Word lists, not a grammar: negations and what is not one, bounds before and after a
specific, closed ranges, signs, comparisons by pairs of opposites, ordinals, recurrences,
quantifiers, what looks back to a past value, and what cuts a sentence into clauses. See
`cortex.ask.clauses` for how each is read. English only.

Constants only, no I/O.
"""

from __future__ import annotations

import re

__all__ = [
    "ABBREVIATIONS",
    "AUX",
    "BLOCK_START",
    "CONTRACTIONS",
    "COUNT_WORDS",
    "CUE_WORDS",
    "CUT",
    "DIRECTION",
    "DIRECTIONS",
    "LEADING_JOIN",
    "LOOKS_BACK",
    "META",
    "MONTHS",
    "NAMED_RECURRENCE",
    "NEGATION",
    "NOT_NEGATION",
    "NOT_ORDINAL",
    "NOT_QUANTIFIER",
    "NUMERIC",
    "ORDINAL",
    "ORDINAL_WORDS",
    "PLURAL_WEEKDAYS",
    "POSTFIX",
    "PREFIX",
    "PRONOUNS",
    "QUANTIFIER",
    "QUANTIFIERS",
    "RANGE_BETWEEN",
    "RANGE_OPENER",
    "RECURRENCE",
    "RETIRED_HEADINGS",
    "SENTENCE_END",
    "SIGN_AFTER",
    "SIGN_BEFORE",
    "UNITS",
    "WEEKDAY_NAMES",
]

NEGATION = re.compile(
    r"(?<![\w'])(?:not|no|never|none|nothing|nobody|nowhere|neither|nor|without|except|excluding"
    r"|cannot|instead of|rather than|no one|no longer|unable|refuses?|refused|refusing|forbids?|forbade"
    r"|forbidden|forbidding|prohibits?|prohibited|prohibiting|bans?|banned|banning|deny|denies|denied"
    r"|denying|rejects?|rejected|rejecting|declines?|declined|declining|excludes?|excluded|disallows?"
    r"|disallowed)(?![\w'])|n't(?!\w)",
    re.IGNORECASE,
)
# Not negations: an interjection "No," opening a clause, and these phrases ("not only",
# "no. 4", a bound: "no later than the third rehearsal").
NOT_NEGATION = re.compile(
    r"(?<![\w'])(?:not only|not just|whether or not|no\.?(?=\s*\d)|no doubt"
    r"|(?:no|not)\s+(?:later|earlier|sooner|more|less|fewer|longer|shorter)\s+than)(?![\w'])|^\s*no\s*[,.!:-]",
    re.IGNORECASE,
)
AUX = frozenset(
    "do does did is are was were will would can could should may might must has have had be been am".split()
)

_BOUND_PREFIX = {
    "le": "no more than|not more than|no greater than|no higher than|no longer than|not exceeding|not to exceed"
    r"|not over|not above|no later than|not after|a maximum of|maximum of|maximum|max\.?|at most|up to|within"
    r"|by",  # "by 18:00", "by Friday": a deadline; only on a time or a date (`clauses._values`)
    "ge": "no less than|not less than|no fewer than|not fewer than|no earlier than|not before|not under"
    r"|not below|a minimum of|minimum of|minimum|min\.|at least",
    "gt": r"more than|greater than|higher than|larger than|bigger than|heavier than|longer than|taller than"
    r"|older than|later than|warmer than|hotter than|in excess of|upwards of|exceeding|exceeds|exceed|over"
    r"|above|beyond|after|more \w+ than",
    "lt": r"less than|fewer than|lower than|smaller than|lighter than|shorter than|younger than|earlier than"
    r"|sooner than|cheaper than|colder than|prior to|under|below|before|less \w+ than",
    "until": "up until|until|till|through",
    "from": "starting from|starting at|as of|from|since",
}
PREFIX = re.compile(
    r"(?:^|(?<=[\s(\[]))(?:"
    + "|".join(f"(?P<{k}>{'|'.join(sorted(v.split('|'), key=len, reverse=True))})" for k, v in _BOUND_PREFIX.items())
    # A part of the period between the bound and its value: "until the end of 2026".
    + r")(?:\s+the\s+(?:start|beginning|end|middle|close|turn)\s+of|\s+(?:early|mid|late))?\s*$",
    re.IGNORECASE,
)
# After a number: "16 and later", "18:00 at the latest".
_BOUND_POSTFIX = {
    "ge": r"(?:and|or) (?:later|up|above|over|higher|newer|beyond|after|more|greater|older)|onwards?|at least|minimum"
    r"|at the earliest",
    "le": r"(?:and|or) (?:less|fewer|below|under|lower|earlier|before|younger)|at most|maximum|at the latest",
}
POSTFIX = re.compile(
    r"\s+(?:" + "|".join(f"(?P<{k}>{v})" for k, v in _BOUND_POSTFIX.items()) + r")(?![\w-])",
    re.IGNORECASE,
)
# A bound's words anywhere in a clause, by the bound they state: an answer that keeps the
# bound away from its number ("2 litres of water or more") has not dropped it.
BOUND_ANYWHERE = re.compile(
    r"(?<![\w'])(?:"
    + "|".join(f"(?P<{k}>{'|'.join(sorted(v.split('|'), key=len, reverse=True))})" for k, v in _BOUND_PREFIX.items())
    + "|"
    + "|".join(f"(?P<{k}_post>{v})" for k, v in _BOUND_POSTFIX.items())
    + r")(?![\w'])",
    re.IGNORECASE,
)
# A part of a month or a season before an end: "from mid-August into early September".
_PART = r"(?:(?:early|mid|late)[\s-]+)?"
RANGE_BETWEEN = re.compile(rf"\s*(?:-|to|through|thru|till|until|into)\s*{_PART}|\s+and\s+{_PART}", re.IGNORECASE)
RANGE_OPENER = re.compile(rf"(?:^|(?<=[\s(]))(?:from|between)\s+{_PART}$", re.IGNORECASE)
SIGN_BEFORE = re.compile(
    r"(?:(?:^|(?<=[\s(\[=:/])|(?<=UTC)|(?<=GMT))(?:(?P<minus>-)|(?P<plus>\+))|(?<![\w'])(?P<minus_word>minus|negative)\s+"
    r"|(?P<pm>±|\+/-|\+-)\s*|(?P<approx>[~≈])\s*"
    r"|(?<![\w'])(?P<approx_word>about|around|approximately|approx\.?|roughly|circa|ca\.)\s+)$",
    re.IGNORECASE,
)
SIGN_AFTER = re.compile(r"(?P<minus>\s+below zero)|(?P<approx>\s+or so|-?ish)(?!\w)", re.IGNORECASE)
NUMERIC = frozenset({"amount", "number", "time", "date"})

# Words of comparison by pairs of opposites: (pair, side).
DIRECTIONS = {
    "after": ("after", 1),
    "before": ("after", -1),
    "later": ("later", 1),
    "earlier": ("later", -1),
    "sooner": ("later", -1),
    "above": ("above", 1),
    "below": ("above", -1),
    "over": ("over", 1),
    "under": ("over", -1),
    "more": ("more", 1),
    "less": ("more", -1),
    "fewer": ("more", -1),
    "higher": ("higher", 1),
    "lower": ("higher", -1),
    "heavier": ("heavier", 1),
    "lighter": ("heavier", -1),
    "longer": ("longer", 1),
    "shorter": ("longer", -1),
    "older": ("older", 1),
    "younger": ("older", -1),
    "larger": ("larger", 1),
    "bigger": ("larger", 1),
    "smaller": ("larger", -1),
    "faster": ("faster", 1),
    "quicker": ("faster", 1),
    "slower": ("faster", -1),
    "warmer": ("warmer", 1),
    "hotter": ("warmer", 1),
    "colder": ("warmer", -1),
    "cooler": ("warmer", -1),
    "dearer": ("dearer", 1),
    "pricier": ("dearer", 1),
    "cheaper": ("dearer", -1),
    "maximum": ("maximum", 1),
    "minimum": ("maximum", -1),
}
DIRECTION = re.compile(r"(?<![\w'-])(?:" + "|".join(DIRECTIONS) + r")(?![\w'-])", re.IGNORECASE)

ORDINAL_WORDS = {
    w: i
    for i, w in enumerate(
        "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split(), 1
    )
}
ORDINAL = re.compile(
    r"(?<![\w'-])(?:(?P<pen>penultimate|second[- ]to[- ]last|next[- ]to[- ]last)|(?P<last>last|final)"
    r"|(?P<word>" + "|".join(ORDINAL_WORDS) + r")|(?P<n>\d+)(?:st|nd|rd|th))(?![\w'-])",
    re.IGNORECASE,
)
NOT_ORDINAL = re.compile(
    r"(?<![\w'])(?:at (?:first|last)|first of all|firstly|(?:per|a|one) second(?!\s+\w)"
    r"|last (?:night|week|weekend|month|year|time|summer|winter|spring|autumn|fall|season|minute|day))(?![\w'])"
    r"|^\s*first\s*,",
    re.IGNORECASE,
)
WEEKDAY_NAMES = "monday tuesday wednesday thursday friday saturday sunday".split()
UNITS = {
    "day": "day",
    "days": "day",
    "night": "day",
    "nights": "day",
    "morning": "day",
    "mornings": "day",
    "evening": "day",
    "evenings": "day",
    "week": "week",
    "weeks": "week",
    "weekend": "week",
    "weekends": "week",
    "month": "month",
    "months": "month",
    "year": "year",
    "years": "year",
    "hour": "hour",
    "hours": "hour",
    **{d: "week" for d in WEEKDAY_NAMES},
    **{d + "s": "week" for d in WEEKDAY_NAMES},
}
_UNIT = "|".join(sorted(UNITS, key=len, reverse=True))
PLURAL_WEEKDAYS = frozenset(d + "s" for d in WEEKDAY_NAMES)
COUNT_WORDS = {
    w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())
}
RECURRENCE = re.compile(
    r"(?<![\w'-])(?:"
    rf"(?P<other>every (?:other|second|alternate)|alternate) (?P<ou>{_UNIT})"
    rf"|every (?P<n>\d+|{'|'.join(COUNT_WORDS)}|third|fourth|fifth|sixth) (?P<nu>{_UNIT})"
    r"|(?P<wd>(?:every|each) weekday|weekdays|on weekdays)"
    r"|(?P<we>(?:every|each) weekend|weekends|at weekends|on weekends)"
    rf"|(?:every|each|once (?:a|per|every)) (?P<u1>{_UNIT})"
    rf"|(?P<twice>twice|(?:\d+|{'|'.join(COUNT_WORDS)}) times) (?:a|per|every) (?P<tu>{_UNIT})"
    r"|(?P<named>daily|nightly|weekly|monthly|yearly|annually|hourly|fortnightly|bi-?weekly|bi-?monthly"
    r"|quarterly)"
    rf"|(?P<plural>{'|'.join(d + 's' for d in WEEKDAY_NAMES)})"
    r")(?![\w'-])",
    re.IGNORECASE,
)
NAMED_RECURRENCE = {
    "daily": (1, "day"),
    "nightly": (1, "day"),
    "weekly": (1, "week"),
    "monthly": (1, "month"),
    "yearly": (1, "year"),
    "annually": (1, "year"),
    "hourly": (1, "hour"),
    "fortnightly": (2, "week"),
    "biweekly": (2, "week"),
    "bi-weekly": (2, "week"),
    "bimonthly": (2, "month"),
    "bi-monthly": (2, "month"),
    "quarterly": (3, "month"),
}
QUANTIFIERS = {
    **dict.fromkeys("all every each both always everyone everybody everything".split(), "all"),
    **dict.fromkeys("some several sometimes occasionally".split(), "some"),
    **dict.fromkeys("most mostly usually generally majority".split(), "most"),
    **dict.fromkeys("only solely exclusively".split(), "only"),
}
QUANTIFIER = re.compile(
    r"(?<![\w'-])(?:(?P<few>a few|a couple)|(?P<q>" + "|".join(QUANTIFIERS) + r"))(?![\w'-])", re.IGNORECASE
)
NOT_QUANTIFIER = re.compile(
    r"(?<![\w'])(?:at all|after all|above all|all over|the most|if only|not only|at most|at least)(?![\w'])",
    re.IGNORECASE,
)
LOOKS_BACK = re.compile(
    r"(?<![\w'])(?:was|were|used to|previously|formerly|before|old|earlier|prior|former|originally|no longer)"
    r"(?![\w'])",
    re.IGNORECASE,
)
# A table column whose heading holds one of these words holds retired values.
RETIRED_HEADINGS = frozenset(
    "old previous prev former formerly was prior retired superseded deprecated obsolete".split()
)

ABBREVIATIONS = frozenset("dr mr mrs ms st mt no nos vs etc approx ca e.g i.e eg ie cf fig".split())
SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*\s+|\n\s*|;\s*|\s+-\s+")
# A line that opens a block of its own (a list item, a quote, a heading, a table row):
# before it a line break ends a sentence; any other line break is a hard wrap.
BLOCK_START = re.compile(r"[ \t]*(?:[-*+][ \t]|\d{1,9}[.)][ \t]|>|#|\|)")
# "not yet booked" is one claim: "yet" after a negation is no contrast.
CUT = re.compile(
    r"(?P<contrast>(?<!\bnot)(?<!\bno)(?<!n't),?\s+(?=(?:but|yet|whereas|while|although|though|however)\b))"
    r"|(?P<neg>,\s+(?=(?:not|never)\b)|,?\s+(?=(?:except|excluding|without|instead of|rather than)\b))"
    r"|(?P<and>,?\s+(?=and\b))"
    r"|(?P<rel>,\s+(?=(?:who|which|whom|whose|where)\b))"
    r"|(?P<sub>,?\s+(?=(?:if|unless|because)\b))"
    r"|(?P<then>,?\s+(?=(?:after|before|once|when|whenever)\s+[^\W\d_]))"
    r"|(?P<subj>,\s+(?=(?:i|you|he|she|it|we|they|there)\b|[A-Z][^\W\d_]+\b))"
    r"|(?P<paren>\s*\(\s*)|(?P<close>\s*\)\s*)|(?P<comma>,\s+)",
    re.IGNORECASE,
)
LEADING_JOIN = re.compile(r"^(?:(?:and|but|or|yet|so)\s+)+", re.IGNORECASE)  # "and Ben feeds…" is "Ben feeds…"
PRONOUNS = frozenset("i you he she it we they there this".split())
# Words that frame an answer rather than state its claim, never aligned on.
META = frozenset(
    """according note notes brain says say said states stated state mention mentions mentioned writes
    wrote written yes answer quote quoted per also just""".split()
)
MONTHS = frozenset("january february march april may june july august september october november december".split())
CUE_WORDS = (
    frozenset(DIRECTIONS)
    | frozenset(ORDINAL_WORDS)
    | frozenset(QUANTIFIERS)
    | frozenset(NAMED_RECURRENCE)
    | frozenset(
        """never none nothing nobody nowhere neither nor without except excluding cannot instead rather
        unable refuse refuses refused refusing forbid forbids forbade forbidden forbidding prohibit prohibits
        prohibited prohibiting ban bans banned banning deny denies denied denying reject rejects rejected
        rejecting decline declines declined declining exclude excludes excluded disallow disallows
        disallowed last final penultimate every least most weekdays weekends weekday weekend twice once
        than within maximum minimum max min since until till through upwards onwards onward later earlier
        previously formerly originally former prior used""".split()
    )
)
CONTRACTIONS = frozenset("don doesn didn isn aren wasn weren won wouldn couldn shouldn haven hasn hadn mustn".split())

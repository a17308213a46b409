"""Egress redaction: credential-shaped strings are masked in every reply.

The stored note keeps its bytes; only what leaves the server is masked, with a
label saying what kind of thing was removed. Masking runs on whole texts before
anything cuts them (corpus parts, the profile cut, search passages), so a cut
never splits a credential into pieces no shape matches. Dict keys are masked
as well as values: frontmatter keys are note text too.

Shapes are anchored with `(?<![A-Za-z0-9])` rather than `\\b`: `\\b` treats `_`
as part of a word, so `GITHUB_TOKEN_ghp_…` slipped past every prefix.

`mask` is the one masking every surface sends through, where its reply is shaped: tool
replies and refusals on every door, prompts, resources and their change events, console
pages, `/healthz?detail=1`. Text that was serialized before it got there (the boot prompt
holds brain_context's reply as JSON) is read through its JSON escapes as well: `\\n`
glued a line's first key to the letter `n`, and `\\"` hid a quoted value's quote, so the
boot prompt showed `aws_secret_access_key = "…"` from a log entry whole.
"""

from __future__ import annotations

import bisect
import re
from typing import Any, TypeVar, overload

__all__ = ["NEEDLES", "PATTERNS", "mask", "might_hold_secret", "redact"]

T = TypeVar("T")

_START = r"(?<![A-Za-z0-9])"  # not glued to a letter or digit; `_`, `-`, `=` and `.` may precede

# The shapes masked, each with the label its mask shows: [REDACTED <label>].
PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "private key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
    ),
    ("bearer header", re.compile(r"(?i)(?<![A-Za-z0-9])bearer\s+[A-Za-z0-9._~+/=-]{12,}")),
    # "Basic" only after "Authorization:": in prose, "basic understanding" is not a credential.
    ("authorization header", re.compile(r"(?i)(?<=authorization:)\s*basic\s+[A-Za-z0-9+/=]{8,}")),
    ("JWT", re.compile(_START + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("webhook URL", re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{16,}")),
    (
        "API key",
        re.compile(
            _START + r"(?:sk-ant-[A-Za-z0-9_-]{16,}|sk-(?:proj-)?[A-Za-z0-9_-]{20,}"
            r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}"
            r"|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|glpat-[A-Za-z0-9_-]{20,}"
            r"|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{30,}"
            r"|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,})"
        ),
    ),
    (
        "secret setting",
        re.compile(
            _START + r"(?i:aws_secret_access_key|aws_session_token|AccountKey|SharedAccessKey)"
            r"(?:\s*[=:]\s*|\s+)[\"']?[A-Za-z0-9/+=]{16,}"
        ),
    ),
    (
        "URL credential",
        re.compile(r"(?i)(?<=[?&])(?:access_token|token|api_key|apikey|key|secret|password|sig)=[^&\s#\"'<>)]+"),
    ),
    ("URL password", re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)")),
]


# Text every match of a shape contains, lowercased: a shape none of whose needles a text holds
# cannot match it, and is not run. Nine passes cost ~140 us on a clean 400-character passage
# (9% of a search call); plain substring tests beat one regex alternation of them (120 us
# against 440 us on 6 KB).
NEEDLES: dict[str, tuple[str, ...]] = {
    "private key": ("-----begin",),
    "bearer header": ("bearer",),
    "authorization header": ("authorization:",),
    "JWT": (".eyj",),  # its second part
    "webhook URL": ("hooks.slack.com",),
    "API key": (
        *("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "akia", "asia", "aiza"),
        *("glpat-", "k_live_", "k_test_", "hf_", "npm_", "sg."),
    ),
    "secret setting": ("aws_secret_access_key", "aws_session_token", "accountkey", "sharedaccesskey"),
    "URL credential": ("token=", "key=", "secret=", "password=", "sig="),  # every name ends in one
    "URL password": ("://",),
}
_ALSO = {"URL password": "@"}  # it sits between "://" and "@"
_LABELS = [label for label, _ in PATTERNS]


def _gate(needle: str) -> str:
    """A character of `needle` that no letter case changes, tested on the text before it is
    lowered: most text holds no `=` or `_`, so most needles are never looked for."""
    return next((c for c in needle if not c.isalpha()), "")


# Needles grouped by their gate; "" (letters only) is always looked for.
_GATED: dict[str, list[tuple[str, str]]] = {}
for _label, _needles in NEEDLES.items():
    for _needle in _needles:
        _GATED.setdefault(_gate(_needle), []).append((_needle, _label))

# The only characters that an ignore-case pattern matches to an ASCII letter while `lower()`
# gives something else: dotted capital I (lowers to `i` + a combining dot), dotless i, long s
# (found by trying every code point against every letter). Text holding one takes every pass.
_ODD_CASE = re.compile("[\u0130\u0131\u017f]")

# The JSON string escapes read through (`_unescaped`). Each is read as itself, but an
# escaped printable ASCII character (`\\u0067`, which no serializer writes) is read as
# U+FFFD: so an escape never makes a needle, except through the letters ignore-case meets
# (`_ODD_CASE` and the Kelvin sign, which lowers to `k`), which escaped take every pass too.
_ESCAPE = re.compile(r'\\(?:["\\bfnrt]|u[0-9a-fA-F]{4})')  # not `\\/`: read as `/`, it could make "://"
_SIMPLE = {'"': '"', "\\": "\\", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_ODD_ESCAPED = re.compile(r"\\u(?:013[01]|017[fF]|212[aA])")


def _shapes_in(text: str, first: bool = False) -> set[str]:
    """The labels of the shapes that may match `text` (one is enough when `first`)."""
    if (not text.isascii() and _ODD_CASE.search(text)) or ("\\u" in text and _ODD_ESCAPED.search(text)):
        return set(_LABELS)
    found: set[str] = set()
    low = None
    for gate, needles in _GATED.items():
        if gate in text:
            low = text.lower() if low is None else low
            for needle, label in needles:
                if label not in found and needle in low and _ALSO.get(label, "") in text:
                    found.add(label)
                    if first:
                        return found
    return found


def might_hold_secret(text: str) -> bool:
    """False only when no pattern can match `text`: the cheap test before the passes.

    It may be run on a whole reply's JSON: escaping touches only quotes, backslashes and
    control characters, which no needle holds, so a needle in a string is one in its JSON.
    """
    return bool(_shapes_in(text, first=True))


def _unescaped(text: str) -> tuple[str, list[int], list[tuple[int, int]]]:
    """`text` with its JSON string escapes read back, where each of its characters (and its
    end) starts in `text`, and the escapes' spans in `text`."""
    out: list[str] = []
    starts: list[int] = []
    escapes: list[tuple[int, int]] = []
    at = 0
    for m in _ESCAPE.finditer(text):
        out.append(text[at : m.start()])
        starts.extend(range(at, m.start()))
        code = m.group()[1:]
        point = int(code[1:], 16) if code[0] == "u" else -1
        printable = 0x20 <= point < 0x7F and point not in (0x22, 0x5C)
        out.append(_SIMPLE[code] if point < 0 else "\ufffd" if printable else chr(point))
        starts.append(m.start())
        escapes.append(m.span())
        at = m.end()
    out.append(text[at:])
    starts.extend(range(at, len(text) + 1))
    return "".join(out), starts, escapes


def _outside(at: int, escapes: list[tuple[int, int]], end: bool) -> int:
    """`at` moved out of any escape it falls inside, into the span it bounds: a span's start to
    the escape's end, its end to the escape's start (the escape is left whole: the text stays JSON)."""
    i = bisect.bisect_right(escapes, at, key=lambda span: span[0]) - 1  # the last escape starting at or before `at`
    if i >= 0 and escapes[i][0] < at < escapes[i][1]:
        return escapes[i][0] if end else escapes[i][1]
    return at


def _sub_escaped(text: str, label: str, pattern: re.Pattern[str]) -> str:
    """`pattern.sub` over `text` as written and read through its JSON escapes at once: the
    matches of both, as spans of `text` that leave every escape whole, merged where they
    overlap, each masked once (masking one view after the other masked a mask again)."""
    plain, starts, escapes = _unescaped(text)
    spans = [(starts[m.start()], starts[m.end()]) for m in pattern.finditer(plain)]
    spans += [(_outside(m.start(), escapes, False), _outside(m.end(), escapes, True)) for m in pattern.finditer(text)]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(span for span in spans if span[0] < span[1]):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    out, at = [], 0
    for start, end in merged:
        out += [text[at:start], f"[REDACTED {label}]"]
        at = end
    out.append(text[at:])
    return "".join(out)


def redact(text: str) -> str:
    """Mask credential-shaped substrings of `text`, as written and read through its JSON
    escapes: only the shapes whose needles it holds are run (a mask's label holds no needle,
    so masking never makes one)."""
    shapes = _shapes_in(text)
    for label, pattern in PATTERNS:
        if label in shapes:
            if "\\" in text and _ESCAPE.search(text):
                text = _sub_escaped(text, label, pattern)
            else:
                text = pattern.sub(f"[REDACTED {label}]", text)
    return text


@overload
def mask(value: str) -> str: ...


@overload
def mask(value: T) -> T: ...


def mask(value: Any) -> Any:
    """What leaves the server, masked: a string, or every string inside a JSON-like value,
    dict keys included (frontmatter keys are note text too). The one masking of every surface."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [mask(v) for v in value]
    if isinstance(value, tuple):
        return tuple(mask(v) for v in value)
    if isinstance(value, dict):
        return {(redact(k) if isinstance(k, str) else k): mask(v) for k, v in value.items()}
    return value

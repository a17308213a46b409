"""Egress redaction: credential-shaped strings are masked in every reply.

The stored note keeps its bytes; only what leaves the server is masked, with a
label saying what kind of thing was removed. Masking runs on whole texts before
anything cuts them (corpus parts, the profile cut, search passages), so a cut
never splits a credential into pieces no shape matches. Dict keys are masked
as well as values: frontmatter keys are note text too.

Shapes are anchored with `(?<![A-Za-z0-9])` rather than `\\b`: `\\b` treats `_`
as part of a word, so `GITHUB_TOKEN_ghp_…` slipped past every prefix.
"""

from __future__ import annotations

import re

__all__ = ["PATTERNS", "might_hold_secret", "redact", "redact_value"]

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


# Text every shape's match contains, lowercased: a string holding none has nothing to mask.
# Nine passes cost ~140 us on a clean 400-character passage (9% of a search call); plain
# substring tests beat one regex alternation of them (120 us against 440 us on 6 KB).
_NEEDLES = (
    "-----begin",  # private key
    "bearer",
    "authorization:",
    "eyj",  # JWT
    "hooks.slack.com",
    # API keys
    *("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "akia", "asia", "aiza"),
    *("glpat-", "k_live_", "k_test_", "hf_", "npm_", "sg."),
    # secret settings
    *("aws_secret_access_key", "aws_session_token", "accountkey", "sharedaccesskey"),
    # URL credentials: every name ends in one of these
    *("token=", "key=", "secret=", "password=", "sig="),
)

# The only characters that an ignore-case pattern matches to an ASCII letter while `lower()`
# gives something else: dotted capital I (lowers to `i` + a combining dot), dotless i, long s
# (found by trying every code point against every letter). Text holding one takes every pass.
_ODD_CASE = re.compile("[\u0130\u0131\u017f]")


def might_hold_secret(text: str) -> bool:
    """False only when no pattern can match `text`: the cheap test before the passes.

    It may be run on a whole reply's JSON: escaping touches only quotes, backslashes and
    control characters, which no needle holds, so a needle in a string is one in its JSON.
    """
    if not text.isascii() and _ODD_CASE.search(text):
        return True
    low = text.lower()
    # A URL password sits between "://" and "@".
    return any(needle in low for needle in _NEEDLES) or ("://" in low and "@" in low)


def redact(text: str) -> str:
    """Mask credential-shaped substrings of `text`."""
    if not might_hold_secret(text):
        return text
    for label, pattern in PATTERNS:
        text = pattern.sub(f"[REDACTED {label}]", text)
    return text


def redact_value(value):
    """Redact every string inside a JSON-like value, dict keys included."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(redact_value(v) for v in value)
    if isinstance(value, dict):
        return {(redact(k) if isinstance(k, str) else k): redact_value(v) for k, v in value.items()}
    return value

"""Egress redaction: credential-shaped strings are masked in every reply.

The stored note keeps its bytes; only what leaves the server is masked, with a
label saying what kind of thing was removed.
"""

from __future__ import annotations

import re

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("private key", re.compile(
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.DOTALL)),
    ("bearer header", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{12,}")),
    ("JWT", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("API key", re.compile(
        r"\b(?:sk-ant-[A-Za-z0-9_-]{16,}|sk-(?:proj-)?[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}"
        r"|github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}"
        r"|AIza[0-9A-Za-z_-]{30,}|glpat-[A-Za-z0-9_-]{20,})")),
    ("URL credential", re.compile(
        r"(?i)(?<=[?&])(?:access_token|token|api_key|apikey|key|secret|password|sig)=[^&\s#\"'<>)]+")),
    ("URL password", re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)")),
]


def redact(text: str) -> str:
    """Mask credential-shaped substrings of `text`."""
    for label, pattern in _PATTERNS:
        text = pattern.sub(f"[REDACTED {label}]", text)
    return text


def redact_value(value):
    """Redact every string inside a JSON-like value."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(redact_value(v) for v in value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    return value

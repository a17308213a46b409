"""Making a model's answer unable to pass for the server's own lines (`neutralize_answer`),
and a client's own strings too (`client_text`: its name, its model's name).

The server writes its stamp, source and SHA lines around an answer, each starting with
`SERVER_LINE_PREFIX`; no line of the model's answer can, so a client can trust exactly
the lines that do. A client's name or model name sits inside the server's own lines
(`reader`, the coverage line), so it is made one bounded line without the prefix's mark.
Pure, never raises.
"""

from __future__ import annotations

import re
import unicodedata

from cortex.notes.data_envelope import one_line

__all__ = ["ANSWER_LINE_PREFIX", "CLIENT_TEXT_CHARS", "SERVER_LINE_PREFIX", "client_text", "neutralize_answer"]

# Prefix of every line the server itself writes around an answer (stamp lines, source
# lines, the SHA line). `neutralize_answer` guarantees no line of the model's answer
# starts with it, so a client can trust exactly the lines that do.
SERVER_LINE_PREFIX = "§ "
# Put in front of an answer line that looks like one of the server's lines.
ANSWER_LINE_PREFIX = "[answer] "
CLIENT_TEXT_CHARS = 100  # a client's or a model's name at most: real ones are under 40


# Line breaks a client might render (what str.splitlines splits on).
_LINE_BREAK = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# Decoration a renderer may hide or a reader may skip before the first word.
_DECORATION = " \t>*_#`~|+-=•·.:()[]{}\"'“”‘’«»"
_SERVER_SHAPED = re.compile(
    r"(?:§|verified|corrected|superseded|unverified|not\s*in\s*brain|stamps?\b|sources?\b"
    r"|tag\s*:|sha(?:-?1|-?256)?\b|commit\b|served\s+(?:from|at)\b|[0-9a-f]{7,64}\b)",
    re.IGNORECASE,
)
_FILE_BANNER = re.compile(r"\s*=+\s*file\b", re.IGNORECASE)
_ORDINAL = re.compile(r"\d{1,9}[.)]")


def _lead(line: str) -> str:
    """The line without leading whitespace, invisible format chars and decoration."""
    for _ in range(2):  # decoration, an optional list number, decoration again
        i = 0
        while i < len(line) and (line[i] in _DECORATION or line[i].isspace() or unicodedata.category(line[i]) == "Cf"):
            i += 1
        line = line[i:]
        m = _ORDINAL.match(line)
        if not m:
            break
        line = line[m.end() :]
    # Fold compatibility forms for *detection* only: ＶＥＲＩＦＩＥＤ looks like VERIFIED.
    return unicodedata.normalize("NFKC", line)


def neutralize_answer(text: str) -> str:
    """Make the model's answer unable to pass for the server's own lines.

    The server writes its stamp, source and SHA lines starting with
    `SERVER_LINE_PREFIX` ("§ "). In the answer:

    * every line break a client might render (CR, LF, VT, FF, NEL, U+2028/9, …)
      becomes "\\n", so there is no hidden line;
    * control characters other than tab and newline, and bidirectional overrides,
      become U+FFFD, so nothing can move or hide text on screen;
    * a line whose first word — after whitespace, invisible format characters and
      Markdown decoration (``> * _ # ` | - = [ ( "`` …) — is shaped like a server line
      is prefixed with `ANSWER_LINE_PREFIX` ("[answer] "): a leading "§", a stamp word
      (VERIFIED, CORRECTED, SUPERSEDED, UNVERIFIED, NOT IN BRAIN), "Stamp", "Source(s)",
      "tag:" (as in "[tag: …]"), "SHA", "commit", "served from/at", or a hex string
      of 7–64 digits; or the line starts with "=" signs and "FILE" ("=== FILE").
      Case is ignored and compatibility forms are folded for this test (NFKC), so
      "Verified:" and "ＶＥＲＩＦＩＥＤ" are caught; a harmless sentence may get the
      prefix, which only costs looks.

    No answer line can therefore start with "§ ", and every server-shaped line visibly
    belongs to the answer.
    """
    try:
        if not isinstance(text, str):
            text = str(text)
        out = []
        for line in _LINE_BREAK.split(text):
            line = "".join(
                "\ufffd"
                if (unicodedata.category(c) == "Cc" and c != "\t")
                or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
                else c
                for c in line
            )
            lead = _lead(line)
            if (
                line.lstrip().startswith("§")
                or _SERVER_SHAPED.match(lead)
                or _FILE_BANNER.match(unicodedata.normalize("NFKC", line))
            ):
                line = ANSWER_LINE_PREFIX + line
            out.append(line)
        return "\n".join(out)
    except Exception:
        # Never raise; fall back to something that certainly cannot pass.
        return ANSWER_LINE_PREFIX + repr(text)


def client_text(text: object, limit: int = CLIENT_TEXT_CHARS) -> str:
    """A string a client sent (its name, its model's name) as it may stand inside the
    server's lines: one line without control or format characters (`one_line`), no "§"
    (the server's line mark), at most `limit` characters; "unknown" when nothing is left."""
    try:
        return one_line(str(text).replace("§", " "), limit) or "unknown"
    except Exception:  # a str() that raises: nothing of it is shown
        return "unknown"

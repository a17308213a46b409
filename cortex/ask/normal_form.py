"""The one form every comparison of the verifier is made in: `cortex.notes.blocks.normalize`,
then Unicode NFC, with each output char's source offsets kept where a match must be placed.

NFC is canonical equivalence only: a note saved in NFD (``e`` + U+0301, as macOS editors
write it) and a quote in NFC (``é``) are the same text, while compatibility forms stay
apart (a superscript 6 is not a 6, ``ﬁ`` is not ``fi``). The quote check (`quotes`) and
an answer's specifics (`specifics`) both read text through it, so they read it alike.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from cortex.notes.blocks import normalize

__all__ = ["nfc_with_offsets", "normalize_nfc"]


# Chars that NFC may merge into the char before them: combining marks (any canonical
# combining class, and the spacing marks of Indic scripts, class 0) and the Hangul
# vowel and final jamo that compose with a leading syllable.
def _joins_previous(c: str) -> bool:
    return (
        bool(unicodedata.combining(c))
        or unicodedata.category(c) in ("Mn", "Mc", "Me")
        or ("\u1160" <= c <= "\u11ff" or "\ud7b0" <= c <= "\ud7ff")
    )


def nfc_with_offsets(s: str, offs: Sequence[int]) -> tuple[str, list[int], list[int]]:
    """NFC of `s`, with start and end source offsets for each output char.

    `offs[i]` is where char i of `s` came from. Each cluster (a char and the marks that
    follow it) is composed on its own; a composed char spans its whole cluster. Text
    already in NFC (nearly all text) is returned as it is.
    """
    if s.isascii() or unicodedata.is_normalized("NFC", s):
        return s, list(offs), [o + 1 for o in offs]
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i = 0
    while i < len(s):
        j = i + 1
        while j < len(s) and _joins_previous(s[j]):
            j += 1
        piece = unicodedata.normalize("NFC", s[i:j])
        if len(piece) == j - i:  # nothing composed: keep the one-to-one offsets
            starts.extend(offs[i:j])
            ends.extend(o + 1 for o in offs[i:j])
        else:
            starts.extend([offs[i]] * len(piece))
            ends.extend([offs[j - 1] + 1] * len(piece))
        out.append(piece)
        i = j
    text = "".join(out)
    whole = unicodedata.normalize("NFC", s)
    if text != whole:  # a composition across clusters this walk does not know: be coarse
        return whole, [offs[0]] * len(whole), [offs[-1] + 1] * len(whole)
    return text, starts, ends


def normalize_nfc(text: str) -> str:
    """`cortex.notes.blocks.normalize`, then NFC: the form every comparison here is made in."""
    return unicodedata.normalize("NFC", normalize(text)[0])

"""Turn note text and queries into search terms.

Pure and deterministic: no I/O, no locale, never raises on any ``str`` (lone
surrogates included).  Notes and queries go through the same function, so
whatever a note's word becomes, the same word typed in a question becomes the
same term.

The rules, in the order they apply:

* **Case** is removed with ``str.casefold()`` (so ``Straße`` -> ``strasse``).
  NFKC is never applied: a superscript 6 stays ``⁶`` and never matches ``6``,
  fullwidth ``ＡＢＣ`` stays fullwidth.  Canonical composition (NFC) *is*
  applied to non-ASCII words, because it only merges different byte spellings
  of the same character (macOS file names and some editors write ``é`` as
  ``e`` + U+0301).
* **Accents**: a word with an accented *Latin* letter gives two terms, the
  word as written and the word with the accents stripped (``café`` ->
  ``café``, ``cafe``), so a query typed with or without accents finds it, and
  the exact spelling scores higher because it matches both terms.  Marks are
  stripped only after a Latin base letter: in Greek, Cyrillic, Devanagari and
  others a mark is often a different letter (``й`` is not ``и``).
* **Scripts written without spaces** (Han, Hiragana, Katakana, Hangul, and
  Thai, Lao, Khmer, Myanmar) are cut into overlapping bigrams (``東京都`` ->
  ``東京``, ``京都``); a run of one character gives that character.  For the
  Southeast Asian scripts a "character" is a base letter with the combining
  vowel/tone marks that follow it, so a mark is never split from its letter.
  Because a question is cut the same way, a two-character word inside a
  sentence matches.  Limit: a one-character query matches only where that
  character stands alone in the note (no unigrams are emitted inside runs,
  which would double the index size for CJK text).  Hangul is included
  although Korean uses spaces, because particles glue onto words
  (``학교에서`` must match ``학교``).
* **Technical words** stay whole and are also split into their parts:
  ``snake_case_names`` -> ``snake_case_names``, ``snake``, ``case``,
  ``names``; ``file-names.md`` -> ``file-names.md``, ``file``, ``names``,
  ``md``; ``3.11.7`` -> ``3.11.7``, ``3``, ``11``, ``7``; ``me@x.org``,
  ``a/b``, ``14:30``, ``don't`` likewise.  Connectors are ``- . / @ : '``
  (and ``’``, written as ``'``), one to three in a row (``https://x.org``),
  only *between* word characters.  A leading dot before a letter is kept:
  ``.net`` -> ``.net``, ``net``.  A trailing ``+``, ``++`` or ``#`` right
  after a letter is kept and the word is *not* split: ``c++`` -> ``c++``,
  ``C#`` -> ``c#`` (a query for ``c`` should not find every C++ note).
* **Markdown punctuation** (``# * _ > ` [ ] ( ) | ~``) and every other symbol
  or punctuation mark separates words.  ``_`` is a word character only inside
  a word (``_emphasis_`` -> ``emphasis``, ``snake_case`` stays).

Measured (bench/search_index_bench.py, Python 3.11.7, the shared dev VM):
~260 ns of CPU a term, ~0.94 s for 10,000 Markdown-ish notes of ~300 words
(3.65M terms, all fields); the whole-text regex it replaces took ~2.2 s.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["STOPWORDS", "tokenize"]

# Every combining mark (general categories Mn, Mc, Me) of Unicode 14.0, the
# database of Python 3.11.  ``\w`` matches none of them, yet they are part of
# words in Devanagari, Thai, Hebrew and NFD-spelled Latin.  Kept as a literal
# so import costs nothing (scanning unicodedata takes ~0.3 s);
# tests/index/test_tokenize.py checks it against the running interpreter.
_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u05bf\u05c1-\u05c2\u05c4-\u05c5"
    "\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4"
    "\u06e7-\u06e8\u06ea-\u06ed\u0711\u0730-\u074a\u07a6-\u07b0\u07eb-\u07f3"
    "\u07fd\u0816-\u0819\u081b-\u0823\u0825-\u0827\u0829-\u082d\u0859-\u085b"
    "\u0898-\u089f\u08ca-\u08e1\u08e3-\u0903\u093a-\u093c\u093e-\u094f"
    "\u0951-\u0957\u0962-\u0963\u0981-\u0983\u09bc\u09be-\u09c4\u09c7-\u09c8"
    "\u09cb-\u09cd\u09d7\u09e2-\u09e3\u09fe\u0a01-\u0a03\u0a3c\u0a3e-\u0a42"
    "\u0a47-\u0a48\u0a4b-\u0a4d\u0a51\u0a70-\u0a71\u0a75\u0a81-\u0a83\u0abc"
    "\u0abe-\u0ac5\u0ac7-\u0ac9\u0acb-\u0acd\u0ae2-\u0ae3\u0afa-\u0aff"
    "\u0b01-\u0b03\u0b3c\u0b3e-\u0b44\u0b47-\u0b48\u0b4b-\u0b4d\u0b55-\u0b57"
    "\u0b62-\u0b63\u0b82\u0bbe-\u0bc2\u0bc6-\u0bc8\u0bca-\u0bcd\u0bd7"
    "\u0c00-\u0c04\u0c3c\u0c3e-\u0c44\u0c46-\u0c48\u0c4a-\u0c4d\u0c55-\u0c56"
    "\u0c62-\u0c63\u0c81-\u0c83\u0cbc\u0cbe-\u0cc4\u0cc6-\u0cc8\u0cca-\u0ccd"
    "\u0cd5-\u0cd6\u0ce2-\u0ce3\u0d00-\u0d03\u0d3b-\u0d3c\u0d3e-\u0d44"
    "\u0d46-\u0d48\u0d4a-\u0d4d\u0d57\u0d62-\u0d63\u0d81-\u0d83\u0dca"
    "\u0dcf-\u0dd4\u0dd6\u0dd8-\u0ddf\u0df2-\u0df3\u0e31\u0e34-\u0e3a"
    "\u0e47-\u0e4e\u0eb1\u0eb4-\u0ebc\u0ec8-\u0ecd\u0f18-\u0f19\u0f35\u0f37"
    "\u0f39\u0f3e-\u0f3f\u0f71-\u0f84\u0f86-\u0f87\u0f8d-\u0f97\u0f99-\u0fbc"
    "\u0fc6\u102b-\u103e\u1056-\u1059\u105e-\u1060\u1062-\u1064\u1067-\u106d"
    "\u1071-\u1074\u1082-\u108d\u108f\u109a-\u109d\u135d-\u135f\u1712-\u1715"
    "\u1732-\u1734\u1752-\u1753\u1772-\u1773\u17b4-\u17d3\u17dd\u180b-\u180d"
    "\u180f\u1885-\u1886\u18a9\u1920-\u192b\u1930-\u193b\u1a17-\u1a1b"
    "\u1a55-\u1a5e\u1a60-\u1a7c\u1a7f\u1ab0-\u1ace\u1b00-\u1b04\u1b34-\u1b44"
    "\u1b6b-\u1b73\u1b80-\u1b82\u1ba1-\u1bad\u1be6-\u1bf3\u1c24-\u1c37"
    "\u1cd0-\u1cd2\u1cd4-\u1ce8\u1ced\u1cf4\u1cf7-\u1cf9\u1dc0-\u1dff"
    "\u20d0-\u20f0\u2cef-\u2cf1\u2d7f\u2de0-\u2dff\u302a-\u302f\u3099-\u309a"
    "\ua66f-\ua672\ua674-\ua67d\ua69e-\ua69f\ua6f0-\ua6f1\ua802\ua806\ua80b"
    "\ua823-\ua827\ua82c\ua880-\ua881\ua8b4-\ua8c5\ua8e0-\ua8f1\ua8ff"
    "\ua926-\ua92d\ua947-\ua953\ua980-\ua983\ua9b3-\ua9c0\ua9e5\uaa29-\uaa36"
    "\uaa43\uaa4c-\uaa4d\uaa7b-\uaa7d\uaab0\uaab2-\uaab4\uaab7-\uaab8"
    "\uaabe-\uaabf\uaac1\uaaeb-\uaaef\uaaf5-\uaaf6\uabe3-\uabea\uabec-\uabed"
    "\ufb1e\ufe00-\ufe0f\ufe20-\ufe2f\U000101fd\U000102e0"
    "\U00010376-\U0001037a\U00010a01-\U00010a03\U00010a05-\U00010a06"
    "\U00010a0c-\U00010a0f\U00010a38-\U00010a3a\U00010a3f"
    "\U00010ae5-\U00010ae6\U00010d24-\U00010d27\U00010eab-\U00010eac"
    "\U00010f46-\U00010f50\U00010f82-\U00010f85\U00011000-\U00011002"
    "\U00011038-\U00011046\U00011070\U00011073-\U00011074"
    "\U0001107f-\U00011082\U000110b0-\U000110ba\U000110c2"
    "\U00011100-\U00011102\U00011127-\U00011134\U00011145-\U00011146"
    "\U00011173\U00011180-\U00011182\U000111b3-\U000111c0"
    "\U000111c9-\U000111cc\U000111ce-\U000111cf\U0001122c-\U00011237"
    "\U0001123e\U000112df-\U000112ea\U00011300-\U00011303"
    "\U0001133b-\U0001133c\U0001133e-\U00011344\U00011347-\U00011348"
    "\U0001134b-\U0001134d\U00011357\U00011362-\U00011363"
    "\U00011366-\U0001136c\U00011370-\U00011374\U00011435-\U00011446"
    "\U0001145e\U000114b0-\U000114c3\U000115af-\U000115b5"
    "\U000115b8-\U000115c0\U000115dc-\U000115dd\U00011630-\U00011640"
    "\U000116ab-\U000116b7\U0001171d-\U0001172b\U0001182c-\U0001183a"
    "\U00011930-\U00011935\U00011937-\U00011938\U0001193b-\U0001193e"
    "\U00011940\U00011942-\U00011943\U000119d1-\U000119d7"
    "\U000119da-\U000119e0\U000119e4\U00011a01-\U00011a0a"
    "\U00011a33-\U00011a39\U00011a3b-\U00011a3e\U00011a47"
    "\U00011a51-\U00011a5b\U00011a8a-\U00011a99\U00011c2f-\U00011c36"
    "\U00011c38-\U00011c3f\U00011c92-\U00011ca7\U00011ca9-\U00011cb6"
    "\U00011d31-\U00011d36\U00011d3a\U00011d3c-\U00011d3d"
    "\U00011d3f-\U00011d45\U00011d47\U00011d8a-\U00011d8e"
    "\U00011d90-\U00011d91\U00011d93-\U00011d97\U00011ef3-\U00011ef6"
    "\U00016af0-\U00016af4\U00016b30-\U00016b36\U00016f4f"
    "\U00016f51-\U00016f87\U00016f8f-\U00016f92\U00016fe4"
    "\U00016ff0-\U00016ff1\U0001bc9d-\U0001bc9e\U0001cf00-\U0001cf2d"
    "\U0001cf30-\U0001cf46\U0001d165-\U0001d169\U0001d16d-\U0001d172"
    "\U0001d17b-\U0001d182\U0001d185-\U0001d18b\U0001d1aa-\U0001d1ad"
    "\U0001d242-\U0001d244\U0001da00-\U0001da36\U0001da3b-\U0001da6c"
    "\U0001da75\U0001da84\U0001da9b-\U0001da9f\U0001daa1-\U0001daaf"
    "\U0001e000-\U0001e006\U0001e008-\U0001e018\U0001e01b-\U0001e021"
    "\U0001e023-\U0001e024\U0001e026-\U0001e02a\U0001e130-\U0001e136"
    "\U0001e2ae\U0001e2ec-\U0001e2ef\U0001e8d0-\U0001e8d6"
    "\U0001e944-\U0001e94a\U000e0100-\U000e01ef"
)

_WORD = r"\w" + _MARKS
_CONNECT = "\\-./@:'\u2019"
_LETTER = r"[^\W\d_]"

# One "chunk" is a word, or words glued by connectors, plus the technical
# prefix/suffix forms.  Applied to casefolded text.
_CHUNK = re.compile(
    rf"(?:\.(?={_LETTER}))?"  # .net
    rf"[{_WORD}]+(?:[{_CONNECT}]{{1,3}}[{_WORD}]+)*"  # snake_case, a.b-c, https://x
    rf"(?:(?<={_LETTER})(?:\+\+?|#)(?![{_WORD}+#]))?"  # c++, c#
)
_SPLIT = re.compile(rf"[{_CONNECT}_]+")
_EDGE = "_-./@:'\u2019"

_CJK = (
    "\u1100-\u11ff\u3005-\u3007\u3021-\u3029\u303b\u3040-\u309f\u30a0-\u30ff"
    "\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f"
    "\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
_SEA = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"  # Thai, Lao, Myanmar, Khmer
_NOSPACE = re.compile(f"[{_CJK}{_SEA}]")
_NOSPACE_RUN = re.compile(f"[{_CJK}{_SEA}][{_CJK}{_SEA}{_MARKS}]*")
# A unit of a no-space run: a base character with the marks that follow it.
_UNIT = re.compile(f"[^{_MARKS}][{_MARKS}]*|[{_MARKS}]+")

_LATIN = (
    "a-z\u00aa\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02af\u1d00-\u1dbf"
    "\u1e00-\u1eff\u2c60-\u2c7f\ua720-\ua7ff\uab30-\uab6f\uff41-\uff5a"
)
# Combining diacritics as used on Latin letters (after NFD).
_DIACRITICS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_LATIN_MARKS = re.compile(f"([{_LATIN}])[{_DIACRITICS}]+")
_HAS_ALNUM = re.compile(r"[^\W_]")


# Fast path.  Running _CHUNK over whole notes costs ~0.8 us a word here (2.2 s
# for 10,000 notes of 300 words); most words need no regex at all.  So: turn
# every ASCII symbol that can never be inside a term into a space (a C-speed
# translate; non-ASCII text goes through UTF-8 bytes for it, since str.translate
# on non-ASCII text is ~10x slower), split on whitespace, take pieces that are
# plain ASCII words as they are, strip edge punctuation that can never belong
# to a term ("word." "word:"), and give only what is left to _CHUNK.  This is
# exactly equivalent to _CHUNK on the whole text because a chunk never spans
# whitespace or those symbols; tests check the equivalence.
_KEEP = "abcdefghijklmnopqrstuvwxyz0123456789_-./@:'+#"
_SEPARATORS = bytes(b" "[0] if i < 128 and chr(i) not in _KEEP and not chr(i).isspace() else i for i in range(256))
_ASCII_SEPARATORS = {i: " " for i in range(128) if _SEPARATORS[i] != i}
_LSTRIP = "-/@:'_+#"  # what survives the translate; a leading "." may start ".net"
_RSTRIP = "-./@:'_"  # c++, c# keep their tail


def tokenize(text: str) -> list[str]:
    """Search terms of `text`, in text order, repeats kept (they are term frequency)."""
    folded = text.casefold()
    out: list[str] = []
    append = out.append
    if folded.isascii():  # every piece is ASCII too: one test a word fewer
        for piece in folded.translate(_ASCII_SEPARATORS).split():
            if piece.isalnum():
                append(piece)
                continue
            stripped = piece.lstrip(_LSTRIP).rstrip(_RSTRIP)
            if stripped.isalnum():
                append(stripped)
            else:
                _piece_terms(piece, out)
        return out
    pieces = folded.encode("utf-8", "surrogatepass").translate(_SEPARATORS).decode("utf-8", "surrogatepass").split()
    for piece in pieces:
        if piece.isalnum() and piece.isascii():
            append(piece)
            continue
        stripped = piece.lstrip(_LSTRIP).rstrip(_RSTRIP)
        if stripped.isalnum() and stripped.isascii():
            append(stripped)
        else:
            _piece_terms(piece, out)
    return out


def _piece_terms(piece: str, out: list[str]) -> None:
    """Terms of a whitespace-free piece of casefolded text that is not a plain word."""
    for chunk in _CHUNK.findall(piece):
        if chunk.isalnum() and chunk.isascii():
            out.append(chunk)
        else:
            _chunk_terms(chunk, out)


def _chunk_terms(chunk: str, out: list[str]) -> None:
    """Terms of a chunk that is not a plain ASCII word."""
    ascii_ = chunk.isascii()
    if not ascii_:
        chunk = unicodedata.normalize("NFC", chunk)
    # "_" is a word character for the regex, so a chunk can be "_emph_" or
    # "9:_"; edge underscores, and connectors they leave behind, are no part
    # of a term.  A leading "." (only ever ".<letter>") is kept: ".net".
    core = "." + chunk[1:].rstrip(_EDGE) if chunk[0] == "." else chunk.strip(_EDGE)
    if not core:
        return
    base = core.rstrip("+#")  # the regex allows these only as a suffix after a letter
    suffixed = base != core
    dotted = base.startswith(".")
    parts = [p for p in _SPLIT.split(base) if p]
    if len(parts) == 1 and not suffixed and not dotted:
        # One word: non-ASCII letters/marks, or ASCII that only lost its _emphasis_.
        if ascii_:
            out.append(core)
        else:
            _word_terms(core, out)
        return
    whole = core.replace("\u2019", "'")
    if ascii_:
        out.append(whole)
    elif not _NOSPACE.search(whole):
        _word_terms(whole, out)
    # else: a compound in a no-space script is searchable by its parts only.
    if suffixed and len(parts) == 1 and not dotted:
        return  # c++, c#: a query for "c" should not match every C++ note
    for part in parts:
        if part.isascii():
            out.append(part)
        else:
            _word_terms(part, out)


def _word_terms(word: str, out: list[str]) -> None:
    """Terms of one non-ASCII word without connectors."""
    if _NOSPACE.search(word) is None:
        _plain_word(word, out)
        return
    pos = 0
    for m in _NOSPACE_RUN.finditer(word):
        if m.start() > pos:
            _plain_word(word[pos : m.start()], out)
        units = _UNIT.findall(m.group())
        if len(units) == 1:
            out.append(units[0])
        else:
            out.extend([units[i] + units[i + 1] for i in range(len(units) - 1)])
        pos = m.end()
    if pos < len(word):
        _plain_word(word[pos:], out)


def _plain_word(word: str, out: list[str]) -> None:
    """A word of spaced scripts: itself, plus its accent-stripped Latin form."""
    if not _HAS_ALNUM.search(word):
        return  # stray combining marks only
    out.append(word)
    if not word.isascii():
        decomposed = unicodedata.normalize("NFD", word)
        stripped = _LATIN_MARKS.sub(r"\1", decomposed)
        if stripped != decomposed:
            stripped = unicodedata.normalize("NFC", stripped)
            if stripped != word:
                out.append(stripped)


# Words too common to say a note is about the question. Used only for "does an
# unread note share a word with the question" and for the offline reader's
# relevance test; search itself scores every term (BM25's idf already discounts
# them). Without this, "the" made every note "share a word" and NOT IN BRAIN
# could never be stamped.
STOPWORDS = frozenset(
    """
a about above after again all also am an and any are as at be because been before being
below between both but by can could did do does doing done down during each few for from
further had has have having he her here hers him his how i if in into is it its itself
just me more most my no nor not now of off on once only or other our ours out over own
same she should so some such than that the their theirs them then there these they this
those through to too under until up very was we were what when where which while who whom
why will with would you your yours yourself
der die das und ist ein eine nicht mit von zu den dem des auf für im
""".split()
)

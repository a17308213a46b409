"""Word forms and sameness of meaning, from well-kept sources, in one place.

Two questions the verifier asks of two words, and nothing else:

* `same_form(a, b)`: is one a form of the other ("bought" of "buy", "dogs" of "dog")?
  Lemmas come from simplemma's English dictionary. A verb's tense is kept apart: "lived" is
  not "lives" (`form_class`), since a past state is no present one.
* `same_sense(a, b)`: do the two mean the same here? Yes only when WordNet puts both in one
  synset that is among the two commonest senses of each ("shut" and "close", "car" and
  "automobile"), never when they are merely related (a sibling, a part, an antonym share no
  synset). WordNet is read from its own database files (Princeton WordNet 3.0, Debian's
  `wordnet-base`, `WORDNET_DIR` to point elsewhere) by binary search, so nothing loads up
  front. Without the database, only same forms count: the verifier fails closed.

Pure functions over read-only files; never raise on a str.
"""

from __future__ import annotations

import functools
import mmap
import os
from pathlib import Path

import simplemma

__all__ = [
    "PREFIXES",
    "form_class",
    "irregular_past",
    "is_verb",
    "lemma",
    "same_form",
    "same_sense",
    "verb_weight",
    "wordnet_dir",
]

# The commonest senses of a word that its synonyms are read from: the first sense alone
# missed "shut" for "closed"; three admitted "live" for "hot".
SENSES = 2
_POS = ("noun", "verb", "adj", "adv")
# A prefix a hyphen joins to its stem ("re-felted", "pre-booked"): the tokenizer keeps the
# two one word, and its lemma is the prefix on the stem's lemma.
PREFIXES = ("re", "pre", "co", "un", "non", "mis", "over", "under", "out", "sub")
_SEARCH = (Path("/usr/share/wordnet"), Path("/usr/local/share/wordnet"), Path("/opt/homebrew/share/wordnet"))


@functools.lru_cache(maxsize=65536)
def lemma(word: str) -> str:
    """The English lemma of a casefolded word ("bought" -> "buy"); the word itself when it
    has none, or has letters of another script."""
    if not word.isascii():
        return word
    try:
        base = str(simplemma.lemmatize(word, lang="en")).casefold()
    except Exception:  # the dictionary failed to load: fall back on the word itself
        return word
    prefix, hyphen, stem = word.partition("-")
    if hyphen and prefix in PREFIXES:  # "re-felted": the prefix on its stem's lemma
        return f"{prefix}-{lemma(stem)}"
    return base


def form_class(word: str) -> str:
    """Which form of its word a word is: "plain" (the word itself, a plural or a verb's -s),
    "ing", "past" (-ed), or the irregular form itself ("bought", "mice"). Two forms of a word
    are the same statement only in the same class: "lives" and "live" are; "lived" and
    "lives" are not, since a past state is no present one."""
    base = lemma(word)
    if word == base or (word.endswith("s") and base in (word[:-1], word[:-2], word[:-3] + "y")):
        return "plain"
    if word.endswith("ing"):
        return "ing"
    if word.endswith("ed") or word in _irregular_pasts():
        return "past"
    return word


@functools.lru_cache(maxsize=1)
def _irregular_pasts() -> frozenset[str]:
    """The irregular verb forms WordNet lists ("bought", "went"), less the -s and -ing ones and
    the present of "be" it lists too ("am", "are": "were" is no form of "are")."""
    place = wordnet_dir()
    try:
        lines = (place / "verb.exc").read_text(encoding="utf-8").splitlines() if place else []
    except OSError:
        return frozenset()
    forms = (line.split(" ", 1)[0] for line in lines)
    return frozenset(w for w in forms if w and not w.endswith(("s", "ing")) and w not in _PRESENT_BE)


_PRESENT_BE = frozenset({"am", "are"})


def irregular_past(word: str) -> bool:
    """Whether WordNet lists `word` as a verb's irregular past ("sold", "taught", "gave");
    "children" and "better" are no verbs' forms. False without the database."""
    return word in _irregular_pasts()


def same_form(a: str, b: str) -> bool:
    """Whether two casefolded words are forms of one word in the same class (`form_class`)."""
    if a == b:
        return True
    return lemma(a) == lemma(b) and form_class(a) == form_class(b)


def same_sense(a: str, b: str) -> bool:
    """Whether WordNet holds two casefolded words to mean the same in one of the commonest
    senses of each (`SENSES`), in the same tense; False without WordNet."""
    if a == b:
        return True
    if form_class(a) != form_class(b):
        return False
    la, lb = lemma(a), lemma(b)
    if la == lb:
        return True
    return bool(_synsets(la) & _synsets(lb))


def is_verb(word: str) -> bool:
    """Whether WordNet holds `word`'s lemma as a verb at all (without the database: no word is)."""
    return word.isalpha() and _tag_count(lemma(word), "verb") is not None


def verb_weight(word: str) -> int:
    """How much more often `word`'s lemma is a verb than a noun in WordNet's tagged senses
    (its index's tag counts): above 0 mostly a verb ("feed", "add"), below mostly a noun
    ("fish", "cat"); 0 without the database, or a tie ("dog")."""
    if _files() is None:
        return 0
    verb, noun = _tag_count(lemma(word), "verb"), _tag_count(lemma(word), "noun")
    return (-1 if verb is None else verb) - (noun or 0)  # no verb at all weighs below a tie


@functools.lru_cache(maxsize=32768)
def _tag_count(base: str, pos: str) -> int | None:
    """How many of `base`'s senses as `pos` WordNet's index counts as tagged in its corpus, or
    None when the index has no such entry (or there is no database)."""
    files = _files()
    line = _index_line(files[pos], base.encode()) if files is not None and base else None
    fields = line.split() if line else []
    try:
        return int(fields[5 + int(fields[3])])
    except (IndexError, ValueError):
        return None


def wordnet_dir() -> Path | None:
    """The WordNet database folder in use, or None when there is none (fail closed)."""
    given = os.environ.get("WORDNET_DIR")
    for place in [Path(given)] if given else list(_SEARCH):
        if all((place / f"index.{pos}").is_file() for pos in _POS):
            return place
    return None


@functools.lru_cache(maxsize=1)
def _files() -> dict[str, mmap.mmap] | None:
    place = wordnet_dir()
    if place is None:
        return None
    out = {}
    try:
        for pos in _POS:
            with (place / f"index.{pos}").open("rb") as index:
                out[pos] = mmap.mmap(index.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError:
        return None
    return out


def _index_line(index: mmap.mmap, word: bytes) -> bytes | None:
    """The index line of `word` by binary search (index files are sorted, licence lines first)."""
    lo, hi = 0, len(index)
    while lo < hi:
        mid = (lo + hi) // 2
        start = index.rfind(b"\n", 0, mid) + 1
        end = index.find(b"\n", start)
        end = len(index) if end == -1 else end
        line = index[start:end]
        key = line.split(b" ", 1)[0]
        if line.startswith(b"  "):  # the licence at the top sorts first
            lo = end + 1
        elif key == word:
            return line
        elif key < word:
            lo = end + 1
        else:
            hi = start
    return None


@functools.lru_cache(maxsize=32768)
def _synsets(word: str) -> frozenset[tuple[str, int]]:
    """The commonest `SENSES` synsets of `word` in each part of speech, as (pos, offset)."""
    files = _files()
    if files is None or not word or " " in word:
        return frozenset()
    out: set[tuple[str, int]] = set()
    for pos, index in files.items():
        line = _index_line(index, word.encode())
        if line is None:
            continue
        fields = line.split()
        try:
            pointers = int(fields[3])
            offsets = fields[6 + pointers :]
        except (IndexError, ValueError):
            continue
        out |= {(pos, int(o)) for o in offsets[:SENSES]}
    return frozenset(out)

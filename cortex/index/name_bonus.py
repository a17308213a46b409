"""The name bonus of BM25 search: a note's names (title, aliases, file name) as words,
stopwords out and plurals folded (`name_words`), which notes' names hold a query's words
(`NameIndex`), and what a name the query says adds to its note's score (`NameIndex.add_bonus`).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from cortex.index.tokenize import STOPWORDS, tokenize

__all__ = ["NAME_WEIGHT", "NameIndex", "Names", "name_words", "name_words_of", "names_of"]

# How much an exact name match adds, as a share of the query's best BM25 score.
# Tuned on the public eval and the hub fixture (tests/brain/test_obsidian.py): see
# the README's figures.
NAME_WEIGHT = 1.0


def _fold(word: str) -> str:
    """A plural folded for name matching only: libraries -> library, notes -> note."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def name_words_of(tokens: Iterable[str]) -> frozenset[str]:
    """The words of a name or query that say what it is: stopwords out, plurals folded."""
    return frozenset(_fold(t) for t in tokens if t not in STOPWORDS and t.isalnum())


def name_words(name: str) -> frozenset[str]:
    """`name_words_of` the tokens of `name`."""
    return name_words_of(tokenize(name))


# A note's names, each as its sorted words: tuples, not frozensets, because a
# frozenset of three words costs 216 bytes and a tuple 64 (x 50,000 notes).
Names = tuple[tuple[str, ...], ...]


def names_of(names: Iterable[str]) -> Names:
    """A note's distinct names, each as its sorted name words; names with no such word left out."""
    return tuple(dict.fromkeys(tuple(sorted(n)) for n in map(name_words, names) if n))


class NameIndex:
    """The names of an index's documents by slot, and which slots' names hold each word."""

    def __init__(self) -> None:
        self.of: list[Names] = []  # per slot; () for a free slot
        self._post: dict[str, set[int]] = {}  # word -> slots whose names hold it
        self._rows: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # see `_rows_of`

    def __bool__(self) -> bool:
        """Whether any document has a name word."""
        return bool(self._post)

    def append(self) -> None:
        """Make room for one more slot."""
        self.of.append(())

    def set(self, slot: int, names: Iterable[str]) -> None:
        """`slot`'s names (its document is new there)."""
        doc_names = names_of(names)
        self.of[slot] = doc_names
        for word in set().union(*doc_names) if doc_names else ():
            self._post.setdefault(word, set()).add(slot)
            self._rows.pop(word, None)

    def clear(self, slot: int) -> None:
        """Forget `slot`'s names (its document was removed)."""
        for word in set().union(*self.of[slot]) if self.of[slot] else ():
            self._rows.pop(word, None)
            holders = self._post[word]
            holders.discard(slot)
            if not holders:
                del self._post[word]
        self.of[slot] = ()

    def reset(self, names: list[Names]) -> None:
        """Hold exactly `names`, slot by slot."""
        self.of = names
        self._post = {}
        self._rows = {}
        for slot, doc_names in enumerate(names):
            for word in set().union(*doc_names) if doc_names else ():
                self._post.setdefault(word, set()).add(slot)

    def copy(self) -> NameIndex:
        """A NameIndex holding the same names that changes apart from this one."""
        other = NameIndex()
        other.of = list(self.of)
        other._post = {word: set(slots) for word, slots in self._post.items()}
        other._rows = dict(self._rows)  # arrays are replaced, never written
        return other

    def add_bonus(self, query_tokens: list[str], slots: np.ndarray, scores: np.ndarray) -> None:
        """Add to `scores` (of `slots`, ascending) each matched document's name bonus:
        ``top * NAME_WEIGHT * (precision * recall) ** 2`` for its best name, where ``top``
        is the best BM25 score of this query, precision the share of the name's words the
        query has and recall the share of the query's words the name has (stopwords aside,
        a plural `s` folded). An exact name match therefore outranks every note that only
        mentions the words, however long the named note is; a name sharing one word of two
        gets a sixteenth of that. BM25 alone could not: a 372 KB hub note's title is one
        term among 60,000, and length normalisation buries it.
        """
        words = name_words_of(query_tokens)
        rows = [self._rows_of(w) for w in words if w in self._post]
        if not rows:
            return
        if len(rows) == 1:  # one query word: each name holds it once, in slot order already
            slot, which, length = rows[0]
            span = int(which.max()) + 1
            names, shared = slot * span + which, np.ones(len(slot), dtype=np.int64)
            fit = (shared / length) * (shared / len(words))
        else:
            slot, which, length = (np.concatenate(col) for col in zip(*rows, strict=True))
            # One key per name (slot, its n-th name): how many query words each name shares.
            span = int(which.max()) + 1
            names, first, shared = np.unique(slot * span + which, return_index=True, return_counts=True)
            fit = (shared / length[first]) * (shared / len(words))  # precision * recall, per name
        owner = names // span
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        owners, best = owner[starts], np.maximum.reduceat(fit, starts)  # a note's best name
        pos = np.minimum(np.searchsorted(slots, owners), len(slots) - 1)
        present = slots[pos] == owners  # matched, and not filtered out by `allow`
        if present.any():
            top = float(scores.max())
            best = best[present]
            scores[pos[present]] += top * NAME_WEIGHT * best * best

    def _rows_of(self, word: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(slot, index of the name in the slot's names, that name's word count) of every
        name holding `word`; made on first use, dropped when one of those notes changes."""
        rows = self._rows.get(word)
        if rows is None:
            slot, which, length = [], [], []
            names = self.of
            for s in sorted(self._post[word]):
                for i, name in enumerate(names[s]):
                    if word in name:
                        slot.append(s)
                        which.append(i)
                        length.append(len(name))
            rows = self._rows[word] = (
                np.array(slot, dtype=np.int64),
                np.array(which, dtype=np.int64),
                np.array(length, dtype=np.int64),
            )
        return rows

"""Building a BM25 `Index` of many documents at once, straight into its compact segment
(`IndexBuilder`), and the picklable part one builder hands another (`Shard`): the cold
build of a large brain indexes its notes in several processes and merges their shards.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from cortex.index.bm25 import Index, tokenized_fields
from cortex.index.name_bonus import Names, names_of
from cortex.index.segment import F64, Compacted, Segment

__all__ = ["IndexBuilder", "Shard"]


def _ranks(fterm: np.ndarray, vocab: int) -> np.ndarray:
    """Each entry's place among the entries of its term, in forward (document) order."""
    order = np.argsort(fterm, kind="stable")
    df = np.bincount(fterm, minlength=vocab)
    starts = np.cumsum(df) - df
    ranks = np.empty(len(fterm), dtype=np.int64)
    ranks[order] = np.arange(len(fterm)) - starts[fterm[order]]
    return ranks


@dataclass(frozen=True)
class Shard:
    """Documents indexed by one `IndexBuilder`, to be added to another (see `IndexBuilder.shard`).

    `fptr`/`fterm`/`ftf` are the forward rows, with term ids numbering `terms`.
    """

    ids: list[str]
    dl: list[float]
    flen: list[tuple[int, ...]]
    names: list[Names]
    terms: list[str]
    fptr: array
    fterm: array
    ftf: array
    ranks: bytes  # int32: each entry's place among its term's entries in this shard (`_ranks`)


class _Numbering(dict):
    """term -> number, numbering a term on first sight (in C for every term seen before)."""

    def __missing__(self, term: str) -> int:
        number = self[term] = len(self)
        return number


class IndexBuilder:
    """Builds an `Index` of many documents at once, straight into the compact segment.

    What a cold start uses: no dict per document is ever made, so the peak memory
    of a build is the arrays' own (a dict per document made 50,000 notes cost 913 MB).
    """

    def __init__(self, k1: float = 1.5, b: float = 0.75, weights: Mapping[str, float] | None = None) -> None:
        self._index = Index(k1, b, weights)
        self._ids: list[str] = []
        self._seen: set[str] = set()
        self._dl: list[float] = []
        self._flen: list[tuple[int, ...]] = []
        self._names: list[Names] = []
        self._vocab = _Numbering()
        self._fterm = array("i")
        self._ftf = array("d")
        self._fptr = array("q", [0])
        # Filled while only shards are added (see add_shard): each entry's place in its
        # term's inverted list, so `finish` places entries without sorting all of them
        # (a stable argsort of 23M entries: ~2.5 s of a 300 MB brain's first build).
        self._ranks: array | None = array("i")
        self._df = np.zeros(0, np.int64)

    def add(self, doc_id: str, fields: Mapping[str, str], names: Iterable[str] = ()) -> None:
        self._index.check_fields(fields)
        self.add_tokens(doc_id, tokenized_fields(fields), names)

    def add_tokens(self, doc_id: str, field_tokens: Mapping[str, Iterable[str]], names: Iterable[str] = ()) -> None:
        if doc_id in self._seen:
            raise ValueError(f"document {doc_id!r} added twice")
        self._index.check_fields(field_tokens)
        wtf, dl, flen = self._index.weigh(field_tokens, intern=False)
        self._ranks = None
        self._fterm.extend(map(self._vocab.__getitem__, wtf))  # a new term numbers itself
        self._ftf.extend(wtf.values())
        self._fptr.append(len(self._fterm))
        self._seen.add(doc_id)
        self._ids.append(doc_id)
        self._dl.append(dl)
        self._flen.append(flen)
        self._names.append(names_of(names))

    def shard(self) -> Shard:
        """What was added, as plain picklable data for another builder's `add_shard`
        (the cold build of a large brain indexes its notes in several processes)."""
        fterm = np.frombuffer(self._fterm, dtype=np.int32)
        return Shard(
            self._ids,
            self._dl,
            self._flen,
            self._names,
            list(self._vocab),
            self._fptr,
            self._fterm,
            self._ftf,
            _ranks(fterm, len(self._vocab)).astype(np.int32).tobytes(),
        )

    def add_shard(self, shard: Shard) -> None:
        """Add every document of `shard`, after those added so far.

        The result is the same, array for array, as adding the shard's documents here one
        by one: its terms are numbered in the order it first saw them, which is the order
        this builder would have seen them in.
        """
        ids = set(shard.ids)
        if len(ids) != len(shard.ids) or not ids.isdisjoint(self._seen):
            raise ValueError("a document of the shard was added twice")
        number = self._vocab.__getitem__
        renumber = np.fromiter(map(number, shard.terms), dtype=np.int32, count=len(shard.terms))
        fterm = renumber[np.frombuffer(shard.fterm, dtype=np.int32)] if len(shard.fterm) else np.empty(0, np.int32)
        if self._ranks is not None:
            # An entry's place among its term's entries: those of earlier shards, then its
            # place in its own shard (the shard's documents come after theirs).
            if len(self._df) < len(self._vocab):
                self._df = np.concatenate([self._df, np.zeros(len(self._vocab) - len(self._df), np.int64)])
            # int32 in an array, like the term ids: an int64 array per shard kept 186 MB
            # more at the 300 MB brain's peak (23M entries), and after it until freed.
            self._ranks.frombytes(
                (self._df[fterm] + np.frombuffer(shard.ranks, dtype=np.int32)).astype(np.int32).tobytes()
            )
            self._df += np.bincount(fterm, minlength=len(self._df))
        self._fterm.frombytes(fterm.astype(np.int32).tobytes())
        self._ftf.extend(shard.ftf)
        base = self._fptr[-1]
        self._fptr.extend(p + base for p in shard.fptr[1:])
        self._seen.update(ids)
        self._ids.extend(shard.ids)
        self._dl.extend(shard.dl)
        self._flen.extend(shard.flen)
        self._names.extend(shard.names)

    def finish(self) -> Index:
        """The index of every document added; the builder is spent."""
        fptr = np.frombuffer(self._fptr, dtype=np.int64)
        fterm = np.frombuffer(self._fterm, dtype=np.int32)
        ftf = np.frombuffer(self._ftf, dtype=F64)
        ranks = None  # documents added one by one: the inverted lists are sorted out
        if self._ranks is not None and len(self._ranks) == len(fterm):
            ranks = np.frombuffer(self._ranks, dtype=np.int32)
        seg = Segment.make(list(self._vocab), fptr, fterm, ftf, ranks)
        del ranks
        self._ranks = None
        index = self._index
        index.rebase(Compacted(seg, self._ids, self._dl, self._flen, self._names))
        self._fterm, self._ftf, self._fptr = array("i"), array("d"), array("q", [0])
        return index

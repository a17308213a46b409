"""The compact, immutable part of a BM25 index (`Segment`: every term frequency in flat
arrays) and an index's documents as one segment and a row each (`Compacted`): what a
build makes, a save writes and a load reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cortex.index.name_bonus import Names

__all__ = ["EMPTY_F", "EMPTY_I", "F64", "NO_SEGMENT", "Compacted", "Segment"]

F64 = np.float64
EMPTY_I = np.zeros(0, dtype=np.int64)
EMPTY_F = np.zeros(0, dtype=F64)


@dataclass(frozen=True)
class Segment:
    """The compact, immutable part of an index: every term frequency in flat arrays.

    Rows are document slots ``0 .. n-1``; ``terms[tid]`` is term number ``tid``.
    The forward rows (``fptr``/``fterm``: a slot's term ids) serve removals; the
    inverted lists (``iptr``/``idoc``/``itf``: a term's slots, ascending, and
    their weighted tfs) serve every query. 8 bytes an entry with integer field
    weights (10 with float ones), where a dict per document cost ~100.
    """

    terms: list[str]
    fptr: np.ndarray  # int64, n + 1
    fterm: np.ndarray  # int32
    iptr: np.ndarray  # int64, len(terms) + 1
    idoc: np.ndarray  # int32
    itf: np.ndarray  # uint16 where every tf is an integer that fits, else float32 if exact, else float64

    @property
    def n(self) -> int:
        return len(self.fptr) - 1

    @staticmethod
    def make(
        terms: list[str], fptr: np.ndarray, fterm: np.ndarray, ftf: np.ndarray, ranks: np.ndarray | None = None
    ) -> Segment:
        """A segment from forward rows, dropping terms no row holds and building the inverted lists.

        `ranks`, when known: each entry's place among its term's entries (see `cortex.index.builder`).
        """
        vocab = len(terms)
        df = np.bincount(fterm, minlength=vocab)
        if vocab and not df.all():
            keep = df > 0
            renumber = np.cumsum(keep, dtype=np.int64) - 1
            fterm = renumber[fterm]
            terms = [t for t, k in zip(terms, keep.tolist(), strict=False) if k]
            df = df[keep]
        fterm = fterm.astype(np.int32)
        for narrow in (np.uint16, np.float32):
            if len(ftf) == 0 or (ftf.max() <= np.finfo(np.float32).max and np.array_equal(ftf.astype(narrow), ftf)):
                ftf = ftf.astype(narrow)  # integer weights: every tf is a small integer
                break
        rows = np.repeat(np.arange(len(fptr) - 1, dtype=np.int32), np.diff(fptr))
        iptr = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum(df, out=iptr[1:])
        if ranks is not None:
            place = iptr[:-1][fterm] + ranks
            idoc, itf = np.empty_like(rows), np.empty_like(ftf)
            idoc[place], itf[place] = rows, ftf
            return Segment(terms, fptr.astype(np.int64), fterm, iptr, idoc, itf)
        # A stable sort keeps each term's slots ascending (the order scores are summed
        # in), and is the map between forward and inverted order (see `forward_tf`).
        order = np.argsort(fterm, kind="stable")
        return Segment(terms, fptr.astype(np.int64), fterm, iptr, rows[order], ftf[order])

    def forward_tf(self) -> np.ndarray:
        """Each forward entry's tf (float64), from the inverted lists: what a compaction reads."""
        out = np.empty(len(self.itf), dtype=F64)
        out[np.argsort(self.fterm, kind="stable")] = self.itf
        return out


NO_SEGMENT = Segment(
    [], np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(1, np.int64), np.zeros(0, np.int32), EMPTY_F
)


@dataclass(frozen=True)
class Compacted:
    """An index's documents as one segment and a row each: what `Index.rebase` takes (from a
    builder's `finish` or a load) and `Index.compacted` gives (to a save)."""

    segment: Segment
    ids: list[str]
    dl: list[float]  # weighted length per document
    flen: list[tuple[int, ...]]  # raw length per field per document
    names: list[Names]

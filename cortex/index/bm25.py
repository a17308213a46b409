"""The lexical index: incremental BM25 over weighted note fields.

One ``Index`` holds the statistics of one snapshot's notes. A note changed by a
commit is removed and added again; the cost of that is proportional to the
note's own terms, never to the size of the brain, because every statistic BM25
needs is kept as a running sum:

* each document's weighted term frequencies (a forward index, ``_docs``),
* ``df`` per term, each document's weighted length, the total length per field,
* ``N``, the number of documents,
* postings ``term -> {slot: weighted tf}``, built from the forward index on a
  term's first query and kept up to date incrementally after that (``_post``).

IDF and the average length are computed at query time from those sums.

**Fields (BM25F, the simple form).**  A document has the fields ``path``,
``title``, ``headings`` and ``body`` with weights (default 2, 3, 2, 1).  Field
term frequencies and lengths are combined *before* saturation:
``tf = sum(w_f * tf_f)`` and ``len = sum(w_f * len_f)``, with one ``k1`` and one
``b`` for all fields.  With one field of weight 1 this is plain BM25.

**The BM25 variant.**  ``score(q, d) = sum over query terms t (with their
multiplicity in the query) of idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b *
len_d / avgdl))`` with Lucene's always-positive IDF
``idf = log(1 + (N - n + 0.5) / (n + 0.5))`` (``n`` = documents containing t).
rank-bm25's ``BM25Okapi`` uses ``log((N - n + 0.5) / (n + 0.5))`` and replaces a
negative value (a term in more than half the documents) by ``epsilon *`` the
mean IDF of the *whole vocabulary*; that mean changes with every document and
cannot be kept incrementally, and a negative or floored IDF makes common words
rank oddly.  Where no term is in half the documents or more, the two differ
only by a per-term factor ``log(1 + x) / log(x)`` with
``x = (N - n + 0.5) / (n + 0.5)``: single-term rankings are identical,
multi-term rankings can differ (Lucene's IDF is flatter: it favours common
terms a little more).  tests/index/test_search_index.py checks both relationships.

**Exactness.**  Lengths are kept as per-field integer totals and scores are
summed over query terms in a fixed order (document frequency descending, then
the term), so an index updated incrementally gives bit-for-bit the same scores
as one rebuilt from the same final documents (float weights included).

**Speed.** Measured by bench/search_index_bench.py and quoted in the README's
Figures (with the machine): at 10,000 notes of ~300 words a full build is about
1.5 s (it was 3.2 s while every posting list was built eagerly), a common-word
search about 1.4 ms p50, a term's first query (which builds its posting list)
about 3.4 ms. Scoring is term-at-a-time over dict postings; a MaxScore cut was
tried and never fired on Zipf-like questions (the common words' upper bounds
exceed the 10th score), so it is not here.

Not thread-safe for mutation: the caller (``corpus``) serialises updates.
Concurrent reads of an index no one mutates are safe.
"""

from __future__ import annotations

import heapq
import json
import math
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import BinaryIO

import numpy as np

from cortex.index.tokenize import STOPWORDS, tokenize

__all__ = ["DEFAULT_WEIGHTS", "FIELDS", "Index", "IndexBuilder", "SearchResult", "idf", "load_index", "save_index"]

FIELDS = ("path", "title", "headings", "body")
_intern = sys.intern
DEFAULT_WEIGHTS: dict[str, float] = {"path": 2, "title": 3, "headings": 2, "body": 1}


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
    return name_words_of(tokenize(name))


# A note's names, each as its sorted words: tuples, not frozensets, because a
# frozenset of three words costs 216 bytes and a tuple 64 (x 50,000 notes).
_Names = tuple[tuple[str, ...], ...]


def _names_of(names: Iterable[str]) -> _Names:
    return tuple(dict.fromkeys(tuple(sorted(n)) for n in map(name_words, names) if n))


def idf(n_docs: int, df: int) -> float:
    """Lucene's BM25 IDF: always positive, even for a term in every document."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


@dataclass(frozen=True)
class SearchResult:
    """Best hits first (ties by doc id ascending) and how many docs matched at all.

    ``total`` counts the allowed documents that share at least one query term,
    so ``total - len(hits)`` is what the reply left out.
    """

    hits: list[tuple[str, float]]
    total: int
    reach: int | None = None  # matches a wider filter allows, when asked (see `Index.search_tokens`)


F64 = np.float64
_EMPTY_I = np.zeros(0, dtype=np.int64)
_EMPTY_F = np.zeros(0, dtype=F64)


@dataclass(frozen=True)
class _Segment:
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
    ) -> _Segment:
        """A segment from forward rows, dropping terms no row holds and building the inverted lists.

        `ranks`, when known: each entry's place among its term's entries (see `_ranks`).
        """
        vocab = len(terms)
        df = np.bincount(fterm, minlength=vocab)
        if vocab and not df.all():
            keep = df > 0
            renumber = np.cumsum(keep, dtype=np.int64) - 1
            fterm = renumber[fterm]
            terms = [t for t, k in zip(terms, keep.tolist()) if k]
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
            return _Segment(terms, fptr.astype(np.int64), fterm, iptr, idoc, itf)
        # A stable sort keeps each term's slots ascending (the order scores are summed
        # in), and is the map between forward and inverted order (see `forward_tf`).
        order = np.argsort(fterm, kind="stable")
        return _Segment(terms, fptr.astype(np.int64), fterm, iptr, rows[order], ftf[order])

    def forward_tf(self) -> np.ndarray:
        """Each forward entry's tf (float64), from the inverted lists: what a compaction reads."""
        out = np.empty(len(self.itf), dtype=F64)
        out[np.argsort(self.fterm, kind="stable")] = self.itf
        return out


_NO_SEGMENT = _Segment(
    [], np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(1, np.int64), np.zeros(0, np.int32), _EMPTY_F
)


class Index:
    """Incremental BM25F index over documents identified by string ids (note paths).

    Two parts: a compact segment (flat arrays, see `_Segment`) holding the
    documents of the last build, load or `compact()`, and a small mutable part
    (a dict per document) for those added since. A removed segment document is
    masked until the next `compact()`. Scores do not depend on which part holds
    a document: every statistic is summed over both, and each document's score
    is summed over the query terms in the same order with the same arithmetic.
    """

    def __init__(
        self,
        k1: float = 1.5,
        b: float = 0.75,
        weights: Mapping[str, float] | None = None,
    ) -> None:
        if not k1 >= 0:
            raise ValueError(f"k1 must be >= 0, got {k1!r}")
        if not 0 <= b <= 1:
            raise ValueError(f"b must be within [0, 1], got {b!r}")
        weights = dict(DEFAULT_WEIGHTS if weights is None else weights)
        if not weights:
            raise ValueError("weights must name at least one field")
        for name, w in weights.items():
            if not (isinstance(w, (int, float)) and w >= 0 and math.isfinite(w)):
                raise ValueError(f"weight of field {name!r} must be a finite number >= 0")
        self.k1 = k1
        self.b = b
        self.weights: Mapping[str, float] = MappingProxyType(weights)  # read-only
        self._names: tuple[str, ...] = tuple(weights)
        self._w: tuple[float, ...] = tuple(weights.values())
        # Documents live in integer slots; the segment's documents hold slots
        # 0 .. segment.n - 1, later ones the slots after (reused once freed).
        self._slot: dict[str, int] = {}
        self._ids: list[str | None] = []
        self._free: list[int] = []
        self._dl: list[float] = []  # weighted length per slot (0 when free)
        self._flen: list[tuple[int, ...]] = []  # raw length per field per slot
        self._field_total: list[int] = [0] * len(self._names)
        # Per-slot K_d = k1 * (1 - b + b * len_d / avgdl), rebuilt lazily by the
        # first query after an update.
        self._norm: np.ndarray | None = None
        # What `allow` said of every slot, by the caller's `allow_key` (see search_tokens).
        self._allow_masks: dict[Hashable, np.ndarray] = {}
        # Names (title, aliases, file stem) per slot as sets of folded words, and
        # word -> slots whose names hold it: what the name bonus reads.
        self._doc_names: list[_Names] = []
        self._name_post: dict[str, set[int]] = {}
        self._name_rows: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._set_segment(_NO_SEGMENT)
        # The mutable part: forward dicts of documents added since the segment,
        # their postings, and how far each term's df differs from the segment's.
        self._docs: dict[int, dict[str, float]] = {}
        self._dpost: dict[str, dict[int, float]] = {}
        self._dfadj: dict[str, int] = {}

    def _set_segment(self, seg: _Segment) -> None:
        self._seg = seg
        self._vocab: dict[str, int] = dict(zip(seg.terms, range(len(seg.terms))))
        self._segdf: np.ndarray = np.diff(seg.iptr)
        self._alive: np.ndarray | None = None  # None while every segment document is present

    # ----- documents -------------------------------------------------------

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._slot

    def holds_exactly(self, doc_ids: Iterable[str]) -> bool:
        """Whether the index's documents are exactly `doc_ids`, each id in the slot it names:
        a loaded index that disagrees with its notes would fail every search."""
        ids = self._ids
        return self._slot.keys() == set(doc_ids) and all(
            0 <= s < len(ids) and ids[s] == d for d, s in self._slot.items()
        )

    def add(self, doc_id: str, fields: Mapping[str, str], names: Iterable[str] = ()) -> None:
        """Index (or re-index) a document from its field texts.

        `names` are what a person calls the document (title, aliases, file name): a
        query that says one of them gets the name bonus (see `search_tokens`).
        """
        self._check_fields(fields)
        self.add_tokens(doc_id, _tokenized(fields), names)

    def add_tokens(self, doc_id: str, field_tokens: Mapping[str, Iterable[str]], names: Iterable[str] = ()) -> None:
        """Index (or re-index) a document from already tokenized fields.

        A field missing from `field_tokens` is empty; an unknown field name is an
        error (a typo would otherwise silently drop text from search).
        """
        self._check_fields(field_tokens)
        if doc_id in self._slot:
            self.remove(doc_id)
        wtf, dl, flen = self._weigh(field_tokens)
        if self._free:
            slot = self._free.pop()
            self._ids[slot] = doc_id
            self._dl[slot] = dl
            self._flen[slot] = flen
        else:
            slot = len(self._ids)
            self._ids.append(doc_id)
            self._dl.append(dl)
            self._flen.append(flen)
            self._doc_names.append(())
        self._docs[slot] = wtf
        self._name(slot, names)
        self._slot[doc_id] = slot
        adj, post = self._dfadj, self._dpost
        for term, tf in wtf.items():
            _shift(adj, term, 1)
            post.setdefault(term, {})[slot] = tf
        self._count(flen, 1)

    def _weigh(
        self, field_tokens: Mapping[str, Iterable[str]], intern: bool = True
    ) -> tuple[dict[str, float], float, tuple[int, ...]]:
        """A document's weighted term frequencies, weighted length and raw field lengths.

        `intern`: make the dict's keys the one shared string of each term, for an index
        that keeps them (a builder numbers them and drops them: interning every token
        was half of a cold build's counting, ~300 ns a token).
        """
        flen: list[int] = []
        parts: list[tuple[int, int, float, list[str]]] = []
        for i, (name, w) in enumerate(zip(self._names, self._w)):
            tokens = field_tokens.get(name)
            if tokens is None:
                flen.append(0)
                continue
            if not isinstance(tokens, list):
                tokens = list(tokens)
            flen.append(len(tokens))
            if tokens and w:
                parts.append((len(tokens), i, w, tokens))
        # The largest field (the body, nearly always) becomes the term dict as
        # counted; smaller ones are merged into it.  The order depends only on
        # the document, so float sums are the same on every rebuild.
        parts.sort(key=lambda part: (-part[0], part[1]))
        wtf: dict[str, float] = {}
        dl: float = 0
        for n, _, w, tokens in parts:
            dl += w * n
            # Interned while counting: one string per distinct term, not one per
            # document holding it (~120 MB less at 10,000 notes).
            counts = Counter(map(_intern, tokens) if intern else tokens)
            if not wtf:
                wtf = counts if w == 1 else {t: w * c for t, c in counts.items()}
            else:
                get = wtf.get
                for term, c in counts.items():
                    wtf[term] = get(term, 0) + w * c
        return wtf, dl, tuple(flen)

    def _name(self, slot: int, names: Iterable[str]) -> None:
        doc_names = _names_of(names)
        self._doc_names[slot] = doc_names
        for word in set().union(*doc_names) if doc_names else ():
            self._name_post.setdefault(word, set()).add(slot)
            self._name_rows.pop(word, None)

    def _count(self, flen: tuple[int, ...], sign: int) -> None:
        """Field totals after an add or remove; every cached per-slot array is stale now."""
        totals = self._field_total
        for i, n in enumerate(flen):
            totals[i] += sign * n
        self._norm = None
        self._allow_masks.clear()

    def remove(self, doc_id: str) -> None:
        """Drop a document; a no-op when it is not indexed."""
        slot = self._slot.pop(doc_id, None)
        if slot is None:
            return
        adj = self._dfadj
        if slot < self._seg.n:
            seg = self._seg
            terms = seg.terms
            for tid in seg.fterm[seg.fptr[slot] : seg.fptr[slot + 1]].tolist():
                _shift(adj, terms[tid], -1)
            if self._alive is None:
                self._alive = np.ones(seg.n, dtype=bool)
            self._alive[slot] = False
        else:
            post = self._dpost
            for term in self._docs.pop(slot):
                _shift(adj, term, -1)
                p = post[term]
                del p[slot]
                if not p:
                    del post[term]
            self._free.append(slot)
        for word in set().union(*self._doc_names[slot]) if self._doc_names[slot] else ():
            self._name_rows.pop(word, None)
            holders = self._name_post[word]
            holders.discard(slot)
            if not holders:
                del self._name_post[word]
        self._count(self._flen[slot], -1)
        self._doc_names[slot] = ()
        self._ids[slot] = None
        self._dl[slot] = 0
        self._flen[slot] = ()

    @property
    def loose(self) -> int:
        """Documents kept outside the compact segment, plus removed ones still masked in it."""
        return len(self._docs) + (0 if self._alive is None else int(self._seg.n - self._alive.sum()))

    def compact(self) -> None:
        """Fold every document into one fresh segment: removed ones gone, slots renumbered.

        Run after a build or a load's catch-up and before a save; O(all entries).
        """
        if not self._docs and self._alive is None and not self._free:
            return
        seg = self._seg
        terms = list(seg.terms)
        vocab = dict(self._vocab)
        order = [s for s, d in enumerate(self._ids) if d is not None]
        rows_t: list[np.ndarray] = []
        rows_f: list[np.ndarray] = []
        seg_tf = seg.forward_tf() if seg.n else _EMPTY_F
        for slot in order:
            if slot < seg.n:
                a, b = seg.fptr[slot], seg.fptr[slot + 1]
                rows_t.append(seg.fterm[a:b].astype(np.int64))
                rows_f.append(seg_tf[a:b])
            else:
                doc = self._docs[slot]
                tids = []
                for term in doc:
                    tid = vocab.get(term)
                    if tid is None:
                        tid = vocab[term] = len(terms)
                        terms.append(term)
                    tids.append(tid)
                rows_t.append(np.array(tids, dtype=np.int64))
                rows_f.append(np.fromiter(doc.values(), dtype=F64, count=len(doc)))
        fptr = np.zeros(len(order) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in rows_t], out=fptr[1:])
        fterm = np.concatenate(rows_t) if rows_t else _EMPTY_I
        ftf = np.concatenate(rows_f) if rows_f else _EMPTY_F
        ids = [self._ids[s] for s in order]
        dl = [self._dl[s] for s in order]
        flen = [self._flen[s] for s in order]
        names = [self._doc_names[s] for s in order]
        self._rebase(_Segment.make(terms, fptr, fterm, ftf), ids, dl, flen, names)  # type: ignore[arg-type]

    def _rebase(
        self,
        seg: _Segment,
        ids: list[str],
        dl: list[float],
        flen: list[tuple[int, ...]],
        names: list[_Names],
    ) -> None:
        self._set_segment(seg)
        self._ids = list(ids)
        self._slot = dict(zip(ids, range(len(ids))))
        self._free = []
        self._dl = dl
        self._flen = flen
        self._field_total = [sum(col) for col in zip(*flen)] if flen else [0] * len(self._names)
        self._doc_names = names
        self._name_post = {}
        self._name_rows = {}
        for slot, doc_names in enumerate(names):
            for word in set().union(*doc_names) if doc_names else ():
                self._name_post.setdefault(word, set()).add(slot)
        self._docs, self._dpost, self._dfadj = {}, {}, {}
        self._norm = None
        self._allow_masks.clear()

    # ----- statistics ------------------------------------------------------

    def terms(self) -> Iterator[str]:
        """Every indexed term, in no particular order (pair with `df` for statistics)."""
        for term in self._vocab:
            if self.df(term):
                yield term
        for term in self._dfadj:
            if term not in self._vocab and self.df(term):
                yield term

    def df(self, term: str) -> int:
        """How many documents contain `term` (in a field of non-zero weight)."""
        tid = self._vocab.get(term)
        return (0 if tid is None else int(self._segdf[tid])) + self._dfadj.get(term, 0)

    def _segment_posting(self, term: str, scope: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The segment's live slots holding `term` (in `scope`'s mask, when given) and their tfs."""
        tid = self._vocab.get(term)
        if tid is None:
            return _EMPTY_I, _EMPTY_F
        seg = self._seg
        a, b = seg.iptr[tid], seg.iptr[tid + 1]
        docs, tfs = seg.idoc[a:b], seg.itf[a:b]
        keep = self._alive if scope is None else scope
        if keep is not None:
            m = keep[docs]
            docs, tfs = docs[m], tfs[m]
        return docs, tfs.astype(F64, copy=False)

    @property
    def avgdl(self) -> float:
        """Mean weighted document length (0.0 for an empty index)."""
        n = len(self._slot)
        return self._total_length() / n if n else 0.0

    def _total_length(self) -> float:
        # From integer field totals, so the value never drifts with updates.
        total: float = 0
        for w, t in zip(self._w, self._field_total):
            total += w * t
        return total

    def _norms(self) -> np.ndarray:
        norm = self._norm
        if norm is None:
            k1, b = self.k1, self.b
            avgdl = self.avgdl
            c1 = k1 * (1 - b)
            c2 = k1 * b / avgdl if avgdl else 0.0
            norm = self._norm = c1 + c2 * np.array(self._dl, dtype=F64)
        return norm

    # ----- queries ---------------------------------------------------------

    def search(
        self, query: str, k: int = 10, allow: Callable[[str], bool] | None = None, within: Collection[str] | None = None
    ) -> SearchResult:
        """The `k` best documents for `query`; `allow` filters before ranking.

        `within`: only these documents, at a cost that follows their number rather
        than the posting lists of the whole index (a guest's scope: a word common
        outside it takes no longer to look up).
        """
        return self.search_tokens(tokenize(query), k, allow, within)

    def search_tokens(
        self,
        query_tokens: Iterable[str],
        k: int = 10,
        allow: Callable[[str], bool] | None = None,
        within: Collection[str] | None = None,
        allow_key: Hashable | None = None,
        reach: tuple[Callable[[str], bool], Hashable] | None = None,
    ) -> SearchResult:
        """As `search`, for an already tokenized query (repeats weigh more).

        A document whose name (title, alias, file name) the query says gets a
        bonus on top of BM25: ``top * NAME_WEIGHT * (precision * recall) ** 2``,
        where ``top`` is the best BM25 score of this query, precision the share of
        the name's words the query has and recall the share of the query's words
        the name has (stopwords aside, a plural `s` folded). An exact name match
        therefore outranks every note that only mentions the words, however long
        the named note is; a name sharing one word of two gets a sixteenth of that.
        BM25 alone could not: a 372 KB hub note's title is one term among 60,000,
        and length normalisation buries it.

        `allow_key` names what `allow` says (the same key, the same answers) so its
        verdict on every document is kept until the index changes: a common word's
        thousands of matches are then filtered at once instead of one call each.
        `reach` (a wider filter and its key) also counts the matches it allows, in
        `SearchResult.reach`: what a narrower `allow` left out, without a second search.
        """
        query_tokens = list(query_tokens)
        slots, scores = self._accumulate(query_tokens, within)
        ids = self._ids
        reached = int(self._allowed(*reach)[slots].sum()) if reach is not None else None
        if allow is not None and len(slots):
            if allow_key is None:
                keep = np.fromiter((allow(ids[d]) for d in slots.tolist()), dtype=bool, count=len(slots))  # type: ignore[arg-type]
            else:
                keep = self._allowed(allow, allow_key)[slots]
            slots, scores = slots[keep], scores[keep]
        if len(slots) and self._name_post:
            self._add_name_bonus(query_tokens, slots, scores)
        total = len(slots)
        if k <= 0 or not total:
            return SearchResult([], total, reached)
        if total > k:
            # Scores strictly above the k-th best are in; among scores equal to it
            # the lowest ids win. A common word can tie thousands of notes at the
            # cut, so the ties are narrowed by id before anything is sorted.
            cut = np.partition(scores, total - k)[total - k]
            above = scores > cut
            tied = np.flatnonzero(scores == cut)
            need = k - int(above.sum())
            if len(tied) > need:
                keep = heapq.nsmallest(need, slots[tied].tolist(), key=ids.__getitem__)
                tied = tied[np.isin(slots[tied], np.array(keep, dtype=slots.dtype))]
            m = np.concatenate([np.flatnonzero(above), tied])
            slots, scores = slots[m], scores[m]
        items = sorted(zip(scores.tolist(), slots.tolist()), key=lambda it: (-it[0], ids[it[1]]))
        return SearchResult([(ids[d], s) for s, d in items[:k]], total, reached)  # type: ignore[misc]

    def _allowed(self, allow: Callable[[str], bool], key: Hashable) -> np.ndarray:
        mask = self._allow_masks.get(key)
        if mask is None:
            if len(self._allow_masks) >= 32:  # keys hold a day: old ones go
                self._allow_masks.clear()
            ids = self._ids
            mask = np.fromiter((d is not None and allow(d) for d in ids), dtype=bool, count=len(ids))
            self._allow_masks[key] = mask
        return mask

    def _add_name_bonus(self, query_tokens: list[str], slots: np.ndarray, scores: np.ndarray) -> None:
        words = name_words_of(query_tokens)
        rows = [self._name_rows_of(w) for w in words if w in self._name_post]
        if not rows:
            return
        if len(rows) == 1:  # one query word: each name holds it once, in slot order already
            slot, which, length = rows[0]
            span = int(which.max()) + 1
            names, shared = slot * span + which, np.ones(len(slot), dtype=np.int64)
            fit = (shared / length) * (shared / len(words))
        else:
            slot, which, length = (np.concatenate(col) for col in zip(*rows))
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

    def _name_rows_of(self, word: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(slot, index of the name in the slot's names, that name's word count) of every
        name holding `word`; made on first use, dropped when one of those notes changes."""
        rows = self._name_rows.get(word)
        if rows is None:
            slot, which, length = [], [], []
            names = self._doc_names
            for s in sorted(self._name_post[word]):
                for i, name in enumerate(names[s]):
                    if word in name:
                        slot.append(s)
                        which.append(i)
                        length.append(len(name))
            rows = self._name_rows[word] = (
                np.array(slot, dtype=np.int64),
                np.array(which, dtype=np.int64),
                np.array(length, dtype=np.int64),
            )
        return rows

    def matching(self, query: str) -> set[str]:
        """Ids of documents sharing at least one term with `query`."""
        return self.matching_tokens(tokenize(query))

    def matching_tokens(self, query_tokens: Iterable[str], within: Collection[str] | None = None) -> set[str]:
        """Ids of documents containing at least one of `query_tokens` (of `within` only, when given,
        at a cost that follows `within`'s size)."""
        ids = self._ids
        return {ids[s] for s in self.matching_slots(query_tokens, within).tolist()}  # type: ignore[misc]

    def matching_slots(self, query_tokens: Iterable[str], within: Collection[str] | None = None) -> np.ndarray:
        """`matching_tokens` as the documents' slots (ascending), for callers that map them
        to their own rows (`slot_table`) without a Python set of ids."""
        slots, _ = self._accumulate([t for t in set(query_tokens) if self.df(t)], within)
        return slots

    def slot_table(self, ids: Sequence[str]) -> np.ndarray:
        """For each slot of this index as it stands, the position of its document in `ids`, or -1."""
        table = np.full(len(self._ids), -1, dtype=np.int64)
        for i, doc_id in enumerate(ids):
            slot = self._slot.get(doc_id)
            if slot is not None:
                table[slot] = i
        return table

    def score_tokens(self, query_tokens: Iterable[str], doc_id: str) -> float:
        """The score `search_tokens` gives `doc_id` (0.0 if it shares no term or is absent)."""
        slot = self._slot.get(doc_id)
        if slot is None:
            return 0.0
        _, scores = self._accumulate(list(query_tokens), (doc_id,))
        return float(scores[0]) if len(scores) else 0.0

    def _plan(self, query_tokens: Iterable[str]) -> list[tuple[str, float]]:
        """Query terms present in the index, each with idf * (k1 + 1) * its count.

        Ordered by document frequency descending, then term: a fixed order makes
        float sums identical however the index was built.
        """
        df = self.df
        qtf = Counter(t for t in query_tokens if df(t))
        n_docs = len(self._slot)
        k1p1 = self.k1 + 1
        terms = sorted(qtf, key=lambda t: (-df(t), t))
        return [(t, idf(n_docs, df(t)) * k1p1 * qtf[t]) for t in terms]

    def _accumulate(self, query_tokens: list[str], within: Collection[str] | None) -> tuple[np.ndarray, np.ndarray]:
        """Slots (ascending) of the documents sharing a term with the query, and their scores.

        Each document's score is ``sum(a * tf / (tf + K_d))`` over the plan's terms
        in plan order, whichever part of the index holds it, so the floats are the
        same however the index was built. `within` is scored from the documents'
        own rows; a scope of more than a quarter of the segment uses the term
        lists with a mask instead (the choice depends on the scope's size only).
        """
        plan = self._plan(query_tokens)
        if not plan:
            return _EMPTY_I, _EMPTY_F
        norm = self._norms()
        size = len(self._ids)
        acc = np.zeros(size, dtype=F64)
        hit = np.zeros(size, dtype=bool)
        seg = self._seg
        if within is None:
            scope = None
            rows = None
            delta = self._dpost
        else:
            slot_of = self._slot
            chosen = [slot_of[d] for d in within if d in slot_of]
            in_seg = np.array([s for s in chosen if s < seg.n], dtype=np.int64)
            docs = self._docs
            delta = {}
            for s in chosen:
                if s >= seg.n:
                    for t, _ in plan:
                        tf = docs[s].get(t)
                        if tf:
                            delta.setdefault(t, {})[s] = tf
            if len(in_seg) * 4 > seg.n:
                scope = np.zeros(seg.n, dtype=bool)
                scope[in_seg] = True
                rows = None
            else:
                scope = None
                rows = np.sort(in_seg)
        for term, a in plan:
            if rows is None:
                docs, tfs = self._segment_posting(term, scope)
            else:
                docs, tfs = self._scoped_posting(term, rows)
            if len(docs):
                acc[docs] += a * tfs / (tfs + norm[docs])
                hit[docs] = True
            for d, tf in delta.get(term, {}).items():
                acc[d] += a * tf / (tf + norm[d])
                hit[d] = True
        slots = np.flatnonzero(hit)
        return slots, acc[slots]

    def _scoped_posting(self, term: str, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The segment `slots` (ascending, live) holding `term`, and their tfs.

        Looked up by binary search of each slot in the term's list: the cost follows
        the scope's size (and the log of the list's), not how common the word is
        outside the scope.
        """
        tid = self._vocab.get(term)
        if tid is None or not len(slots):
            return _EMPTY_I, _EMPTY_F
        seg = self._seg
        a, b = seg.iptr[tid], seg.iptr[tid + 1]
        post = seg.idoc[a:b]
        if not len(post):
            return _EMPTY_I, _EMPTY_F
        pos = np.minimum(np.searchsorted(post, slots), len(post) - 1)
        m = post[pos] == slots
        return slots[m], seg.itf[a:b][pos[m]].astype(F64)

    def save(self, fp: BinaryIO) -> None:
        """Write the whole index to `fp` (compacting it first); see `save_index`."""
        save_index(self, fp)

    @classmethod
    def load(cls, fp: BinaryIO) -> Index:
        """An index written by `save`; ValueError for anything else. See `load_index`."""
        return load_index(fp)

    def _check_fields(self, fields: Mapping[str, object]) -> None:
        unknown = [name for name in fields if name not in self.weights]
        if unknown:
            raise ValueError(f"unknown field(s) {unknown!r}; known: {list(self.weights)!r}")


def _shift(adj: dict[str, int], term: str, by: int) -> None:
    n = adj.get(term, 0) + by
    if n:
        adj[term] = n
    else:
        del adj[term]


def _tokenized(fields: Mapping[str, str]) -> dict[str, list[str]]:
    return {name: tokenize(text) for name, text in fields.items() if text}


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
    names: list[_Names]
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
        self._names: list[_Names] = []
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
        self._index._check_fields(fields)
        self.add_tokens(doc_id, _tokenized(fields), names)

    def add_tokens(self, doc_id: str, field_tokens: Mapping[str, Iterable[str]], names: Iterable[str] = ()) -> None:
        if doc_id in self._seen:
            raise ValueError(f"document {doc_id!r} added twice")
        self._index._check_fields(field_tokens)
        wtf, dl, flen = self._index._weigh(field_tokens, intern=False)
        self._ranks = None
        self._fterm.extend(map(self._vocab.__getitem__, wtf))  # a new term numbers itself
        self._ftf.extend(wtf.values())
        self._fptr.append(len(self._fterm))
        self._seen.add(doc_id)
        self._ids.append(doc_id)
        self._dl.append(dl)
        self._flen.append(flen)
        self._names.append(_names_of(names))

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
        seg = _Segment.make(list(self._vocab), fptr, fterm, ftf, ranks)
        del ranks
        self._ranks = None
        index = self._index
        index._rebase(seg, self._ids, self._dl, self._flen, self._names)
        self._fterm, self._ftf, self._fptr = array("i"), array("d"), array("q", [0])
        return index


# ----- persistence ------------------------------------------------------------

# Bumped whenever `save` writes something an older `load` would misread.
_FORMAT = "cortex-index-3"
_MAGIC = b"CORTEXIX"
_DTYPES = {"<f8", "<f4", "<i8", "<i4", "<u2", "|u1"}


def save_index(index: Index, fp: BinaryIO) -> None:
    """Write `index` (compacted first) as a JSON header and its flat arrays, little-endian.

    Chosen over pickle and SQLite by what loading costs: the arrays are read
    back as views of the file's bytes with no per-entry work (see `load_index`).
    """
    index.compact()
    seg = index._seg
    if any("\x00" in t for t in seg.terms):
        raise ValueError("a term holds NUL, the separator of the saved vocabulary")
    arrays = [
        ("dl", np.array(index._dl, dtype="<f8")),
        ("fptr", seg.fptr),
        ("fterm", seg.fterm),
        ("iptr", seg.iptr),
        ("idoc", seg.idoc),
        ("itf", seg.itf),
        ("terms", np.frombuffer("\x00".join(seg.terms).encode("utf-8"), dtype=np.uint8)),
    ]
    arrays = [(name, a.astype(a.dtype.newbyteorder("<"), copy=False)) for name, a in arrays]
    header = {
        "format": _FORMAT,
        "k1": index.k1,
        "b": index.b,
        "weights": list(index.weights.items()),
        "ids": index._ids,
        "flen": index._flen,
        "names": [[sorted(name) for name in doc] for doc in index._doc_names],
        "vocabulary": len(seg.terms),
        "arrays": [[name, a.dtype.str, len(a)] for name, a in arrays],
    }
    raw = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-(len(_MAGIC) + 8 + len(raw)) % 8)  # arrays start 8-aligned
    fp.write(_MAGIC + len(raw).to_bytes(8, "little") + raw)
    for _, a in arrays:
        fp.write(a.tobytes())


def load_index(fp: BinaryIO) -> Index:
    """An index written by `save_index`; ValueError for anything else (another format, a cut file).

    Checks every length and bound, so a damaged file cannot index out of range;
    whether its numbers are the ones saved is the caller's checksum to say.
    """
    data = fp.read()
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 8:
        raise ValueError("not a saved index")
    size = int.from_bytes(data[len(_MAGIC) : len(_MAGIC) + 8], "little")
    start = len(_MAGIC) + 8
    if size > len(data) - start:
        raise ValueError("saved index cut short (header)")
    try:
        header = json.loads(data[start : start + size])
        if header.get("format") != _FORMAT:
            raise ValueError(f"saved index format {header.get('format')!r}, this version reads {_FORMAT!r}")
        index = Index(header["k1"], header["b"], dict(header["weights"]))
        ids, flen, names = header["ids"], header["flen"], header["names"]
        arrays: dict[str, np.ndarray] = {}
        pos = start + size
        for name, dtype, count in header["arrays"]:
            if dtype not in _DTYPES or not isinstance(count, int) or count < 0:
                raise ValueError(f"saved index array {name!r} is malformed")
            nbytes = count * np.dtype(dtype).itemsize
            if pos + nbytes > len(data):
                raise ValueError("saved index cut short")
            arrays[name] = np.frombuffer(data, dtype=dtype, count=count, offset=pos)
            pos += nbytes
    except (KeyError, TypeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"saved index header is malformed: {exc}") from None
    if pos != len(data):
        raise ValueError("saved index has bytes past its end")
    return _checked(index, header, arrays, ids, flen, names)


def _checked(index: Index, header: dict, arrays: dict[str, np.ndarray], ids, flen, names) -> Index:
    try:
        dl, fptr, fterm = arrays["dl"], arrays["fptr"], arrays["fterm"]
        iptr, idoc, itf, blob = arrays["iptr"], arrays["idoc"], arrays["itf"], arrays["terms"]
    except KeyError as exc:
        raise ValueError(f"saved index lacks {exc}") from None
    n, vocab = len(ids), header["vocabulary"]
    terms = blob.tobytes().decode("utf-8").split("\x00") if vocab else []
    nnz = len(fterm)
    ok = (
        len(dl) == len(flen) == len(names) == n
        and len(set(ids)) == n
        and all(isinstance(i, str) for i in ids)
        and all(len(f) == len(index._names) and all(isinstance(x, int) for x in f) for f in flen)
        and len(terms) == vocab
        and len(fptr) == n + 1
        and len(iptr) == vocab + 1
        and len(idoc) == len(itf) == nnz
        and fptr[0] == 0
        and fptr[-1] == nnz
        and iptr[0] == 0
        and iptr[-1] == nnz
        and bool(np.all(np.diff(fptr) >= 0))
        and bool(np.all(np.diff(iptr) >= 0))
        and (nnz == 0 or (0 <= fterm.min() and fterm.max() < vocab and 0 <= idoc.min() and idoc.max() < n))
    )
    if not ok:
        raise ValueError("saved index is inconsistent")
    seg = _Segment(terms, fptr, fterm, iptr, idoc, itf)
    doc_names = [tuple(tuple(name) for name in doc) for doc in names]
    index._rebase(seg, ids, dl.tolist(), [tuple(f) for f in flen], doc_names)
    return index

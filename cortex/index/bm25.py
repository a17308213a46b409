"""The lexical index: incremental BM25 over weighted note fields.

One ``Index`` holds the statistics of one snapshot's notes, in two parts: a compact
segment (``Segment``: every term frequency in flat numpy arrays, forward rows per
document and inverted lists per term), made by a build, a load or ``compact()``, and a
small mutable part for the documents added since (a dict of weighted term frequencies
per document, ``_docs``, and their postings ``term -> {slot: weighted tf}``,
``_dpost``). A note changed by a commit is removed and added again; the cost of that
is proportional to the note's own terms, never to the size of the brain, because every
statistic BM25 needs is kept as a running sum:

* each document's weighted length and raw length per field, the total length per field,
* ``df`` per term: the segment's, adjusted by the documents added or removed since
  (``_dfadj``; a removed segment document is masked until the next ``compact()``),
* ``N``, the number of documents.

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
Figures (with the machine). Scoring is term-at-a-time over the segment's inverted lists
and the mutable part's postings; a MaxScore cut was tried and never fired on Zipf-like
questions (the common words' upper bounds exceed the 10th score), so it is not here.

Not thread-safe for mutation: the caller (``corpus``) serialises updates.
Concurrent reads of an index no one mutates are safe.

Building many documents at once is `cortex.index.builder`; the saved form is
`cortex.index.bm25_file`; the segment is `cortex.index.segment`; the name bonus is
`cortex.index.name_bonus`.
"""

from __future__ import annotations

import heapq
import math
import sys
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import cast

import numpy as np

from cortex.index.name_bonus import NameIndex
from cortex.index.segment import EMPTY_F, EMPTY_I, F64, NO_SEGMENT, Compacted, Segment
from cortex.index.tokenize import tokenize

__all__ = ["DEFAULT_WEIGHTS", "FIELDS", "Index", "SearchResult", "idf", "tokenized_fields"]

FIELDS = ("path", "title", "headings", "body")
_intern = sys.intern
DEFAULT_WEIGHTS: dict[str, float] = {"path": 2, "title": 3, "headings": 2, "body": 1}


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


class Index:
    """Incremental BM25F index over documents identified by string ids (note paths).

    Two parts: a compact segment (flat arrays, see `Segment`) holding the
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
        # Names (title, aliases, file stem) per slot: what the name bonus reads.
        self._names_by_slot = NameIndex()
        self._set_segment(NO_SEGMENT)
        # The mutable part: forward dicts of documents added since the segment,
        # their postings, and how far each term's df differs from the segment's.
        self._docs: dict[int, dict[str, float]] = {}
        self._dpost: dict[str, dict[int, float]] = {}
        self._dfadj: dict[str, int] = {}

    def _set_segment(self, seg: Segment) -> None:
        self._seg = seg
        self._vocab: dict[str, int] = dict(zip(seg.terms, range(len(seg.terms)), strict=True))
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
        self.check_fields(fields)
        self.add_tokens(doc_id, tokenized_fields(fields), names)

    def add_tokens(self, doc_id: str, field_tokens: Mapping[str, Iterable[str]], names: Iterable[str] = ()) -> None:
        """Index (or re-index) a document from already tokenized fields.

        A field missing from `field_tokens` is empty; an unknown field name is an
        error (a typo would otherwise silently drop text from search).
        """
        self.check_fields(field_tokens)
        if doc_id in self._slot:
            self.remove(doc_id)
        wtf, dl, flen = self.weigh(field_tokens)
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
            self._names_by_slot.append()
        self._docs[slot] = wtf
        self._names_by_slot.set(slot, names)
        self._slot[doc_id] = slot
        adj, post = self._dfadj, self._dpost
        for term, tf in wtf.items():
            _shift(adj, term, 1)
            post.setdefault(term, {})[slot] = tf
        self._count(flen, 1)

    def weigh(
        self, field_tokens: Mapping[str, Iterable[str]], intern: bool = True
    ) -> tuple[dict[str, float], float, tuple[int, ...]]:
        """A document's weighted term frequencies, weighted length and raw field lengths.

        `intern`: make the dict's keys the one shared string of each term, for an index
        that keeps them (a builder numbers them and drops them: interning every token
        was half of a cold build's counting, ~300 ns a token).
        """
        flen: list[int] = []
        parts: list[tuple[int, int, float, list[str]]] = []
        for i, (name, w) in enumerate(zip(self._names, self._w, strict=True)):
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
                wtf = cast(dict[str, float], counts) if w == 1 else {t: w * c for t, c in counts.items()}
            else:
                get = wtf.get
                for term, c in counts.items():
                    wtf[term] = get(term, 0) + w * c
        return wtf, dl, tuple(flen)

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
        self._names_by_slot.clear(slot)
        self._count(self._flen[slot], -1)
        self._ids[slot] = None
        self._dl[slot] = 0
        self._flen[slot] = ()

    def copy(self) -> Index:
        """An index that answers as this one and changes apart from it (a guest's masked view,
        `cortex.index.masked`): the segment's arrays are shared, since nothing writes them in
        place; what an add or remove changes is copied (O(documents + loose entries))."""
        other = Index.__new__(Index)
        other.__dict__.update(self.__dict__)
        other._slot, other._ids, other._free = dict(self._slot), list(self._ids), list(self._free)
        other._dl, other._flen, other._field_total = list(self._dl), list(self._flen), list(self._field_total)
        other._alive = None if self._alive is None else self._alive.copy()
        other._allow_masks = {}
        other._names_by_slot = self._names_by_slot.copy()
        # A loose document's term dict is replaced, never changed, when it is indexed again.
        other._docs, other._dfadj = dict(self._docs), dict(self._dfadj)
        other._dpost = {term: dict(slots) for term, slots in self._dpost.items()}
        return other

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
        seg_tf = seg.forward_tf() if seg.n else EMPTY_F
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
        fterm = np.concatenate(rows_t) if rows_t else EMPTY_I
        ftf = np.concatenate(rows_f) if rows_f else EMPTY_F
        ids = [self._ids[s] for s in order]
        dl = [self._dl[s] for s in order]
        flen = [self._flen[s] for s in order]
        names = [self._names_by_slot.of[s] for s in order]
        self.rebase(Compacted(Segment.make(terms, fptr, fterm, ftf), ids, dl, flen, names))  # type: ignore[arg-type]

    def compacted(self) -> Compacted:
        """Every document folded into the segment (`compact`), as the segment and its rows."""
        self.compact()
        return Compacted(self._seg, self._ids, self._dl, self._flen, self._names_by_slot.of)  # type: ignore[arg-type]

    def rebase(self, docs: Compacted) -> None:
        """Hold exactly the documents of `docs`, in its slots: a builder's or a load's result."""
        seg, ids, dl, flen, names = docs.segment, docs.ids, docs.dl, docs.flen, docs.names
        self._set_segment(seg)
        self._ids = list(ids)
        self._slot = dict(zip(ids, range(len(ids)), strict=True))
        self._free = []
        self._dl = dl
        self._flen = flen
        self._field_total = [sum(col) for col in zip(*flen, strict=False)] if flen else [0] * len(self._names)
        self._names_by_slot.reset(names)
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
            return EMPTY_I, EMPTY_F
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
        for w, t in zip(self._w, self._field_total, strict=False):
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
        bonus on top of BM25 (`cortex.index.name_bonus.NameIndex.add_bonus`).

        `allow_key` names what `allow` says (the same key, the same answers) so its
        verdict on every document is kept until the index changes: a common word's
        thousands of matches are then filtered at once instead of one call each.
        `reach` (a wider filter and its key) also counts the matches it allows, in
        `SearchResult.reach`: what a narrower `allow` left out, without a second search.
        """
        query_tokens = list(query_tokens)
        slots, scores = self._accumulate(query_tokens, within)
        ids = cast(list[str], self._ids)  # a slot a search returns holds a document, never None
        reached = int(self._allowed(*reach)[slots].sum()) if reach is not None else None
        if allow is not None and len(slots):
            if allow_key is None:
                keep = np.fromiter((allow(ids[d]) for d in slots.tolist()), dtype=bool, count=len(slots))
            else:
                keep = self._allowed(allow, allow_key)[slots]
            slots, scores = slots[keep], scores[keep]
        if len(slots) and self._names_by_slot:
            self._names_by_slot.add_bonus(query_tokens, slots, scores)
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
                kept = heapq.nsmallest(need, slots[tied].tolist(), key=ids.__getitem__)
                tied = tied[np.isin(slots[tied], np.array(kept, dtype=slots.dtype))]
            m = np.concatenate([np.flatnonzero(above), tied])
            slots, scores = slots[m], scores[m]
        items = sorted(zip(scores.tolist(), slots.tolist(), strict=True), key=lambda it: (-it[0], ids[it[1]]))
        return SearchResult([(ids[d], s) for s, d in items[:k]], total, reached)

    def _allowed(self, allow: Callable[[str], bool], key: Hashable) -> np.ndarray:
        mask = self._allow_masks.get(key)
        if mask is None:
            if len(self._allow_masks) >= 32:  # keys hold a day: old ones go
                self._allow_masks.clear()
            ids = self._ids
            mask = np.fromiter((d is not None and allow(d) for d in ids), dtype=bool, count=len(ids))
            self._allow_masks[key] = mask
        return mask

    def matching(self, query: str) -> set[str]:
        """Ids of documents sharing at least one term with `query`."""
        return self.matching_tokens(tokenize(query))

    def matching_tokens(self, query_tokens: Iterable[str], within: Collection[str] | None = None) -> set[str]:
        """Ids of documents containing at least one of `query_tokens` (of `within` only, when given,
        at a cost that follows `within`'s size)."""
        ids = cast(list[str], self._ids)  # a slot a search returns holds a document, never None
        return {ids[s] for s in self.matching_slots(query_tokens, within).tolist()}

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
            return EMPTY_I, EMPTY_F
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
            rows_of = self._docs
            delta = {}
            for s in chosen:
                if s >= seg.n:
                    for t, _ in plan:
                        tf = rows_of[s].get(t)
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
            return EMPTY_I, EMPTY_F
        seg = self._seg
        a, b = seg.iptr[tid], seg.iptr[tid + 1]
        post = seg.idoc[a:b]
        if not len(post):
            return EMPTY_I, EMPTY_F
        pos = np.minimum(np.searchsorted(post, slots), len(post) - 1)
        m = post[pos] == slots
        return slots[m], seg.itf[a:b][pos[m]].astype(F64)

    def check_fields(self, fields: Mapping[str, object]) -> None:
        unknown = [name for name in fields if name not in self.weights]
        if unknown:
            raise ValueError(f"unknown field(s) {unknown!r}; known: {list(self.weights)!r}")


def _shift(adj: dict[str, int], term: str, by: int) -> None:
    n = adj.get(term, 0) + by
    if n:
        adj[term] = n
    else:
        del adj[term]


def tokenized_fields(fields: Mapping[str, str]) -> dict[str, list[str]]:
    """Each non-empty field's text as its tokens."""
    return {name: tokenize(text) for name, text in fields.items() if text}

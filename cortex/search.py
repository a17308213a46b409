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
terms a little more).  tests/test_search_index.py checks both relationships.

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
import marshal
import math
import sys
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import BinaryIO

from .tokenize import STOPWORDS, tokenize

__all__ = ["DEFAULT_WEIGHTS", "FIELDS", "Index", "SearchResult", "idf"]

FIELDS = ("path", "title", "headings", "body")
_intern = sys.intern
DEFAULT_WEIGHTS: dict[str, float] = {"path": 2, "title": 3, "headings": 2, "body": 1}
# Bumped whenever `Index.save` writes something an older `load` would misread.
_FORMAT = "cortex-index-1"


# How much an exact name match adds, as a share of the query's best BM25 score.
# Tuned on the public eval and the hub fixture (tests/test_obsidian.py): see
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


class Index:
    """Incremental BM25F index over documents identified by string ids (note paths)."""

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
        # Documents live in integer slots (list indexing beats dict lookups in
        # the scoring loop); slots of removed documents are reused.
        self._slot: dict[str, int] = {}
        self._ids: list[str | None] = []
        self._free: list[int] = []
        self._dl: list[float] = []  # weighted length per slot (0 when free)
        self._flen: list[tuple[int, ...]] = []  # raw length per field per slot
        # Per slot, the document's own weighted term frequencies (forward index),
        # and per term its document frequency. Postings are NOT built eagerly:
        # inserting ~2 million postings into dicts took ~2 s of a 10,000-note
        # build. A term's posting list is built by one scan of the forward index
        # the first time a query needs it (~0.5 ms at 10,000 notes), then kept
        # up to date by add/remove like any posting list.
        self._docs: list[dict[str, float] | None] = []
        self._df: Counter[str] = Counter()
        self._field_total: list[int] = [0] * len(self._names)
        self._post: dict[str, dict[int, float]] = {}  # the posting lists built so far
        # Per-slot K_d = k1 * (1 - b + b * len_d / avgdl), rebuilt lazily by the
        # first query after an update (O(N) list comprehension, ~0.5 ms at 10k).
        self._norm: list[float] | None = None
        # Names (title, aliases, file stem) per slot as sets of folded words, and
        # word -> slots whose names hold it: what the name bonus reads.
        self._doc_names: list[tuple[frozenset[str], ...]] = []
        self._name_post: dict[str, set[int]] = {}

    # ----- documents -------------------------------------------------------

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._slot

    def add(self, doc_id: str, fields: Mapping[str, str], names: Iterable[str] = ()) -> None:
        """Index (or re-index) a document from its field texts.

        `names` are what a person calls the document (title, aliases, file name): a
        query that says one of them gets the name bonus (see `search_tokens`).
        """
        self._check_fields(fields)
        self.add_tokens(
            doc_id,
            {name: tokenize(text) for name, text in fields.items() if text},
            names,
        )

    def add_tokens(self, doc_id: str, field_tokens: Mapping[str, Iterable[str]], names: Iterable[str] = ()) -> None:
        """Index (or re-index) a document from already tokenized fields.

        A field missing from `field_tokens` is empty; an unknown field name is an
        error (a typo would otherwise silently drop text from search).
        """
        self._check_fields(field_tokens)
        if doc_id in self._slot:
            self.remove(doc_id)
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
            # Interned while counting, so the index holds one string per distinct
            # term instead of one per document holding it (~120 MB less at 10,000
            # notes; interning in a second pass cost ~0.9 s of the build).
            counts = Counter(map(_intern, tokens))
            if not wtf:
                wtf = counts if w == 1 else {t: w * c for t, c in counts.items()}
            else:
                get = wtf.get
                for term, c in counts.items():
                    wtf[term] = get(term, 0) + w * c
        doc_names = tuple(dict.fromkeys(n for n in map(name_words, names) if n))
        if self._free:
            slot = self._free.pop()
            self._ids[slot] = doc_id
            self._dl[slot] = dl
            self._flen[slot] = tuple(flen)
            self._docs[slot] = wtf
            self._doc_names[slot] = doc_names
        else:
            slot = len(self._ids)
            self._ids.append(doc_id)
            self._dl.append(dl)
            self._flen.append(tuple(flen))
            self._docs.append(wtf)
            self._doc_names.append(doc_names)
        for word in set().union(*doc_names) if doc_names else ():
            self._name_post.setdefault(word, set()).add(slot)
        self._slot[doc_id] = slot
        self._df.update(iter(wtf))  # counts keys, in C
        post = self._post
        if post:
            for term in post.keys() & wtf.keys():
                post[term][slot] = wtf[term]
        totals = self._field_total
        for i, n in enumerate(flen):
            totals[i] += n
        self._norm = None

    def remove(self, doc_id: str) -> None:
        """Drop a document; a no-op when it is not indexed."""
        slot = self._slot.pop(doc_id, None)
        if slot is None:
            return
        post = self._post
        df = self._df
        doc = self._docs[slot] or {}
        for term in doc:
            n = df[term] - 1
            if n:
                df[term] = n
            else:
                del df[term]
        if post:
            for term in post.keys() & doc.keys():
                p = post[term]
                del p[slot]
                if not p:
                    del post[term]
        totals = self._field_total
        for i, n in enumerate(self._flen[slot]):
            totals[i] -= n
        for word in set().union(*self._doc_names[slot]) if self._doc_names[slot] else ():
            holders = self._name_post[word]
            holders.discard(slot)
            if not holders:
                del self._name_post[word]
        self._doc_names[slot] = ()
        self._ids[slot] = None
        self._dl[slot] = 0
        self._flen[slot] = ()
        self._docs[slot] = None
        self._free.append(slot)
        self._norm = None

    # ----- statistics ------------------------------------------------------

    def terms(self) -> Iterator[str]:
        """Every indexed term, in no particular order (pair with `df` for statistics)."""
        return iter(self._df)

    def df(self, term: str) -> int:
        """How many documents contain `term` (in a field of non-zero weight)."""
        return self._df.get(term, 0)

    def _posting(self, term: str) -> dict[int, float]:
        """The posting list of an indexed term, built on first use."""
        p = self._post.get(term)
        if p is None:
            p = self._post[term] = {s: d[term] for s, d in enumerate(self._docs) if d is not None and term in d}
        return p

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

    def _norms(self) -> list[float]:
        norm = self._norm
        if norm is None:
            k1, b = self.k1, self.b
            avgdl = self.avgdl
            c1 = k1 * (1 - b)
            c2 = k1 * b / avgdl if avgdl else 0.0
            norm = self._norm = [c1 + c2 * x for x in self._dl]
        return norm

    # ----- queries ---------------------------------------------------------

    def search(
        self, query: str, k: int = 10, allow: Callable[[str], bool] | None = None, within: Collection[str] | None = None
    ) -> SearchResult:
        """The `k` best documents for `query`; `allow` filters before ranking.

        `within`: only these documents, scored from their own term frequencies, so the
        cost follows their number rather than the posting lists of the whole index (a
        guest's scope: a word common outside it no longer takes longer to look up).
        """
        return self.search_tokens(tokenize(query), k, allow, within)

    def search_tokens(
        self,
        query_tokens: Iterable[str],
        k: int = 10,
        allow: Callable[[str], bool] | None = None,
        within: Collection[str] | None = None,
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
        """
        query_tokens = list(query_tokens)
        acc = self._accumulate(query_tokens) if within is None else self._accumulate_within(query_tokens, within)
        ids = self._ids
        if allow is not None and acc:
            acc = {d: s for d, s in acc.items() if allow(ids[d])}  # type: ignore[arg-type]
        if acc and self._name_post:
            self._add_name_bonus(query_tokens, acc)
        total = len(acc)
        if k <= 0 or not total:
            return SearchResult([], total)
        if total > k:
            # Scores strictly above the k-th best are in; among scores equal to
            # it the lowest ids win, so take every tie and cut after sorting.
            # nlargest over bare floats: ~0.5 ms for 10,000 scores.
            cut = heapq.nlargest(k, acc.values())[-1]
            items = [(d, s) for d, s in acc.items() if s >= cut]
        else:
            items = list(acc.items())
        items.sort(key=lambda it: (-it[1], ids[it[0]]))
        return SearchResult([(ids[d], s) for d, s in items[:k]], total)  # type: ignore[misc]

    def _add_name_bonus(self, query_tokens: list[str], acc: dict[int, float]) -> None:
        words = name_words_of(query_tokens)
        if not words:
            return
        top = max(acc.values())
        names = self._doc_names
        slots: set[int] = set()
        for word in words:
            slots.update(self._name_post.get(word, ()))
        for slot in slots:
            if slot not in acc:
                continue  # filtered out by `allow`
            best = 0.0
            for name in names[slot]:
                shared = len(name & words)
                if shared:
                    best = max(best, (shared / len(name)) * (shared / len(words)))
            if best:
                acc[slot] += top * NAME_WEIGHT * best * best

    def matching(self, query: str) -> set[str]:
        """Ids of documents sharing at least one term with `query`."""
        return self.matching_tokens(tokenize(query))

    def matching_tokens(self, query_tokens: Iterable[str], within: Collection[str] | None = None) -> set[str]:
        """Ids of documents containing at least one of `query_tokens` (of `within` only, when given,
        at a cost that follows `within`'s size)."""
        if within is not None:
            terms = set(query_tokens)
            docs, slot_of = self._docs, self._slot
            out = set()
            for doc_id in within:
                d = slot_of.get(doc_id)
                doc = docs[d] if d is not None else None
                if doc and not terms.isdisjoint(doc):
                    out.add(doc_id)
            return out
        slots: set[int] = set()
        for term in set(query_tokens):
            if term in self._df:
                slots.update(self._posting(term))
        ids = self._ids
        return {ids[s] for s in slots}  # type: ignore[misc]

    def score_tokens(self, query_tokens: Iterable[str], doc_id: str) -> float:
        """The score `search_tokens` gives `doc_id` (0.0 if it shares no term or is absent)."""
        slot = self._slot.get(doc_id)
        if slot is None:
            return 0.0
        score: float | None = None
        norm = self._norms()
        doc = self._docs[slot] or {}
        for term, a in self._plan(query_tokens):
            tf = doc.get(term)
            if tf is not None:
                x = a * tf / (tf + norm[slot])
                score = x if score is None else score + x
        return 0.0 if score is None else score

    def _plan(self, query_tokens: Iterable[str]) -> list[tuple[str, float]]:
        """Query terms present in the index, each with idf * (k1 + 1) * its count.

        Ordered by document frequency descending, then term: the first (largest)
        posting list builds the score dict in one comprehension, and a fixed
        order makes float sums identical however the index was built.
        """
        df = self._df
        qtf = Counter(t for t in query_tokens if t in df)
        n_docs = len(self._slot)
        k1p1 = self.k1 + 1
        terms = sorted(qtf, key=lambda t: (-df[t], t))
        return [(t, idf(n_docs, df[t]) * k1p1 * qtf[t]) for t in terms]

    def _accumulate(self, query_tokens: Iterable[str]) -> dict[int, float]:
        """Score of every document sharing a term with the query, by slot."""
        plan = self._plan(query_tokens)
        if not plan:
            return {}
        norm = self._norms()
        posting = self._posting
        term, a = plan[0]
        # The hot loop: ~0.12 us a posting here.  A common word has a posting
        # per document, so this is what bounds a common-word query.
        acc = {d: a * tf / (tf + norm[d]) for d, tf in posting(term).items()}
        get = acc.get
        for term, a in plan[1:]:
            for d, tf in posting(term).items():
                acc[d] = get(d, 0.0) + a * tf / (tf + norm[d])
        return acc

    def _accumulate_within(self, query_tokens: Iterable[str], within: Collection[str]) -> dict[int, float]:
        """As `_accumulate`, for the documents `within` only, from their forward entries.

        The same terms in the same order with the same arithmetic, so a document's
        score is bit-for-bit the one the posting lists give.
        """
        plan = self._plan(query_tokens)
        if not plan:
            return {}
        norm = self._norms()
        docs, slot_of = self._docs, self._slot
        acc: dict[int, float] = {}
        for doc_id in within:
            d = slot_of.get(doc_id)
            doc = docs[d] if d is not None else None
            if not doc:
                continue
            score: float | None = None
            for term, a in plan:
                tf = doc.get(term)
                if tf:
                    value = a * tf / (tf + norm[d])
                    score = value if score is None else score + value
            if score is not None:
                acc[d] = score
        return acc

    # ----- persistence ------------------------------------------------------

    def save(self, fp: BinaryIO) -> None:
        """Write the whole index to `fp` in a self-describing, versioned form (see `load`)."""
        state = (
            _FORMAT,
            self.k1,
            self.b,
            dict(self.weights),
            self._ids,
            self._free,
            self._dl,
            self._flen,
            [None if d is None else dict(d) for d in self._docs],
            dict(self._df),
            self._field_total,
            [tuple(sorted(map(sorted, names))) for names in self._doc_names],
        )
        fp.write(marshal.dumps(state))

    @classmethod
    def load(cls, fp: BinaryIO) -> Index:
        """An index written by `save`; ValueError for anything else (another format, a cut file)."""
        try:
            state = marshal.loads(fp.read())
            fmt, k1, b, weights, ids, free, dl, flen, docs, df, totals, names = state
        except (EOFError, ValueError, TypeError) as exc:
            raise ValueError(f"not a saved index: {exc}") from None
        if fmt != _FORMAT:
            raise ValueError(f"saved index format {fmt!r}, this version reads {_FORMAT!r}")
        index = cls(k1, b, weights)
        index._ids, index._free, index._dl, index._flen = ids, free, dl, [tuple(f) for f in flen]
        index._docs, index._df, index._field_total = docs, Counter(df), totals
        index._slot = {doc_id: slot for slot, doc_id in enumerate(ids) if doc_id is not None}
        index._doc_names = [tuple(frozenset(n) for n in doc) for doc in names]
        for slot, doc_names in enumerate(index._doc_names):
            for word in set().union(*doc_names) if doc_names else ():
                index._name_post.setdefault(word, set()).add(slot)
        return index

    def _check_fields(self, fields: Mapping[str, object]) -> None:
        unknown = [name for name in fields if name not in self.weights]
        if unknown:
            raise ValueError(f"unknown field(s) {unknown!r}; known: {list(self.weights)!r}")

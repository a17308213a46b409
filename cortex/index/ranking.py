"""How brain_search orders notes once the meaning arm is on: the fusion rule, and names first.

Pure functions over plain numbers, so `cortex eval` can score every alternative on the
same questions. The rule in use (`fused`) was chosen on the even lines of the public eval
(questions.jsonl and reworded.jsonl) and is reported on the odd lines; DESIGN.md
("Meaning") has the table of the alternatives measured.

    score = cosine + COVERAGE * covered² + RARE * rare terms held

`covered` is the share of the query terms' IDF weight that the note holds (0..1): a
note that says the question's own words gains up to COVERAGE. `rare terms held` counts
the query terms that at most RARE_DF notes of the brain hold (names, numbers, codes),
which dense vectors blur. Plain reciprocal-rank fusion lost to this on both halves:
BM25's confident wrong hits on reworded questions pushed the right note down.
"""

from __future__ import annotations

import unicodedata
from collections import deque
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = [
    "COVERAGE",
    "RARE",
    "RARE_DF",
    "RELATED",
    "fused",
    "hybrid",
    "keep_word_ranks",
    "name_key",
    "rrf",
    "top",
]

COVERAGE = 0.3
RARE = 0.03
RARE_DF = 3
# A note only the meaning arm finds counts as a match at this cosine or more (it is
# still ranked below any note that scores higher): about the closest a passage of the
# eval brain comes to a question it does not answer, at the median.
RELATED = 0.25


def fused(cosine: np.ndarray, cover: np.ndarray, rare: np.ndarray) -> np.ndarray:
    """The rule in use, a score per passage (cover: 0..1, rare: a count)."""
    out: np.ndarray = cosine + COVERAGE * cover * cover + RARE * rare
    return out


def hybrid(
    cosine: np.ndarray, terms: Iterable[tuple[float, Sequence[int] | np.ndarray, int]]
) -> tuple[np.ndarray, np.ndarray]:
    """(`fused` scores, covered shares) of the notes whose closest passages are `cosine`, given
    each query term as (its weight, the rows of the notes holding it, how many notes hold it):
    the one ranking brain_search and brain_ask's first pack share."""
    cover = np.zeros(len(cosine))
    rare = np.zeros(len(cosine))
    terms = list(terms)
    total = sum(w for w, _, _ in terms) or 1.0
    for weight, rows, holders in terms:
        cover[rows] += weight / total
        if holders <= RARE_DF:
            rare[rows] += 1
    return fused(cosine, cover, rare), cover


def top(scores: np.ndarray, k: int, kept: np.ndarray | None = None) -> np.ndarray:
    """The rows of the `k` best `scores` (of `kept`, else of all), best first, ties by row."""
    rows = np.arange(len(scores)) if kept is None else kept
    out: np.ndarray = rows[np.lexsort((rows, -scores[rows]))][:k]
    return out


def keep_word_ranks(fused: list[str], words: list[str], unembedded: set[str]) -> list[str]:
    """`fused` (best first) with every note of `unembedded` that `words` ranks (the words-alone
    order, best first) placed no lower than its place there; the rest keep their fused order.

    While a first embed (or a burst's quiet time) leaves notes without vectors, fusion scores
    them by their words only against notes that also have a cosine: this keeps a note meaning
    has not reached from ever ranking worse than it would with meaning off. Each such note
    is due at its words-alone place; the earliest due goes first, so every one is met."""
    due = deque(p for p in words if p in unembedded)
    place = {p: i for i, p in enumerate(words)}
    rest = deque(fused + [p for p in due if p not in set(fused)])
    out: list[str] = []
    placed: set[str] = set()
    while due or rest:
        if due and due[0] in placed:
            due.popleft()
        elif rest and rest[0] in placed:
            rest.popleft()
        else:
            pick = due.popleft() if due and (place[due[0]] <= len(out) or not rest) else rest.popleft()
            out.append(pick)
            placed.add(pick)
    return out


def rrf(ranks: Iterable[int | None], k: int = 60) -> float:
    """Reciprocal-rank fusion of 0-based ranks (None: not ranked by that arm)."""
    return sum(1.0 / (k + r + 1) for r in ranks if r is not None)


def name_key(text: str) -> str:
    """How a query and a note's title, alias or file name compare for "names first":
    case, accents' composition, punctuation and runs of space or -/_ do not matter."""
    text = unicodedata.normalize("NFC", text).casefold()
    words = "".join(ch if ch.isalnum() else " " for ch in text).split()
    return " ".join(words)

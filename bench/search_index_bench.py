"""Benchmark of cortex.index.tokenize + cortex.index.bm25 on synthetic notes.

Builds its own seeded data: Markdown-ish notes of ~300 words drawn from a
Zipf-like vocabulary of 20,000 words, with a title, a path and headings.  For
each size (default 1,000, 10,000 and 50,000 notes; each in a fresh process so
peak RSS is per size) it prints:

* tokenizing time, full build time (tokenize + index),
* one changed note (``Index.add`` on an existing id: remove + tokenize + add),
  and the first rare-word query after it (which refreshes the length norms),
* search p50/p95 for rare words (in 1-5 notes), common words (in >= 50% of
  notes) and 8-word questions,
* peak RSS (``resource.getrusage``) and the RSS the index added,
* at 1,000 and 10,000: rank-bm25's BM25Okapi on the same token lists (one
  field), build time and common-word p50, against this index on the same
  lists, as ratios run in the same process.

Usage: ``python -m bench.search_index_bench [--sizes 1000,10000,50000]``
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import random
import resource
import statistics
import sys
import time

from bench.measure import run_module
from cortex.index.bm25 import Index
from cortex.index.tokenize import tokenize

__all__ = ["Notes", "baseline", "main", "run_size"]

VOCAB_SIZE = 20_000
WORDS_PER_NOTE = 300
SEED = 20250101
N_QUERIES = 200


# ----- synthetic notes ---------------------------------------------------------


class Notes:
    """Seeded generator of Markdown-ish notes over a Zipf-like vocabulary."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        rng = self.rng
        letters = "etaoinshrdlcumwfgypbvkjxqz"
        letter_w = [12, 9, 8, 8, 7, 7, 6, 6, 6, 4, 4, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1]
        vocab: set[str] = set()
        while len(vocab) < VOCAB_SIZE:
            n = min(2 + int(rng.expovariate(1 / 4)), 14)
            vocab.add("".join(rng.choices(letters, letter_w, k=n)))
        self.vocab = sorted(vocab)
        rng.shuffle(self.vocab)
        # a few technical and accented words, placed at mid ranks
        extra = ["c++", "3.11.7", "snake_case_name", "file-name.md", "café", "naïve", ".net"]
        for i, w in enumerate(extra):
            self.vocab[300 + 97 * i] = w
        # Zipf s=1.07: rank 1 is ~7% of words (like "the"); ~40 words are in
        # more than half the notes, ~half the vocabulary in 5 or fewer of 10k.
        self.cum = list(itertools.accumulate(1 / (r + 1) ** 1.07 for r in range(VOCAB_SIZE)))

    def words(self, k: int) -> list[str]:
        return self.rng.choices(self.vocab, cum_weights=self.cum, k=k)

    def note(self, i: int) -> tuple[str, dict[str, str]]:
        rng = self.rng
        title_words = self.words(rng.randint(2, 5))
        slug = "-".join(title_words[:3])
        path = f"{rng.choice(['notes', 'projects', 'log'])}/{slug}-{i}.md"
        body_words = self.words(WORDS_PER_NOTE)
        lines: list[str] = []
        headings: list[str] = []
        pos = 0
        while pos < len(body_words):
            if rng.random() < 0.25:
                h = " ".join(w.capitalize() for w in self.words(rng.randint(1, 4)))
                headings.append(h)
                lines.append(f"\n## {h}\n")
            n = rng.randint(6, 18)
            sentence = body_words[pos : pos + n]
            pos += n
            if not sentence:
                break
            j = rng.randrange(len(sentence))
            if rng.random() < 0.3:
                sentence[j] = f"**{sentence[j]}**"
            elif rng.random() < 0.2:
                sentence[j] = f"[{sentence[j]}](notes/{sentence[j]}.md)"
            elif rng.random() < 0.1:
                sentence[j] = f"`{sentence[j]}`"
            text = " ".join(sentence).capitalize()
            punct = rng.choice([".", ".", ".", ",", "?", ":", "’s.", " —", "."])
            prefix = "- " if rng.random() < 0.15 else ""
            lines.append(prefix + text + punct)
        fields = {
            "path": path.replace("/", " ").removesuffix(".md"),  # as cortex.index.corpus does
            "title": " ".join(title_words).capitalize(),
            "headings": "\n".join(headings),
            "body": f"# {' '.join(title_words)}\n" + "\n".join(lines),
        }
        return path, fields


# ----- measuring -----------------------------------------------------------------


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def timed_cpu(fn) -> tuple[float, float]:
    """(wall, CPU) seconds: on a shared machine the CPU time is the steadier figure."""
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.3f} ms"


def row(name: str, times: list[float]) -> None:
    print(f"{name:46s} p50 {ms(pct(times, 0.5))}  p95 {ms(pct(times, 0.95))}")


def run_size(n_docs: int, n_queries: int) -> None:
    gen = Notes(SEED)
    docs = [gen.note(i) for i in range(n_docs)]
    changes = [gen.note(i)[1] for i in range(n_queries)]
    questions = [" ".join(gen.words(8)) for _ in range(n_queries)]
    gc.collect()
    base_rss = rss_mb()
    print(f"\n=== {n_docs:,} notes, ~{WORDS_PER_NOTE} body words each ===")

    index = Index()
    t_build, c_build = timed_cpu(lambda: [index.add(path, fields) for path, fields in docs])
    gc.collect()
    index_rss = rss_mb() - base_rss
    df = {t: index.df(t) for t in index.terms()}  # a term's postings: the notes holding it
    n_post = sum(df.values())
    print(f"full build (add)        {ms(t_build)}  cpu {ms(c_build)}  ({len(df):,} terms, {n_post:,} postings)")

    counted: list[int] = []  # count, don't keep: holding 18M strings at 50k skews the timing
    t_tok, c_tok = timed_cpu(lambda: counted.extend(len(tokenize(v)) for _, fields in docs for v in fields.values()))
    n_terms = sum(counted)
    print(
        f"  of which tokenizing   {ms(t_tok)}  cpu {ms(c_tok)}"
        f"  ({n_terms:,} terms, {c_tok / n_terms * 1e9:.0f} ns/term cpu)"
    )

    rng = random.Random(7)
    paths = [p for p, _ in docs]
    by_df = sorted(df, key=df.__getitem__)
    rare = [t for t in by_df if t.isalpha()][:500]  # the 500 rarest words
    rare_df = (df[rare[0]], df[rare[-1]])
    common = [t for t in by_df if df[t] >= 0.5 * n_docs and t.isalpha()]
    rare_q = [rng.choice(rare) for _ in range(n_queries)]
    common_q = [rng.choice(common) for _ in range(n_queries)]
    common_df = statistics.mean(df[t] / n_docs for t in common)

    updates, first_query = [], []
    for i, fields in enumerate(changes):
        path = rng.choice(paths)
        updates.append(timed(lambda path=path, fields=fields: index.add(path, fields)))
        first_query.append(timed(lambda i=i: index.search(rare_q[i])))
    print(f"update one note         p50 {ms(pct(updates, 0.5))}  p95 {ms(pct(updates, 0.95))}  max {ms(max(updates))}")
    print(f"  + first rare query    p50 {ms(pct(first_query, 0.5))}  (refreshes length norms)")

    for name, queries in [
        (f"rare word (df {rare_df[0]}-{rare_df[1]})", rare_q),
        (f"common word ({len(common)} words, mean df {common_df:.0%})", common_q),
        ("8-word question", questions),
    ]:
        index.search(queries[0])  # norms are fresh; measure steady state
        times = [timed(lambda q=q: index.search(q)) for q in queries]
        row(f"search {name}", times)

    def allow(path: str) -> bool:
        return not path.startswith("log/")  # a scope that hides a third of the notes

    times = [timed(lambda q=q: index.search(q, allow=allow)) for q in common_q]
    row("search common word, allow= (1/3 hidden)", times)
    times = [timed(lambda q=q: index.matching(q)) for q in questions]
    row("matching(8-word question)", times)

    print(f"RSS added by the index  {index_rss:8.0f} MB   peak RSS {peak_rss_mb():8.0f} MB")

    if n_docs <= 10_000:
        baseline(docs, common_q, n_queries)


def baseline(docs, common_q: list[str], n_queries: int) -> None:
    """rank-bm25 on the same token lists (one field), against this index."""
    import numpy as np
    from rank_bm25 import BM25Okapi

    corpus = [list(itertools.chain.from_iterable(tokenize(v) for v in f.values())) for _, f in docs]
    ref_holder: list[BM25Okapi] = []
    _, t_ref = timed_cpu(lambda: ref_holder.append(BM25Okapi(corpus)))
    ref = ref_holder[0]
    ours = Index(weights={"body": 1})
    _, t_ours = timed_cpu(lambda: [ours.add_tokens(str(i), {"body": c}) for i, c in enumerate(corpus)])

    def ref_query(q: str) -> None:
        scores = ref.get_scores([q])
        np.argsort(scores)[::-1][:10]

    ref_times = [timed(lambda q=q: ref_query(q)) for q in common_q[: n_queries // 2]]
    our_times = [timed(lambda q=q: ours.search_tokens([q])) for q in common_q[: n_queries // 2]]
    r50, o50 = pct(ref_times, 0.5), pct(our_times, 0.5)
    print("baseline rank-bm25 BM25Okapi, same token lists, one field:")
    print(f"  build from tokens cpu rank-bm25 {ms(t_ref)}  ours {ms(t_ours)}  ratio {t_ours / t_ref:5.2f}x")
    print(f"  common word p50       rank-bm25 {ms(r50)}  ours {ms(o50)}  ratio {o50 / r50:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--queries", type=int, default=N_QUERIES)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_size(args.child, args.queries)
        return
    print(f"Python {sys.version.split()[0]}, seed {SEED}, {args.queries} queries per kind")
    for size in (int(s) for s in args.sizes.split(",")):
        sys.stdout.flush()
        run_module("bench.search_index_bench", "--child", str(size), "--queries", str(args.queries), check=True)


if __name__ == "__main__":
    main()

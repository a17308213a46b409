"""`cortex bench --part search`, `--part scale` and `--part long`: the lexical index.

search: the BM25 index alone, built, updated and queried in-process, with rank-bm25's
BM25Okapi on the same tokens as the baseline in the same process.
scale and long: memory and speed at a size, measured in a fresh interpreter after a first
build (`bench.fresh scale`), on short synthetic notes or long chat transcripts.
"""

from __future__ import annotations

import json
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.measure import pct, rss_mb, run_module
from bench.synthetic import make_brain, synthetic_notes

__all__ = ["bench_long", "bench_scale", "bench_search"]


def bench_scale(root: Path, n: int, long: bool = False) -> dict:
    """Memory and in-process speed at `n` notes, measured in a fresh interpreter after a first build."""
    t0 = time.perf_counter()
    print(f"making a brain of {n:,} {'long' if long else 'short'} notes ...", file=sys.stderr, flush=True)
    path = make_brain(root, n, long)
    made = time.perf_counter() - t0
    prefix = "conversations/2025-03/" if long else "projects/"
    print(f"made in {made:.0f} s; first build and queries in a fresh process ...", file=sys.stderr, flush=True)
    out = run_module("bench.fresh", "scale", str(path), prefix, stdout=subprocess.PIPE, text=True, check=True)
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return {
        "notes": n,
        "kind": "long conversations" if long else "short synthetic",
        "repo_mb": size / 2**20,
        "brain_made_s": made,
        **json.loads(out.stdout),
    }


def bench_long(root: Path, n: int) -> dict:
    """`bench_scale` on a brain of long chat transcripts (25,000 notes make ~300 MB)."""
    return bench_scale(root, n, long=True)


def bench_search(root: Path, n: int) -> dict:
    from cortex.index.builder import IndexBuilder
    from cortex.index.corpus import release_freed_memory
    from cortex.index.fields import index_fields, index_names
    from cortex.notes.note import parse_note

    files = synthetic_notes(n)
    notes = {p: parse_note(p, d.decode()) for p, d in files.items()}
    del files
    before = rss_mb()
    t0 = time.perf_counter()
    builder = IndexBuilder()
    for p, note in notes.items():
        builder.add(p, index_fields(note), index_names(note))
    index = builder.finish()
    build = time.perf_counter() - t0
    release_freed_memory()
    index_mb = rss_mb() - before
    rng = random.Random(2)
    paths = sorted(notes)
    updates = []
    for _ in range(30):
        p = rng.choice(paths)
        t0 = time.perf_counter()
        index.remove(p)
        index.add(p, index_fields(notes[p]), index_names(notes[p]))
        updates.append(time.perf_counter() - t0)
    df = sorted(((index.df(t), t) for t in index.terms()), reverse=True)
    common = [t for _, t in df[:20]]
    rare = [t for _, t in df[-20:]]  # the least frequent terms of the corpus

    def timed(queries):
        out = []
        for _ in range(5):
            for q in queries:
                t0 = time.perf_counter()
                index.search(q, k=10)
                out.append(time.perf_counter() - t0)
        return out

    common_t, rare_t = timed(common), timed(rare)
    result = {
        "notes": n,
        "index_build_s": build,
        "index_rss_mb": index_mb,
        "incremental_update_ms": statistics.median(updates) * 1000,
        "common_word_search_p50_ms": statistics.median(common_t) * 1000,
        "common_word_search_p95_ms": pct(common_t, 95) * 1000,
        "rare_word_search_p50_ms": statistics.median(rare_t) * 1000,
        "rare_word_search_p95_ms": pct(rare_t, 95) * 1000,
        "rare_word_df": min(c for c, _ in df[-20:]),
        "peak_rss_mb_process": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    try:
        from rank_bm25 import BM25Okapi  # a test extra: the reference, run here as the baseline
    except ImportError:
        BM25Okapi = None
    if n <= 10_000 and BM25Okapi is not None:
        from cortex.index.tokenize import tokenize

        docs = [tokenize(" ".join(index_fields(notes[p]).values())) for p in paths]
        t0 = time.perf_counter()
        ref = BM25Okapi(docs)
        result["rank_bm25_build_s"] = time.perf_counter() - t0
        ref_t = []
        for q in common[:5]:
            t0 = time.perf_counter()
            ref.get_top_n([q], paths, n=10)
            ref_t.append(time.perf_counter() - t0)
        result["rank_bm25_common_search_p50_ms"] = statistics.median(ref_t) * 1000
        result["speedup_common_search_vs_rank_bm25"] = (
            result["rank_bm25_common_search_p50_ms"] / result["common_word_search_p50_ms"]
        )
    return result

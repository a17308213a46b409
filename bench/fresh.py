"""Programs timed from a fresh interpreter's start, Cortex's imports included, as a cold start runs them.

Run as `python -m bench.fresh cold <brain>` or `python -m bench.fresh scale <brain> <prefix>`
(`bench.measure.run_module`). Nothing here imports Cortex at the top: each program's clock
starts before its imports.
"""

from __future__ import annotations

import json
import resource
import statistics
import sys
import time

__all__ = ["cold", "main", "scale"]


def cold(brain_path: str) -> None:
    """Prints (to first read, to first search, peak RSS KiB)."""
    t0 = time.perf_counter()
    from cortex.brain.brain import Brain
    from cortex.store.git import GitStore

    brain = Brain(GitStore(brain_path))
    brain.read("profile.md")
    t1 = time.perf_counter()
    brain.corpus.search(brain.snapshot(), "note", 10)
    t2 = time.perf_counter()
    print(t1 - t0, t2 - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def scale(brain_path: str, prefix: str) -> None:
    """Prints, as one JSON line, a first build's time and memory and the p50 of searches after it."""
    t0 = time.perf_counter()
    from bench.measure import rss_mb
    from cortex.ask.asker import Asker
    from cortex.ask.readers import OfflineReader
    from cortex.brain.brain import Brain
    from cortex.store.git import GitStore
    from cortex.tools.search import SearchRequest, search_notes
    from cortex.tools.toolset import Tools

    brain = Brain(GitStore(brain_path))
    snap = brain.snapshot()
    built = time.perf_counter() - t0
    rss = rss_mb()
    tools = Tools(brain, Asker(brain, OfflineReader()))
    index = brain.corpus.index_for(snap)
    by_df = sorted(((index.df(t), t) for t in index.terms()), reverse=True)
    common = by_df[0][1]
    # 40 words a person might use: spread over the vocabulary, common to rare
    forty = " ".join(t for _, t in by_df[10 : 10 + 40 * 97 : 97][:40])
    under = [p for p in snap.notes if p.startswith(prefix)]

    def p50(f, runs=15):
        f()
        out = []
        for _ in range(runs):
            t = time.perf_counter()
            f()
            out.append(time.perf_counter() - t)
        return statistics.median(out) * 1000

    # A first build leaves the index compact: `compacted` folds nothing and gives its one segment.
    seg = index.compacted().segment
    print(
        json.dumps(
            {
                "first_build_s": built,
                "rss_mb_after_build": rss,
                "index_arrays_mb": sum(a.nbytes for a in (seg.fptr, seg.fterm, seg.iptr, seg.idoc, seg.itf)) / 2**20,
                "vocabulary": len(seg.terms),
                "entries": len(seg.fterm),
                "prefix_notes": len(under),
                "common_word_notes": by_df[0][0],
                "common_word_search_p50_ms": p50(lambda: search_notes(tools, SearchRequest(query=common))),
                "forty_word_search_p50_ms": p50(lambda: search_notes(tools, SearchRequest(query=forty))),
                "forty_word_prefix_search_p50_ms": p50(
                    lambda: search_notes(tools, SearchRequest(query=forty, prefix=prefix))
                ),
                "forty_word_prefix_index_only_p50_ms": p50(lambda: index.search(forty, within=under)),
                "rss_mb_after_queries": rss_mb(),
            }
        )
    )


def main(argv: list[str]) -> None:
    program, *args = argv
    {"cold": cold, "scale": scale}[program](*args)


if __name__ == "__main__":
    main(sys.argv[1:])

"""`cortex bench --part meaning`: the meaning arm on a synthetic brain.

The first full embedding (niced worker processes, as `cortex serve` runs it), the vector
file's size, and brain_search's in-process p50 with the arm on against the same queries
lexical, in one run.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from bench.measure import rss_mb, timed
from bench.synthetic import make_brain

__all__ = ["bench_meaning"]


def bench_meaning(root: Path, n: int) -> dict:
    """The meaning arm on a synthetic brain: the first full embedding (niced worker
    processes, as `cortex serve` runs it), the vector file's size, and brain_search's
    in-process p50 with the arm on against the same queries lexical, in one run."""
    from cortex.app.brain_setup import make_meaning
    from cortex.app.server import assemble
    from cortex.ask.asker import Asker
    from cortex.ask.readers import OfflineReader
    from cortex.settings import Settings
    from cortex.tools.toolset import Tools

    brain_path = make_brain(root, n)
    settings = Settings.from_env({"CORTEX_HOME": str(root / "home"), "CORTEX_TOKEN": "b" * 32}, brain=brain_path)
    parts = assemble(settings)
    brain = parts.brain
    snap = brain.snapshot()
    rss_lexical = rss_mb()
    meaning = make_meaning(settings, brain)
    if not meaning.prepare():
        return {"notes": n, "meaning": meaning.reason}
    started = time.monotonic()
    meaning.catch_up(snap)
    spent = time.monotonic() - started
    size = meaning.vector_path.stat().st_size if meaning.vector_path and meaning.vector_path.exists() else 0
    words = sorted({w for note in list(snap.notes.values())[:50] for w in note.title.lower().split() if len(w) > 3})
    queries = [f"notes about {a} and {b}" for a, b in zip(words[::2], words[1::2], strict=False)][:40] or ["notes"]
    lexical = Tools(brain, Asker(brain, OfflineReader()))
    brain.meaning = None

    def median_s(fn) -> float:
        fn()
        return statistics.median(timed(fn) for _ in range(5))

    lex = [median_s(lambda q=q: lexical.search(q)) for q in queries]
    brain.meaning = meaning
    dense = [median_s(lambda q=q: lexical.search(q)) for q in queries]
    embed = [median_s(lambda q=q: meaning.embed_query(q)) for q in queries]
    return {
        "notes": n,
        "passages": meaning.store.passages,
        "first_embed_s": spent,
        "passages_per_s": meaning.store.passages / spent,
        "vector_file_mb": size / 1e6,
        "vector_file_mb_per_1000_notes": size / 1e6 / n * 1000,
        "search_lexical_p50_ms": statistics.median(lex) * 1000,
        "search_meaning_p50_ms": statistics.median(dense) * 1000,
        "search_ratio": statistics.median(dense) / statistics.median(lex),
        "query_embedding_p50_ms": statistics.median(embed) * 1000,
        "rss_lexical_mb": rss_lexical,
        "rss_meaning_mb": rss_mb(),
    }

"""`cortex bench --part ask`: `brain_ask` with the offline reader, model time excluded by construction.

The pack's assembly and the verification of the reply's quotes, timed apart from the reading,
and a whole ask (retrieval included) on the same brain.
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path

from bench.measure import pct
from bench.synthetic import make_brain

__all__ = ["bench_ask"]


def bench_ask(root: Path, n: int) -> dict:
    from cortex.ask.asker import Asker
    from cortex.ask.pack import build_pack
    from cortex.ask.quotes import check_quote
    from cortex.ask.readers import OfflineReader
    from cortex.brain.brain import Brain
    from cortex.store.git import GitStore

    path = root / f"brain-{n}.git"
    if not path.exists():
        make_brain(root, n)
    brain = Brain(GitStore(path))
    snap = brain.snapshot()
    reader = OfflineReader()
    asker = Asker(brain, reader)
    rng = random.Random(3)
    paths = sorted(p for p in snap.notes if p.startswith("notes/"))
    times_pack_verify, totals = [], []
    for _ in range(30):
        note = snap.notes[rng.choice(paths)]
        words = note.body.split()
        question = " ".join(words[10:16])
        found = brain.corpus.search(snap, question, 8)
        t0 = time.perf_counter()
        pack = build_pack(snap.sha, [snap.notes[p] for p, _ in found.hits], question, 60_000)
        t1 = time.perf_counter()
        reply = reader.read(question, pack)
        t2 = time.perf_counter()
        for tag, quote in reply.citations:
            check_quote(quote, pack.notes_by_tag.get(tag), pack.notes_by_tag, brain.today())
        t3 = time.perf_counter()
        times_pack_verify.append((t1 - t0) + (t3 - t2))
        t0 = time.perf_counter()
        asker.ask(question + f" {rng.random()}")
        totals.append(time.perf_counter() - t0)
    return {
        "notes": n,
        "pack_plus_verify_p50_ms": statistics.median(times_pack_verify) * 1000,
        "pack_plus_verify_p95_ms": pct(times_pack_verify, 95) * 1000,
        "whole_ask_offline_reader_p50_ms": statistics.median(totals) * 1000,
    }

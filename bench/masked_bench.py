"""What the guests' masked view of the index costs (`cortex/index/masked.py`), against a full build.

Builds its own brain (`bench.synthetic.synthetic_notes`), where every 10th note holds a
credential needle but no credential (a task-list, a trip to Asia: masking changes nothing)
and every 50th a credential (a feed URL's token or an API key), then times in one process:
the full build (one process, the baseline), a guest's first ask at the head (every note with
a needle masked, the stored index copied and the masked notes put in), the same after a
one-note commit (only that note masked again), a masked search against a plain one, and
the needle test `parse_note` now runs on every note against `parse_note` itself.

Usage: ``python -m bench.masked_bench [--notes 2000] [--runs 3]``
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import tracemalloc
from pathlib import Path

from bench.measure import machine, timed
from bench.synthetic import synthetic_notes

__all__ = ["bench_masked", "main", "masked_brain"]

QUERIES = ["seed feed token", "greenhouse sensor key", "task list", "note part"]


def masked_brain(n: int) -> dict[str, bytes]:
    """`n` synthetic notes, a tenth with a needle and no secret, a fiftieth with a secret."""
    files = synthetic_notes(n)
    for i, path in enumerate(sorted(files)):
        if i % 50 == 0:
            secret = f"https://seeds.example/feed?token=tulip{i:05d}" if i % 100 else f"sk-ant-api03-{i:032d}"
            files[path] += f"\nThe seed feed token is at {secret} for the greenhouse sensor.\n".encode()
        elif i % 10 == 0:
            files[path] += b"\nThe task-list for the trip to Asia sits on the desk-lamp.\n"
    return files


def bench_masked(n: int, runs: int) -> dict[str, float]:
    from cortex.index.corpus import Corpus
    from cortex.index.masked import MaskedIndexes
    from cortex.notes.note import parse_note
    from cortex.notes.redact import might_hold_secret
    from cortex.store.git import GitStore

    files = masked_brain(n)
    keys = ("build", "first", "after_commit", "plain", "masked", "mb", "snap_mb")
    out: dict[str, list[float]] = {k: [] for k in keys}
    for run in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            store = GitStore.init(Path(tmp) / "b.git", files, bare=True, message="bench")
            corpus = Corpus(store, workers=1)
            out["build"].append(timed(corpus.latest))
            snap = corpus.latest()
            plain = timed(lambda corpus=corpus, snap=snap: corpus.search(snap, QUERIES[0], 10))
            out["first"].append(
                timed(lambda corpus=corpus, snap=snap: corpus.search(snap, QUERIES[0], 10, masked=True)) - plain
            )
            if run == 0:  # what a snapshot and a masked view hold, traced (so not timed)
                tracemalloc.start()
                again = Corpus(store, workers=1)
                held = again.latest()
                out["snap_mb"].append(tracemalloc.get_traced_memory()[0] / 1e6)
                view = MaskedIndexes().index(held, lambda make, again=again, held=held: again.with_index(held, make))
                out["mb"].append(tracemalloc.get_traced_memory()[0] / 1e6 - out["snap_mb"][0])
                tracemalloc.stop()
                del again, held, view
            path = sorted(files)[50]
            store.commit(lambda view, path=path, run=run: {path: files[path] + f"\nrun {run}\n".encode()}, "one note")
            after = corpus.latest()
            plain = timed(lambda corpus=corpus, after=after: corpus.search(after, QUERIES[0], 10))
            out["after_commit"].append(
                timed(lambda corpus=corpus, after=after: corpus.search(after, QUERIES[0], 10, masked=True)) - plain
            )
            for q in QUERIES:
                out["plain"].append(timed(lambda corpus=corpus, after=after, q=q: corpus.search(after, q, 10)))
                out["masked"].append(
                    timed(lambda corpus=corpus, after=after, q=q: corpus.search(after, q, 10, masked=True))
                )
    texts = [(p, d.decode()) for p, d in files.items()]
    parse = timed(lambda: [parse_note(p, t) for p, t in texts])
    needles = timed(lambda: [might_hold_secret(t) or might_hold_secret(p) for p, t in texts])
    got = {k: statistics.median(v) for k, v in out.items()}
    got["needles_of_parse"], got["needles_of_build"] = needles / parse, needles / got["build"]
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    got = bench_masked(args.notes, args.runs)
    print(f"{args.notes:,} notes (a tenth with a needle, a fiftieth with a secret); {machine()}")
    build, first, after = got["build"], got["first"], got["after_commit"]
    print(f"full build, one process:          {build * 1000:8.1f} ms")
    print(f"a guest's first ask, masking:     {first * 1000:8.1f} ms  ({first / build:.3f}x the build)")
    print(f"  memory it holds:                {got['mb']:8.1f} MB  (the snapshot: {got['snap_mb']:.1f} MB)")
    print(f"after a one-note commit:          {after * 1000:8.1f} ms  ({after / build:.3f}x)")
    print(f"search p50, plain / masked:       {got['plain'] * 1000:8.2f} / {got['masked'] * 1000:.2f} ms")
    print(
        f"needle test in parse_note:        {got['needles_of_parse']:8.1%} of parse_note, "
        f"{got['needles_of_build']:.1%} of the build"
    )


if __name__ == "__main__":
    main()

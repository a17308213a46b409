"""`cortex bench --part store` and `--part editor`: the brain itself, in-process, without HTTP.

store: a cold start to the first read and the first search (in a fresh interpreter, imports
included), a write's reply time, and the extra cost of the first read after a commit.
editor: a hand edit saved in a working tree until the snapshot serves it.
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path

from bench.measure import pct, run_module
from bench.synthetic import make_brain, synthetic_notes

__all__ = ["bench_editor", "bench_store", "cold_start"]


def cold_start(path: Path) -> tuple[float, float, int]:
    """(to first read, to first search, peak RSS KiB) in a fresh interpreter, imports included."""
    out = run_module("bench.fresh", "cold", str(path), capture_output=True, text=True, check=True)
    a, b, rss = out.stdout.split()
    return float(a), float(b), int(rss)


def bench_store(root: Path, n: int) -> dict:
    from cortex.brain.brain import Brain
    from cortex.brain.trailers import Actor
    from cortex.store.git import GitStore

    path = make_brain(root, n)
    colds = [cold_start(path) for _ in range(3)]
    brain = Brain(GitStore(path))
    snap = brain.snapshot()
    paths = sorted(p for p in snap.notes if p.startswith("notes/"))
    rng = random.Random(1)
    actor = Actor("bench", "brain_write", "bench")
    writes, first_reads, steady_reads = [], [], []
    for i in range(60):
        target = rng.choice(paths)
        t0 = time.perf_counter()
        brain.write(target, "append", actor, content=f"bench line {i}")
        writes.append(time.perf_counter() - t0)
        # The first read after a commit pays for the snapshot's tree diff + reparse + index update.
        t0 = time.perf_counter()
        s = brain.snapshot()
        brain.corpus.search(s, "note", 10)
        first_reads.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        s = brain.snapshot()
        brain.corpus.search(s, "note", 10)
        steady_reads.append(time.perf_counter() - t0)
    extra = [f - s for f, s in zip(first_reads, steady_reads, strict=True)]
    return {
        "notes": n,
        "cold_start_first_read_s": statistics.median(c[0] for c in colds),
        "cold_start_first_search_s": statistics.median(c[1] for c in colds),
        "write_p50_ms": statistics.median(writes) * 1000,
        "write_p95_ms": pct(writes, 95) * 1000,
        "first_read_after_commit_extra_ms": statistics.median(extra) * 1000,
        "peak_rss_mb_after_first_search": max(c[2] for c in colds) / 1024,
    }


def bench_editor(root: Path, n: int, edits: int = 10, debounce_ms: int = 300) -> dict:
    """Hand edit -> served: save a file in the working tree, poll the snapshot until it shows.

    The goal is <= 1.5 s including the debounce (the poll interval, the quiet time,
    the commit and the snapshot's advance).
    """
    from cortex.brain.brain import Brain
    from cortex.brain.contents_page import render_contents_page
    from cortex.brain.watcher import Editor
    from cortex.notes.note import parse_note
    from cortex.store.git import GitStore

    path = root / f"tree-{n}"
    files = synthetic_notes(n)
    files["profile.md"] = b"---\ntitle: Profile\n---\nA synthetic owner.\n"
    files["INDEX.md"] = render_contents_page({p: parse_note(p, d.decode()) for p, d in files.items()})
    GitStore.init(path, files, bare=False, message="bench: synthetic brain")
    brain = Brain(GitStore(path))
    brain.snapshot()
    editor = Editor(brain, debounce_ms=debounce_ms).start()
    scans = []
    for _ in range(5):
        t0 = time.perf_counter()
        editor.scan()
        scans.append(time.perf_counter() - t0)
    rng = random.Random(4)
    paths = sorted(p for p in files if p.startswith("notes/"))
    latencies = []
    try:
        for i in range(edits):
            target = rng.choice(paths)
            line = f"hand edit {i} {rng.random()}"
            on_disk = path / target
            t0 = time.perf_counter()
            on_disk.write_text(on_disk.read_text() + line + "\n")
            while line not in brain.snapshot().notes[target].text:
                if time.perf_counter() - t0 > 10:
                    raise RuntimeError("a hand edit was not served within 10 s")
                time.sleep(0.005)
            latencies.append(time.perf_counter() - t0)
            time.sleep(0.2)
    finally:
        editor.stop()
    return {
        "notes": n,
        "debounce_ms": debounce_ms,
        "edits": edits,
        "hand_edit_to_served_p50_s": statistics.median(latencies),
        "hand_edit_to_served_max_s": max(latencies),
        "tree_scan_p50_ms": statistics.median(scans) * 1000,
        "goal_s": 1.5,
    }

"""The full read of a commit's notes for the corpus (`read_notes`): parsed and indexed here,
or, for a large brain, in worker processes (`work`) that each read chunks of it.

A full read of a 300 MB brain is Python parsing and tokenizing 300 MB: 42 s on one core
here (25,000 chat transcripts), 22-29 s with two workers. With more cores it is split into
chunks that worker processes parse and index; their notes and index shards come back in
order and are merged into exactly what one process would have built
(tests/index/test_build_pool.py).
"""

from __future__ import annotations

import logging
import os
import pickle
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from cortex.index.builder import IndexBuilder, Shard
from cortex.index.fields import index_note
from cortex.index.note_text import read_lazily
from cortex.notes.note import Note, decode, parse_note
from cortex.store.git import GitStore

__all__ = [
    "BUILD_CHUNK",
    "BUILD_POOL_MIN_NOTES",
    "BUILD_WORKERS_MAX",
    "WORKER_NICENESS",
    "WorkerFailed",
    "build_workers",
    "read_chunk",
    "read_notes",
    "work",
]

log = logging.getLogger(__name__)

# A full read of at least this many notes is done by worker processes, one a core
# (at most BUILD_WORKERS_MAX): below it, starting them (~0.4 s each: a Python with
# Cortex's store, notes and index modules) costs more than it saves.
BUILD_POOL_MIN_NOTES = 2_000
BUILD_WORKERS_MAX = 4
BUILD_CHUNK = 500  # notes a worker reads per chunk: ~50 chunks for a 300 MB brain
WORKER_NICENESS = 10


def build_workers(notes: int, setting: int | None = None) -> int:
    """How many processes a full read of `notes` notes uses (1: this one).

    `setting` (CORTEX_BUILD_WORKERS) fixes it; None picks by size and by the cores
    this process may run on.
    """
    if setting is not None:
        return max(1, setting)
    if notes < BUILD_POOL_MIN_NOTES:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(BUILD_WORKERS_MAX, cores))


def read_notes(
    store: GitStore,
    items: list[tuple[str, str]],
    workers: int | None = None,
    report: Callable[[int], None] = lambda done: None,
    chunk: int = BUILD_CHUNK,
) -> tuple[dict[str, Note], IndexBuilder]:
    """Parse and index the notes `items` (path, blob) name, in their order.

    `workers`: see `build_workers`; `chunk`: notes a worker reads at a time.
    `report(notes done)` is called as the read goes. Notes read here keep their
    text, notes read by workers come without it: `read_lazily` gives them a source.
    """
    count = build_workers(len(items), workers)
    if count > 1:
        try:
            return _read_in_workers(store, items, count, report, chunk)
        except (OSError, EOFError, pickle.UnpicklingError, WorkerFailed) as exc:
            # Whatever broke a worker, this process can read the same notes: slower, not wrong.
            log.warning("index build: the worker processes failed (%s); reading the notes here instead", exc)
    builder = IndexBuilder()
    notes: dict[str, Note] = {}
    for done, (path, blob) in enumerate(items, 1):
        report(done)
        note = notes[path] = parse_note(path, decode(store.blob_bytes(blob)))
        index_note(builder, note)
    return notes, builder


class WorkerFailed(Exception):
    """A build worker exited or answered out of turn."""


def _read_in_workers(
    store: GitStore, items: list[tuple[str, str]], count: int, report: Callable[[int], None], chunk: int
) -> tuple[dict[str, Note], IndexBuilder]:
    chunks = [items[i : i + chunk] for i in range(0, len(items), chunk)]
    count = min(count, len(chunks))
    # Workers are fresh interpreters running this module, not forks: this process has
    # threads (the server's, a store's lock), and a forked child inherits any lock one
    # of them held. Nor multiprocessing: its spawned children re-import the parent's
    # main script, which hangs a script without a __main__ guard.
    # The same interpreter, folder and environment as this process, so the same Cortex;
    # this one's folder only as a last resort (ahead of the standard library, a
    # site-packages folder could shadow it).
    package_root = str(Path(__file__).resolve().parents[2])
    boot = (
        f"import sys; sys.path.append({package_root!r}); from cortex.index.build_pool import work; work(sys.argv[1:])"
    )
    command = [sys.executable, "-c", boot, str(store.path), store.branch]
    procs = [subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE) for _ in range(count)]
    try:
        for i, proc in enumerate(procs):
            assert proc.stdin is not None
            # Worker i reads chunks i, i + count, ...: all it needs, sent at once, so no
            # worker ever waits on this process to write while it waits on the worker.
            pickle.dump(chunks[i::count], proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            proc.stdin.close()
        notes: dict[str, Note] = {}
        builder = IndexBuilder()
        for k, part in enumerate(chunks):
            stdout = procs[k % count].stdout
            assert stdout is not None
            chunk_notes, shard = pickle.load(stdout)
            if list(chunk_notes) != [path for path, _ in part]:
                raise WorkerFailed(f"chunk {k} came back with other notes")
            notes.update(chunk_notes)
            builder.add_shard(shard)
            report(len(notes))
        for proc in procs:
            if proc.wait() != 0:
                raise WorkerFailed(f"a worker exited with status {proc.returncode}")
        return notes, builder
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


def read_chunk(store: GitStore, items: list[tuple[str, str]]) -> tuple[dict[str, Note], Shard]:
    """A worker's part: parse and index `items`; the notes without their text (the parent reads it from Git)."""
    builder = IndexBuilder()
    notes: dict[str, Note] = {}
    for path, blob in items:
        note = notes[path] = parse_note(path, decode(store.blob_bytes(blob)))
        index_note(builder, note)
    read_lazily(store, notes, dict(items))  # what pickles is the note without text or source
    return notes, builder.shard()


def work(argv: list[str]) -> None:
    """A worker's life: open the store (argv: path, branch), read the chunks it is sent on stdin,
    send each one's notes and shard back on stdout, in order."""
    frames = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not land among the frames
    if hasattr(os, "nice"):
        # Below the server: workers on every core otherwise take the CPU from its requests
        # (started beside the server's own start, they put its first brain_read at 5.6 s
        # instead of ~2 s here at 4,000 long notes; niced, 3.8 s under the same load).
        os.nice(WORKER_NICENESS)
    store = GitStore(argv[0], argv[1])
    for chunk in pickle.load(sys.stdin.buffer):
        pickle.dump(read_chunk(store, chunk), frames, protocol=pickle.HIGHEST_PROTOCOL)
        frames.flush()

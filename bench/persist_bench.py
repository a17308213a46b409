"""`cortex bench --part persist` and `--part persist-long`: the saved index.

Its size per 1,000 notes, its save and load in-process, and a fresh `cortex serve` process's
start to its first read and first search answered over MCP, with the file and without it.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.measure import ROOT
from bench.synthetic import make_brain

__all__ = ["bench_persist", "bench_persist_long", "serve_to_first_search"]


def bench_persist(root: Path, n: int, runs: int = 3, long: bool = False) -> dict:
    """The saved index (cortex/index/saved.py): its size per 1,000 notes, save and load in-process, and a fresh
    `cortex serve` process's start to first search answer over MCP with the file and without it."""
    from cortex.brain.brain import Brain
    from cortex.index.saved import index_file
    from cortex.store.git import GitStore

    brain_path = make_brain(root, n, long)
    home = root / "home"
    store = GitStore(brain_path)
    saved = index_file(home, brain_path, store.branch, log=lambda line: None)
    brain = Brain(store, saved=saved)
    brain.snapshot()
    saves, held = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        saved.save(brain.corpus, force=True)
        saves.append(time.perf_counter() - t0)
        held.append(saved.lock_held_s)
    loads = []
    for _ in range(runs):
        again = GitStore(brain_path)
        t0 = time.perf_counter()
        Brain(again, saved=index_file(home, brain_path, again.branch, log=lambda line: None)).snapshot()
        loads.append(time.perf_counter() - t0)
    word = "chat" if long else "note"  # a tag of every transcript / in every short note's title
    with_file = [serve_to_first_search(brain_path, home, word) for _ in range(runs)]
    without = []
    for _ in range(runs):
        saved.drop()
        without.append(serve_to_first_search(brain_path, home, word))
    return {
        "notes": n,
        "index_file_mb": saved.size / 1e6,
        "index_file_mb_per_1000_notes": saved.size / 1e6 / n * 1000,
        "save_p50_s": statistics.median(saves),
        "save_lock_held_p50_s": statistics.median(held),
        "load_and_first_snapshot_p50_s": statistics.median(loads),
        "port_open_p50_s": statistics.median(o for o, _, _, _ in with_file + without),
        "start_to_first_read_with_file_p50_s": statistics.median(r for _, r, _, _ in with_file),
        "start_to_first_search_with_file_p50_s": statistics.median(s for _, _, s, _ in with_file),
        "starts_that_loaded_the_file": f"{sum(used for *_, used in with_file)} of {runs}",
        "start_to_first_read_without_file_p50_s": statistics.median(r for _, r, _, _ in without),
        "start_to_first_search_without_file_p50_s": statistics.median(s for _, _, s, _ in without),
        "goal_with_file_s": 2.0 if long else 0.5,
    }


def bench_persist_long(root: Path, n: int) -> dict:
    """`bench_persist` on the brain of long chat transcripts (25,000 notes: ~300 MB); two runs."""
    return bench_persist(root, n, runs=2, long=True)


def serve_to_first_search(brain: Path, home: Path, word: str) -> tuple[float, float, float, bool]:
    """Seconds from starting a `cortex serve` process to its port accepting a connection, to its
    first brain_read answer over MCP, and to the brain_search asked right after it (asked as soon
    as the port accepts; a request waits while the server is built, a search also for the index).
    The difference of the last two is the index's share. Last, whether the process loaded the
    saved index (its log says so)."""
    import asyncio
    import signal
    import socket

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "REDIS_"))}
    env.update(
        CORTEX_HOME=str(home),
        CORTEX_BRAIN=str(brain),
        CORTEX_TOKEN="p" * 32,
        PATH="/usr/bin:/bin",  # no private Redis: a guest door is not what is measured
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
    )

    def port_open() -> float:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return time.perf_counter() - t0
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError("cortex serve exited before opening its port") from None
                time.sleep(0.002)

    async def first_search() -> tuple[float, float]:
        url = f"http://127.0.0.1:{port}/mcp"
        while True:
            try:
                http = httpx2.AsyncClient(headers={"Authorization": "Bearer " + "p" * 32}, timeout=120)
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    await client.call_tool("brain_read", {"path": "profile.md"})  # never waits for the index
                    read = time.perf_counter() - t0
                    while True:
                        # A search waits for the index at most brain.INDEX_WAIT (30 s), then
                        # answers "still being built": asked again, as a client would.
                        found = await client.call_tool("brain_search", {"query": word})
                        said = " ".join(getattr(c, "text", "") for c in found.content)
                        if not found.is_error:
                            return read, time.perf_counter() - t0
                        if "still being built" not in said:
                            raise RuntimeError(f"brain_search failed: {said[:200]}")
            except RuntimeError:
                raise
            except Exception:  # noqa: BLE001 - the port is not open yet
                if proc.poll() is not None:
                    raise RuntimeError("cortex serve exited before answering") from None
                await asyncio.sleep(0.01)

    log = home / "serve.log"
    t0 = time.perf_counter()
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cortex.cli", "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        opened = port_open()
        read, search = asyncio.run(first_search())
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(120)  # a clean shutdown (the file is saved when the start built it)
        except subprocess.TimeoutExpired:
            proc.kill()
    said = log.read_text(errors="replace")
    if "worker processes failed" in said:
        print("bench: this start's index build workers failed (see its log); it read the notes in-process")
    return opened, read, search, "index: loaded the saved index" in said

"""brain_write over MCP against an older checkout, alternating. Prints; asserts nothing.

Why: issue 45 found writes costing twice what they did at an earlier commit, with meaning
off, so the cause was in the write path. This bench serves a fresh copy of one 1,000-note
working-tree brain (`bench/synthetic.make_brain`) from this checkout and from `--baseline`
(a checkout of the earlier commit, e.g. made with `git worktree add`), in turns, and times
through the MCP SDK's client over real HTTP:

- create: a new note a call (the first 20 calls untimed), meaning off;
- append: a line to one of 100 notes a call, meaning off;
- burst (with `--burst N`): N appends in a row with meaning on and ready before them, the
  whole burst's time and its p50, then how long until meaning covers the burst's notes.

Each case's p50 per run, then the median over runs of each side and their ratio
(this checkout / baseline).

Usage: python -m bench.write_bench --baseline DIR [--runs 3] [--calls 120] [--burst 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bench.measure import ROOT, machine, stop_process
from bench.synthetic import make_brain
from bench.vault_bench import TOKEN, serve

__all__ = ["main"]

UNTIMED = 20


def _health(port: int) -> dict:
    try:
        return httpx2.get(f"http://127.0.0.1:{port}/healthz?detail=1", headers=_auth(), timeout=5).json()
    except (httpx2.HTTPError, ValueError):
        return {}


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


def _wait(port: int, meaning: bool, limit: float = 900) -> None:
    """Until the index is built (and meaning is ready, with `meaning`), at most `limit` s."""
    start = time.monotonic()
    while time.monotonic() - start < limit:
        h = _health(port)
        if h and not h.get("starting") and h.get("index") in (None, "ready"):
            done, _, total = str(h.get("meaning_notes", "")).partition("/")
            if not meaning or (h.get("meaning") == "ready" and "meaning_waiting" not in h and done == total):
                return
        time.sleep(0.3)
    raise SystemExit("the server did not get ready")


async def _calls(port: int, arguments: list[dict]) -> tuple[float, list[float]]:
    """(seconds for all, each call's seconds) of brain_write with each of `arguments`."""
    times: list[float] = []
    async with (
        httpx2.AsyncClient(headers=_auth(), timeout=60) as http,
        Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client,
    ):
        start = time.perf_counter()
        for args in arguments:
            t = time.perf_counter()
            result = await client.call_tool("brain_write", args)
            times.append(time.perf_counter() - t)
            if result.is_error:
                raise SystemExit(f"brain_write failed: {result.content}")
        return time.perf_counter() - start, times


def _one(template: Path, code: Path, case: str, calls: int) -> dict[str, float]:
    """One fresh server from `code` on a fresh copy of `template`: the case's figures."""
    work = Path(tempfile.mkdtemp(prefix="write-bench-"))
    brain = work / "brain"
    shutil.copytree(template, brain, symlinks=True)
    meaning = case == "burst"
    proc, port, _ = serve(brain, work / "home", meaning=meaning, code=code)
    try:
        _wait(port, meaning)
        notes = sorted(p.relative_to(brain).as_posix() for p in brain.glob("notes/*.md"))[:100]
        rng = random.Random(1)
        if case == "create":
            args = [
                {"path": f"projects/new-{i:05d}.md", "mode": "create", "content": f"# New {i}\n\nline {i}\n"}
                for i in range(calls + UNTIMED)
            ]
        else:
            args = [
                {"path": rng.choice(notes), "mode": "append", "content": f"line {i} about hives"}
                for i in range(calls + (0 if meaning else UNTIMED))
            ]
        total, times = asyncio.run(_calls(port, args))
        out = {"p50_ms": statistics.median(times[0 if meaning else UNTIMED :]) * 1000}
        if meaning:
            out["burst_s"] = total
            start = time.monotonic()
            _wait(port, True, limit=300)
            out["meaning_again_s"] = time.monotonic() - start
        return out
    finally:
        stop_process(proc, interrupt=False)
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="a checkout of the earlier commit")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--calls", type=int, default=120)
    parser.add_argument("--burst", type=int, default=0, help="also a burst of N appends, meaning on")
    args = parser.parse_args()
    trees = {"baseline": args.baseline.resolve(), "this": ROOT}
    print(f"brain_write over MCP: this checkout ({ROOT}) against {trees['baseline']}, alternating")
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        template = make_brain(Path(tmp), 1000, worktree=True)
        cases = [("create", args.calls), ("append", args.calls)] + ([("burst", args.burst)] if args.burst else [])
        for case, calls in cases:
            got: dict[str, list[dict[str, float]]] = {"baseline": [], "this": []}
            for run in range(args.runs):
                order = ["baseline", "this"] if run % 2 == 0 else ["this", "baseline"]
                for side in order:
                    got[side].append(_one(template, trees[side], case, calls))
                    figures = ", ".join(f"{k} {v:.2f}" for k, v in got[side][-1].items())
                    print(f"  {case} run {run + 1} {side}: {figures}", flush=True)
            for key in got["this"][0]:
                base = statistics.median(r[key] for r in got["baseline"])
                this = statistics.median(r[key] for r in got["this"])
                print(f"{case} {key}: baseline {base:.2f}, this {this:.2f}, ratio {this / base:.2f}", flush=True)


if __name__ == "__main__":
    main()

"""`cortex bench`: figures on synthetic brains, built from a fixed seed; it prints, it asserts nothing.

Each part at each size runs in its own process (`python -m bench.parts <part> <n>`), so
peak RSS belongs to that part alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from bench.ask_bench import bench_ask
from bench.brain_bench import bench_editor, bench_store
from bench.door_bench import bench_door, bench_door_tree
from bench.index_bench import bench_long, bench_scale, bench_search
from bench.meaning_bench import bench_meaning
from bench.measure import machine, run_module
from bench.owner_git_bench import bench_owner_git
from bench.persist_bench import bench_persist, bench_persist_long

__all__ = ["PARTS", "main", "run_one"]

PARTS = {
    "store": bench_store,
    "search": bench_search,
    "ask": bench_ask,
    "editor": bench_editor,
    "door": bench_door,
    "door-tree": bench_door_tree,
    "scale": bench_scale,
    "long": bench_long,
    "persist": bench_persist,
    "persist-long": bench_persist_long,
    "meaning": bench_meaning,
    "owner-git": bench_owner_git,
}


def run_one(part: str, n: int) -> None:
    """One part at one size, printed as a JSON line. Run in its own process so peak
    RSS belongs to this part alone."""
    with tempfile.TemporaryDirectory() as tmp:
        result = PARTS[part](Path(tmp), n)
    print(
        json.dumps({"part": part, **{k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}}),
        flush=True,
    )


def main(args: argparse.Namespace) -> int:
    sizes = [int(s) for s in str(args.sizes).split(",") if s]
    heavy = ("scale", "long", "persist", "persist-long", "meaning", "door-tree", "owner-git")
    parts = [p for p in PARTS if p not in heavy] if args.part == "all" else [args.part]
    print(f"machine: {machine()}", flush=True)
    for part in parts:
        for n in sizes:
            run_module("bench.parts", part, str(n), check=True)
    return 0


if __name__ == "__main__":
    run_one(sys.argv[1], int(sys.argv[2]))

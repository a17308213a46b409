"""Figures behind SECURITY.md and docs/RELIABILITY.md. Prints; asserts nothing.

1. The guest timing oracle: a guest asks about a word that is common *outside*
   its scope, and about a word that is nowhere. Scope is applied before reading,
   so both answers are NOT IN BRAIN and identical, but document frequencies come
   from the whole brain, and the time differs. Median of alternating calls in one
   process (the offline reader, no answer cache), so the difference survives a
   noisy machine.
2. The no-loss property (tests/test_no_loss.py) run long: random sequences of
   create / replace / append / edit / move / delete / accept over nested paths.

Usage: python -m bench.security_bench [--outside 3000] [--calls 300] [--examples 300]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.measure import ROOT
from cortex.ask.asker import Asker
from cortex.ask.readers import OfflineReader
from cortex.brain.brain import Brain
from cortex.store.git import GitStore

__all__ = ["NoCache", "main", "property_run", "timing_oracle"]


class NoCache:
    def get(self, key):  # noqa: ANN001
        return None

    def set(self, key, value):  # noqa: ANN001
        pass


def words(rng: random.Random, n: int) -> str:
    return " ".join("".join(rng.choice("abcdefghijklmnop") for _ in range(rng.randint(4, 9))) for _ in range(n))


def timing_oracle(outside: int, calls: int) -> None:
    rng = random.Random(11)
    files = {f"notes/public/n{i}.md": f"# Public {i}\n\n{words(rng, 200)}\n".encode() for i in range(40)}
    for i in range(outside):
        files[f"notes/private/p{i}.md"] = f"# Private {i}\n\n{words(rng, 150)} zephyrine {words(rng, 50)}\n".encode()
    with tempfile.TemporaryDirectory() as tmp:
        brain = Brain(GitStore.init(Path(tmp) / "b.git", files, bare=True))
        asker = Asker(brain, OfflineReader(), NoCache())
        scope = ["notes/public/"]
        brain.snapshot()
        asker.ask("warm up zephyrine", scope=scope, door="guest:bench")
        times: dict[str, list[float]] = {"common outside": [], "nowhere": []}
        stamps = {}
        for _ in range(calls):
            for label, word in (("common outside", "zephyrine"), ("nowhere", "quokkaberry")):
                started = time.perf_counter()
                result = asker.ask(f"What about {word}?", scope=scope, door="guest:bench")
                times[label].append((time.perf_counter() - started) * 1000)
                stamps[label] = result.get("stamp")
        common, nowhere = statistics.median(times["common outside"]), statistics.median(times["nowhere"])
        print(f"timing oracle: {outside} notes outside a 40-note guest scope; {calls} alternating asks each")
        print(f"  word in every outside note: p50 {common:.2f} ms (stamp {stamps['common outside']})")
        print(f"  word nowhere:               p50 {nowhere:.2f} ms (stamp {stamps['nowhere']})")
        print(f"  difference {common - nowhere:+.2f} ms, ratio {common / nowhere:.2f}")


def property_run(examples: int) -> None:
    env = dict(os.environ, CORTEX_PROPERTY_EXAMPLES=str(examples))
    started = time.monotonic()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_no_loss.py::test_property_no_write_loses_a_note_it_did_not_name",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    took = time.monotonic() - started
    verdict = "held" if r.returncode == 0 else "FAILED"
    print(
        f"no-loss property: {examples} sequences of up to 12 writes each over nested paths: {verdict} in {took:.0f} s"
    )
    if r.returncode != 0:
        print(r.stdout[-3000:])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--outside", type=int, default=3000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--examples", type=int, default=300)
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    timing_oracle(args.outside, args.calls)
    property_run(args.examples)


if __name__ == "__main__":
    main()

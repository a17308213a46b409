"""What CommonMark's reading of a note costs a cold build (issue 20).

Builds its own brain (`cortex.app.bench.make_brain`: short synthetic notes, or with `--long`
the chat transcripts of 5-20 KB whose 25,000 make the ~300 MB bench brain), then times a
first build (`Brain.snapshot()` in a fresh interpreter, worker processes and all, as a
cold start runs it) alternately with this checkout's code and with a baseline checkout
(`--baseline DIR`, e.g. a `git worktree` of the commit before), `--runs` times each, and
prints the medians and their ratio. Alternating keeps a noisy shared machine's drift out
of the ratio. Also times `parse_note` alone over the same notes, in-process, both ways.

With `--quoted`, every paragraph of every note becomes a block quote ("> " in front), which
the shortcut for plain notes does not read: every note goes through the parser, the worst case.

Usage: ``python bench/reading_bench.py --baseline /tmp/base --notes 10000 [--long] [--quoted] [--runs 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BUILD = r"""
import json, sys, time
t0 = time.perf_counter()
from cortex.brain.brain import Brain
from cortex.store.git import GitStore
snap = Brain(GitStore(sys.argv[1])).snapshot()
print(json.dumps({"build_s": time.perf_counter() - t0, "notes": len(snap.notes)}))
"""

PARSE = r"""
import json, sys, time
from cortex.app.bench import conversation_notes, synthetic_notes
from cortex.notes.note import parse_note
n, long, quoted = int(sys.argv[1]), sys.argv[2] == "long", sys.argv[3] == "quoted"
files = conversation_notes(n) if long else synthetic_notes(n)
texts = [(p, d.decode()) for p, d in files.items()]
if quoted:
    import re
    texts = [(p, re.sub(r"(?m)^(?=[A-Za-z*])", "> ", t)) for p, t in texts]
t0 = time.perf_counter()
for p, t in texts:
    parse_note(p, t)
dt = time.perf_counter() - t0
print(json.dumps({"parse_s": dt, "mb": sum(len(t) for _, t in texts) / 1e6}))
"""


def run(code: str, checkout: Path, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    out = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, cwd=checkout, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _make_brain(root: Path, n: int, long: bool, quoted: bool) -> Path:
    """`cortex.app.bench.make_brain`'s brain; with `quoted`, its paragraph lines block-quoted."""
    import re

    from cortex.app.bench import conversation_notes, make_brain, synthetic_notes
    from cortex.store.git import GitStore

    if not quoted:
        return make_brain(root, n, long=long)
    files = conversation_notes(n) if long else synthetic_notes(n)
    files = {p: re.sub(rb"(?m)^(?=[A-Za-z*])", b"> ", d) for p, d in files.items()}
    files["profile.md"] = b"---\ntitle: Profile\n---\nA synthetic owner.\n"
    path = root / "brain-quoted.git"
    GitStore.init(path, files, bare=True, message="bench: every paragraph a block quote")
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, help="a checkout of the code to compare with")
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--long", action="store_true", help="chat transcripts of 5-20 KB (25,000: the 300 MB brain)")
    ap.add_argument("--quoted", action="store_true", help="every paragraph a block quote: no note takes the shortcut")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    base = Path(args.baseline).resolve()
    sys.path.insert(0, str(ROOT))
    from cortex.app.bench import machine

    print(f"machine: {machine()}", flush=True)
    kind = "long" if args.long else "short"
    quoted = "quoted" if args.quoted else "plain"
    parse = {"now": [], "baseline": []}
    sample = min(args.notes, 2_000)
    for _ in range(args.runs):
        parse["baseline"].append(run(PARSE, base, str(sample), kind, quoted)["parse_s"])
        parse["now"].append(run(PARSE, ROOT, str(sample), kind, quoted)["parse_s"])
    with tempfile.TemporaryDirectory() as tmp:
        print(f"making a brain of {args.notes:,} {kind} notes ...", file=sys.stderr, flush=True)
        brain = _make_brain(Path(tmp), args.notes, args.long, args.quoted)
        size = sum(f.stat().st_size for f in brain.rglob("*") if f.is_file()) / 2**20
        builds = {"now": [], "baseline": []}
        for _ in range(args.runs):
            builds["baseline"].append(run(BUILD, base, str(brain))["build_s"])
            builds["now"].append(run(BUILD, ROOT, str(brain))["build_s"])
    b, n = statistics.median(builds["baseline"]), statistics.median(builds["now"])
    pb, pn = statistics.median(parse["baseline"]), statistics.median(parse["now"])
    print(
        json.dumps(
            {
                "notes": args.notes,
                "kind": kind,
                "paragraphs": "block quotes" if args.quoted else "plain",
                "repo_mb": round(size, 1),
                "cold_build_s": {"baseline": round(b, 2), "now": round(n, 2), "ratio": round(n / b, 2)},
                "cold_build_runs": {k: [round(x, 2) for x in v] for k, v in builds.items()},
                f"parse_note_s_{sample}_notes": {
                    "baseline": round(pb, 3),
                    "now": round(pn, 3),
                    "ratio": round(pn / pb, 2),
                },
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

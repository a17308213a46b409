"""What CommonMark's reading of a note costs a cold build, against a baseline checkout.

Builds its own brain (`bench.synthetic.make_brain`: short synthetic notes, or with `--long`
the chat transcripts of 5-20 KB whose 25,000 make the ~300 MB bench brain), then times a
first build (`Brain.snapshot()` in a fresh interpreter, worker processes and all, as a
cold start runs it) alternately with this checkout's code and with a baseline checkout
(`--baseline DIR`, e.g. a `git worktree` of the commit before), `--runs` times each, and
prints the medians and their ratio. Alternating keeps a noisy shared machine's drift out
of the ratio. Also times `parse_note` alone over the same notes, in-process, both ways.

With `--quoted`, every paragraph of every note becomes a block quote ("> " in front), which
the shortcut for plain notes does not read: every note goes through the parser, the worst case.

Usage: ``python -m bench.reading_bench --baseline /tmp/base --notes 10000 [--long] [--quoted] [--runs 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.measure import ROOT, machine

__all__ = ["build", "main", "parse"]


def build(brain_path: str) -> None:
    """The child: a first build in this fresh interpreter, Cortex's imports included."""
    t0 = time.perf_counter()
    from cortex.brain.brain import Brain
    from cortex.store.git import GitStore

    snap = Brain(GitStore(brain_path)).snapshot()
    print(json.dumps({"build_s": time.perf_counter() - t0, "notes": len(snap.notes)}))


def parse(n: str, kind: str, quoted: str) -> None:
    """The child: `parse_note` over `n` synthetic notes (`kind` long or short, `quoted` or plain), in-process."""
    from bench.synthetic import conversation_notes, synthetic_notes
    from cortex.notes.note import parse_note

    files = conversation_notes(int(n)) if kind == "long" else synthetic_notes(int(n))
    texts = [(p, d.decode()) for p, d in files.items()]
    if quoted == "quoted":
        import re

        texts = [(p, re.sub(r"(?m)^(?=[A-Za-z*])", "> ", t)) for p, t in texts]
    t0 = time.perf_counter()
    for p, t in texts:
        parse_note(p, t)
    dt = time.perf_counter() - t0
    print(json.dumps({"parse_s": dt, "mb": sum(len(t) for _, t in texts) / 1e6}))


CHILDREN = {"build": build, "parse": parse}


def run(child: str, checkout: Path, *args: str) -> dict:
    """One child in a fresh interpreter that reads Cortex from `checkout`, and its JSON line.

    The child's module comes from this checkout (PYTHONPATH, and `-P` leaves its folder off
    sys.path), and it puts `checkout` first before importing Cortex. Its folder is `checkout`,
    so a build's worker processes (fresh interpreters there) read the same Cortex.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-P", "-m", "bench.reading_bench", "--child", child, str(checkout), *args],
        env=env,
        cwd=checkout,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _make_brain(root: Path, n: int, long: bool, quoted: bool) -> Path:
    """`bench.synthetic.make_brain`'s brain; with `quoted`, its paragraph lines block-quoted."""
    import re

    from bench.synthetic import conversation_notes, make_brain, synthetic_notes
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
    print(f"machine: {machine()}", flush=True)
    kind = "long" if args.long else "short"
    quoted = "quoted" if args.quoted else "plain"
    parse = {"now": [], "baseline": []}
    sample = min(args.notes, 2_000)
    for _ in range(args.runs):
        parse["baseline"].append(run("parse", base, str(sample), kind, quoted)["parse_s"])
        parse["now"].append(run("parse", ROOT, str(sample), kind, quoted)["parse_s"])
    with tempfile.TemporaryDirectory() as tmp:
        print(f"making a brain of {args.notes:,} {kind} notes ...", file=sys.stderr, flush=True)
        brain = _make_brain(Path(tmp), args.notes, args.long, args.quoted)
        size = sum(f.stat().st_size for f in brain.rglob("*") if f.is_file()) / 2**20
        builds = {"now": [], "baseline": []}
        for _ in range(args.runs):
            builds["baseline"].append(run("build", base, str(brain))["build_s"])
            builds["now"].append(run("build", ROOT, str(brain))["build_s"])
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
    if sys.argv[1:2] == ["--child"]:
        child, checkout, *child_args = sys.argv[2:]
        sys.path.insert(0, checkout)
        CHILDREN[child](*child_args)
    else:
        sys.exit(main())

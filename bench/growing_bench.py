"""`python -m bench.growing_bench [--notes 2500] [--newest 100] [--words 60]`: meaning served while it grows.

On a synthetic brain whose `--newest` notes were changed last (a later commit), from a
fresh process each time, as `cortex serve` runs the arm (its worker processes):

1. the first start: seconds until the newest notes are searchable by meaning, and until
   every note is;
2. an upgrade that changes no passage text (a comment added to every module that reads
   notes, the code served from a copy): passages embedded and seconds until meaning is ready.

The goal is for 25,000 notes and their 1,000 newest (within 5 minutes of the first start);
the default is that scaled down by 10, which a loaded 2-core machine runs in a minute or two.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["START", "main"]

ROOT = Path(__file__).resolve().parent.parent

# Run with the code under test first on the path; imports only Cortex.
START = """
import json, sys, time
from pathlib import Path
from cortex.brain.brain import Brain
from cortex.meaning.closeness import Meaning
from cortex.store.git import GitStore
brain_path, vectors, cache, newest = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), json.loads(sys.argv[4])
brain = Brain(GitStore(brain_path))
snap = brain.snapshot()
meaning = Meaning(None, cache, vectors, "bench")
assert meaning.prepare(), meaning.reason
want = {snap.blobs[p] for p in newest}
began = time.monotonic()
seen = {}
def progress(done, total):
    if "newest_s" not in seen and want <= set(meaning.store._rows):
        seen["newest_s"] = time.monotonic() - began
meaning.progress = progress
meaning.catch_up(snap)
ready = time.monotonic() - began
print(json.dumps({**meaning.counts, "ready_s": ready, "newest_s": seen.get("newest_s", ready),
                  "passages": meaning.store.passages, "state": meaning.state}))
"""

READING = ("meaning/note_passages.py", "meaning/embedder.py", "meaning/closeness.py", "meaning/vectors.py")


def _start(code: Path, brain: Path, vectors: Path, cache: Path, newest: list[str]) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", START, str(brain), str(vectors), str(cache), json.dumps(newest)],
        env=dict(os.environ, PYTHONPATH=str(code)),
        cwd=code,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _brain(root: Path, n: int, newest: int, words: int) -> tuple[Path, list[str]]:
    from bench.synthetic import synthetic_notes
    from cortex.store.git import GitStore

    files = synthetic_notes(n, words_per_note=words)
    path = root / "brain.git"
    store = GitStore.init(path, files, bare=True, message="bench: synthetic brain")
    later = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    store.clock = lambda: later
    recent = sorted(files)[-newest:]  # the last in path order: a newest-first arm cannot owe them to the order
    store.commit(lambda view: {p: files[p] + b"\nEdited last.\n" for p in recent}, "bench: the newest notes")
    return path, recent


def _upgraded(root: Path) -> Path:
    copy = root / "code"
    shutil.copytree(ROOT / "cortex", copy / "cortex", ignore=shutil.ignore_patterns("__pycache__"))
    reading = list(READING) + [f"notes/{p.name}" for p in (ROOT / "cortex" / "notes").glob("*.py")]
    for rel in reading:
        path = copy / "cortex" / rel
        path.write_text(path.read_text() + "\n# an upgrade that changes no passage text\n")
    return copy


def main(argv: list[str] | None = None) -> int:
    from cortex.settings import Settings

    parser = argparse.ArgumentParser(prog="python -m bench.growing_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=2500)
    parser.add_argument("--newest", type=int, default=100)
    parser.add_argument("--words", type=int, default=60, help="words a synthetic note (60: one or two passages)")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    cache = settings.model_cache or Path.home() / ".cache" / "cortex" / "models"
    with tempfile.TemporaryDirectory(prefix="cortex-growing-") as d:
        root = Path(d)
        brain, recent = _brain(root, args.notes, args.newest, args.words)
        vectors = root / "home" / "v.cvec"
        first = _start(ROOT, brain, vectors, cache, recent)
        again = _start(_upgraded(root), brain, vectors, cache, recent)
    print(f"{args.notes:,} notes ({first['passages']:,} passages), the {args.newest:,} newest changed last:")
    print(f"  first start: newest by meaning in {first['newest_s']:.1f} s, every note in {first['ready_s']:.1f} s")
    print(
        f"  an upgrade with no passage text changed: {again['embedded']:,} passages embedded, "
        f"{again['reused']:,} reused, ready in {again['ready_s']:.1f} s"
    )
    print(json.dumps({"notes": args.notes, "newest": args.newest, "first": first, "upgrade": again}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

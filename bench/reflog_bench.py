"""Writes in a working-tree brain whose branch reflog already holds PAD moves (a busy brain's
year: Git trims the reflog only in `git gc`).

Prints the append's p50, and the process's CPU a write with the watcher's polls over the next
0.3 s, a client's pace: its lost-write check reads the reflog after every write. Run from a
checkout, alternating with another through `git worktree`.

usage: python -m bench.reflog_bench NOTES PAD
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.synthetic import make_brain
from cortex.app.server import assemble
from cortex.settings import Settings
from cortex.tools.tool import Caller
from cortex.tools.write import WriteRequest, write

PACE_S = 0.3


def padded(brain: Path, pad: int) -> None:
    """The branch's reflog given `pad` moves before its last (the head to itself)."""
    for log in (brain / ".git" / "logs" / "refs" / "heads").iterdir():
        last = log.read_bytes().splitlines(keepends=True)[-1]
        _, new, rest = last.split(b" ", 2)
        log.write_bytes((new + b" " + new + b" " + rest) * pad + last)


def main(n: int, pad: int) -> None:
    root = Path(tempfile.mkdtemp())
    brain = make_brain(root, n, worktree=True)
    padded(brain, pad)
    env = {"CORTEX_HOME": str(root / "home"), "CORTEX_TOKEN": "b" * 32, "CORTEX_MEANING": "off"}
    parts = assemble(Settings.from_env(env, brain=brain))
    assert parts.editor is not None
    parts.editor.start()  # the watcher's thread, as `cortex serve` starts it
    parts.editor.first_pass.wait(30)
    who = Caller(door="bench", client="bench")

    def one(i: int) -> None:
        req = WriteRequest(path=f"notes/note-{(i * 8) % n:05d}.md", mode="append", content=f"line {i}")
        write(parts.tools, req, who)

    for i in range(5):
        one(i)
        time.sleep(PACE_S)
    walls, cpus = [], []
    for i in range(5, 45):
        cpu, wall = time.process_time(), time.perf_counter()
        one(i)
        walls.append(time.perf_counter() - wall)
        time.sleep(PACE_S)  # the watcher looks at the write meanwhile
        cpus.append(time.process_time() - cpu)
    parts.editor.stop()
    print(
        f"{n} notes, reflog of {pad} moves: append p50 {statistics.median(walls) * 1000:.1f} ms; "
        f"CPU a write with the watcher's next {PACE_S} s {statistics.median(cpus) * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))

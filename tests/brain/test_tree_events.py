"""The system's file events tell the watcher when to scan (`brain.tree_events`): an edit
stirs them, nothing else does, and a process that exits with a watch running exits cleanly."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from cortex.brain.tree_events import TreeEvents

ROOT = Path(__file__).resolve().parents[2]


def _until(cond, timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def test_an_edit_stirs_the_events_once_and_quiet_does_not(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    events = TreeEvents(tmp_path).start()
    try:
        assert _until(lambda: events.live)
        events.take()  # whatever came before the watch began
        time.sleep(0.3)
        assert not events.take()  # nothing changed
        (tmp_path / "notes" / "a.md").write_text("# A\n")
        assert _until(events.take)
        time.sleep(0.3)
        assert not events.take()  # taken once
        (tmp_path / ".git").mkdir()
        (tmp_path / ".git" / "index").write_bytes(b"x")  # Git's own files are no edit
        time.sleep(0.3)
        assert not events.take()
    finally:
        events.stop()
    assert not events.live


def test_a_process_that_exits_with_watches_running_exits_cleanly(tmp_path: Path) -> None:
    """A thread inside watchfiles' loop at interpreter exit crashed it (SIGSEGV or SIGABRT)."""
    code = (
        "import sys, time; from pathlib import Path; "
        "from cortex.brain.tree_events import TreeEvents; "
        "[TreeEvents(Path(sys.argv[1])).start() for _ in range(3)]; time.sleep(1.2)"
    )
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr.decode()[-500:]

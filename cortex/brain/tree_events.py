"""Whether anything changed in the working tree since the watcher last asked: the system's
file events (inotify on Linux, FSEvents, ReadDirectoryChangesW) through `watchfiles`.

The watcher finds hand edits by scanning the tree (`watcher.Editor.scan`), which costs in
proportion to the brain: 62 ms at 10,000 notes. Scanning every poll kept 20% of a core
busy with nothing changing; with events it scans when told, and otherwise now and then as
a safety net (a network folder or a container's bind mount may send none). This is the
only module that imports watchfiles; without it, or when the watch fails (the inotify
watch limit), `live` stays False and the watcher scans as it did before.
"""

from __future__ import annotations

import atexit
import logging
import threading
import weakref
from pathlib import Path

__all__ = ["TreeEvents"]

log = logging.getLogger(__name__)

# How long watchfiles gathers events before it hands them over: a save is one batch.
BATCH_MS = 30

# Watches still running when the interpreter exits are stopped first: a thread inside
# watchfiles' Rust loop at finalization crashed the process (SIGSEGV or SIGABRT, 5 of 5 runs).
_RUNNING: weakref.WeakSet[TreeEvents] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for events in list(_RUNNING):
        events.stop()


class TreeEvents:
    """A daemon thread that notes that the tree under `root` changed (`stirred`)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.live = False  # events are flowing: the watch started and has not failed
        self._stirred = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> TreeEvents:
        try:
            import watchfiles  # noqa: F401  (a missing package leaves scanning as it was)
        except ImportError:
            log.info("watchfiles is not installed: hand edits are found by scanning alone")
            return self
        self._thread = threading.Thread(target=self._run, name="cortex-tree-events", daemon=True)
        _RUNNING.add(self)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        _RUNNING.discard(self)
        self.live = False

    def take(self) -> bool:
        """Whether the tree changed since the last `take` (or since the watch began)."""
        if not self._stirred.is_set():
            return False
        self._stirred.clear()
        return True

    def _run(self) -> None:
        import watchfiles

        try:
            # `.git` and editors' swap files are left out by its default filter.
            for changes in watchfiles.watch(
                self.root,
                debounce=BATCH_MS,
                step=BATCH_MS,
                stop_event=self._stop,
                raise_interrupt=False,
                ignore_permission_denied=True,
                yield_on_timeout=True,
                rust_timeout=1_000,
            ):
                if changes or not self.live:  # the first batch: whatever came before the watch began
                    self._stirred.set()
                self.live = True  # an empty batch each second says the watch holds
        except Exception as exc:  # noqa: BLE001 - the watcher scans as before
            log.warning("file events for %s stopped (%s); hand edits are found by scanning alone", self.root, exc)
        self.live = False

"""Requests in flight, which the embedding yields to.

The doors say when an MCP request starts and ends (`Traffic.begin`); while any is in flight,
the arm's worker processes and its own thread start no new passage (`Traffic.hold`, called
between passages). A passage under way runs to its end (some 20 ms for a full one on one core
here), so a request waits for at most that, never for a task of many passages. A request
counts for its first `YIELD_S` only: a brain_ask waiting minutes for the client's model does
not stop the embedding for minutes.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["YIELD_S", "Traffic"]

YIELD_S = 0.25


class Traffic:
    """How many requests are in flight, as an event the worker processes can wait on."""

    def __init__(self) -> None:
        # A spawn context's event: the workers are spawned, and receive it as they start.
        self.quiet: Any = multiprocessing.get_context("spawn").Event()
        self.quiet.set()
        self._lock = threading.Lock()
        self._in_flight = 0
        self.longest = YIELD_S  # a request counts for this long at most

    def begin(self) -> Callable[[], None]:
        """A request starts; call what this returns when it ends (or after `YIELD_S`,
        whichever comes first: a second call does nothing)."""
        with self._lock:
            self._in_flight += 1
            if self._in_flight == 1:
                self.quiet.clear()
        done = [False]

        def end() -> None:
            with self._lock:
                if done[0]:
                    return
                done[0] = True
                self._in_flight -= 1
                if self._in_flight == 0:
                    self.quiet.set()

        return end

    def hold(self) -> None:
        """Wait (at most `YIELD_S`) while a request is in flight."""
        self.quiet.wait(YIELD_S)

"""How long a first embed has left: the rate it is going at now, and what is left at that rate.

Pure, no I/O: `Meaning._fill` tells a `Pace` each time a worker's task finishes, and
reads the estimate it says in `/healthz` and the status page.

Two decisions, each from a measured miss (issue 64, a real 1,062-note vault under load:
"about 4 h 14 min", then "28 min", for an embed that ended 11.5 min after the first):

- the rate counts only from the first embedding task done once every note is cut: cutting
  comes first and embeds nothing, so a rate that counted from the first task done was a
  fraction of the real one just when the passages left were first known; and one counted
  from the cut's end held the workers' first tasks whole (a first estimate 2.8 times the
  time it took); and two workers finishing together made a rate of no time at all (28 s
  said of 74 s), so an estimate waits for `LEAST_TASKS` tasks done in the window;
- it is the rate over the last `WINDOW_S` seconds (or the last `LEAST_TASKS` tasks, when they
  take longer), not since the start, so when other work takes the cores (or leaves them) the
  estimate follows within that window;
- work is counted in characters of passages, not in passages: a passage runs from a title
  alone to a 256-token section, and the 400 KB hub note's passages made a rate by count fall
  to a third (1,711 s said of 480 s).
"""

from __future__ import annotations

import collections

__all__ = ["LEAST_TASKS", "WINDOW_S", "Pace", "time_left"]

WINDOW_S = 60.0
LEAST_TASKS = 4  # tasks done in the window before it gives a rate: each is 1/LEAST_TASKS of it


def time_left(left: int | None, made: int, spent: float) -> tuple[int, float] | None:
    """(passages left, seconds they take at the rate measured: `made` in `spent` s), or None
    before the rate or the count is known (no passage embedded yet, notes still to cut)."""
    if left is None or made <= 0 or spent <= 0:
        return None
    return left, left * spent / made


class Pace:
    """The embedding rate over a sliding window, from the moments tasks finish."""

    def __init__(self, window_s: float = WINDOW_S) -> None:
        self.window_s = window_s
        self._seen: collections.deque[tuple[float, int]] = collections.deque()  # (when, work done)

    def finished(self, now: float, embedded: int, cutting: bool, embedding: bool = True) -> None:
        """A task finished at `now`, with `embedded` work done in all; `cutting`: notes
        are still being cut (the rate then waits for the cut to end); `embedding`: the task
        embedded (a cut's task starts no window)."""
        seen = self._seen
        if cutting or (not seen and not embedding):
            seen.clear()
            return
        seen.append((now, embedded))
        # Keep one moment at or before the window's start, so the window is always full, and
        # at least LEAST_TASKS tasks when they are slow (a window left short said nothing for a minute).
        while len(seen) > LEAST_TASKS + 1 and now - seen[1][0] >= self.window_s:
            seen.popleft()

    def eta(self, left: int | None) -> tuple[int, float] | None:
        """(work left, seconds left at the window's rate), or None before it has one."""
        if len(self._seen) <= LEAST_TASKS:
            return None
        (t0, e0), (t1, e1) = self._seen[0], self._seen[-1]
        return time_left(left, e1 - e0, t1 - t0)

    def seconds_left(self, left: int) -> float | None:
        """Seconds `left` work takes at the window's rate, or None before it has one."""
        found = self.eta(left)
        return None if found is None else found[1]

"""The first embed's estimate (`cortex.meaning.pace`): pure, no I/O, no model."""

from __future__ import annotations

import pytest

from cortex.meaning.pace import LEAST_TASKS, Pace


def _run(pace: Pace, moments: list[tuple[float, int, bool]]) -> None:
    for now, embedded, cutting in moments:
        pace.finished(now, embedded, cutting, embedding=not cutting)


def test_no_estimate_while_notes_are_cut_or_before_two_moments_after() -> None:
    pace = Pace()
    _run(pace, [(1.0, 0, True), (2.0, 0, True)])
    assert pace.eta(None) is None and pace.eta(100) is None
    pace.finished(3.0, 0, cutting=False, embedding=False)  # a cut's task ends after the cut is done
    for i in range(1, LEAST_TASKS + 1):
        pace.finished(3.0 + i, 48 * i, cutting=False)
    assert pace.eta(100) is None  # LEAST_TASKS moments: one task short of a rate
    pace.finished(4.0 + LEAST_TASKS, 48 * (LEAST_TASKS + 1), cutting=False)
    assert pace.eta(96) == (96, 2.0)


def test_two_workers_finishing_together_do_not_make_a_rate_of_no_time() -> None:
    """Two tasks of 48 passages each 10 s long, run side by side, end within 10 ms of each
    other: 9.6 passages a second, never 9,600."""
    pace = Pace()
    moments = []
    for k in range(1, 7):
        moments += [(10.0 * k, 96 * k - 48, False), (10.0 * k + 0.01, 96 * k, False)]
    said = 0
    for n in range(1, len(moments) + 1):
        pace = Pace()
        _run(pace, moments[:n])
        found = pace.eta(960)
        if found is not None:
            said += 1
            assert 50.0 <= found[1] <= 200.0, (n, found)  # 100 s at the true rate
    assert said >= len(moments) - LEAST_TASKS  # an estimate once LEAST_TASKS tasks are in


def test_the_time_spent_cutting_is_not_counted_as_slow_embedding() -> None:
    """The miss measured on a real vault: 40 s of cutting, then 10 passages a second. A rate
    from the first task done said 1,000 passages would take over an hour; it takes 100 s."""
    pace = Pace()
    _run(pace, [(t, 0, True) for t in range(1, 41)])
    _run(pace, [(40.0 + t, 10 * t, False) for t in range(0, 11)])
    left, seconds = pace.eta(1_000) or (0, 0.0)
    assert left == 1_000 and seconds == pytest.approx(100.0)


def test_the_rate_follows_a_change_of_load_within_the_window() -> None:
    """10 a second for 5 minutes, then 4 a second once other work takes a core: a window's
    worth later, the estimate is at the new rate, not the average since the start."""
    pace = Pace(window_s=60.0)
    _run(pace, [(float(t), 10 * t, False) for t in range(0, 301)])
    base = 3_000
    _run(pace, [(300.0 + t, base + 4 * t, False) for t in range(1, 61)])
    _, seconds = pace.eta(400) or (0, 0.0)
    assert seconds == pytest.approx(100.0, rel=0.05)  # 400 at 4 a second


def test_a_new_cut_starts_the_rate_again() -> None:
    pace = Pace()
    _run(pace, [(10.0 * k, 100 * k, False) for k in range(LEAST_TASKS + 1)])
    assert pace.eta(50) is not None
    pace.finished(11.0, 100, cutting=True)  # a newer head's notes are being cut
    assert pace.eta(50) is None


def test_slow_tasks_keep_an_estimate() -> None:
    """Under load a task took 20 s: a window of a minute held too few of them and the estimate
    went blank for a minute; the window keeps the last LEAST_TASKS tasks however long they took."""
    pace = Pace(window_s=60.0)
    for k in range(12):
        pace.finished(20.0 * k, 1_000 * k, cutting=False)
        if k > LEAST_TASKS:
            assert pace.seconds_left(1_000) == pytest.approx(20.0), k

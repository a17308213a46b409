"""Run every hypothesis property test in tests/ under many seeds, one seed after another.

A property test must hold on every seed, and `make test` draws one seed a run: a generator
that can build an input the code rightly reads otherwise (a list child indented under `1. `
by two columns) shows up on someone's fresh clone, not here. This runs only the tests
decorated with `@given` (a pytest plugin, this module, deselects the rest of their modules)
under `--hypothesis-seed` 0, 1, ... in turn, serially, and prints which seeds failed which
tests (a failing seed's output is kept in the temp folder). Not part of CI: it costs a
full property run per seed. The no-loss state machine (tests/test_no_loss.py) is left out:
it is no `@given` test, and it draws the same examples whatever the seed (`derandomize`).

Usage: ``python3 ops/seed_sweep.py [--seeds 20] [--first 0] [-- extra pytest arguments]``
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["main", "property_modules", "pytest_collection_modifyitems", "pytest_configure"]

ROOT = Path(__file__).resolve().parent.parent
LOGS = Path(tempfile.gettempdir())  # a failing seed's whole pytest output: cortex-seed-sweep-<seed>.log
_FAILED = re.compile(r"^FAILED (\S+)", re.MULTILINE)


def property_modules(tests: Path = ROOT / "tests") -> list[str]:
    """The test modules holding a `@given` test, relative to the checkout."""
    return sorted(
        str(p.relative_to(ROOT)) for p in tests.rglob("test_*.py") if "@given" in p.read_text(encoding="utf-8")
    )


def pytest_configure(config) -> None:
    """As a pytest plugin: no example database, so a seed's failure is that seed's own and
    not one an earlier seed saved and every later seed replays."""
    from hypothesis import settings

    settings.register_profile("seed-sweep", database=None)
    settings.load_profile("seed-sweep")


def pytest_collection_modifyitems(config, items) -> None:
    """As a pytest plugin (`-p seed_sweep`): keep only the hypothesis tests."""
    from hypothesis import is_hypothesis_test

    keep = [item for item in items if is_hypothesis_test(getattr(item, "obj", None))]
    dropped = [item for item in items if item not in keep]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20, help="how many seeds (default 20)")
    ap.add_argument("--first", type=int, default=0, help="the first seed (default 0)")
    ap.add_argument("pytest_args", nargs="*", help="passed to pytest after --")
    args = ap.parse_args(argv)
    modules = property_modules()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "ops"), str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    failures: dict[int, list[str]] = {}
    for seed in range(args.first, args.first + args.seeds):
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "seed_sweep"]
        cmd += [f"--hypothesis-seed={seed}", *args.pytest_args, *modules]
        run = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        tail = (run.stdout.strip().splitlines() or ["(no output)"])[-1]
        failed = _FAILED.findall(run.stdout)
        if run.returncode not in (0, 1) and not failed:
            failed = [f"pytest exited {run.returncode}"]
        if failed:
            failures[seed] = failed
            (LOGS / f"cortex-seed-sweep-{seed}.log").write_text(run.stdout + run.stderr, encoding="utf-8")
        print(f"seed {seed}: {tail}", flush=True)
    print(f"{len(failures)} of {args.seeds} seeds failed" + (":" if failures else ""))
    for seed, failed in failures.items():
        print(f"  seed {seed} ({LOGS / f'cortex-seed-sweep-{seed}.log'}): " + ", ".join(failed))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

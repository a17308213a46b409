"""How true the first embed's estimate is: `meaning_eta_s` against when meaning was ready. Prints; asserts nothing.

One fresh start of `cortex serve` with the meaning arm on (the converted model already in its
cache, no saved vectors) over `vault_bench`'s vault; `/healthz?detail=1` is read every 2 s. With
--load, a busy process takes one core from the second minute to the fourth (other work sharing
the cores). Once meaning is ready, each estimate said from the embed's first minute on is
compared with what happened (the seconds from then to ready): the share within 25% while at
least 30 s were left, the median error and the worst, and the first estimate said.

With --against DIR: the same, the code in DIR (a checkout of an earlier commit) and this
checkout's alternating, each on a fresh start.

Usage: python -m bench.eta_bench [--notes 1000] [--short] [--load] [--runs 1] [--against DIR]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

from bench.vault_bench import TOKEN, serve, vault

__all__ = ["main", "one_embed", "score"]

LOAD_FROM_S, LOAD_TO_S = 60.0, 180.0  # --load: one core busy over this stretch of the embed
WITHIN = 0.25
LEAST_LEFT_S = 30.0


def one_embed(repo: Path, home: Path, code: Path | None, load: bool) -> list[tuple[float, float | None, str]]:
    """(seconds since start, the estimate said or None, the arm's state), every 2 s until ready."""
    proc, port, _ = serve(repo, home, meaning=True, code=code)
    started, hog, seen = time.monotonic(), None, []
    try:
        while True:
            now = time.monotonic() - started
            if load and hog is None and now >= LOAD_FROM_S:
                hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            if hog is not None and now >= LOAD_TO_S and hog.poll() is None:
                hog.kill()
            h = httpx2.get(
                f"http://127.0.0.1:{port}/healthz?detail=1", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10
            ).json()
            if "error" in h:
                raise SystemExit(f"/healthz: {h['error']}")
            seen.append((now, h.get("meaning_eta_s"), str(h.get("meaning"))))
            if h.get("meaning") in ("ready", "unavailable") or now > 3600:
                return seen
            time.sleep(2.0)
    finally:
        if hog is not None and hog.poll() is None:
            hog.kill()
        proc.terminate()
        proc.wait(timeout=60)


def score(seen: list[tuple[float, float | None, str]]) -> dict[str, float]:
    """The estimates said from the embed's first minute on against the time that was left."""
    ready = seen[-1][0]
    began = next((t for t, _, state in seen if state == "embedding"), seen[0][0])
    said = [(t, eta) for t, eta, _ in seen if eta is not None]
    late = [(t, eta) for t, eta in said if t >= began + 60 and ready - t >= LEAST_LEFT_S]
    judged = [abs(eta - (ready - t)) / (ready - t) for t, eta in late]
    return {
        "ready_s": ready,
        "first_estimate_s": said[0][1] if said else float("nan"),
        "first_estimate_at_s": said[0][0] if said else float("nan"),
        "judged": float(len(judged)),
        "within_25pct": sum(e <= WITHIN for e in judged) / len(judged) if judged else float("nan"),
        "median_error": statistics.median(judged) if judged else float("nan"),
        "worst_error": max(judged) if judged else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--short", action="store_true", help="every note about 800 bytes")
    parser.add_argument("--load", action="store_true", help="a busy process on one core from 60 s to 180 s")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--against", type=Path, help="a checkout of earlier code, run alternating with this one")
    parser.add_argument("--trace", action="store_true", help="print each estimate against the time that was left")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = vault(Path(tmp), args.notes, short=args.short)
        sides: list[tuple[str, Path | None]] = [("this", None)]
        if args.against:
            sides = [("baseline", args.against.resolve()), ("this", None)]
        for i in range(args.runs):
            for label, code in sides if i % 2 == 0 else sides[::-1]:
                seen = one_embed(repo, Path(tmp) / f"home-{label}-{i}", code, args.load)
                if args.trace:
                    for t, eta, state in seen:
                        print(f"  {label} {t:6.1f} s  said {eta}  left {seen[-1][0] - t:6.1f}  {state}")
                got = score(seen)
                print(f"{label} run {i + 1}: " + ", ".join(f"{k} {v:.2f}" for k, v in got.items()), flush=True)


if __name__ == "__main__":
    main()

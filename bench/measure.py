"""What the benches measure with: percentiles, resident memory, the machine, and a fresh
interpreter that runs a bench module from this checkout.

Every figure is a median (p50) or a percentile over repeated runs, and where a baseline
makes sense it runs in the same process, so the ratio survives a noisy machine.
"""

from __future__ import annotations

import contextlib
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["ROOT", "machine", "pct", "rss_mb", "run_module", "start_module", "timed"]

ROOT = Path(__file__).resolve().parent.parent  # the checkout: bench/ and cortex/ side by side


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def rss_mb() -> float:
    """This process's resident memory now (not its peak), in MB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def timed(fn: Callable[[], object]) -> float:
    """Seconds one call of `fn` takes."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def machine() -> str:
    cpu = ""
    with contextlib.suppress(OSError, StopIteration), open("/proc/cpuinfo") as info:
        cpu = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    return f"{platform.machine()}, {os.cpu_count()} cores, {cpu}, Python {platform.python_version()}"


def run_module(module: str, *args: str, **kwargs) -> subprocess.CompletedProcess:
    """`python -m <module> <args>` in a fresh interpreter that finds this checkout's bench/
    (and so its cortex/) first, wherever it is started from; keyword arguments go to subprocess.run."""
    return subprocess.run([sys.executable, "-m", module, *args], env=_env(kwargs), **kwargs)


def start_module(module: str, *args: str, **kwargs) -> subprocess.Popen:
    """`run_module`, started and not waited for."""
    return subprocess.Popen([sys.executable, "-m", module, *args], env=_env(kwargs), **kwargs)


def stop_process(proc: subprocess.Popen, *, interrupt: bool = True, wait: float = 20) -> None:
    """Stops a server the bench started: SIGINT (Ctrl-C, so it shuts down as a person's would)
    or SIGTERM, then a kill if it has not gone within `wait` seconds."""
    if proc.poll() is not None:
        return
    if interrupt:
        proc.send_signal(signal.SIGINT)
    else:
        proc.terminate()
    try:
        proc.wait(wait)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def _env(kwargs: dict) -> dict[str, str]:
    env = dict(kwargs.pop("env", None) or os.environ)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(ROOT)]
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *paths])
    return env

"""Shared parts of the reliability suites: the figures file, raw JSON-RPC
over HTTP, a real `cortex serve` subprocess, and small-filesystem mounts.

Everything here talks only to 127.0.0.1 and bounds every wait.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "docs" / "RELIABILITY.md"
IN_CI = os.environ.get("CI") == "true"

# -- docs/RELIABILITY.md ------------------------------------------------------
#
# Each suite owns one section. A run rewrites only the sections it measured and
# keeps the others as the last run left them; sections always appear in this
# order, so the file's shape never depends on which tests ran or in what order.

SECTIONS = ["load", "crash", "redis", "disk", "auth", "logs", "bad-input", "fuzz", "no-loss"]
HEADER = """# Reliability figures

Written by the reliability suite (`tests/test_reliability.py`, `tests/test_bad_input.py`,
`tests/http/test_auth_matrix.py`, `tests/test_fuzz.py`) when asked: the figures are measured, not
typed, and change a little from run to run. Each section says when it was last measured and on
what machine. Do not edit by hand; run `CORTEX_FIGURES=1 python -m pytest tests/test_reliability.py
tests/test_bad_input.py tests/http/test_auth_matrix.py tests/test_fuzz.py` to refresh it (a plain test
run leaves this file alone), and `python -m bench.security_bench` for the no-loss section.
"""


def machine() -> str:
    import platform

    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def write_section(name: str, title: str, body: str) -> None:
    """Replace section `name` of docs/RELIABILITY.md with `body` (Markdown), when CORTEX_FIGURES=1.

    Only on request: a plain `make test` must not dirty a tracked file.
    """
    assert name in SECTIONS, name
    if os.environ.get("CORTEX_FIGURES") != "1":
        return
    FIGURES.parent.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    block = (
        f"<!-- section: {name} -->\n## {title}\n\n_Measured {stamp} on {machine()}._\n\n"
        f"{body.strip()}\n<!-- end: {name} -->\n"
    )
    with open(FIGURES.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two pytest processes may finish at once
        old = FIGURES.read_text(encoding="utf-8") if FIGURES.exists() else ""
        found = dict(re.findall(r"(?ms)^<!-- section: ([\w-]+) -->\n(.*?<!-- end: \1 -->\n)", old))
        found = {k: f"<!-- section: {k} -->\n{v}" for k, v in found.items()}
        found[name] = block
        text = HEADER + "".join("\n" + found[s] for s in SECTIONS if s in found)
        tmp = FIGURES.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, FIGURES)
    FIGURES.with_suffix(".lock").unlink(missing_ok=True)


def md_cell(value: Any, limit: int = 110) -> str:
    """A table cell: one line, pipes escaped, long values cut (and say so)."""
    text = " ".join(str(value).split())
    if len(text) > limit:
        text = text[:limit] + f"… ({len(text)} chars)"
    return text.replace("|", "\\|").replace("`", "'")


def percentiles(values: list[float]) -> dict[str, float]:
    """p50/p95/p99/max in milliseconds (nearest-rank, so a figure is a measured value)."""
    if not values:
        return {"n": 0, "p50": 0.0, "p95": 0.0, "p99": 0.0, "max": 0.0}
    s = sorted(values)

    def rank(p: float) -> float:
        return s[min(len(s) - 1, max(0, int(round(p / 100 * len(s) + 0.5)) - 1))] * 1000

    return {
        "n": len(s),
        "p50": rank(50),
        "p95": rank(95),
        "p99": rank(99),
        "max": s[-1] * 1000,
        "mean": statistics.fmean(s) * 1000,
    }


# -- raw JSON-RPC over HTTP ----------------------------------------------------

ACCEPT = "application/json, text/event-stream"
PROTOCOL = "2025-06-18"


def initialize_body(rid: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "reliability-probe", "version": "1"},
        },
    }


def rpc_messages(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a reply, whether sent as JSON or as server-sent events."""
    ctype = response.headers.get("content-type", "")
    if "text/event-stream" in ctype:
        out = []
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                with contextlib.suppress(ValueError):
                    out.append(json.loads(line[5:]))
        return out
    if "application/json" in ctype:
        with contextlib.suppress(ValueError):
            data = response.json()
            return data if isinstance(data, list) else [data]
    return []


class RawSession:
    """An MCP session driven by hand, so a test can send bytes no SDK client would."""

    def __init__(self, url: str, headers: dict[str, str] | None = None, timeout: float = 60):
        self.url = url
        self.http = httpx.Client(timeout=timeout, headers=headers or {})
        self.session: str | None = None
        self.next_id = 10

    def __enter__(self) -> RawSession:
        r = self.http.post(self.url, json=initialize_body(), headers={"Accept": ACCEPT})
        assert r.status_code == 200, (r.status_code, r.text[:200])
        self.session = r.headers["mcp-session-id"]
        n = self.http.post(
            self.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self.headers()
        )
        assert n.status_code in (200, 202), n.status_code
        return self

    def __exit__(self, *exc: Any) -> None:
        self.http.close()

    def headers(self, **extra: str) -> dict[str, str]:
        h = {"Accept": ACCEPT, "Content-Type": "application/json", "mcp-protocol-version": PROTOCOL}
        if self.session:
            h["mcp-session-id"] = self.session
        h.update(extra)
        return h

    def post(self, body: bytes | dict | list | str, headers: dict[str, str] | None = None) -> httpx.Response:
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode("utf-8", "surrogatepass")
        return self.http.post(self.url, content=body, headers=headers if headers is not None else self.headers())

    def call(self, tool: str, args: dict[str, Any]) -> tuple[httpx.Response, dict[str, Any] | None]:
        self.next_id += 1
        body = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": "tools/call",
            "params": {"name": tool, "arguments": args},
        }
        r = self.post(body)
        msgs = [m for m in rpc_messages(r) if m.get("id") == self.next_id]
        return r, (msgs[0] if msgs else None)


def describe(
    response: httpx.Response | None, message: dict[str, Any] | None = None, error: BaseException | None = None
) -> str:
    """What came back, in one line: status, then the JSON-RPC error or the tool's verdict."""
    if error is not None:
        return f"no HTTP reply: {type(error).__name__}"
    assert response is not None
    msgs = [message] if message is not None else rpc_messages(response)
    if not msgs:
        return f"{response.status_code} {' '.join(response.text.split())}"
    m = msgs[-1]
    if "error" in m:
        return f"{response.status_code} JSON-RPC error {m['error'].get('code')}: {m['error'].get('message')}"
    result = m.get("result") or {}
    text = "".join(p.get("text", "") for p in result.get("content") or [] if isinstance(p, dict))
    if not text and result:  # not a tool call (e.g. tools/list): name what came back
        text = "result with " + ", ".join(f"{k} ({len(v)})" if isinstance(v, list) else k for k, v in result.items())
    if result.get("isError"):
        return f"{response.status_code} tool error: {text}"
    return f"{response.status_code} ok: {text}"


# -- a real `cortex serve` -------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ready_health(url: str, proc: subprocess.Popen, timeout: float = 30, index: bool = True) -> dict[str, Any] | None:
    """/healthz once the server behind the open port is built (`cortex serve` opens its port
    first and says "starting" until then) and, with `index`, its search index too; None
    when the process died or time ran out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            body = httpx.get(f"{url}/healthz", timeout=1).json()
            if not body.get("starting") and (not index or body.get("index") == "ready"):
                return body
        except httpx.HTTPError:
            if proc.poll() is not None:
                return None
        time.sleep(0.05)
    return None


def run_cortex(
    *args: str, env: dict[str, str], timeout: float = 60, check: bool = False
) -> subprocess.CompletedProcess:
    """`python -m cortex.cli ARGS` from this checkout, run to its end (text output captured), in
    this environment without its CORTEX_ and REDIS_ settings, plus `env`."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "REDIS_"))}
    return subprocess.run(
        [sys.executable, "-m", "cortex.cli", *args],
        env={**base, **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=check,
    )


class ServeProcess:
    """`python -m cortex.cli serve` as a child process, with its output kept in a file.

    PATH holds only `bindir` (empty by default): with no redis-server to find, the
    server disables the guest door instead of starting a private Redis that a
    `kill -9` of the server would orphan. Pass REDIS_URL in `env` for guests.
    """

    def __init__(
        self, home: Path, brain: Path | None, env: dict[str, str], bindir: Path, log: Path, port: int | None = None
    ):
        self.home, self.brain, self.bindir, self.log = home, brain, bindir, log
        self.port = port or free_port()
        self.env = dict(env)
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30) -> dict[str, Any]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "REDIS_"))}
        # The meaning arm is off unless a test asks (its model's memory and its workers' CPU
        # are no part of what these suites measure; tests/meaning/test_meaning.py serves with it on).
        env.update(PATH=str(self.bindir), CORTEX_HOME=str(self.home), PYTHONUNBUFFERED="1", CORTEX_MEANING="off")
        if self.brain is not None:
            env["CORTEX_BRAIN"] = str(self.brain)
        env.update(self.env)
        self.bindir.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as out:  # the server keeps its own copy of the descriptor
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "cortex.cli", "serve", "--port", str(self.port)],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
            )
        health = ready_health(self.url, self.proc, timeout)
        if health is not None:
            return health
        self.kill()
        raise AssertionError(f"cortex serve did not start:\n{self.output()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL: no cleanup, no flush, exactly a crash."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
        self.proc = None

    def stop(self) -> None:
        """SIGINT, as Ctrl-C: uvicorn shuts down cleanly."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        self.proc = None

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


# -- small file systems -------------------------------------------------------------


def need_mounts() -> None:
    """Full-disk and read-only tests mount a tmpfs, which needs root (as CI runs here)."""
    if os.geteuid() == 0:
        return
    if IN_CI:
        pytest.fail("the full-disk and read-only tests mount a tmpfs and need root; CI must run them as root")
    pytest.skip("mounting a tmpfs needs root")


@contextlib.contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    """A fresh tmpfs of `size` at `where`, unmounted (lazily if busy) afterwards."""
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(where)], capture_output=True)
        if subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(where)], capture_output=True)


def remount(where: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(where)], check=True)


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=check,
        env={"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(repo), "GIT_CONFIG_NOSYSTEM": "1"},
    )


def first_parent_chain(repo: Path) -> list[tuple[str, list[str]]]:
    """(sha, parents) of every commit on main, newest first."""
    out = git(repo, "rev-list", "--parents", "main").stdout.split("\n")
    return [(line.split()[0], line.split()[1:]) for line in out if line.strip()]


def assert_linear(repo: Path) -> list[str]:
    """History is a single chain: no merges, each commit's parent is the one before it."""
    chain = first_parent_chain(repo)
    for (sha, parents), (older, _) in zip(chain, chain[1:], strict=False):
        assert parents == [older], f"{sha} has parents {parents}, expected [{older}]"
    assert chain[-1][1] == [], "the first commit has no parent"
    return [sha for sha, _ in chain]


def fsck(repo: Path) -> str:
    """`git fsck --strict`; fails the test on any problem, returns its output."""
    r = git(repo, "fsck", "--strict", "--no-dangling", "--no-progress", check=False)
    assert r.returncode == 0 and not r.stdout.strip(), f"git fsck: {r.returncode}\n{r.stdout}\n{r.stderr}"
    return (r.stdout + r.stderr).strip()


def post_initialize(url: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(url, json=initialize_body(), headers={"Accept": ACCEPT, **headers})

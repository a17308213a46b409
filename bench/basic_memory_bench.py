"""Cortex beside basic-memory 0.24.1, in one run, on the same notes, through the same MCP client.

Why: the project's goals are stated against basic-memory (writes at least 40x faster, a
unique-word search 15x, a common-word search 8x), so the two are measured side by side on
this machine rather than against figures someone else reported.

What it does:
1. Installs basic-memory 0.24.1 into a virtual environment of its own (Python >= 3.12 is
   needed; this checkout runs on 3.11), kept in a cache folder outside the repository and
   reused on later runs.
2. Builds the synthetic brain of `bench/synthetic.py` (fixed seed, ~300 words a note) as a
   git working tree served by `cortex serve` with meaning on (timing starts only once
   /healthz says meaning is ready), and copies the same Markdown files into a folder that
   basic-memory indexes as its project (timing starts only once its log says the project
   index is complete).
3. Serves basic-memory with its own `basic-memory mcp --transport streamable-http` on a
   loopback port, so both servers are timed through this interpreter's MCP SDK client over
   real HTTP, one session each.
4. Times a write (a new note each call: `brain_write` create / `write_note`), a search for a
   word that occurs in one note, and a search for the word that occurs in nearly every note,
   in blocks of 10 calls that alternate between the servers (which one goes first alternates
   too). Between blocks it waits until neither server's process tree is using CPU and Cortex's
   /healthz has no written notes left to embed (at most 30 s), so one server's background work
   (Cortex embedding the notes just written, basic-memory writing and re-indexing the file it
   accepted) is not billed to the other. Prints the p50 of each, the ratio basic-memory /
   Cortex beside the goal, the load average at start and end, and how much CPU the rest of
   the machine used while the bench timed. It cannot keep other work away: before timing it
   waits (at most --quiet-wait seconds) for a lull in it, and then reports what it got.

basic-memory 0.24.1 has no setting that turns its semantic search off ("always on" in its
source); it falls back to its full-text search (SQLite FTS5) when SQLite cannot load the
sqlite-vec extension, and says so in its log. The bench reads that line and prints it. Either
way it sets basic-memory's own `default_search_type` to "text", runs it with HF_HUB_OFFLINE=1
and an empty model cache, so it never tries to fetch an embedding model (none can be reached).

Only loopback addresses; every loop is bounded; both servers are stopped at the end.

Usage: python -m bench.basic_memory_bench [--notes 1000] [--calls 200] [--quiet-wait 600]
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from bench.door_bench import DoorServer
from bench.measure import ROOT, machine, pct, stop_process
from bench.synthetic import make_brain, vocabulary

__all__ = ["main"]

BM_VERSION = "0.24.1"
BM_PROJECT = "bench"
BLOCK = 10  # calls per block; the servers alternate block by block
WARMUP = 10  # untimed calls of each case on each server first
GOALS = {"write": 40.0, "unique": 15.0, "common": 8.0}  # basic-memory p50 / Cortex p50, at least
LABELS = {"write": "write (a new note)", "unique": "unique-word search", "common": "common-word search"}
TOKEN = "c" * 32
WORD = re.compile(r"[a-z]+")


# --- basic-memory's own environment ------------------------------------------------------


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "cortex-bench" / f"basic-memory-{BM_VERSION}"


def find_python312() -> str:
    """A Python >= 3.12: `python3.12` on PATH if it runs, else one of pyenv's versions."""
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    candidates = [
        shutil.which("python3.12"),
        *sorted(glob.glob(str(pyenv / "versions" / "3.1[2-9]*" / "bin" / "python3"))),
    ]
    for candidate in filter(None, candidates):
        probe = subprocess.run(
            [candidate, "-c", "import sys; sys.exit(sys.version_info < (3, 12))"], capture_output=True, timeout=30
        )
        if probe.returncode == 0:
            return candidate
    raise SystemExit("basic-memory needs Python >= 3.12 and none was found (python3.12, pyenv versions)")


def ensure_basic_memory(venv: Path) -> Path:
    """The `basic-memory` command of a venv holding basic-memory BM_VERSION, made on first use.

    A stamp file marks a finished install; a venv without it (an interrupted install) is made anew."""
    stamp = venv / "installed.ok"
    command = venv / "bin" / "basic-memory"
    if stamp.exists() and command.exists():
        return command
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    log = venv.parent / f"{venv.name}-install.log"
    print(f"installing basic-memory {BM_VERSION} into {venv} (pip's output in {log}) ...", flush=True)
    subprocess.run([find_python312(), "-m", "venv", str(venv)], check=True, timeout=300)
    with open(log, "wb") as out:
        done = subprocess.run(
            [str(venv / "bin" / "pip"), "install", "--quiet", f"basic-memory=={BM_VERSION}"],
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=1800,
        )
    if done.returncode != 0 or not command.exists():
        raise SystemExit(f"pip could not install basic-memory {BM_VERSION}; see {log}")
    stamp.write_text(BM_VERSION + "\n")
    return command


def venv_facts(venv: Path) -> dict[str, str]:
    code = (
        "import importlib.metadata as m, platform; "
        "print(platform.python_version()); print(m.version('basic-memory')); print(m.version('fastmcp'))"
    )
    lines = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    return {"python": lines[0], "basic_memory": lines[1], "fastmcp": lines[2]}


# --- the notes ---------------------------------------------------------------------------


def copy_notes(brain: Path, folder: Path) -> dict[str, str]:
    """Every Markdown file of the brain's working tree, copied to `folder`: {relative path: text}."""
    notes: dict[str, str] = {}
    for path in sorted(brain.rglob("*.md")):
        rel = path.relative_to(brain)
        if rel.parts[0].startswith("."):
            continue
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        notes[rel.as_posix()] = path.read_text(encoding="utf-8")
    return notes


def document_frequency(notes: dict[str, str]) -> dict[str, set[str]]:
    """Each lower-case word: the notes it occurs in."""
    where: dict[str, set[str]] = {}
    for path, text in notes.items():
        for word in set(WORD.findall(text.lower())):
            where.setdefault(word, set()).add(path)
    return where


def unique_word(where: dict[str, set[str]]) -> tuple[str, str]:
    """A word of 6+ letters in exactly one note (not INDEX.md) that begins no other word (a
    prefix search would find those too), and that note: the first such, in sorted order."""
    words = sorted(where)
    for k, word in enumerate(words):
        if len(word) < 6 or len(where[word]) != 1 or "INDEX.md" in where[word]:
            continue
        if k + 1 < len(words) and words[k + 1].startswith(word):
            continue
        return word, next(iter(where[word]))
    raise SystemExit("no word occurs in exactly one note")


def write_content(i: int, words: list[str]) -> str:
    """The i-th bench note: a heading, a marker and 60 words of the synthetic vocabulary."""
    rng = random.Random(i)
    body = " ".join(rng.choices(words, k=60))
    return f"# Bench write {i}\n\nA new note written by the bench, number {i}, marker bw{i:05d}x.\n\n{body}\n"


# --- the servers -------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class BasicMemoryServer:
    """`basic-memory mcp --transport streamable-http` on a loopback port, its state in `home`."""

    def __init__(self, command: Path, home: Path, notes: Path):
        self.port = free_port()
        self.config_dir = home / "config"
        self.config_dir.mkdir(parents=True)
        config = {
            "projects": {BM_PROJECT: {"path": str(notes)}},
            "default_project": BM_PROJECT,
            "default_search_type": "text",  # its own setting: search_notes' mode when none is given
            "auto_update": False,
            "cloud_promo_opt_out": True,
        }
        (self.config_dir / "config.json").write_text(json.dumps(config, indent=2))
        (home / "model-cache").mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("BASIC_MEMORY_", "FASTMCP_", "CORTEX_"))}
        env.update(
            HOME=str(home),
            BASIC_MEMORY_CONFIG_DIR=str(self.config_dir),
            BASIC_MEMORY_NO_PROMOS="1",  # no usage events
            BASIC_MEMORY_AUTO_UPDATE="false",
            FASTMCP_CHECK_FOR_UPDATES="off",
            FASTMCP_SHOW_SERVER_BANNER="false",
            HF_HUB_OFFLINE="1",
            FASTEMBED_CACHE_PATH=str(home / "model-cache"),
        )
        self.out = home / "stdout.log"
        self.log = self.config_dir / "basic-memory.log"
        argv = [str(command), "mcp", "--transport", "streamable-http", "--host", "127.0.0.1", "--port", str(self.port)]
        with open(self.out, "wb") as out:
            self.proc = subprocess.Popen(
                argv, env=env, cwd=home, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )

    def wait_indexed(self, timeout: float = 1800) -> None:
        """Until the port answers and the log says the project's first index is complete."""
        deadline = time.monotonic() + timeout
        done = f"Background project index completed for project: {BM_PROJECT}"
        while time.monotonic() < deadline and self.proc.poll() is None:
            if done in self.log_text() and self._port_open():
                return
            time.sleep(0.2)
        tail = self.out.read_text(errors="replace")[-1500:] + self.log_text()[-1500:]
        self.stop()
        raise SystemExit(f"basic-memory did not finish indexing:\n{tail}")

    def _port_open(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def index_seconds(self) -> float:
        """Seconds from its first log line to the one saying the project's first index is complete."""
        from datetime import datetime

        lines = [line for line in self.log_text().splitlines() if line[:4].isdigit()]
        done = [line for line in lines if "Background project index completed" in line]
        if not lines or not done:
            return float("nan")
        at = [datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S.%f") for line in (lines[0], done[0])]
        return (at[1] - at[0]).total_seconds()

    def semantic_state(self) -> str:
        """What its log says about semantic search ("disabled: <why>", or on)."""
        found = re.search(r"Semantic search disabled: ([^\n]*?)(?: Common cause|\n|$)", self.log_text())
        return f"off ({found.group(1).strip()})" if found else "ON"

    def stop(self) -> None:
        stop_process(self.proc)


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by a process and all its descendants, living or
    reaped (a reaped child's time is in its parent's cutime and cstime)."""
    total, todo = 0.0, [pid]
    tick = os.sysconf("SC_CLK_TCK")
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15]) / tick
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


def cortex_catching_up(port: int) -> bool:
    """Whether Cortex's /healthz says its meaning arm has written notes still to embed (it waits
    for a burst of writes to pause before it embeds them)."""
    import httpx2

    url = f"http://127.0.0.1:{port}/healthz?detail=1"
    health = httpx2.get(url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10).json()
    return "meaning_waiting" in health or health.get("meaning") in ("starting", "embedding")


@dataclass
class Settle:
    """Waits, between blocks, until both servers are idle: their process trees under 10 ms of
    CPU in each of QUIET consecutive 200 ms windows (longer than Cortex's 0.5 s wait for a burst
    of writes to pause), and Cortex not catching up on meaning; at most `limit` seconds."""

    pids: list[int]
    busy: Callable[[], bool]
    limit: float = 30.0
    waits: list[float] = field(default_factory=list)
    timeouts: int = 0

    QUIET = 3

    async def __call__(self) -> None:
        start, quiet = time.monotonic(), 0
        while time.monotonic() - start < self.limit:
            before = sum(tree_cpu(p) for p in self.pids)
            await asyncio.sleep(0.2)
            idle = sum(tree_cpu(p) for p in self.pids) - before < 0.01
            quiet = quiet + 1 if idle else 0
            if quiet >= self.QUIET and not self.busy():
                self.waits.append(time.monotonic() - start)
                return
        self.timeouts += 1
        self.waits.append(time.monotonic() - start)


def machine_busy() -> float:
    """CPU seconds the whole machine has been busy since boot (all cores; /proc/stat)."""
    user, nice, system, idle, iowait, irq, softirq = (int(x) for x in Path("/proc/stat").read_text().split()[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


@dataclass
class Others:
    """CPU the rest of the machine used while the bench timed: all busy CPU less the two
    servers' process trees and this process."""

    pids: list[int]
    seconds: float = 0.0
    wall: float = 0.0

    def _now(self) -> tuple[float, float]:
        own = sum(os.times()[:2])
        return machine_busy() - sum(tree_cpu(p) for p in self.pids) - own, time.monotonic()

    def start(self) -> None:
        self._start = self._now()

    def stop(self) -> None:
        end = self._now()
        self.seconds, self.wall = max(0.0, end[0] - self._start[0]), end[1] - self._start[1]  # ticks round


def wait_for_quiet(pids: list[int], limit: float) -> tuple[bool, float]:
    """Waits until the rest of the machine (all but the two servers and this process) has used
    under 10% of one core in each of three consecutive 5 s windows, at most `limit` seconds:
    (quiet, seconds waited). The bench cannot stop other work; it can wait for a lull."""
    others, start, quiet = Others(pids), time.monotonic(), 0
    while time.monotonic() - start < limit and quiet < 3:
        others.start()
        time.sleep(5)
        others.stop()
        quiet = quiet + 1 if others.seconds < 0.1 * others.wall else 0
    return quiet >= 3, time.monotonic() - start


# --- the calls ---------------------------------------------------------------------------

Args = Callable[[int], dict]


@dataclass
class Side:
    """One server as the bench drives it: its client session and each case's tool and arguments."""

    name: str
    client: object
    cases: dict[str, tuple[str, Args]]
    landed: Callable[[int, object], bool]  # is the i-th write's file on disk when its reply arrives
    times: dict[str, list[float]] = field(default_factory=dict)
    on_disk: int = 0

    async def call(self, case: str, i: int) -> object:
        name, args = self.cases[case]
        reply = await self.client.call_tool(name, args(i))  # type: ignore[attr-defined]
        if reply.is_error:
            raise SystemExit(f"{self.name} {name} failed: {str(reply.content)[:500]}")
        return reply


def reply_text(reply: object) -> str:
    return "\n".join(getattr(c, "text", "") for c in getattr(reply, "content", []))


def cortex_side(client: object, brain: Path, unique: str, common: str, words: list[str]) -> Side:
    def path(i: int) -> str:
        return f"bench-writes/bench-write-{i:05d}.md"

    cases: dict[str, tuple[str, Args]] = {
        "write": ("brain_write", lambda i: {"path": path(i), "mode": "create", "content": write_content(i, words)}),
        "unique": ("brain_search", lambda i: {"query": unique}),
        "common": ("brain_search", lambda i: {"query": common}),
    }
    return Side("Cortex", client, cases, lambda i, reply: (brain / path(i)).exists())


def basic_memory_side(client: object, folder: Path, unique: str, common: str, words: list[str]) -> Side:
    def landed(i: int, reply: object) -> bool:
        found = re.search(r"^file_path: (.+)$", reply_text(reply), re.M)
        return bool(found) and (folder / found.group(1).strip()).exists()

    cases: dict[str, tuple[str, Args]] = {
        "write": (
            "write_note",
            lambda i: {
                "title": f"Bench write {i:05d}",
                "directory": "bench-writes",
                "content": write_content(i, words),
            },
        ),
        "unique": ("search_notes", lambda i: {"query": unique}),
        "common": ("search_notes", lambda i: {"query": common}),
    }
    return Side("basic-memory", client, cases, landed)


def hits(side: Side, reply: object) -> list[str]:
    """The notes a search reply names, best first (paths for Cortex, permalinks for basic-memory)."""
    if side.name == "Cortex":
        return [h["path"] for h in (getattr(reply, "structured_content", None) or {}).get("hits", [])]
    return re.findall(r"^- permalink: (.+)$", reply_text(reply), re.M)


async def warm_and_check(sides: list[Side], unique_path: str) -> dict[str, str]:
    """Untimed calls of every case on each server (warm caches, connections open; writes at
    numbers 90000+, not timed), and each unique-word search must name the one note that has it."""
    seen = {}
    for side in sides:
        for i in range(WARMUP):
            for case in ("unique", "common", "write"):
                reply = await side.call(case, 90_000 + i)
                if case == "unique":
                    found = hits(side, reply)
                    if not found or Path(unique_path).stem not in found[0]:
                        raise SystemExit(f"{side.name}'s unique-word search did not find {unique_path} first: {found}")
                    seen[f"{side.name} unique"] = f"{len(found)} hit(s), first {found[0]}"
                if case == "common":
                    seen[f"{side.name} common"] = f"{len(hits(side, reply))} hit(s) on the first page"
    return seen


async def timed_case(case: str, sides: list[Side], calls: int, settle: Settle) -> None:
    """`calls` timed calls of `case` on each server, in blocks of BLOCK, the servers alternating."""
    for r, start in enumerate(range(0, calls, BLOCK)):
        for side in sides if r % 2 == 0 else sides[::-1]:
            for i in range(start, min(start + BLOCK, calls)):
                t0 = time.perf_counter()
                reply = await side.call(case, i)
                side.times.setdefault(case, []).append(time.perf_counter() - t0)
                if case == "write":
                    side.on_disk += side.landed(i, reply)
            await settle()


async def run_timed(
    urls: dict[str, str],
    build: dict[str, Callable[[object], Side]],
    unique_path: str,
    calls: int,
    settle: Settle,
    others: Others,
) -> tuple[list[Side], dict[str, str]]:
    """One MCP SDK session per server over HTTP; warm up, then the searches, then the writes
    (so both searches run over the same notes)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    def session(name: str) -> Client:
        headers = {"Authorization": f"Bearer {TOKEN}"} if name == "Cortex" else {}
        return Client(streamable_http_client(urls[name], http_client=httpx2.AsyncClient(headers=headers, timeout=120)))

    async with session("Cortex") as cortex, session("basic-memory") as bm:
        sides = [build["Cortex"](cortex), build["basic-memory"](bm)]
        facts = await warm_and_check(sides, unique_path)
        facts["protocol"] = f"Cortex {cortex.protocol_version}, basic-memory {bm.protocol_version}"
        await settle()
        settle.waits.clear()
        others.start()
        for case in ("unique", "common", "write"):
            await timed_case(case, sides, calls, settle)
        others.stop()
    return sides, facts


# --- the report --------------------------------------------------------------------------


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def cortex_revision() -> str:
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return rev.stdout.strip() or "?"


@dataclass
class Corpus:
    """The notes both servers get, and the words searched for."""

    brain: Path  # Cortex's git working tree
    folder: Path  # basic-memory's project folder: the same Markdown files
    unique: str
    unique_path: str
    common: str
    common_notes: int
    words: list[str]  # what the bench's writes are made of


def make_corpus(root: Path, n: int) -> Corpus:
    brain = make_brain(root, n, worktree=True)
    folder = root / "basic-memory-notes"
    notes = copy_notes(brain, folder)
    where = document_frequency(notes)
    unique, unique_path = unique_word(where)
    common = vocabulary(random.Random(7))[0]  # Zipf rank 1 in bench/synthetic.py: in nearly every note
    words = [w for w in vocabulary(random.Random(7)) if w != unique]
    size = sum(len(t.encode()) for t in notes.values())
    print(f"notes: {len(notes):,} Markdown files ({size / 1e6:.1f} MB), the same files for both")
    corpus = Corpus(brain, folder, unique, unique_path, common, len(where.get(common, ())), words)
    print(
        f"unique word: {unique!r} (in 1 note, {unique_path}); "
        f"common word: {common!r} (in {corpus.common_notes:,} notes)"
    )
    return corpus


def print_servers(cortex: DoorServer, cortex_s: float, bm: BasicMemoryServer, facts: dict) -> None:
    print(
        f"Cortex: `cortex serve` (Python {sys.version.split()[0]}) on 127.0.0.1:{cortex.port}, "
        f"git working tree, meaning {cortex.health.get('meaning', '?')} after {cortex_s:.0f} s"
    )
    print(
        f"basic-memory {facts['basic_memory']}: `basic-memory mcp --transport streamable-http` "
        f"(Python {facts['python']}, FastMCP {facts['fastmcp']}) on 127.0.0.1:{bm.port}, "
        f"its first index of the folder took {bm.index_seconds():.0f} s"
    )
    state = bm.semantic_state()
    print(f"  basic-memory semantic search: {state}")
    print(
        "  (0.24.1 has no setting that turns it off; the bench sets its default_search_type to 'text' and runs it "
        "with HF_HUB_OFFLINE=1 and an empty model cache: no model is fetched"
        + ("; its searches are its full-text search, SQLite FTS5)" if state.startswith("off") else ")")
    )
    print(f"client: this interpreter's MCP SDK {metadata.version('mcp')}, Streamable HTTP, one session per server")


def print_results(sides: list[Side], seen: dict[str, str], settle: Settle, others: Others, calls: int) -> None:
    print(f"protocol versions: {seen.pop('protocol')}")
    for key, value in seen.items():
        print(f"  {key}-word search: {value}")
    print(
        f"between blocks: waited {statistics.median(settle.waits):.2f} s (median; max {max(settle.waits):.2f}) "
        f"for both servers to go idle; {settle.timeouts} of {len(settle.waits)} waits gave up at {settle.limit:.0f} s"
    )
    print(
        f"other processes used {others.seconds:.0f} CPU-seconds over the {others.wall:.0f} s of timing "
        f"({100 * others.seconds / max(others.wall, 1e-9):.0f}% of one core; the machine has {os.cpu_count()})"
    )
    cortex, bm = sides
    print(f"\n{'':22s} {'Cortex p50 (p90)':>20s} {'basic-memory p50 (p90)':>24s} {'ratio':>8s} {'goal':>7s}  met")
    for case in ("write", "unique", "common"):
        a, b = cortex.times[case], bm.times[case]
        ratio = statistics.median(b) / statistics.median(a)
        cells = [f"{statistics.median(x) * 1000:.1f} ({pct(x, 90) * 1000:.1f}) ms" for x in (a, b)]
        met = "yes" if ratio >= GOALS[case] else "no"
        print(f"{LABELS[case]:22s} {cells[0]:>20s} {cells[1]:>24s} {ratio:7.1f}x {GOALS[case]:6.0f}x  {met}")
    print(f"({calls} timed calls of each case on each server; ratio = basic-memory p50 / Cortex p50, goal: at least)")
    for side in sides:
        print(f"  {side.name}: {side.on_disk} of {calls} written notes were in its folder when the reply arrived")


def bench(root: Path, command: Path, facts: dict, n: int, calls: int, quiet_limit: float) -> None:
    """Both servers up and ready, the timed calls, both stopped; then the figures."""
    corpus = make_corpus(root, n)
    bm = BasicMemoryServer(command, root / "bm-home", corpus.folder)
    cortex = None
    try:
        started = time.monotonic()
        cortex = DoorServer(root, corpus.brain, TOKEN, meaning=True)  # back once meaning is ready (or unavailable)
        cortex_s = time.monotonic() - started
        bm.wait_indexed()
        print_servers(cortex, cortex_s, bm, facts)
        pids = [cortex.proc.pid, bm.proc.pid]
        port = cortex.port
        settle, others = Settle(pids, lambda: cortex_catching_up(port)), Others(pids)
        build = {
            "Cortex": lambda c: cortex_side(c, corpus.brain, corpus.unique, corpus.common, corpus.words),
            "basic-memory": lambda c: basic_memory_side(c, corpus.folder, corpus.unique, corpus.common, corpus.words),
        }
        urls = {"Cortex": f"http://127.0.0.1:{cortex.port}/mcp", "basic-memory": f"http://127.0.0.1:{bm.port}/mcp"}
        quiet, waited = wait_for_quiet(pids, quiet_limit)
        lull = "quiet" if quiet else f"still busy when the wait gave up at {quiet_limit:.0f} s"
        print(f"the rest of the machine: {lull} (waited {waited:.0f} s for a lull)")
        print(f"load average when timing began: {load()}")
        print(f"timing: {WARMUP} untimed calls of each case, then blocks of {BLOCK} alternating ...", flush=True)
        sides, seen = asyncio.run(run_timed(urls, build, corpus.unique_path, calls, settle, others))
    finally:
        if cortex is not None:
            cortex.stop()
        bm.stop()
    print_results(sides, seen, settle, others, calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=200, help="timed calls of each case on each server")
    parser.add_argument(
        "--quiet-wait", type=float, default=600, help="seconds to wait at most for other CPU work to pause first"
    )
    args = parser.parse_args()
    print(f"Cortex ({cortex_revision()}) beside basic-memory {BM_VERSION}: {args.notes:,} synthetic notes")
    print(f"machine: {machine()}")
    print(f"load average at start: {load()}", flush=True)
    command = ensure_basic_memory(cache_dir())
    facts = venv_facts(cache_dir())
    with tempfile.TemporaryDirectory(prefix="bm-bench-") as tmp:
        bench(Path(tmp), command, facts, args.notes, args.calls, args.quiet_wait)
    print(f"load average at end: {load()}")


if __name__ == "__main__":
    main()

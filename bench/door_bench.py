"""`cortex bench --part door`: what an MCP call costs beyond the tool's own work, as a client sees it.

`cortex serve` runs in its own process (`DoorServer`); this process drives one session of
the SDK's client over real HTTP and times the same Tools method in-process in alternating
blocks, then a legacy-handshake client and a bare HTTP client, then a batch sampled by py-spy.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import measure
from bench.measure import pct
from bench.spy import spy_report
from bench.synthetic import make_brain, vocabulary

__all__ = ["BLOCK", "DoorServer", "NoopServer", "bench_door", "bench_door_tree"]


def bench_door_tree(root: Path, n: int, calls: int = 60) -> dict:
    """Each call over MCP divided by the MCP SDK's own no-op tool call (`bench/noop_door.py`),
    from the same client in the same run, on a working-tree brain (the watcher on) with
    meaning ready; and a write followed by a search that must find it. Only the server
    writes to the brain (two writers on one working tree would fight, `brain/lock.py`)."""
    import asyncio

    brain = make_brain(root, n, worktree=True)
    token, word = "b" * 32, _door_common_word()
    server = DoorServer(root, brain, token, meaning=True)
    noop = None
    try:
        noop = NoopServer(root)
        url, noop_url = f"http://127.0.0.1:{server.port}/mcp", f"http://127.0.0.1:{noop.port}/mcp"
        timed = asyncio.run(_door_session(url, token, word, calls, server, {}, noop_url))
    finally:
        server.stop()
        if noop is not None:
            noop.stop()
    base = statistics.median(timed["noop"])
    result: dict = {"notes": n, "calls": calls, "word": word, "meaning": server.health.get("meaning", "?")}
    result["noop_over_mcp_p50_ms"] = base * 1000
    for tool in ("read", "search", "write", "write_then_search_write", "write_then_search_search"):
        result[f"{tool}_over_mcp_p50_ms"] = statistics.median(timed[tool]) * 1000
        result[f"{tool}_x_noop"] = statistics.median(timed[tool]) / base
    return result


def bench_door(root: Path, n: int, calls: int = 200) -> dict:
    """What an MCP call costs beyond the tool's own work, measured as a client sees it.

    The server is `cortex serve` in its own process; this process drives one session
    with the SDK's client over real HTTP (an in-process server shared the client's GIL
    and event loop: it measured 52 ms a call where a separate client saw 8.8 ms). The
    tool's own work is the same tool function called here, in-process, on the same brain,
    in blocks that alternate with the MCP calls so both see the same machine load.
    Door cost = round trip p50 - tool work p50 (and p90). CPU per call, the server's (from
    /proc) less the tool's own (this process), is the door's cost whatever else the machine
    is running; the wall-clock figures move with a shared machine's load. Then
    the server is sampled with py-spy over a separate batch (sampling slows it, so
    those calls are not timed) and the profile is printed.
    """
    import asyncio

    from cortex.app.server import assemble
    from cortex.settings import Settings
    from cortex.tools.read import ReadRequest, read
    from cortex.tools.search import SearchRequest, search_notes
    from cortex.tools.tool import Caller
    from cortex.tools.write import WriteRequest, write

    brain = make_brain(root, n)
    token = "b" * 32
    word = _door_common_word()
    parts = assemble(Settings.from_env({"CORTEX_HOME": str(root / "home-direct"), "CORTEX_TOKEN": token}, brain=brain))
    search_notes(parts.tools, SearchRequest(query=word))  # the index built, the word's postings warm, as in the server
    bench = Caller(door="bench", client="bench")
    direct = {
        "search": lambda i: search_notes(parts.tools, SearchRequest(query=word)),
        "read": lambda i: read(parts.tools, ReadRequest(path="profile.md"), bench),
        "write": lambda i: write(
            parts.tools, WriteRequest(path=_door_write_path(i), mode="append", content=f"direct line {i}"), bench
        ),
    }
    server = DoorServer(root, brain, token)
    try:
        url = f"http://127.0.0.1:{server.port}/mcp"
        timed = asyncio.run(_door_session(url, token, word, calls, server, direct))
    finally:
        server.stop()
    print(f"door, {n:,} notes: the server's side of {server.profiled_calls} MCP calls", flush=True)
    print(server.profile, flush=True)
    result: dict = {"notes": n, "calls": calls, "word": word}
    for tool in ("search", "write", "read"):
        over, own = timed[tool], timed[f"{tool}_direct"]
        result[f"{tool}_over_mcp_p50_ms"] = statistics.median(over) * 1000
        result[f"{tool}_over_mcp_p90_ms"] = pct(over, 90) * 1000
        result[f"{tool}_tool_work_p50_ms"] = statistics.median(own) * 1000
        result[f"{tool}_tool_work_p90_ms"] = pct(own, 90) * 1000
        result[f"{tool}_door_cost_p50_ms"] = (statistics.median(over) - statistics.median(own)) * 1000
        result[f"{tool}_door_cost_p90_ms"] = (pct(over, 90) - pct(own, 90)) * 1000
        # CPU, not wall time: what the server spent per call beside what the tool alone spends,
        # whatever else the machine was running (the wall figures move with its load).
        result[f"{tool}_server_cpu_per_call_ms"] = timed[f"{tool}_server_cpu"][0] * 1000
        result[f"{tool}_tool_cpu_per_call_ms"] = timed[f"{tool}_tool_cpu"][0] * 1000
        result[f"{tool}_door_cpu_per_call_ms"] = (timed[f"{tool}_server_cpu"][0] - timed[f"{tool}_tool_cpu"][0]) * 1000
    result["read_over_mcp_legacy_client_p50_ms"] = statistics.median(timed["read_legacy"]) * 1000
    result["read_raw_http_p50_ms"] = statistics.median(timed["read_raw"]) * 1000
    result["read_raw_http_server_cpu_per_call_ms"] = timed["read_raw_server_cpu"][0] * 1000
    return result


def _door_write_path(i: int) -> str:
    """The note the i-th bench write appends to: one of the synthetic notes/ notes."""
    return f"notes/note-{(i * 8) % 4000:05d}.md"  # index i*8 lands in FOLDERS[0], "notes"


def _door_common_word(seed: int = 7) -> str:
    """The synthetic brain's most common word (the common-word case): its vocabulary is drawn
    with Zipf weights 1/(rank+1) in sorted order, so the first word is in nearly every note."""
    return vocabulary(random.Random(seed))[0]


class DoorServer:
    """`python -m cortex.cli serve` on a free port, its output in a file; py-spy at hand."""

    def __init__(self, root: Path, brain: Path, token: str, meaning: bool = False):
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        bindir = root / "bin"  # PATH without redis-server: no private Redis, the guest door off
        bindir.mkdir(exist_ok=True)
        self.meaning = meaning
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "REDIS_"))}
        env.update(
            PATH=str(bindir),
            CORTEX_HOME=str(root / "home"),
            CORTEX_BRAIN=str(brain),
            CORTEX_TOKEN=token,
            PYTHONUNBUFFERED="1",
        )
        if meaning:
            env["CORTEX_MEANING"] = "on"
        self.log = root / "serve.log"
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "cortex.cli", "serve", "--port", str(self.port)],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        self.health: dict = {}
        self.profile = "(not profiled)"
        self.profiled_calls = "no"
        self._spy: subprocess.Popen | None = None
        self._wait_ready()

    def _wait_ready(self, timeout: float = 900) -> None:
        import httpx2

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                health = httpx2.get(f"http://127.0.0.1:{self.port}/healthz", timeout=1).json()
                embedded = not self.meaning or health.get("meaning") in ("ready", "unavailable")
                if not health.get("starting") and embedded:
                    self.health = health
                    return
            except Exception:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("cortex serve did not start:\n" + self.log.read_text(errors="replace")[-2000:])

    def spy_start(self) -> None:
        """py-spy samples the server: the thread holding the GIL, at 500 Hz (waits left out)."""
        self._raw = self.log.with_name("spy.txt")
        self._spy = subprocess.Popen(
            ["py-spy", "record", "-p", str(self.proc.pid), "-r", "500", "--gil", "-f", "raw", "-o", str(self._raw)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(1.0)  # py-spy attaches

    def spy_stop(self, calls: str) -> None:
        import signal

        if self._spy is None:
            return
        self._spy.send_signal(signal.SIGINT)
        try:
            self._spy.wait(30)
        except subprocess.TimeoutExpired:
            self._spy.kill()
        self._spy = None
        self.profiled_calls = calls
        if self._raw.exists():
            self.profile = spy_report(self._raw.read_text())

    def cpu(self) -> float:
        """Seconds of CPU the server process has used, all threads (user + system)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        measure.stop_process(self.proc)


class NoopServer:
    """`python -m bench.noop_door` on a free port: the SDK's own no-op tool, the baseline."""

    def __init__(self, root: Path):
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.log = root / "noop.log"
        with open(self.log, "wb") as out:
            self.proc = measure.start_module("bench.noop_door", str(self.port), stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("the no-op server did not start:\n" + self.log.read_text(errors="replace")[-2000:])

    def stop(self) -> None:
        measure.stop_process(self.proc, interrupt=False)


BLOCK = 10  # calls per block; MCP and in-process blocks alternate


async def _door_session(
    url: str, token: str, word: str, calls: int, server: DoorServer, direct: dict, noop_url: str | None = None
) -> dict:
    """One SDK client session: search, read and write, each call timed, in blocks that
    alternate with the same tool called in-process; then a legacy-handshake client and a
    bare HTTP client on brain_read; then a profiled batch."""
    import asyncio

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    def session(mode: str = "auto") -> Client:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
        return Client(streamable_http_client(url, http_client=http), mode=mode)

    out: dict[str, list[float]] = {}
    cases = {
        "search": ("brain_search", lambda i: {"query": word}),
        "read": ("brain_read", lambda i: {"path": "profile.md"}),
        "write": ("brain_write", lambda i: {"path": _door_write_path(i), "mode": "append", "content": f"mcp {i}"}),
    }
    if noop_url is not None:
        out.update(await _against_noop(session(), noop_url, word, calls, cases))
        return out
    async with session() as client:
        for _ in range(20):  # the index built in the server, postings warm, connection open
            await client.call_tool("brain_search", {"query": word})
            await client.call_tool("brain_read", {"path": "profile.md"})
        for tool, (name, args) in cases.items():
            over, own, cpu, own_cpu = out.setdefault(tool, []), out.setdefault(f"{tool}_direct", []), 0.0, 0.0
            for start in range(0, calls, BLOCK):
                cpu0 = server.cpu()
                for i in range(start, start + BLOCK):
                    t0 = time.perf_counter()
                    await client.call_tool(name, args(i))
                    over.append(time.perf_counter() - t0)
                cpu += server.cpu() - cpu0
                cpu0 = time.process_time()
                for i in range(start, start + BLOCK):
                    own.append(measure.timed(lambda tool=tool, i=i: direct[tool](i)))
                own_cpu += time.process_time() - cpu0
            out[f"{tool}_server_cpu"] = [cpu / len(over)]
            out[f"{tool}_tool_cpu"] = [own_cpu / len(own)]
        await client.call_tool("brain_search", {"query": word})  # the snapshot advanced past the writes
    async with session("legacy") as client:
        await client.call_tool("brain_read", {"path": "profile.md"})
        out["read_legacy"] = []
        for _ in range(calls):
            t0 = time.perf_counter()
            await client.call_tool("brain_read", {"path": "profile.md"})
            out["read_legacy"].append(time.perf_counter() - t0)
    cpu0 = server.cpu()
    out["read_raw"] = await asyncio.to_thread(_door_raw_read, url, token, calls)
    out["read_raw_server_cpu"] = [(server.cpu() - cpu0) / (calls + 20)]
    async with session() as client:
        await client.call_tool("brain_read", {"path": "profile.md"})
        server.spy_start()
        for _ in range(calls):
            await client.call_tool("brain_search", {"query": word})
            await client.call_tool("brain_read", {"path": "profile.md"})
        server.spy_stop(f"{calls} brain_search and {calls} brain_read")
    return out


async def _against_noop(client, noop_url: str, word: str, calls: int, cases: dict) -> dict[str, list[float]]:
    """Each tool's calls in blocks of BLOCK, each block followed by as many SDK no-op calls
    from a client of the same kind, so both see the same machine load; then writes each
    followed by a search for the word it wrote (which must be found)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    out: dict[str, list[float]] = {"noop": []}
    noop = Client(streamable_http_client(noop_url, http_client=httpx2.AsyncClient(timeout=120)))

    async def timed_call(c, name: str, args: dict, into: str) -> object:
        t0 = time.perf_counter()
        reply = await c.call_tool(name, args)
        out.setdefault(into, []).append(time.perf_counter() - t0)
        return reply

    async with client, noop:
        for _ in range(20):  # connections open, postings warm, on both servers
            await client.call_tool("brain_search", {"query": word})
            await noop.call_tool("noop", {})
        pairs = {"write_then_search": None, **cases}
        for tool, case in pairs.items():
            for start in range(0, calls, BLOCK):
                for i in range(start, start + BLOCK):
                    if case is None:
                        mark = f"seen{i:05d}x"
                        await timed_call(
                            client,
                            "brain_write",
                            {"path": f"notes/seen-{i:05d}.md", "mode": "create", "content": f"# Seen {i}\n\n{mark}\n"},
                            "write_then_search_write",
                        )
                        reply = await timed_call(client, "brain_search", {"query": mark}, "write_then_search_search")
                        if f"notes/seen-{i:05d}.md" not in str(reply):
                            raise RuntimeError(f"a search right after a write did not find it: {str(reply)[:300]}")
                    else:
                        name, args = case
                        await timed_call(client, name, args(i), tool)
                for _ in range(BLOCK):
                    await timed_call(noop, "noop", {}, "noop")
    return out


def _door_raw_read(url: str, token: str, calls: int) -> list[float]:
    """brain_read as bare JSON-RPC over one keep-alive connection (no SDK client, the
    2025-06-18 session handshake): what the server and HTTP cost without the client library."""
    import httpx2

    headers = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {token}"}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    }
    body = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "brain_read", "arguments": {"path": "profile.md"}},
    }
    with httpx2.Client(timeout=60) as http:
        r = http.post(url, json=init, headers=headers)
        headers.update({"mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"})
        http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        times = []
        for _ in range(20 + calls):
            t0 = time.perf_counter()
            r = http.post(url, json=body, headers=headers)
            if r.status_code != 200 or '"isError":true' in r.text:
                raise RuntimeError(f"brain_read over bare HTTP: {r.status_code} {r.text[:200]}")
            times.append(time.perf_counter() - t0)
    return times[20:]

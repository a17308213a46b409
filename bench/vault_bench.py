"""A vault as people have one, served as it is. Prints; asserts nothing.

Builds a 1,000-note Obsidian-style vault with the `git` command on `master`: mixed
sizes (most a few KB, some 30-80 KB, one 400 KB hub note), accented, CJK and
punctuated names, CRLF files, aliases, body #tags and [[wikilinks]], and a
.obsidian/ folder. Then, for several fresh starts of `cortex serve` as a process:
time to the open port (/healthz), to the first brain_read and the first
brain_search answered over MCP, the size of the brain_context reply, and the
server's RSS after those calls. Medians over the runs.

With --ask-against DIR: brain_ask's latency over MCP (offline reader, meaning off) on the
same vault, the code in DIR (a checkout of an earlier commit, served through PYTHONPATH)
and this checkout's alternating, fresh starts each; the p50 of each, and their ratio.

With --meaning: one fresh start with the meaning arm on (the converted model already in
its cache, as `make` leaves it) and no saved vectors. While the first full embed runs, a
client keeps calling brain_read and brain_search; the bench prints how long the embed took,
those calls' latencies during it and after it (when search is by meaning), and the peak
RSS of the server and of its embedding workers. --short makes every note about 800 bytes
(one or two passages), so a 10,000-note brain embeds in minutes.

With --footprint: lexical search p50 idle (meaning off), a first start that embeds it all, and
a restart on the saved vectors: the server's RSS with meaning ready and meaning search p50.

With --meaning-against DIR: a first embed from a fresh start, the code in DIR and this
checkout's alternating: seconds to meaning ready, passages, and brain_search p50 during the
embed and after it.

Usage: python -m bench.vault_bench [--notes 1000] [--runs 5] [--meaning | --footprint [--short]]
       [--ask-against DIR] [--meaning-against DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bench.measure import ROOT

__all__ = ["main", "one_meaning_start", "one_start", "serve", "vault"]

TOKEN = "bench-owner-token-0123456789abcdef"
WORDS = (
    "garden bees hive honey compost tomato rust python library rope knot sailing recipe cream sugar "
    "budget invoice travel train berlin lisbon reading novel poem chapter meeting project deadline"
).split()
NAMES = ["Café", "Crème brûlée", "O'Brien, Pat", "C++ & Rust (notes)", "日記", "Résumé", "Zürich trip", "naïve plan"]


def vault(root: Path, n: int, seed: int = 5, short: bool = False) -> Path:
    rng = random.Random(seed)
    repo = root / "vault"
    (repo / ".obsidian").mkdir(parents=True)
    (repo / ".obsidian" / "workspace.json").write_text("{}")
    titles = []
    for i in range(n):
        folder = rng.choice(["Notes", "Projects", "People", "Journal", "Café", "日記"])
        name = f"{rng.choice(NAMES)} {i}" if i % 7 == 0 else f"{rng.choice(WORDS)} {rng.choice(WORDS)} {i}"
        titles.append(name)
        size = 800 if short else rng.choice([800] * 6 + [3_000] * 3 + [30_000, 80_000])
        body = []
        while sum(map(len, body)) < size:
            line = " ".join(rng.choice(WORDS) for _ in range(12))
            if rng.random() < 0.1:
                line += f" [[{rng.choice(titles)}]] #{rng.choice(WORDS)}"
            body.append(line)
        eol = "\r\n" if i % 10 == 0 else "\n"
        text = f"---{eol}aliases: [{rng.choice(WORDS)} {i}]{eol}---{eol}# {name}{eol}{eol}" + eol.join(body) + eol
        path = repo / folder / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, newline="")
    hub = repo / "Notes" / "Rust libraries.md"
    hub.write_text(
        "# Rust libraries\n\n"
        + "".join(f"- [[crate{i}]] a crate for {rng.choice(WORDS)} and {rng.choice(WORDS)}\n" for i in range(8_000))
    )
    env = {
        "GIT_AUTHOR_NAME": "Bench",
        "GIT_AUTHOR_EMAIL": "b@example.org",
        "GIT_COMMITTER_NAME": "Bench",
        "GIT_COMMITTER_EMAIL": "b@example.org",
        "PATH": os.environ["PATH"],
        "HOME": str(root),
    }
    for args in (["init", "-q", "-b", "master"], ["add", "-A", "--", ".", ":!.obsidian"], ["commit", "-qm", "vault"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    return repo


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def calls(url: str) -> dict[str, float]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)
    out: dict[str, float] = {}
    async with Client(streamable_http_client(url, http_client=http)) as client:
        t = time.perf_counter()
        await client.call_tool("brain_read", {"path": "Notes/Rust libraries.md"})
        out["first_read_s"] = time.perf_counter() - t
        t = time.perf_counter()
        await client.call_tool("brain_search", {"query": "rust libraries"})
        out["first_search_s"] = time.perf_counter() - t
        result = await client.call_tool("brain_context", {})
        out["context_kb"] = len(json.dumps(result.structured_content, ensure_ascii=False).encode()) / 1000
    return out


ASK_FORMS = [
    "What is the {} for the {} project?",
    "When is the {} to {}?",
    "Who wrote the {} in the {} chapter?",
    "How much {} goes into the {} recipe?",
    "What did the meeting decide about the {} {}?",
    "Which {} is used for the {} rope?",
    "How many {} are in the {} garden?",
    "Which {} library handles {}?",
    "What does the note say about {} and {}?",
    "Is there a {} near the {}?",
]


def ask_questions(n: int, seed: int = 11) -> list[str]:
    """`n` distinct questions in the vault's words (no two alike: the answer cache answers a repeat)."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        q = rng.choice(ASK_FORMS).format(rng.choice(WORDS), rng.choice(WORDS))
        if q not in out:
            out.append(q)
    return out


async def ask_calls(url: str, questions: list[str]) -> list[float]:
    """Seconds of each brain_ask of `questions`, after one untimed ask."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)
    out = []
    async with Client(streamable_http_client(url, http_client=http)) as client:
        await client.call_tool("brain_ask", {"question": "What is in the notes?"})
        for q in questions:
            t = time.perf_counter()
            await client.call_tool("brain_ask", {"question": q})
            out.append(time.perf_counter() - t)
    return out


def ask_against(repo: Path, tmp: Path, baseline: Path, runs: int) -> None:
    """brain_ask p50 of the code in `baseline` and of this checkout, fresh starts alternating."""
    times: dict[str, list[float]] = {"baseline": [], "this": []}
    for i in range(runs):
        for label, code in (
            (("baseline", baseline), ("this", None)) if i % 2 == 0 else (("this", None), ("baseline", baseline))
        ):
            proc, port, _ = serve(repo, tmp / f"ask-{label}-{i}", code=code)
            try:
                times[label] += asyncio.run(ask_calls(f"http://127.0.0.1:{port}/mcp", ask_questions(40)))
            finally:
                proc.terminate()
                proc.wait(timeout=30)
    p50 = {k: statistics.median(v) * 1000 for k, v in times.items()}
    print(f"  brain_ask p50, {len(times['this'])} asks each over {runs} starts a side (offline reader, meaning off)")
    print(f"    baseline ({baseline}) {p50['baseline']:8.1f} ms")
    print(f"    this checkout         {p50['this']:8.1f} ms   ratio {p50['this'] / p50['baseline']:.2f}x")


def meaning_against(repo: Path, tmp: Path, baseline: Path, runs: int) -> None:
    """A first embed from a fresh start, the code in `baseline` and this checkout alternating:
    seconds from the start to meaning ready, passages embedded, and brain_search p50 while the
    embed runs (a search every 0.3 s once a tenth of the notes are in) and once it is ready."""
    got: dict[str, list[dict[str, float]]] = {"baseline": [], "this": []}
    for i in range(runs):
        for label, code in (
            (("baseline", baseline), ("this", None)) if i % 2 == 0 else (("this", None), ("baseline", baseline))
        ):
            started = time.perf_counter()
            proc, port, _ = serve(repo, tmp / f"meaning-{label}-{i}", meaning=True, code=code)
            try:
                got[label].append(asyncio.run(_searches_while_embedding(port, started)))
            finally:
                proc.terminate()
                proc.wait(timeout=60)
            print(f"  run {i + 1} {label}: " + ", ".join(f"{k} {v:.1f}" for k, v in got[label][-1].items()), flush=True)
    for key in got["this"][0]:
        base, this = (statistics.median(r[key] for r in got[side]) for side in ("baseline", "this"))
        print(f"  {key:20s} baseline {base:8.1f}   this {this:8.1f}   ratio {this / base:.2f}x")


async def _searches_while_embedding(port: int, started: float) -> dict[str, float]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)
    health = f"http://127.0.0.1:{port}/healthz?detail=1"
    during: list[float] = []
    after: list[float] = []
    rng = random.Random(7)
    async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client:

        async def search(into: list[float]) -> None:
            t = time.perf_counter()
            await client.call_tool("brain_search", {"query": f"{rng.choice(WORDS)} {rng.choice(WORDS)}"})
            into.append(time.perf_counter() - t)

        while True:
            h = (await http.get(health)).json()
            if h.get("meaning") == "ready":
                break
            if time.perf_counter() - started > 1800:
                raise SystemExit("meaning was not ready in 30 minutes")
            done, _, total = str(h.get("meaning_notes", "0/0")).partition("/")
            if h.get("meaning_embedded", 0) > 200 or (total.isdigit() and int(done or 0) * 10 >= int(total) > 0):
                await search(during)
            await asyncio.sleep(0.3)
        ready = time.perf_counter() - started
        for _ in range(40):
            await search(after)
            await asyncio.sleep(0.05)
    await http.aclose()
    return {
        "ready_s": ready,
        "passages": float(h.get("meaning_passages", 0)),
        "search_during_ms": statistics.median(during) * 1000 if during else float("nan"),
        "search_after_ms": statistics.median(after) * 1000,
    }


def tree_rss_mb(pid: int) -> tuple[float, float]:
    """(RSS of the process, summed RSS of its children): the server and its workers."""
    kids = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                kids += rss_mb(int(child))
    return rss_mb(pid), kids


async def embedding_calls(url: str, health: str, pid: int, titles: list[str]) -> dict[str, float]:
    """brain_read and brain_search once a second until /healthz says meaning is ready, then 40 searches."""
    rng = random.Random(7)
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)
    reads, during, after, lexical_replies = [], [], [], 0
    peak, peak_kids, state = 0.0, 0.0, {}
    started = time.perf_counter()
    async with Client(streamable_http_client(url, http_client=http)) as client:
        while True:
            state = httpx2.get(health, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5).json()
            own, kids = tree_rss_mb(pid)
            peak, peak_kids = max(peak, own), max(peak_kids, kids)
            if state.get("meaning") != "embedding" and state.get("meaning") != "starting":
                break
            t = time.perf_counter()
            await client.call_tool("brain_read", {"path": rng.choice(titles)})
            reads.append(time.perf_counter() - t)
            t = time.perf_counter()
            reply = await client.call_tool("brain_search", {"query": f"{rng.choice(WORDS)} {rng.choice(WORDS)}"})
            during.append(time.perf_counter() - t)
            lexical_replies += "lexical until" in reply.structured_content.get("meaning", "")
            await asyncio.sleep(1.0)
        embed_s = time.perf_counter() - started
        for _ in range(40):
            t = time.perf_counter()
            reply = await client.call_tool("brain_search", {"query": f"{rng.choice(WORDS)} {rng.choice(WORDS)}"})
            after.append(time.perf_counter() - t)
        line = reply.structured_content.get("meaning", "")
    own, kids = tree_rss_mb(pid)
    ms = lambda xs, q: 1000 * sorted(xs)[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")  # noqa: E731
    return {
        "state": state.get("meaning"),
        "notes": state.get("meaning_notes"),
        "passages": state.get("meaning_passages"),
        "rate": state.get("meaning_rate"),
        "embed_s": embed_s,
        "calls_during": len(during),
        "lexical_replies": lexical_replies,
        "read_p50_ms": ms(reads, 0.5),
        "read_max_ms": ms(reads, 1.0),
        "search_during_p50_ms": ms(during, 0.5),
        "search_during_max_ms": ms(during, 1.0),
        "search_after_p50_ms": ms(after, 0.5),
        "search_after_p90_ms": ms(after, 0.9),
        "last_meaning_line": line,
        "rss_peak_mb": peak,
        "rss_workers_peak_mb": peak_kids,
        "rss_after_mb": own,
    }


def serve(
    repo: Path, home: Path, meaning: bool = False, code: Path | None = None
) -> tuple[subprocess.Popen, int, float]:
    """`cortex serve` as a process, once its port answers: (process, port, seconds to the open
    port); `code`: a checkout whose cortex/ is served instead of this one's."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "REDIS_"))}
    env.update(CORTEX_HOME=str(home), CORTEX_TOKEN=TOKEN, CORTEX_BRAIN=str(repo), PATH="/usr/bin:/bin")
    if meaning:
        cache = os.environ.get("CORTEX_MODEL_CACHE") or str(Path.home() / ".cache" / "cortex" / "models")
        env.update(CORTEX_MEANING="on", CORTEX_MODEL_CACHE=cache)
    else:
        env.update(CORTEX_MEANING="off")
    if code is not None:
        env.update(PYTHONPATH=str(code))
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cortex.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=code or ROOT,
    )
    while True:
        try:
            httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=0.5).raise_for_status()
            return proc, port, time.perf_counter() - started
        except httpx2.HTTPError:
            if proc.poll() is not None or time.perf_counter() - started > 120:
                proc.kill()
                raise SystemExit("cortex serve did not start") from None
            time.sleep(0.02)


def one_meaning_start(repo: Path, home: Path) -> dict[str, float]:
    proc, port, _ = serve(repo, home, meaning=True)
    titles = sorted(str(p.relative_to(repo)) for p in repo.rglob("*.md"))
    try:
        base = f"http://127.0.0.1:{port}"
        return asyncio.run(embedding_calls(f"{base}/mcp", f"{base}/healthz?detail=1", proc.pid, titles))
    finally:
        proc.terminate()
        proc.wait(timeout=60)


async def lexical_calls(url: str, n: int = 40) -> list[float]:
    """Seconds of each of `n` brain_search calls of two common words, after one untimed call."""
    rng = random.Random(7)
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)
    out = []
    async with Client(streamable_http_client(url, http_client=http)) as client:
        await client.call_tool("brain_search", {"query": "garden bees"})
        for _ in range(n):
            t = time.perf_counter()
            await client.call_tool("brain_search", {"query": f"{rng.choice(WORDS)} {rng.choice(WORDS)}"})
            out.append(time.perf_counter() - t)
    return out


def footprint(repo: Path, tmp: Path) -> None:
    """Item 5 of the meaning issue in one run: lexical search p50 idle (meaning off), then a
    first start that embeds everything (search during it), then a restart on the same home
    (vectors from the saved file): the server's RSS once meaning is ready, and meaning
    search p50 over MCP."""
    proc, port, _ = serve(repo, tmp / "lexical")
    try:
        idle = statistics.median(asyncio.run(lexical_calls(f"http://127.0.0.1:{port}/mcp"))) * 1000
        lexical_rss = rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    first = one_meaning_start(repo, tmp / "home")
    again = one_meaning_start(repo, tmp / "home")
    print(f"  lexical search p50, meaning off, idle   {idle:8.1f} ms   (server RSS {lexical_rss:.0f} MB)")
    print(
        f"  during the first embed ({first['embed_s']:.0f} s)      {first['search_during_p50_ms']:8.1f} ms   "
        f"{first['search_during_p50_ms'] / idle:.2f}x idle; {first['lexical_replies']} of "
        f"{first['calls_during']} replies lexical"
    )
    print(f"  meaning search p50 after it             {first['search_after_p50_ms']:8.1f} ms")
    print(f"  server RSS after the first embed        {first['rss_after_mb']:8.0f} MB")
    print(f"  restart on the saved vectors: ready in  {again['embed_s']:8.1f} s")
    print(
        f"  meaning search p50 / p90, restarted     {again['search_after_p50_ms']:8.1f} / "
        f"{again['search_after_p90_ms']:.1f} ms"
    )
    print(f"  server RSS, restarted, meaning ready    {again['rss_after_mb']:8.0f} MB")


def one_start(repo: Path, home: Path) -> dict[str, float]:
    proc, port, port_s = serve(repo, home)
    try:
        figures = asyncio.run(calls(f"http://127.0.0.1:{port}/mcp"))
        figures["port_open_s"] = port_s
        figures["start_to_first_read_s"] = port_s + figures["first_read_s"]
        figures["rss_mb"] = rss_mb(proc.pid)
        return figures
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--meaning", action="store_true", help="one start with the meaning arm: the first full embed")
    parser.add_argument("--footprint", action="store_true", help="lexical idle, a first embed, a restart on it")
    parser.add_argument("--short", action="store_true", help="every note about 800 bytes")
    parser.add_argument("--ask-against", type=Path, help="a checkout of earlier code: brain_ask p50, it against this")
    parser.add_argument(
        "--meaning-against", type=Path, help="a checkout of earlier code: a first embed and searches during it"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = vault(Path(tmp), args.notes, short=args.short)
        size = sum(p.stat().st_size for p in repo.rglob("*.md"))
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
        print(
            f"vault: {args.notes + 1} notes on master, {size / 1e6:.1f} MB, hub note "
            f"{(repo / 'Notes' / 'Rust libraries.md').stat().st_size / 1e3:.0f} KB; {args.runs} fresh starts"
        )
        if args.ask_against:
            return ask_against(repo, Path(tmp), args.ask_against.resolve(), args.runs)
        if args.meaning_against:
            return meaning_against(repo, Path(tmp), args.meaning_against.resolve(), args.runs)
        if args.footprint:
            return footprint(repo, Path(tmp))
        if args.meaning:
            for key, value in one_meaning_start(repo, Path(tmp) / "home").items():
                print(f"  {key:24s} {value:10.2f}" if isinstance(value, float) else f"  {key:24s} {value}")
            return
        runs = [one_start(repo, Path(tmp) / f"home{i}") for i in range(args.runs)]
        for key in ("port_open_s", "start_to_first_read_s", "first_read_s", "first_search_s", "context_kb", "rss_mb"):
            values = [r[key] for r in runs]
            print(
                f"  {key:24s} median {statistics.median(values):8.2f}   min {min(values):8.2f}   max {max(values):8.2f}"
            )


if __name__ == "__main__":
    main()

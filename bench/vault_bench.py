"""A vault as people have one, served as it is (issue 13). Prints; asserts nothing.

Builds a 1,000-note Obsidian-style vault with the `git` command on `master`: mixed
sizes (most a few KB, some 30-80 KB, one 400 KB hub note), accented, CJK and
punctuated names, CRLF files, aliases, body #tags and [[wikilinks]], and a
.obsidian/ folder. Then, for several fresh starts of `cortex serve` as a process:
time to the open port (/healthz), to the first brain_read and the first
brain_search answered over MCP, the size of the brain_context reply, and the
server's RSS after those calls. Medians over the runs.

Usage: python bench/vault_bench.py [--notes 1000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
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

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "bench-owner-token-0123456789abcdef"
WORDS = (
    "garden bees hive honey compost tomato rust python library rope knot sailing recipe cream sugar "
    "budget invoice travel train berlin lisbon reading novel poem chapter meeting project deadline"
).split()
NAMES = ["Café", "Crème brûlée", "O'Brien, Pat", "C++ & Rust (notes)", "日記", "Résumé", "Zürich trip", "naïve plan"]


def vault(root: Path, n: int, seed: int = 5) -> Path:
    rng = random.Random(seed)
    repo = root / "vault"
    (repo / ".obsidian").mkdir(parents=True)
    (repo / ".obsidian" / "workspace.json").write_text("{}")
    titles = []
    for i in range(n):
        folder = rng.choice(["Notes", "Projects", "People", "Journal", "Café", "日記"])
        name = f"{rng.choice(NAMES)} {i}" if i % 7 == 0 else f"{rng.choice(WORDS)} {rng.choice(WORDS)} {i}"
        titles.append(name)
        size = rng.choice([800] * 6 + [3_000] * 3 + [30_000, 80_000])
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


def one_start(repo: Path, home: Path) -> dict[str, float]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "REDIS_"))}
    env.update(CORTEX_HOME=str(home), CORTEX_TOKEN=TOKEN, CORTEX_BRAIN=str(repo), PATH="/usr/bin:/bin")
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cortex.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    try:
        while True:
            try:
                httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=0.5).raise_for_status()
                break
            except httpx2.HTTPError:
                if proc.poll() is not None or time.perf_counter() - started > 120:
                    raise SystemExit("cortex serve did not start")
                time.sleep(0.02)
        port_s = time.perf_counter() - started
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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = vault(Path(tmp), args.notes)
        size = sum(p.stat().st_size for p in repo.rglob("*.md"))
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
        print(
            f"vault: {args.notes + 1} notes on master, {size / 1e6:.1f} MB, hub note "
            f"{(repo / 'Notes' / 'Rust libraries.md').stat().st_size / 1e3:.0f} KB; {args.runs} fresh starts"
        )
        runs = [one_start(repo, Path(tmp) / f"home{i}") for i in range(args.runs)]
        for key in ("port_open_s", "start_to_first_read_s", "first_read_s", "first_search_s", "context_kb", "rss_mb"):
            values = [r[key] for r in runs]
            print(
                f"  {key:24s} median {statistics.median(values):8.2f}   min {min(values):8.2f}   max {max(values):8.2f}"
            )


if __name__ == "__main__":
    main()

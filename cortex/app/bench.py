"""`cortex bench`: figures on synthetic brains, built here from a fixed seed.

Every figure is a median (p50) or a percentile over repeated runs in this
process, and where a baseline makes sense it runs in the same process so the
ratio survives a noisy machine. Nothing here is a test: it prints.
"""

from __future__ import annotations

import itertools
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FOLDERS = ["notes", "notes", "notes", "projects", "log", "archive", "notes/reading", "notes/work"]


def vocabulary(rng: random.Random, size: int = 20_000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 10))))
    return sorted(words)


def synthetic_notes(n: int, seed: int = 7, words_per_note: int = 300) -> dict[str, bytes]:
    """`n` notes of about `words_per_note` words with a Zipf-like vocabulary, in realistic folders."""
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    weights = [1 / (i + 1) for i in range(len(vocab))]
    files: dict[str, bytes] = {}
    for i in range(n):
        folder = FOLDERS[i % len(FOLDERS)]
        path = f"log/2026-{1 + i % 12:02d}-{1 + i % 28:02d}-{i}.md" if folder == "log" else f"{folder}/note-{i:05d}.md"
        words = rng.choices(vocab, weights=weights, k=words_per_note)
        paras = [" ".join(words[j : j + 60]) for j in range(0, len(words), 60)]
        body = f"# Note {i}\n\n" + "\n\n".join(f"## Part {k}\n\n{p}" if k % 2 else p for k, p in enumerate(paras))
        fm = f"---\ntitle: Note {i} {words[0]}\ntags: [{words[1]}, {words[2]}]\ndescription: about {words[3]}\n---\n"
        files[path] = (fm + body + "\n").encode()
    return files


SPEAKERS = ("**User:**", "**Assistant:**")


def conversation_notes(n: int, seed: int = 11) -> dict[str, bytes]:
    """`n` long notes like saved chat transcripts: 5-20 KB each of alternating turns.

    A wider vocabulary than `synthetic_notes` (60,000 words, Zipf-like, plus numbers),
    because long text keeps meeting new words: the index's vocabulary grows with it.
    """
    rng = random.Random(seed)
    vocab = vocabulary(rng, 60_000)
    cum = list(itertools.accumulate(1 / (i + 1) for i in range(len(vocab))))
    files: dict[str, bytes] = {}
    for i in range(n):
        size = rng.randint(5_000, 20_000)
        words = rng.choices(vocab, cum_weights=cum, k=size * 2 // 15)  # ~7.5 bytes a word
        turns, pos, k = [], 0, 0
        while pos < len(words):
            step = rng.randint(20, 160)
            line = " ".join(words[pos : pos + step])
            if rng.random() < 0.1:
                line += f" {rng.randint(1, 99_999)}"
            turns.append(f"{SPEAKERS[k % 2]} {line}")
            pos, k = pos + step, k + 1
        month = 1 + i % 12
        title = " ".join(words[:4])
        head = f"---\ntitle: {title}\ndate: 2025-{month:02d}-{1 + i % 28:02d}\ntags: [chat, {words[5]}]\n---\n"
        files[f"conversations/2025-{month:02d}/chat-{i:05d}.md"] = (
            head + f"# {title}\n\n" + "\n\n".join(turns) + "\n"
        ).encode()
    return files


def make_brain(root: Path, n: int, long: bool = False) -> Path:
    from cortex.brain.brain import render_index
    from cortex.notes.note import parse_note
    from cortex.store.git import GitStore

    path = root / f"brain-{n}{'-long' if long else ''}.git"
    files = conversation_notes(n) if long else synthetic_notes(n)
    files["profile.md"] = b"---\ntitle: Profile\n---\nA synthetic owner.\n"
    files["INDEX.md"] = render_index({p: parse_note(p, d.decode()) for p, d in files.items()})
    GitStore.init(path, files, bare=True, message="bench: synthetic brain")
    return path


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


COLD = r"""
import sys, time, resource
t0 = time.perf_counter()
from cortex.brain.brain import Brain
from cortex.store.git import GitStore
brain = Brain(GitStore(sys.argv[1]))
brain.read("profile.md")
t1 = time.perf_counter()
brain.corpus.search(brain.snapshot(), "note", 10)
t2 = time.perf_counter()
print(t1 - t0, t2 - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


SCALE = r"""
import json, statistics, sys, time
t0 = time.perf_counter()
from cortex.app.bench import rss_mb
from cortex.brain.brain import Brain
from cortex.store.git import GitStore
from cortex.tools.trusted import Tools
from cortex.ask.asker import Asker
from cortex.ask.readers import OfflineReader
brain = Brain(GitStore(sys.argv[1]))
snap = brain.snapshot()
built = time.perf_counter() - t0
rss = rss_mb()
tools = Tools(brain, Asker(brain, OfflineReader()))
index = brain.corpus.index_for(snap)
by_df = sorted(((index.df(t), t) for t in index.terms()), reverse=True)
common = by_df[0][1]
# 40 words a person might use: spread over the vocabulary, common to rare
forty = " ".join(t for _, t in by_df[10 : 10 + 40 * 97 : 97][:40])
prefix = sys.argv[2]
under = [p for p in snap.notes if p.startswith(prefix)]
def p50(f, runs=15):
    f()
    out = []
    for _ in range(runs):
        t = time.perf_counter(); f(); out.append(time.perf_counter() - t)
    return statistics.median(out) * 1000
seg = index._seg
print(json.dumps({
    "first_build_s": built,
    "rss_mb_after_build": rss,
    "index_arrays_mb": sum(a.nbytes for a in (seg.fptr, seg.fterm, seg.iptr, seg.idoc, seg.itf)) / 2**20,
    "vocabulary": len(seg.terms),
    "entries": len(seg.fterm),
    "prefix_notes": len(under),
    "common_word_notes": by_df[0][0],
    "common_word_search_p50_ms": p50(lambda: tools.search(common)),
    "forty_word_search_p50_ms": p50(lambda: tools.search(forty)),
    "forty_word_prefix_search_p50_ms": p50(lambda: tools.search(forty, prefix=prefix)),
    "forty_word_prefix_index_only_p50_ms": p50(lambda: index.search(forty, within=under)),
    "rss_mb_after_queries": rss_mb(),
}))
"""


def rss_mb() -> float:
    """This process's resident memory now (not its peak), in MB."""
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def bench_scale(root: Path, n: int, long: bool = False) -> dict:
    """Memory and in-process speed at `n` notes, measured in a fresh interpreter after a first build."""
    t0 = time.perf_counter()
    print(f"making a brain of {n:,} {'long' if long else 'short'} notes ...", file=sys.stderr, flush=True)
    path = make_brain(root, n, long)
    made = time.perf_counter() - t0
    prefix = "conversations/2025-03/" if long else "projects/"
    print(f"made in {made:.0f} s; first build and queries in a fresh process ...", file=sys.stderr, flush=True)
    out = subprocess.run(
        [sys.executable, "-c", SCALE, str(path), prefix], stdout=subprocess.PIPE, text=True, check=True
    )
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return {
        "notes": n,
        "kind": "long conversations" if long else "short synthetic",
        "repo_mb": size / 2**20,
        "brain_made_s": made,
        **json.loads(out.stdout),
    }


def bench_long(root: Path, n: int) -> dict:
    """`bench_scale` on a brain of long chat transcripts (25,000 notes make ~300 MB)."""
    return bench_scale(root, n, long=True)


def cold_start(path: Path) -> tuple[float, float, int]:
    """(to first read, to first search, peak RSS KiB) in a fresh interpreter, imports included."""
    out = subprocess.run([sys.executable, "-c", COLD, str(path)], capture_output=True, text=True, check=True)
    a, b, rss = out.stdout.split()
    return float(a), float(b), int(rss)


def bench_store(root: Path, n: int) -> dict:
    from cortex.brain.brain import Actor, Brain
    from cortex.store.git import GitStore

    path = make_brain(root, n)
    colds = [cold_start(path) for _ in range(3)]
    brain = Brain(GitStore(path))
    snap = brain.snapshot()
    paths = sorted(p for p in snap.notes if p.startswith("notes/"))
    rng = random.Random(1)
    actor = Actor("bench", "brain_write", "bench")
    writes, first_reads, steady_reads = [], [], []
    for i in range(60):
        target = rng.choice(paths)
        t0 = time.perf_counter()
        brain.write(target, "append", actor, content=f"bench line {i}")
        writes.append(time.perf_counter() - t0)
        # The first read after a commit pays for the snapshot's tree diff + reparse + index update.
        t0 = time.perf_counter()
        s = brain.snapshot()
        brain.corpus.search(s, "note", 10)
        first_reads.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        s = brain.snapshot()
        brain.corpus.search(s, "note", 10)
        steady_reads.append(time.perf_counter() - t0)
    extra = [f - s for f, s in zip(first_reads, steady_reads)]
    return {
        "notes": n,
        "cold_start_first_read_s": statistics.median(c[0] for c in colds),
        "cold_start_first_search_s": statistics.median(c[1] for c in colds),
        "write_p50_ms": statistics.median(writes) * 1000,
        "write_p95_ms": pct(writes, 95) * 1000,
        "first_read_after_commit_extra_ms": statistics.median(extra) * 1000,
        "peak_rss_mb_after_first_search": max(c[2] for c in colds) / 1024,
    }


def bench_search(root: Path, n: int) -> dict:
    from cortex.index.bm25 import IndexBuilder
    from cortex.index.corpus import release_freed_memory
    from cortex.index.reading import index_fields, index_names
    from cortex.notes.note import parse_note

    files = synthetic_notes(n)
    notes = {p: parse_note(p, d.decode()) for p, d in files.items()}
    del files
    before = rss_mb()
    t0 = time.perf_counter()
    builder = IndexBuilder()
    for p, note in notes.items():
        builder.add(p, index_fields(note), index_names(note))
    index = builder.finish()
    build = time.perf_counter() - t0
    release_freed_memory()
    index_mb = rss_mb() - before
    rng = random.Random(2)
    paths = sorted(notes)
    updates = []
    for _ in range(30):
        p = rng.choice(paths)
        t0 = time.perf_counter()
        index.remove(p)
        index.add(p, index_fields(notes[p]), index_names(notes[p]))
        updates.append(time.perf_counter() - t0)
    df = sorted(((index.df(t), t) for t in index.terms()), reverse=True)
    common = [t for _, t in df[:20]]
    rare = [t for _, t in df[-20:]]  # the least frequent terms of the corpus

    def timed(queries):
        out = []
        for _ in range(5):
            for q in queries:
                t0 = time.perf_counter()
                index.search(q, k=10)
                out.append(time.perf_counter() - t0)
        return out

    common_t, rare_t = timed(common), timed(rare)
    result = {
        "notes": n,
        "index_build_s": build,
        "index_rss_mb": index_mb,
        "incremental_update_ms": statistics.median(updates) * 1000,
        "common_word_search_p50_ms": statistics.median(common_t) * 1000,
        "common_word_search_p95_ms": pct(common_t, 95) * 1000,
        "rare_word_search_p50_ms": statistics.median(rare_t) * 1000,
        "rare_word_search_p95_ms": pct(rare_t, 95) * 1000,
        "rare_word_df": min(c for c, _ in df[-20:]),
        "peak_rss_mb_process": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    try:
        from rank_bm25 import BM25Okapi  # a test extra: the reference, run here as the baseline
    except ImportError:
        BM25Okapi = None
    if n <= 10_000 and BM25Okapi is not None:
        from cortex.index.tokenize import tokenize

        docs = [tokenize(" ".join(index_fields(notes[p]).values())) for p in paths]
        t0 = time.perf_counter()
        ref = BM25Okapi(docs)
        result["rank_bm25_build_s"] = time.perf_counter() - t0
        ref_t = []
        for q in common[:5]:
            t0 = time.perf_counter()
            ref.get_top_n([q], paths, n=10)
            ref_t.append(time.perf_counter() - t0)
        result["rank_bm25_common_search_p50_ms"] = statistics.median(ref_t) * 1000
        result["speedup_common_search_vs_rank_bm25"] = (
            result["rank_bm25_common_search_p50_ms"] / result["common_word_search_p50_ms"]
        )
    return result


def bench_ask(root: Path, n: int) -> dict:
    from cortex.ask.asker import Asker
    from cortex.ask.pack import build_pack
    from cortex.ask.readers import OfflineReader
    from cortex.ask.verify import check_quote
    from cortex.brain.brain import Brain
    from cortex.store.git import GitStore

    path = root / f"brain-{n}.git"
    if not path.exists():
        make_brain(root, n)
    brain = Brain(GitStore(path))
    snap = brain.snapshot()
    reader = OfflineReader()
    asker = Asker(brain, reader)
    rng = random.Random(3)
    paths = sorted(p for p in snap.notes if p.startswith("notes/"))
    times_pack_verify, totals = [], []
    for _ in range(30):
        note = snap.notes[rng.choice(paths)]
        words = note.body.split()
        question = " ".join(words[10:16])
        found = brain.corpus.search(snap, question, 8)
        t0 = time.perf_counter()
        pack = build_pack(snap.sha, [snap.notes[p] for p, _ in found.hits], question, 60_000)
        t1 = time.perf_counter()
        reply = reader.read(question, pack)
        t2 = time.perf_counter()
        for tag, quote in reply.citations:
            check_quote(quote, pack.notes_by_tag.get(tag), pack.notes_by_tag, brain.today())
        t3 = time.perf_counter()
        times_pack_verify.append((t1 - t0) + (t3 - t2))
        t0 = time.perf_counter()
        asker.ask(question + f" {rng.random()}")
        totals.append(time.perf_counter() - t0)
    return {
        "notes": n,
        "pack_plus_verify_p50_ms": statistics.median(times_pack_verify) * 1000,
        "pack_plus_verify_p95_ms": pct(times_pack_verify, 95) * 1000,
        "whole_ask_offline_reader_p50_ms": statistics.median(totals) * 1000,
    }


def bench_editor(root: Path, n: int, edits: int = 10, debounce_ms: int = 300) -> dict:
    """Hand edit -> served: save a file in the working tree, poll the snapshot until it shows.

    The goal is <= 1.5 s including the debounce (the poll interval, the quiet time,
    the commit and the snapshot's advance).
    """
    from cortex.brain.brain import Brain, render_index
    from cortex.brain.watcher import Editor
    from cortex.notes.note import parse_note
    from cortex.store.git import GitStore

    path = root / f"tree-{n}"
    files = synthetic_notes(n)
    files["profile.md"] = b"---\ntitle: Profile\n---\nA synthetic owner.\n"
    files["INDEX.md"] = render_index({p: parse_note(p, d.decode()) for p, d in files.items()})
    GitStore.init(path, files, bare=False, message="bench: synthetic brain")
    brain = Brain(GitStore(path))
    brain.snapshot()
    editor = Editor(brain, debounce_ms=debounce_ms).start()
    scans = []
    for _ in range(5):
        t0 = time.perf_counter()
        editor.scan()
        scans.append(time.perf_counter() - t0)
    rng = random.Random(4)
    paths = sorted(p for p in files if p.startswith("notes/"))
    latencies = []
    try:
        for i in range(edits):
            target = rng.choice(paths)
            line = f"hand edit {i} {rng.random()}"
            on_disk = path / target
            t0 = time.perf_counter()
            on_disk.write_text(on_disk.read_text() + line + "\n")
            while line not in brain.snapshot().notes[target].text:
                if time.perf_counter() - t0 > 10:
                    raise RuntimeError("a hand edit was not served within 10 s")
                time.sleep(0.005)
            latencies.append(time.perf_counter() - t0)
            time.sleep(0.2)
    finally:
        editor.stop()
    return {
        "notes": n,
        "debounce_ms": debounce_ms,
        "edits": edits,
        "hand_edit_to_served_p50_s": statistics.median(latencies),
        "hand_edit_to_served_max_s": max(latencies),
        "tree_scan_p50_ms": statistics.median(scans) * 1000,
        "goal_s": 1.5,
    }


def bench_door(root: Path, n: int, calls: int = 200) -> dict:
    """What an MCP call costs beyond the tool's own work, measured as a client sees it.

    The server is `cortex serve` in its own process; this process drives one session
    with the SDK's client over real HTTP (an in-process server shared the client's GIL
    and event loop: it measured 52 ms a call where a separate client saw 8.8 ms). The
    tool's own work is the same Tools method called here, in-process, on the same brain,
    in blocks that alternate with the MCP calls so both see the same machine load.
    Door cost = round trip p50 - tool work p50 (and p90). CPU per call, the server's (from
    /proc) less the tool's own (this process), is the door's cost whatever else the machine
    is running; the wall-clock figures move with a shared machine's load. Then
    the server is sampled with py-spy over a separate batch (sampling slows it, so
    those calls are not timed) and the profile is printed.
    """
    import asyncio

    from cortex.app.server import assemble
    from cortex.brain.brain import Actor
    from cortex.settings import Settings

    brain = make_brain(root, n)
    token = "b" * 32
    word = _door_common_word()
    parts = assemble(Settings.from_env({"CORTEX_HOME": str(root / "home-direct"), "CORTEX_TOKEN": token}, brain=brain))
    parts.tools.search(word)  # the index built, the word's postings warm, as in the server
    actor = Actor("bench", "brain_write", "bench")
    direct = {
        "search": lambda i: parts.tools.search(word),
        "read": lambda i: parts.tools.read("profile.md"),
        "write": lambda i: parts.tools.write(actor, _door_write_path(i), "append", content=f"direct line {i}"),
    }
    server = _DoorServer(root, brain, token)
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


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _door_write_path(i: int) -> str:
    """The note the i-th bench write appends to: one of the synthetic notes/ notes."""
    return f"notes/note-{(i * 8) % 4000:05d}.md"  # index i*8 lands in FOLDERS[0], "notes"


def _door_common_word(seed: int = 7) -> str:
    """The synthetic brain's most common word (the common-word case): its vocabulary is drawn
    with Zipf weights 1/(rank+1) in sorted order, so the first word is in nearly every note."""
    return vocabulary(random.Random(seed))[0]


class _DoorServer:
    """`python -m cortex.cli serve` on a free port, its output in a file; py-spy at hand."""

    def __init__(self, root: Path, brain: Path, token: str):
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        bindir = root / "bin"  # PATH without redis-server: no private Redis, the guest door off
        bindir.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "REDIS_"))}
        env.update(
            PATH=str(bindir),
            CORTEX_HOME=str(root / "home"),
            CORTEX_BRAIN=str(brain),
            CORTEX_TOKEN=token,
            PYTHONUNBUFFERED="1",
        )
        self.log = root / "serve.log"
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "cortex.cli", "serve", "--port", str(self.port)],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        self.profile = "(not profiled)"
        self.profiled_calls = "no"
        self._spy: subprocess.Popen | None = None
        self._wait_ready()

    def _wait_ready(self, timeout: float = 120) -> None:
        import httpx2

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                if not httpx2.get(f"http://127.0.0.1:{self.port}/healthz", timeout=1).json().get("starting"):
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
        import signal

        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()


BLOCK = 10  # calls per block; MCP and in-process blocks alternate


async def _door_session(url: str, token: str, word: str, calls: int, server: "_DoorServer", direct: dict) -> dict:
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
                    own.append(_timed(lambda: direct[tool](i)))
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


def bench_persist(root: Path, n: int, runs: int = 3, long: bool = False) -> dict:
    """The saved index (persist.py): its size per 1,000 notes, save and load in-process, and a fresh
    `cortex serve` process's start to first search answer over MCP with the file and without it."""
    from cortex.brain.brain import Brain
    from cortex.index.saved import index_file
    from cortex.store.git import GitStore

    brain_path = make_brain(root, n, long)
    home = root / "home"
    store = GitStore(brain_path)
    saved = index_file(home, brain_path, store.branch, log=lambda line: None)
    brain = Brain(store, saved=saved)
    brain.snapshot()
    saves, held = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        saved.save(brain.corpus, force=True)
        saves.append(time.perf_counter() - t0)
        held.append(saved.lock_held_s)
    loads = []
    for _ in range(runs):
        again = GitStore(brain_path)
        t0 = time.perf_counter()
        Brain(again, saved=index_file(home, brain_path, again.branch, log=lambda line: None)).snapshot()
        loads.append(time.perf_counter() - t0)
    word = "chat" if long else "note"  # a tag of every transcript / in every short note's title
    with_file = [serve_to_first_search(brain_path, home, word) for _ in range(runs)]
    without = []
    for _ in range(runs):
        saved.drop()
        without.append(serve_to_first_search(brain_path, home, word))
    return {
        "notes": n,
        "index_file_mb": saved.size / 1e6,
        "index_file_mb_per_1000_notes": saved.size / 1e6 / n * 1000,
        "save_p50_s": statistics.median(saves),
        "save_lock_held_p50_s": statistics.median(held),
        "load_and_first_snapshot_p50_s": statistics.median(loads),
        "port_open_p50_s": statistics.median(o for o, _, _, _ in with_file + without),
        "start_to_first_read_with_file_p50_s": statistics.median(r for _, r, _, _ in with_file),
        "start_to_first_search_with_file_p50_s": statistics.median(s for _, _, s, _ in with_file),
        "starts_that_loaded_the_file": f"{sum(used for *_, used in with_file)} of {runs}",
        "start_to_first_read_without_file_p50_s": statistics.median(r for _, r, _, _ in without),
        "start_to_first_search_without_file_p50_s": statistics.median(s for _, _, s, _ in without),
        "goal_with_file_s": 2.0 if long else 0.5,
    }


def bench_persist_long(root: Path, n: int) -> dict:
    """`bench_persist` on the brain of long chat transcripts (25,000 notes: ~300 MB); two runs."""
    return bench_persist(root, n, runs=2, long=True)


def serve_to_first_search(brain: Path, home: Path, word: str) -> tuple[float, float, float, bool]:
    """Seconds from starting a `cortex serve` process to its port accepting a connection, to its
    first brain_read answer over MCP, and to the brain_search asked right after it (asked as soon
    as the port accepts; a request waits while the server is built, a search also for the index).
    The difference of the last two is the index's share. Last, whether the process loaded the
    saved index (its log says so)."""
    import asyncio
    import signal
    import socket

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    package_root = str(Path(__file__).resolve().parents[2])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "REDIS_"))}
    env.update(
        CORTEX_HOME=str(home),
        CORTEX_BRAIN=str(brain),
        CORTEX_TOKEN="p" * 32,
        PATH="/usr/bin:/bin",  # no private Redis: a guest door is not what is measured
        PYTHONPATH=os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")])),
    )

    def port_open() -> float:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return time.perf_counter() - t0
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError("cortex serve exited before opening its port") from None
                time.sleep(0.002)

    async def first_search() -> tuple[float, float]:
        url = f"http://127.0.0.1:{port}/mcp"
        while True:
            try:
                http = httpx2.AsyncClient(headers={"Authorization": "Bearer " + "p" * 32}, timeout=120)
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    await client.call_tool("brain_read", {"path": "profile.md"})  # never waits for the index
                    read = time.perf_counter() - t0
                    while True:
                        # A search waits for the index at most brain.INDEX_WAIT (30 s), then
                        # answers "still being built": asked again, as a client would.
                        found = await client.call_tool("brain_search", {"query": word})
                        said = " ".join(getattr(c, "text", "") for c in found.content)
                        if not found.is_error:
                            return read, time.perf_counter() - t0
                        if "still being built" not in said:
                            raise RuntimeError(f"brain_search failed: {said[:200]}")
            except RuntimeError:
                raise
            except Exception:  # noqa: BLE001 - the port is not open yet
                if proc.poll() is not None:
                    raise RuntimeError("cortex serve exited before answering") from None
                await asyncio.sleep(0.01)

    log = home / "serve.log"
    t0 = time.perf_counter()
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cortex.cli", "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        opened = port_open()
        read, search = asyncio.run(first_search())
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(120)  # a clean shutdown (the file is saved when the start built it)
        except subprocess.TimeoutExpired:
            proc.kill()
    said = log.read_text(errors="replace")
    if "worker processes failed" in said:
        print("bench: this start's index build workers failed (see its log); it read the notes in-process")
    return opened, read, search, "index: loaded the saved index" in said


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


# Where a sample of the server's time goes, first match wins (read from the stack, innermost
# frame last). "tool work" is everything under a Tools method; the rest is the door.
SPY_BUCKETS = [
    ("tool work (cortex.tools.trusted.Tools)", ("cortex/tools/trusted.py:Tools.",)),
    ("redaction (cortex.notes.redact)", ("cortex/notes/redact.py:",)),
    ("reply JSON text (doors.run_tool)", ("cortex/http/doors.py:run_tool",)),
    # The event loop's side of handing a sync tool to a worker thread and back.
    ("SDK: the hop to a worker thread (anyio.to_thread)", ("anyio/to_thread.py:",)),
    ("SDK: tool argument/result validation (pydantic)", ("pydantic/", "pydantic_core/")),
    ("SSE framing (sse_starlette)", ("sse_starlette/",)),
    ("logging", ("logging/",)),
    ("SDK: session, dispatch, transport (mcp)", ("mcp/",)),
    ("HTTP server (uvicorn, h11, starlette)", ("uvicorn/", "h11/", "starlette/")),
    ("anyio streams and worker threads", ("anyio/",)),
    ("asyncio event loop, selectors", ("asyncio/", "selectors.py", "socket.py")),
]
# Frames every sample passes through: left out of the function table.
SPY_ROOTS = (
    "threading.py:",
    "<frozen runpy>",
    "asyncio/base_events.py:",
    "asyncio/runners.py:",
    "asyncio/events.py:",
    "uvicorn/_compat.py:",
    "uvicorn/server.py:",
    "cortex/cli.py:",
    "cortex/app/startup.py:serve",
    "concurrent/futures/thread.py:",
    "anyio/_backends/_asyncio.py:WorkerThread.run",
)


def spy_report(raw: str, top: int = 25) -> str:
    """py-spy's collapsed stacks (GIL holders only) as two tables: where the server's time
    went by bucket (SPY_BUCKETS), and the functions on the stack most often (cumulative)."""
    total = 0
    cumulative: dict[str, int] = {}
    buckets: dict[str, int] = {}
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        k = int(count)
        total += k
        frames = [_frame_name(f) for f in stack.split(";")]
        for f in set(frames):
            cumulative[f] = cumulative.get(f, 0) + k
        bucket = _spy_bucket(frames)
        buckets[bucket] = buckets.get(bucket, 0) + k
    if not total:
        return "(no samples)"
    lines = [f"{total} samples of the thread holding the GIL; share by where it was:"]
    for name, k in sorted(buckets.items(), key=lambda kv: -kv[1]):
        lines.append(f"  {100 * k / total:5.1f}%  {name}")
    lines.append("functions by cumulative share (on the stack), common roots left out:")
    shown = [kv for kv in sorted(cumulative.items(), key=lambda kv: -kv[1]) if not kv[0].startswith(SPY_ROOTS)]
    for name, k in shown[:top]:
        lines.append(f"  {100 * k / total:5.1f}%  {name}")
    return "\n".join(lines)


def _spy_bucket(frames: list[str]) -> str:
    """The first bucket any frame of the stack falls in; else the innermost frame's file."""
    for name, markers in SPY_BUCKETS:
        if any(f.startswith(markers) for f in frames):
            return name
    return "other: " + (frames[-1].split(":", 1)[0] if frames else "?")


def _frame_name(frame: str) -> str:
    """`fn (/…/site-packages/mcp/server/session.py:12)` -> `mcp/server/session.py:fn`."""
    name, _, where = frame.partition(" (")
    path = where.rsplit(":", 1)[0]
    for marker in ("site-packages/", "/cortex/", "lib/python3.11/", "lib/python3"):
        if marker in path:
            path = ("cortex/" if marker == "/cortex/" else "") + path.split(marker, 1)[1]
            break
    return f"{path}:{name}" if path else name


def bench_meaning(root: Path, n: int) -> dict:
    """The meaning arm on a synthetic brain: the first full embedding (niced worker
    processes, as `cortex serve` runs it), the vector file's size, and brain_search's
    in-process p50 with the arm on against the same queries lexical, in one run."""
    from cortex.app.brain_setup import make_meaning
    from cortex.app.server import assemble
    from cortex.ask.asker import Asker
    from cortex.ask.readers import OfflineReader
    from cortex.settings import Settings
    from cortex.tools.trusted import Tools

    brain_path = make_brain(root, n)
    settings = Settings.from_env({"CORTEX_HOME": str(root / "home"), "CORTEX_TOKEN": "b" * 32}, brain=brain_path)
    parts = assemble(settings)
    brain = parts.brain
    snap = brain.snapshot()
    rss_lexical = rss_mb()
    meaning = make_meaning(settings, brain)
    if not meaning.prepare():
        return {"notes": n, "meaning": meaning.reason}
    started = time.monotonic()
    meaning.catch_up(snap)
    spent = time.monotonic() - started
    size = meaning.vector_path.stat().st_size if meaning.vector_path and meaning.vector_path.exists() else 0
    words = sorted({w for note in list(snap.notes.values())[:50] for w in note.title.lower().split() if len(w) > 3})
    queries = [f"notes about {a} and {b}" for a, b in zip(words[::2], words[1::2])][:40] or ["notes"]
    lexical = Tools(brain, Asker(brain, OfflineReader()))
    brain.meaning = None

    def median_s(fn) -> float:
        fn()
        return statistics.median(_timed(fn) for _ in range(5))

    lex = [median_s(lambda q=q: lexical.search(q)) for q in queries]
    brain.meaning = meaning
    dense = [median_s(lambda q=q: lexical.search(q)) for q in queries]
    embed = [median_s(lambda q=q: meaning.embed_query(q)) for q in queries]
    return {
        "notes": n,
        "passages": meaning.store.passages,
        "first_embed_s": spent,
        "passages_per_s": meaning.store.passages / spent,
        "vector_file_mb": size / 1e6,
        "vector_file_mb_per_1000_notes": size / 1e6 / n * 1000,
        "search_lexical_p50_ms": statistics.median(lex) * 1000,
        "search_meaning_p50_ms": statistics.median(dense) * 1000,
        "search_ratio": statistics.median(dense) / statistics.median(lex),
        "query_embedding_p50_ms": statistics.median(embed) * 1000,
        "rss_lexical_mb": rss_lexical,
        "rss_meaning_mb": rss_mb(),
    }


def machine() -> str:
    cpu = ""
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{platform.machine()}, {os.cpu_count()} cores, {cpu}, Python {platform.python_version()}"


PARTS = {
    "store": bench_store,
    "search": bench_search,
    "ask": bench_ask,
    "editor": bench_editor,
    "door": bench_door,
    "scale": bench_scale,
    "long": bench_long,
    "persist": bench_persist,
    "persist-long": bench_persist_long,
    "meaning": bench_meaning,
}


def run_one(part: str, n: int) -> None:
    """One part at one size, printed as a JSON line. Run in its own process so peak
    RSS belongs to this part alone."""
    with tempfile.TemporaryDirectory() as tmp:
        result = PARTS[part](Path(tmp), n)
    print(
        json.dumps({"part": part, **{k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}}),
        flush=True,
    )


def main(args) -> int:
    sizes = [int(s) for s in str(args.sizes).split(",") if s]
    heavy = ("scale", "long", "persist", "persist-long", "meaning")
    parts = [p for p in PARTS if p not in heavy] if args.part == "all" else [args.part]
    print(f"machine: {machine()}", flush=True)
    for part in parts:
        for n in sizes:
            code = f"from cortex.app.bench import run_one; run_one({part!r}, {n})"
            subprocess.run([sys.executable, "-c", code], check=True)
    return 0

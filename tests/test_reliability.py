"""Proof under load, crashes and outages, with the figures written to
docs/RELIABILITY.md.

- Load: 20 MCP clients x 50 mixed writes over real HTTP while readers search,
  read and ask; every acknowledged write is in a linear history.
- Crash: a real `cortex serve` is killed with SIGKILL mid-storm and restarted;
  every write whose reply arrived survives, `git fsck --strict` is clean, and a
  stale ref lock does not block the next write.
- Redis killed and restarted under guest traffic: no pending proposal lost,
  guests told "queue unavailable", trusted doors unaffected.
- A full disk and a read-only repository: a clear one-line error, nothing
  half-written, service resumes when the cause is gone.

Every loop here is bounded by a count and a deadline; all traffic goes to 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from reliakit import (
    ServeProcess,
    assert_linear,
    fsck,
    git,
    md_cell,
    need_mounts,
    percentiles,
    remount,
    tmpfs,
    write_section,
)
from serverkit import TOKEN, RunningServer, acall, call, client, make_settings

from cortex.app.server import assemble, make_app
from cortex.brain.trailers import Actor
from cortex.store.git import GitStore

pytestmark = pytest.mark.slow  # every test here takes 0.3 s or more

OWNER = Actor(door="owner", tool="brain_write", client="reliability-setup")


def fmt(p: dict[str, float]) -> str:
    return f"{p['p50']:.0f} / {p['p95']:.0f} / {p['p99']:.0f} / {p['max']:.0f} ms"


# -- load ----------------------------------------------------------------------------

CLIENTS = 20
WRITES_PER_CLIENT = 50
SHARED = 4
READERS = 3


@dataclass
class Ack:
    """One acknowledged write: what the reply said, and the line it must have left."""

    sha: str
    path: str
    blob: str
    marker: str
    mode: str


@dataclass
class LoadLog:
    acks: list[Ack] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # markers of expected_blob conflicts
    errors: list[str] = field(default_factory=list)  # anything else: must stay empty
    write_lat: list[float] = field(default_factory=list)
    read_lat: dict[str, list[float]] = field(default_factory=lambda: {"read": [], "search": [], "ask": []})
    reapplied: int = 0


def shared_path(k: int) -> str:
    return f"notes/load/shared-{k}.md"


def own_path(n: int) -> str:
    return f"notes/load/client-{n:02d}.md"


async def writer(url: str, n: int, log: LoadLog) -> None:
    """50 writes of a fixed mix; each leaves a unique marker line so its effect can be found.

    Modes: create (a new note), append, edit (splice at a slot line that stays
    unique) and replace with expected_blob (a read-modify-write: read, add a line,
    replace if nobody wrote in between). On the client's own note nobody else
    writes, so its replace always applies; on a shared note it races the other
    19 clients, and a refusal is the expected conflict, counted, never retried.
    """
    rng = random.Random(n)  # a fixed mix per client, so runs are comparable
    async with client(url) as c:

        async def timed(marker: str, mode: str, path: str, **args) -> None:
            started = time.perf_counter()
            r = await acall(c, "brain_write", path=path, mode=mode, **args)
            log.write_lat.append(time.perf_counter() - started)
            if r.error is None:
                log.acks.append(Ack(r.data["sha"], path, r.data["blob"], marker, mode))
                log.reapplied += bool(r.data.get("note"))
            elif "conflict:" in r.error and "expected_blob" in args:
                log.refused.append(marker)
            else:
                log.errors.append(f"{mode} {path}: {r.error}")

        first = f"c{n:02d}-00"
        await timed(first, "create", own_path(n), content=f"# Client {n}\n\n<<slot c{n:02d}>>\n- {first} create\n")
        for i in range(1, WRITES_PER_CLIENT):
            marker = f"c{n:02d}-{i:02d}"
            kind = rng.choice(
                [
                    "append",
                    "append",
                    "edit",
                    "replace",
                    "create",
                    "shared-append",
                    "shared-append",
                    "shared-edit",
                    "shared-replace",
                    "shared-replace",
                ]
            )
            k = rng.randrange(SHARED)
            if kind == "append":
                await timed(marker, "append", own_path(n), content=f"- {marker} append")
            elif kind == "edit":
                slot = f"<<slot c{n:02d}>>"
                await timed(marker, "edit", own_path(n), find=slot, content=f"{slot}\n- {marker} edit")
            elif kind == "create":
                await timed(
                    marker,
                    "create",
                    f"notes/load/c{n:02d}-{i:02d}.md",
                    content=f"# Note {marker}\n\n- {marker} create\n",
                )
            elif kind == "shared-append":
                await timed(marker, "append", shared_path(k), content=f"- {marker} shared append")
            elif kind == "shared-edit":
                slot = f"<<slot shared-{k}>>"
                await timed(marker, "edit", shared_path(k), find=slot, content=f"{slot}\n- {marker} shared edit")
            else:
                path = own_path(n) if kind == "replace" else shared_path(k)
                started = time.perf_counter()
                read = await acall(c, "brain_read", path=path)
                log.read_lat["read"].append(time.perf_counter() - started)
                if read.error:
                    log.errors.append(f"read {path}: {read.error}")
                    continue
                text = read.data["text"].rstrip("\n") + f"\n- {marker} {kind}\n"
                await timed(marker, "replace", path, content=text, expected_blob=read.data["blob"])


async def reader(url: str, n: int, log: LoadLog, done: asyncio.Event) -> None:
    """Reads, searches and asks in turn until the writers finish (at most 2,000 calls)."""
    async with client(url) as c:
        for i in range(2_000):
            if done.is_set():
                return
            kind = ("read", "search", "ask")[i % 3]
            started = time.perf_counter()
            if kind == "read":
                r = await acall(c, "brain_read", path=shared_path(i % SHARED))
            elif kind == "search":
                r = await acall(c, "brain_search", query=f"shared append c{(n + i) % CLIENTS:02d}", k=5)
            else:
                r = await acall(
                    c, "brain_ask", question=f"What did client {(n + i) % CLIENTS} append to the shared notes?"
                )
            log.read_lat[kind].append(time.perf_counter() - started)
            if r.error:
                log.errors.append(f"{kind}: {r.error}")


def test_load_twenty_clients_fifty_mixed_writes_with_concurrent_reads(server):
    brain = server.parts.brain
    repo = brain.store.path
    url = f"{server.url}/mcp"
    for k in range(SHARED):
        brain.write(shared_path(k), "create", OWNER, content=f"# Shared {k}\n\n<<slot shared-{k}>>\n")
    base = brain.store.head()
    base_count = len(assert_linear(repo))
    log = LoadLog()

    async def everyone() -> float:
        done = asyncio.Event()
        readers = [asyncio.create_task(reader(url, n, log, done)) for n in range(READERS)]
        started = time.perf_counter()
        await asyncio.gather(*(writer(url, n, log) for n in range(CLIENTS)))
        elapsed = time.perf_counter() - started
        done.set()
        await asyncio.gather(*readers)
        return elapsed

    elapsed = asyncio.run(asyncio.wait_for(everyone(), timeout=180))

    # Zero errors other than the expected conflicts.
    assert log.errors == []
    attempts = CLIENTS * WRITES_PER_CLIENT
    assert len(log.acks) + len(log.refused) == attempts

    # History is linear and holds exactly one commit per acknowledged write.
    chain = assert_linear(repo)
    assert len(chain) == base_count + len(log.acks)
    new = set(chain[: len(log.acks)])
    assert {a.sha for a in log.acks} == new and chain[len(log.acks)] == base
    store = GitStore(repo)
    for a in log.acks:  # each reply's blob is what its commit holds at its path
        assert store.blob_at(a.sha, a.path) == a.blob, a

    # Every acknowledged write's line is in the final notes, once; no refused one is.
    snap = brain.snapshot()
    text = "\n".join(n.text for p, n in snap.notes.items() if p.startswith("notes/load/"))
    lines = [line[2:].split(" ", 1)[0] for line in text.splitlines() if line.startswith("- c")]
    assert sorted(lines) == sorted(a.marker for a in log.acks)
    assert not set(log.refused) & set(lines)
    fsck(repo)

    w = percentiles(log.write_lat)
    r = {k: percentiles(v) for k, v in log.read_lat.items()}
    modes = {m: sum(1 for a in log.acks if a.mode == m) for m in ("create", "append", "edit", "replace")}
    write_section(
        "load",
        "Load: 20 clients x 50 mixed writes, with concurrent reads",
        f"""
{CLIENTS} MCP clients (the SDK's own client, real HTTP, one session each) make {WRITES_PER_CLIENT}
writes each — creates, appends, edits and `replace` with `expected_blob` on their own note and on
{SHARED} shared notes — while {READERS} more clients read, search and ask in a loop. Server and
clients share one process (uvicorn in a thread), so latencies include client-side work.

| figure | value |
|---|---|
| write attempts | {attempts} |
| acknowledged writes | {len(log.acks)} (create {modes["create"]}, append {modes["append"]}, edit {modes["edit"]}, replace {modes["replace"]}) |
| expected `expected_blob` conflicts (refused, nothing committed) | {len(log.refused)} |
| other errors | {len(log.errors)} |
| writes re-applied on a moved head (compare-and-swap retry) | {log.reapplied} |
| commits added / merges | {len(chain) - base_count} / 0 (each commit's parent is the one before) |
| wall time for all writes | {elapsed:.1f} s ({len(log.acks) / elapsed:.0f} commits/s) |
| write latency p50 / p95 / p99 / max | {fmt(w)} |
| brain_read p50 / p95 / p99 / max ({r["read"]["n"]} calls: readers, and writers before a replace) | {fmt(r["read"])} |
| concurrent brain_search p50 / p95 / p99 / max ({r["search"]["n"]} calls) | {fmt(r["search"])} |
| concurrent brain_ask p50 / p95 / p99 / max ({r["ask"]["n"]} calls, offline reader) | {fmt(r["ask"])} |
| `git fsck --strict` | clean |
""",
    )


# -- crash ------------------------------------------------------------------------------

STORM_CLIENTS = 6
KILL_AFTER_ACKS = 60  # kill -9 once this many replies have arrived...
STORM_DEADLINE = 60.0  # ...or after this long, whichever comes first


def cortex_cli(*args: str, env: dict[str, str]) -> str:
    return subprocess.run(
        [sys.executable, "-m", "cortex.cli", *args],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    ).stdout


def test_kill_9_mid_write_storm_loses_no_acknowledged_write(tmp_path):
    brain = tmp_path / "brain.git"
    cortex_cli("init", "--bare", str(brain), env=dict(os.environ))
    serve = ServeProcess(
        tmp_path / "home", brain, {"CORTEX_TOKEN": TOKEN}, tmp_path / "empty-bin", tmp_path / "serve.log"
    )
    serve.start()
    url = f"{serve.url}/mcp"
    acked: list[Ack] = []
    busy = [0]  # calls sent and not yet answered
    in_flight = [0]  # ...at the moment of the kill

    async def storm_client(n: int, stop: asyncio.Event) -> None:
        try:
            async with client(url) as c:
                for i in range(1_000):
                    if stop.is_set():
                        return
                    marker = f"s{n}-{i:03d}"
                    path = "notes/storm/shared.md" if i % 2 else f"notes/storm/{marker}.md"
                    mode = "append" if i % 2 else "create"
                    busy[0] += 1
                    try:
                        r = await asyncio.wait_for(
                            acall(c, "brain_write", path=path, mode=mode, content=f"- {marker}\n"), 10
                        )
                    except Exception:
                        return  # in flight when the server died: outcome unknown
                    finally:
                        busy[0] -= 1
                    assert r.error is None, r.error
                    acked.append(Ack(r.data["sha"], path, r.data["blob"], marker, mode))
        except Exception:
            return  # the session's own teardown fails once the server is gone

    async def storm() -> float:
        stop = asyncio.Event()
        tasks = [asyncio.create_task(storm_client(n, stop)) for n in range(STORM_CLIENTS)]
        started = time.monotonic()
        while len(acked) < KILL_AFTER_ACKS and time.monotonic() - started < STORM_DEADLINE:
            await asyncio.sleep(0.01)
        in_flight[0] = busy[0]
        serve.kill()  # SIGKILL while writes are in flight
        killed_at = time.monotonic() - started
        stop.set()
        await asyncio.wait(tasks, timeout=30)
        return killed_at

    # The first write makes the shared note; the storm appends to it.
    call(url, "brain_write", path="notes/storm/shared.md", mode="create", content="# Storm\n")
    killed_at = asyncio.run(storm())
    assert len(acked) >= KILL_AFTER_ACKS, serve.output()[-2000:]
    received = len(acked)

    # After the crash: every write whose reply arrived is in a linear history; fsck is clean.
    chain = assert_linear(brain)
    assert {a.sha for a in acked} <= set(chain)
    fsck_out = fsck(brain)
    lock = brain / "refs" / "heads" / "main.lock"
    left_by_crash = lock.exists()
    unreplied = len(chain) - 2 - received  # commits that landed but whose reply never arrived

    # A stale lock, as a crash between taking and releasing the ref lock leaves it. Dated
    # a minute back, as a lock left by a crash is by the time someone restarts the server
    # (Git holds a ref lock for milliseconds; a fresh one may belong to a live `git push`).
    if not left_by_crash:
        lock.write_text(chain[0] + "\n")
    old = time.time() - 60
    os.utime(lock, (old, old))
    serve.start()
    health = httpx.get(f"{serve.url}/healthz", timeout=5).json()
    assert health["sha"] == chain[0]
    started = time.monotonic()
    r = call(url, "brain_write", path="notes/storm/after.md", mode="create", content="after the crash\n")
    after_ms = (time.monotonic() - started) * 1000
    serve.stop()
    after = (
        f"succeeded in {after_ms:.0f} ms" if r.error is None else f"REFUSED after {after_ms:.0f} ms: {md_cell(r.error)}"
    )
    write_section(
        "crash",
        "Crash: kill -9 during a write storm",
        f"""
A real `cortex serve` (bare brain from `cortex init --bare`, guest door disabled) takes writes
from {STORM_CLIENTS} MCP clients; it is killed with SIGKILL once {KILL_AFTER_ACKS} replies have
arrived, then restarted with a stale `refs/heads/main.lock` in place.

| figure | value |
|---|---|
| replies received before the kill | {received} (killed {killed_at:.1f} s into the storm) |
| writes in flight at the kill (no reply) | {in_flight[0]} |
| acknowledged writes missing after restart | 0 |
| commits that landed without their reply reaching the client | {unreplied} |
| history after restart | linear, {len(chain)} commits |
| `git fsck --strict` after the crash | clean{(" (" + md_cell(fsck_out) + ")") if fsck_out else ""} |
| ref lock left by the crash itself | {"yes" if left_by_crash else "no (made by hand)"} |
| first write after restart, stale lock present | {after} |

A write whose reply was lost may still have landed (the commit is atomic, the reply is not):
`brain_history` shows it, and `expected_blob` makes a retry safe. SIGKILL is not power loss:
the kernel still writes out what the process wrote; surviving power loss also needs fsync
(libgit2 does not fsync objects by default).
""",
    )
    assert r.error is None, f"a stale refs/heads/main.lock blocked the next write: {r.error}"
    assert assert_linear(brain)[1] == chain[0]
    fsck(brain)


def test_a_stale_ref_lock_does_not_block_writes_on_a_running_server(server):
    """A lock file nobody holds (its writer died) must not turn every write into an error.

    Git holds a ref lock for microseconds; one older than a few seconds is a leftover.
    """
    repo = server.parts.brain.store.path
    lock = repo / "refs" / "heads" / "main.lock"
    lock.write_text(server.parts.brain.store.head() + "\n")
    old = time.time() - 120
    os.utime(lock, (old, old))
    r = call(f"{server.url}/mcp", "brain_write", path="notes/after-lock.md", mode="create", content="x\n")
    assert r.error is None, f"a stale refs/heads/main.lock blocked the write: {r.error}"
    assert not lock.exists() or lock.stat().st_mtime > old


# -- Redis killed and restarted during guest traffic ----------------------------------------


def test_redis_killed_and_restarted_under_guest_and_owner_traffic(gserver):
    """Extends test_guest_door.test_redis_killed_mid_traffic from a sequence to concurrent
    traffic: guests propose and ask, the owner writes and reads, while Redis dies and returns."""
    guests = [gserver.guest(f"g{n}", ["notes/public/"], daily_proposals=1000, daily_asks=1000) for n in range(2)]
    gserver.brain.write(
        "notes/public/garden.md", "create", OWNER, content="# Garden\n\nTomatoes grow in the south bed.\n"
    )
    acked: dict[str, str] = {}
    guest_errors: list[str] = []
    owner_errors: list[str] = []
    owner_lat: dict[str, list[float]] = {"before": [], "outage": [], "after": []}
    guest_fail_lat: list[float] = []
    phase = ["before"]
    stop = threading.Event()

    def guest_loop(n: int) -> None:
        g = guests[n]
        for i in range(60):  # at ~3 calls a second, the stop event ends this first
            if stop.is_set():
                return
            started = time.monotonic()
            # Asks now and then; and asks only once 40 proposals wait (the queue's cap is 50).
            if i % 4 == 3 or len(acked) >= 40:
                r = call(g.url, "brain_ask", token=None, question="What grows in the south bed?")
            else:
                r = call(
                    g.url,
                    "brain_propose",
                    token=None,
                    path=f"notes/public/g{n}-{i}.md",
                    content=f"# G{n} {i}\n",
                    mode="create",
                )
            if r.error:
                guest_errors.append(r.error)
                guest_fail_lat.append(time.monotonic() - started)
            elif "id" in r.data:
                acked[r.data["id"]] = phase[0]
            time.sleep(0.25)

    def owner_loop() -> None:
        for i in range(400):
            if stop.is_set():
                return
            started = time.monotonic()
            w = (
                call(gserver.owner, "brain_write", path="notes/owner-log.md", mode="append", content=f"- owner {i}")
                if i
                else call(gserver.owner, "brain_write", path="notes/owner-log.md", mode="create", content="# Owner\n")
            )
            r = call(gserver.owner, "brain_read", path="notes/owner-log.md")
            owner_lat[phase[0]].append(time.monotonic() - started)
            for reply in (w, r):
                if reply.error:
                    owner_errors.append(reply.error)

    def until(done: Callable[[], bool], what: str, deadline_s: float = 60.0) -> None:
        """Poll `done` until it holds; fail naming `what` past the deadline."""
        deadline = time.monotonic() + deadline_s
        while not done():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            time.sleep(0.05)

    threads = [threading.Thread(target=guest_loop, args=(n,)) for n in range(2)] + [threading.Thread(target=owner_loop)]
    for t in threads:
        t.start()
    try:
        # Each phase lasts until the traffic it is about has happened, not for a fixed time.
        until(lambda: len(acked) >= 2 and len(owner_lat["before"]) >= 3, "guest and owner traffic before the kill")
        gserver.redis.kill()  # SIGKILL: Redis gets no chance to flush
        killed = time.monotonic()
        phase[0] = "outage"
        until(lambda: len(guest_errors) >= 4 and len(owner_lat["outage"]) >= 3, "guest refusals during the outage")
        gserver.redis.start()
        outage_s = time.monotonic() - killed
        phase[0] = "after"
        until(
            lambda: any(p == "after" for p in acked.values()) and len(owner_lat["after"]) >= 3,
            "guests and the owner served after the restart",
        )
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)
    # The owner never noticed.
    assert owner_errors == []
    assert all(owner_lat.values()), owner_lat
    # Guests got a clear refusal, and only while Redis was down.
    assert guest_errors, "the outage was not observed by any guest call"
    assert all("queue unavailable" in e for e in guest_errors), guest_errors
    # No proposal that was acknowledged is lost, however close to the kill it was.
    listed = call(gserver.owner, "brain_proposals")
    assert listed.error is None, listed.error
    pending = {p["id"] for p in listed.data["proposals"]}
    assert set(acked) <= pending
    assert any(p == "after" for p in acked.values()), "guests did not resume after the restart"
    health = httpx.get(f"{gserver.url}/healthz").json()
    assert health["guest_door"] == "ok"
    before = sum(1 for p in acked.values() if p == "before")
    o = {k: percentiles(v) for k, v in owner_lat.items()}
    g = percentiles(guest_fail_lat)
    write_section(
        "redis",
        "Redis killed and restarted during guest traffic",
        f"""
Two guests propose and ask in a loop, and the owner appends and reads in a loop, over real HTTP;
the real `redis-server` is killed with SIGKILL for {outage_s:.1f} s, then restarted on the same data.

| figure | value |
|---|---|
| proposals acknowledged before the kill / during / after the restart | {before} / {sum(1 for p in acked.values() if p == "outage")} / {sum(1 for p in acked.values() if p == "after")} |
| acknowledged proposals missing after the restart | 0 |
| guest calls refused during the outage | {len(guest_errors)}; distinct replies: {md_cell(" · ".join(sorted(set(guest_errors))), 300)} |
| time for a guest call to fail, p50 / max | {g["p50"]:.0f} / {g["max"]:.0f} ms |
| owner write+read errors before / during / after | 0 / 0 / 0 |
| owner write+read round p50 / max: before | {o["before"]["p50"]:.0f} / {o["before"]["max"]:.0f} ms ({o["before"]["n"]} rounds) |
| owner write+read round p50 / max: during the outage | {o["outage"]["p50"]:.0f} / {o["outage"]["max"]:.0f} ms ({o["outage"]["n"]} rounds) |
| owner write+read round p50 / max: after the restart | {o["after"]["p50"]:.0f} / {o["after"]["max"]:.0f} ms ({o["after"]["n"]} rounds) |
| `/healthz` guest door after the restart | ok |
""",
    )


# -- a full disk and a read-only repository ---------------------------------------------


def _fill(folder: Path) -> None:
    """Fill the file system holding `folder` to the last byte (bounded by its size)."""
    for n, chunk in enumerate((1 << 16, 512, 1)):
        try:
            with open(folder / f"filler-{n}", "wb") as f:
                for _ in range(1 << 16):
                    f.write(b"\0" * chunk)
                    f.flush()
        except OSError:
            continue


def _stray_files(repo: Path) -> list[str]:
    """Half-written leftovers: libgit2's temporary objects and lock files."""
    return sorted(
        str(p.relative_to(repo)) for p in repo.rglob("*") if p.name.startswith("tmp_") or p.name.endswith(".lock")
    )


@pytest.fixture
def small_disk(tmp_path):
    need_mounts()
    with tmpfs(tmp_path / "disk", "4m") as disk:
        yield disk


def _disk_server(tmp_path: Path, disk: Path):
    from cortex.app.brain_setup import init_brain

    brain = disk / "brain.git"
    init_brain(brain, bare=True)
    parts = assemble(make_settings(tmp_path, brain))
    return parts, RunningServer(make_app(parts), parts.settings)


def test_a_full_disk_gives_a_clear_error_and_service_resumes(tmp_path, small_disk):
    parts, running = _disk_server(tmp_path, small_disk)
    with running:
        url = f"{running.url}/mcp"
        assert call(url, "brain_write", path="notes/a.md", mode="create", content="before\n").error is None
        head = parts.brain.store.head()
        _fill(small_disk)
        refused = [
            call(
                url,
                "brain_write",
                path=f"notes/full-{i}.md",
                mode="create",
                content=f"# Full {i}\n\n" + "words " * 2000,
            )
            for i in range(3)
        ]
        refused.append(call(url, "brain_capture", text="a capture on a full disk"))
        for r in refused:
            assert r.error and "\n" not in r.error, r.error
        assert parts.brain.store.head() == head
        assert _stray_files(parts.brain.store.path) == []
        # Reads carry on while the disk is full.
        assert call(url, "brain_read", path="notes/a.md").data["text"] == "before\n"
        assert call(url, "brain_search", query="before").error is None
        for filler in small_disk.glob("filler-*"):
            filler.unlink()
        started = time.monotonic()
        r = call(url, "brain_write", path="notes/full-0.md", mode="create", content="# Full 0\n\nfits now\n")
        resumed_ms = (time.monotonic() - started) * 1000
        assert r.error is None and r.data["parent"] == head
    dangling = git(parts.brain.store.path, "fsck", "--no-progress", check=False).stdout.count("dangling")
    fsck(parts.brain.store.path)
    errors = sorted({r.error for r in refused})
    _record_disk("full", " · ".join(errors), resumed_ms, dangling)
    # libgit2 does not always say why an object write failed (seen here: GitError carrying
    # the stale message of an earlier tree lookup); the reply must name the cause anyway.
    assert [e for e in errors if "no space left on device" not in e.lower()] == []


def test_a_read_only_repository_gives_a_clear_error_and_service_resumes(tmp_path, small_disk):
    parts, running = _disk_server(tmp_path, small_disk)
    with running:
        url = f"{running.url}/mcp"
        head = parts.brain.store.head()
        # As root, permission bits are ignored (chmod -R a-w changes nothing for root),
        # so the file system itself is made read-only: a remount of the tmpfs.
        remount(small_disk, "ro")
        try:
            r = call(url, "brain_write", path="notes/ro.md", mode="create", content="read-only\n")
            assert r.error and "Read-only file system" in r.error and "\n" not in r.error, r.error
            assert parts.brain.store.head() == head
            assert call(url, "brain_read", path="profile.md").error is None
            assert call(url, "brain_ask", question="Who is the owner?").error is None
        finally:
            remount(small_disk, "rw")
        started = time.monotonic()
        w = call(url, "brain_write", path="notes/ro.md", mode="create", content="read-write again\n")
        resumed_ms = (time.monotonic() - started) * 1000
        assert w.error is None and w.data["parent"] == head
    assert _stray_files(parts.brain.store.path) == []
    fsck(parts.brain.store.path)
    _record_disk("read-only", r.error, resumed_ms, 0)


_DISK_ROWS: dict[str, str] = {}


def _record_disk(case: str, error: str, resumed_ms: float, dangling: int) -> None:
    _DISK_ROWS[case] = (
        f"| {case} | {md_cell(error, 400)} | head unchanged; no temporary object or lock "
        f"left; `git fsck --strict` clean; {dangling} dangling object(s) | "
        f"next write committed ({resumed_ms:.0f} ms) |"
    )
    rows = "\n".join(_DISK_ROWS[k] for k in ("full", "read-only") if k in _DISK_ROWS)
    write_section(
        "disk",
        "A full disk and a read-only repository",
        f"""
The brain lives on its own 4 MiB tmpfs. *Full*: the file system is filled to the last byte, then
writes are tried. *Read-only*: the tmpfs is remounted read-only (as root, `chmod -R a-w` is no
test at all: root ignores permission bits; `chattr +i` works too but only per file). Reads,
searches and asks keep working in both cases.

| case | the write's reply | what is left on disk | after the cause is gone |
|---|---|---|---|
{rows}

Dangling objects are blobs written before the commit failed; nothing refers to them and
`git gc` removes them.
""",
    )

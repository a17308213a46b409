"""Two `cortex serve` processes on one machine, as a user starts them by mistake or on purpose.

A second server on the same port got uvicorn's raw "[Errno 98] address already in use"
(rc 3); a second brain under one CORTEX_HOME was told "a redis-server is already running
on …/redis.sock; stop it first", which meant stopping the first server's own Redis. Each
case starts real processes: the refusals are one line said before any port is taken, and
two brains each get a private Redis and a queue of their own.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from guestkit import need_redis
from reliakit import ServeProcess, post_initialize, run_cortex
from serverkit import TOKEN, call

from cortex.app.brain_setup import init_brain
from cortex.guests.redis_process import RedisProcess, redis_server_binary

pytestmark = pytest.mark.slow  # each case starts processes


def second_serve(home: Path, brain: Path, port: int) -> tuple[int, list[str]]:
    """A second `cortex serve`, run to its end: (return code, stderr lines)."""
    env = {"CORTEX_HOME": str(home), "CORTEX_BRAIN": str(brain), "CORTEX_TOKEN": TOKEN, "CORTEX_MEANING": "off"}
    r = run_cortex("serve", "--port", str(port), env=env)
    return r.returncode, r.stderr.strip().splitlines()


def server(tmp_path: Path, home: Path, brain: Path, name: str, bindir: Path | None = None) -> ServeProcess:
    return ServeProcess(home, brain, {"CORTEX_TOKEN": TOKEN}, bindir or tmp_path / "bin", tmp_path / f"{name}.log")


def with_redis(tmp_path: Path) -> Path:
    """A PATH folder holding redis-server: the servers start their private Redis."""
    need_redis()
    bindir = tmp_path / "redis-bin"
    bindir.mkdir(exist_ok=True)
    if not (bindir / "redis-server").exists():
        (bindir / "redis-server").symlink_to(redis_server_binary())
    return bindir


def test_a_second_serve_of_one_brain_names_the_first_before_it_takes_any_port(tmp_path):
    brain = tmp_path / "brain.git"
    init_brain(brain, bare=True)
    first = server(tmp_path, tmp_path / "home", brain, "first")
    first.start()
    try:
        said = (
            f"cortex serve: this brain ({brain}) is already served by PID {first.proc.pid} at {first.url}/mcp; "
            "one process writes to a brain at a time: stop it first, or use that server"
        )
        # The same port (which it would not get) and another one (which it would): the brain is said first.
        assert second_serve(tmp_path / "home", brain, first.port) == (1, [said])
        assert second_serve(tmp_path / "home-2", brain, first.port + 1 if first.port < 65535 else 1024) == (1, [said])
    finally:
        first.stop()


def test_a_restart_waits_for_a_stopping_server_to_let_go_of_the_brain(tmp_path):
    """Issue 55: Ctrl-C then an immediate restart was refused while the old process still saved
    its index. A holder whose port no longer answers is stopping: the new serve waits for it."""
    brain = tmp_path / "brain.git"
    init_brain(brain, bare=True)
    from reliakit import free_port

    gone = free_port()  # nothing listens there: the holder has closed its port, as a stopping server has
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from cortex.brain.lock import BrainLock; "
            f"BrainLock.acquire(Path(sys.argv[1]), Path(sys.argv[1]), 'served', 'http://127.0.0.1:{gone}/mcp'); "
            "print('held', flush=True); time.sleep(3)",
            str(brain),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        again = server(tmp_path, tmp_path / "home", brain, "again")
        again.start()
        try:
            assert time.monotonic() - started >= 1.5  # it waited for the holder to end
            assert f"Waiting for PID {holder.pid} to let go of {brain} (it is stopping)" in again.output()
            assert call(f"{again.url}/mcp", "brain_list", folder="").error is None
        finally:
            again.stop()
    finally:
        holder.kill()
        holder.wait()


def test_a_port_another_server_holds_is_refused_naming_that_process(tmp_path):
    one, two = tmp_path / "one.git", tmp_path / "two.git"
    init_brain(one, bare=True)
    init_brain(two, bare=True)
    first = server(tmp_path, tmp_path / "home", one, "first")
    first.start()
    try:
        rc, err = second_serve(tmp_path / "home", two, first.port)
        holder = f"PID {first.proc.pid} ({Path(sys.executable).name} -m cortex.cli serve --port {first.port})"
        assert (rc, err) == (
            1,
            [
                f"cortex serve: cannot listen on 127.0.0.1:{first.port}: {holder} listens there; "
                "stop it, or choose another port (--port)"
            ],
        )
        # A --brain that does not exist is said before the port is even tried.
        nowhere = tmp_path / "nowhere"
        assert second_serve(tmp_path / "home", nowhere, first.port) == (
            1,
            [f"cortex serve: no brain at {nowhere}. Make one with: cortex init {nowhere}"],
        )
        assert not nowhere.exists()
    finally:
        first.stop()


def guest_add(home: Path, brain: Path, name: str, scope: str) -> str:
    """`cortex guest add NAME --brain BRAIN`; the guest's door secret."""
    r = run_cortex(
        "guest", "add", name, "--brain", str(brain), "--scope", scope, env={"CORTEX_HOME": str(home)}, check=True
    )
    return re.search(r"^/g/([^/\s]+)/mcp$", r.stdout, re.M).group(1)


def propose(base: str, secret: str, path: str) -> str:
    """A guest's proposal, once the server has read the commit that added the guest; its id."""
    for _ in range(100):
        if post_initialize(f"{base}/g/{secret}/mcp", {}).status_code == 200:
            break
        time.sleep(0.1)
    r = call(f"{base}/g/{secret}/mcp", "brain_propose", token=None, path=path, content="# Idea\n", mode="create")
    assert r.error is None, r
    return r.data["id"]


def test_two_brains_under_one_home_each_have_a_private_redis_and_queue_of_their_own(tmp_path):
    bindir = with_redis(tmp_path)
    home = tmp_path / "home"
    one, two = tmp_path / "one.git", tmp_path / "two.git"
    init_brain(one, bare=True)
    init_brain(two, bare=True)
    first, second = server(tmp_path, home, one, "one", bindir), server(tmp_path, home, two, "two", bindir)
    assert first.start()["guest_door"] == "ok"
    try:
        assert second.start()["guest_door"] == "ok"  # was: "stop it first", about the first one's Redis
        try:
            # The guest is added to brain two by --brain: the default brain and brain one know nothing of it.
            secret = guest_add(home, two, "alice", "notes/")
            pid = propose(second.url, secret, "notes/idea.md")
            assert [p["id"] for p in call(f"{second.url}/mcp", "brain_proposals").data["proposals"]] == [pid]
            assert call(f"{first.url}/mcp", "brain_proposals").data["proposals"] == []
            assert not (home / "brain").exists()
            first.stop()  # its Redis goes with it; the second one's stays
            assert [p["id"] for p in call(f"{second.url}/mcp", "brain_proposals").data["proposals"]] == [pid]
        finally:
            second.stop()
    finally:
        first.stop()
    folders = {RedisProcess.for_brain(home, b).folder for b in (one, two)}
    assert len(folders) == 2 and all((f / "appendonlydir").is_dir() for f in folders)
    assert {(f / "brain").read_text().strip() for f in folders} == {str(one.resolve()), str(two.resolve())}


def test_a_redis_a_killed_server_left_is_stopped_by_the_next_start_its_data_kept(tmp_path):
    """Outside Linux nothing takes the private Redis down with a `kill -9`ed server; the next
    start finds it answering on the brain's folder with no Cortex holding the folder."""
    bindir = with_redis(tmp_path)
    home, brain = tmp_path / "home", tmp_path / "brain.git"
    init_brain(brain, bare=True)
    private = RedisProcess.for_brain(home, brain)
    private.folder.mkdir(parents=True)
    left = subprocess.Popen(
        [redis_server_binary(), "--port", "0", "--unixsocket", str(private.socket_path), "--dir", str(private.folder)]
        + ["--appendonly", "yes", "--save", ""],
        stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            if private.ping():
                break
            time.sleep(0.05)
        redis.Redis(unix_socket_path=str(private.socket_path)).set("cortex:left-behind", "kept")
        serve = server(tmp_path, home, brain, "serve", bindir)
        assert serve.start()["guest_door"] == "ok"
        try:
            assert left.wait(10) == 0  # asked to shut down, it wrote its AOF and exited
            assert f"guest queue: stopped the redis-server a stopped Cortex left on {private.socket_path}" in (
                serve.output()
            )
            assert redis.Redis(unix_socket_path=str(private.socket_path)).get("cortex:left-behind") == b"kept"
        finally:
            serve.stop()
    finally:
        if left.poll() is None:
            left.kill()
            left.wait(10)


def test_the_shared_redis_folder_of_earlier_versions_moves_into_the_first_brain_served(tmp_path):
    bindir = with_redis(tmp_path)
    home, brain = tmp_path / "home", tmp_path / "brain.git"
    init_brain(brain, bare=True)
    old = RedisProcess(home / "redis").start()  # the layout before: one Redis in $CORTEX_HOME/redis/
    redis.Redis(unix_socket_path=str(old.socket_path)).set("cortex:pending", "a proposal")
    old.stop()
    serve = server(tmp_path, home, brain, "serve", bindir)
    assert serve.start()["guest_door"] == "ok"
    try:
        mine = RedisProcess.for_brain(home, brain)
        assert f"guest queue: moved the private Redis's data from {home / 'redis'} into {mine.folder}" in (
            serve.output()
        )
        assert redis.Redis(unix_socket_path=str(mine.socket_path)).get("cortex:pending") == b"a proposal"
        assert not (home / "redis" / "appendonlydir").exists()
    finally:
        serve.stop()

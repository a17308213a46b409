"""Shared parts for the guest-door and proposal tests: a real redis-server per
test (unix socket in tmp_path), a settable clock, and a server with a guest.

In CI (CI=true) a missing redis-server fails these suites; elsewhere they skip
with the reason.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from serverkit import RunningServer, make_settings

from cortex.app.server import assemble, make_app
from cortex.guests.policy import add_guest
from cortex.guests.queue import ProposalQueue
from cortex.guests.redis_process import RedisProcess, redis_server_binary


def need_redis() -> None:
    if redis_server_binary() is not None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail("redis-server is not installed: CI must install it (ops/system-deps.sh --tests)")
    pytest.skip("redis-server is not installed; run ops/system-deps.sh --tests to run the Redis suites")


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, start: dt.datetime | None = None):
        self.t = start or dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.t

    def advance(self, **delta: float) -> None:
        self.t += dt.timedelta(**delta)


@pytest.fixture
def redis_proc(tmp_path: Path):
    need_redis()
    proc = RedisProcess(tmp_path / "redis").start()
    yield proc
    proc.stop()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@dataclass
class Guest:
    name: str
    secret: str
    url: str


class GuestServer:
    """A running server with a Redis queue on a settable clock; `guest()` adds guests."""

    def __init__(self, running: RunningServer, parts: Any, queue: ProposalQueue, redis: RedisProcess):
        self.running = running
        self.parts = parts
        self.queue = queue
        self.redis = redis
        self.url = running.url
        self.owner = f"{running.url}/mcp"

    @property
    def brain(self):
        return self.parts.brain

    def guest(self, name: str, scopes: list[str], **limits: Any) -> Guest:
        _, secret, _ = add_guest(self.brain, name, scopes, **limits)
        return Guest(name, secret, f"{self.url}/g/{secret}/mcp")

    def stop(self) -> None:
        self.running.__exit__(None, None, None)
        self.queue.close()


def start_guest_server(tmp_path: Path, brain_path: Path, redis: RedisProcess, clock: Clock, **env: str):
    """A running GuestServer; `env`: settings beside REDIS_URL (e.g. CORTEX_MEANING=off)."""
    parts = assemble(make_settings(tmp_path, brain_path, env={"REDIS_URL": redis.url, **env}))
    queue = ProposalQueue(redis.url, clock=clock)
    parts.queue = queue
    running = RunningServer(make_app(parts), parts.settings)
    running.__enter__()
    return GuestServer(running, parts, queue, redis)


@pytest.fixture
def gserver(tmp_path: Path, brain_path: Path, redis_proc: RedisProcess, clock: Clock):
    server = start_guest_server(tmp_path, brain_path, redis_proc, clock)
    yield server
    server.stop()


def commit_count(brain) -> int:
    commits, more = brain.store.history(None, limit=10_000)
    assert not more
    return len(commits)

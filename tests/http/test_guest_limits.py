"""A guest holds at most MAX_GUEST_SESSIONS sessions and MAX_GUEST_STREAMS event streams open
on the guest door, per guest secret; beyond, a request is refused at once with 429, Retry-After
and a one-line JSON-RPC error. Over real HTTP on a real server with a real Redis: before the
cap, one guest opened 300 sessions and streams in 1.1 s and /healthz slowed to 0.76 s."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from guestkit import Clock, start_guest_server
from reliakit import ACCEPT, PROTOCOL, initialize_body
from serverkit import acall, client

from cortex.guests.redis_process import RedisProcess
from cortex.http import guest_door
from cortex.http.guest_limits import MAX_GUEST_SESSIONS, MAX_GUEST_STREAMS


def headers(session: str | None = None) -> dict[str, str]:
    h = {"Accept": ACCEPT, "Content-Type": "application/json", "mcp-protocol-version": PROTOCOL}
    return h | ({"mcp-session-id": session} if session else {})


def open_session(http: httpx.Client, url: str) -> httpx.Response:
    """An initialize on the 2025 protocol, and the initialized notification when it was let in."""
    r = http.post(url, json=initialize_body(), headers={"Accept": ACCEPT})
    if r.status_code == 200:
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert http.post(url, json=note, headers=headers(r.headers["mcp-session-id"])).status_code in (200, 202)
    return r


def assert_refused(r: httpx.Response, what: str) -> int:
    """A 429 saying `what` in one line, with Retry-After in whole seconds (returned)."""
    assert r.status_code == 429, (r.status_code, r.text[:200])
    message = r.json()["error"]["message"]
    assert what in message and "\n" not in message, message
    assert r.headers["retry-after"].isdigit() and int(r.headers["retry-after"]) >= 1
    return int(r.headers["retry-after"])


@contextlib.contextmanager
def stream(http: httpx.Client, url: str, session: str) -> Iterator[httpx.Response]:
    """A GET event stream held open on `session` (its answer's headers read, its body not)."""
    with http.stream("GET", url, headers=headers(session) | {"Accept": "text/event-stream"}) as r:
        yield r


def test_a_guest_holds_at_most_its_sessions_and_streams(gserver) -> None:
    guest, other = gserver.guest("potter", ["notes/public/"]), gserver.guest("weaver", ["notes/public/"])
    with httpx.Client(timeout=30) as http:
        sessions = [open_session(http, guest.url) for _ in range(MAX_GUEST_SESSIONS)]
        assert [r.status_code for r in sessions] == [200] * MAX_GUEST_SESSIONS
        ids = [r.headers["mcp-session-id"] for r in sessions]
        wait = assert_refused(
            open_session(http, guest.url), f"too many open sessions for this guest (at most {MAX_GUEST_SESSIONS})"
        )
        assert wait > 60  # none is idle yet: the SDK keeps an idle session for 30 minutes
        # Another guest's secret has its own places; the guest's open sessions still work.
        assert open_session(http, other.url).status_code == 200
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
        listed = http.post(guest.url, json=call, headers=headers(ids[0]))
        assert listed.status_code == 200 and "brain_ask" in listed.text
        # The newest protocol is sessionless: the SDK's own client is served while the sessions are full.

        async def ask() -> Any:
            async with client(guest.url, token=None) as c:
                return await acall(c, "brain_propose", path="notes/public/x.md", mode="create", content="# X\n")

        assert asyncio.run(ask()).error is None
        # Ending a session frees its place.
        assert http.delete(guest.url, headers=headers(ids.pop())).status_code in (200, 204)
        again = open_session(http, guest.url)
        assert again.status_code == 200
        ids.append(again.headers["mcp-session-id"])

        # Event streams: two held open, a third refused until one closes.
        with stream(http, guest.url, ids[0]) as first:
            assert first.status_code == 200
            with stream(http, guest.url, ids[1]) as second:
                assert second.status_code == 200 and MAX_GUEST_STREAMS == 2
                with stream(http, guest.url, ids[2]) as third:
                    third.read()
                    assert_refused(third, f"too many open event streams for this guest (at most {MAX_GUEST_STREAMS})")
                with stream(http, other.url, open_session(http, other.url).headers["mcp-session-id"]) as theirs:
                    assert theirs.status_code == 200  # the other guest's own streams
        # A closed stream frees its place once the server has seen the client go (a moment later).
        deadline = time.monotonic() + 10
        while True:
            with stream(http, guest.url, ids[2]) as third:
                if third.status_code == 200 or time.monotonic() > deadline:
                    break
            time.sleep(0.05)
        assert third.status_code == 200
        for sid in ids:
            http.delete(guest.url, headers=headers(sid))
        assert open_session(http, guest.url).status_code == 200


def test_a_flood_of_sessions_is_refused_at_once(gserver) -> None:
    guest = gserver.guest("potter", ["notes/public/"])

    async def flood() -> list[int]:
        async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=50)) as http:
            replies = await asyncio.gather(
                *(http.post(guest.url, json=initialize_body(), headers={"Accept": ACCEPT}) for _ in range(300))
            )
            assert (await http.get(f"{gserver.url}/healthz")).status_code == 200
            return [r.status_code for r in replies]

    codes = asyncio.run(flood())
    assert codes.count(200) == MAX_GUEST_SESSIONS and codes.count(429) == 300 - MAX_GUEST_SESSIONS


def test_an_idle_session_stops_counting_when_the_sdk_ends_it(
    tmp_path: Path, brain_path: Path, redis_proc: RedisProcess, clock: Clock, monkeypatch
) -> None:
    """The count ends a session with the SDK's idle timeout (the door's app is made with it)."""
    monkeypatch.setattr(guest_door, "GUEST_SESSION_IDLE_S", 1.0)
    server = start_guest_server(tmp_path, brain_path, redis_proc, clock, CORTEX_MEANING="off")
    try:
        guest = server.guest("potter", ["notes/public/"])
        with httpx.Client(timeout=30) as http:
            ids = [open_session(http, guest.url).headers["mcp-session-id"] for _ in range(MAX_GUEST_SESSIONS)]
            assert assert_refused(open_session(http, guest.url), "too many open sessions") <= 1
            time.sleep(1.5)
            stale = http.post(
                guest.url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, headers=headers(ids[0])
            )
            assert stale.status_code == 404  # the SDK let it go
            assert [open_session(http, guest.url).status_code for _ in range(MAX_GUEST_SESSIONS)] == [200] * 8
    finally:
        server.stop()

"""The requests the embedding yields to: `Traffic` itself, and the doors telling it of each MCP
request (and of nothing else) through the real router."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

from cortex.http.doors import DoorRouter
from cortex.meaning.traffic import YIELD_S, Traffic


def test_quiet_only_while_no_request_is_in_flight_and_an_end_counts_once() -> None:
    traffic = Traffic()
    assert traffic.quiet.is_set()
    first = traffic.begin()
    second = traffic.begin()
    assert not traffic.quiet.is_set()
    first()
    first()  # the timer's end and the request's own: one end
    assert not traffic.quiet.is_set()
    second()
    assert traffic.quiet.is_set()


def test_hold_waits_for_the_request_to_end_and_never_longer_than_yield_s() -> None:
    traffic = Traffic()
    end = traffic.begin()
    timer = threading.Timer(0.05, end)
    timer.start()
    began = time.monotonic()
    traffic.hold()
    assert traffic.quiet.is_set() and time.monotonic() - began < YIELD_S + 1.0
    never = traffic.begin()  # a request that never ends: hold still returns
    began = time.monotonic()
    traffic.hold()
    assert time.monotonic() - began >= YIELD_S * 0.9
    never()


class _Counted:
    longest = 5.0

    def __init__(self) -> None:
        self.log: list[str] = []

    def begin(self) -> Callable[[], None]:
        self.log.append("begin")
        return lambda: self.log.append("end")


async def _request(router: DoorRouter, path: str) -> int:
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": path,
        "raw_path": path.encode(),
        "headers": [],
        "query_string": b"",
    }
    await router(scope, receive, send)
    return int(sent[0]["status"])


def test_the_doors_count_each_mcp_request_and_nothing_else() -> None:
    async def inner(scope, receive, send) -> None:
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    counted = _Counted()
    router = DoorRouter(inner, "o" * 40, None, inner, inner, traffic=counted)  # type: ignore[arg-type]
    assert asyncio.run(_request(router, "/healthz")) == 204
    assert counted.log == []
    assert asyncio.run(_request(router, "/mcp")) == 401  # refused, but it was a request all the same
    assert counted.log == ["begin", "end"]

"""How much of the server one guest may hold open (`GuestLimits`): its MCP sessions and its
open GET event streams, each up to a small fixed cap per guest secret; a request beyond one is
refused at once, in one line, with HTTP 429 and Retry-After.

A session is counted from the answer that opened it (its `mcp-session-id`) until the guest
ends it (DELETE), the SDK no longer knows it (a 404 for its ID), or it has been idle (no
request in flight, an open event stream counting as one) for as long as the SDK keeps an idle
session: the guest door's MCP app is made with that same idle time. A stream is counted while
its GET is in flight. Plain ASGI: the door (`guest_door`) says which requests open a session.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["MAX_GUEST_SESSIONS", "MAX_GUEST_STREAMS", "STREAM_RETRY_S", "GuestLimits"]

MAX_GUEST_SESSIONS = 8  # an assistant holds one or two; unbounded, one guest opened 300 in 1.1 s (/healthz 0.76 s)
MAX_GUEST_STREAMS = 2  # the guest door sends nothing on a GET stream (no listen, no resources): one is plenty
STREAM_RETRY_S = 60  # Retry-After for a stream: a held stream ends when its guest closes it, unknown when
SESSION_ID = b"mcp-session-id"


@dataclass
class _Session:
    busy: int = 0  # requests in flight on it, an open event stream included
    idle_since: float = 0.0  # when the last of them ended


@dataclass
class _Guest:
    sessions: dict[str, _Session] = field(default_factory=dict)
    opening: int = 0  # requests in flight that may open a session: each holds a place
    streams: int = 0  # GET event streams in flight


class GuestLimits:
    """Each guest's open sessions and event streams, by a key per guest secret."""

    def __init__(
        self,
        idle_s: float,
        opens_session: Callable[[Scope], bool],
        sessions: int = MAX_GUEST_SESSIONS,
        streams: int = MAX_GUEST_STREAMS,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.idle_s = idle_s  # the SDK's idle time for the door's sessions
        self.opens_session = opens_session  # whether a request without a session ID may open one
        self.max_sessions = sessions
        self.max_streams = streams
        self.clock = clock
        self._guests: dict[str, _Guest] = {}

    def _live(self, guest: _Guest) -> dict[str, _Session]:
        """The guest's sessions, less those the SDK has let go for idleness."""
        now = self.clock()
        for sid in [s for s, v in guest.sessions.items() if not v.busy and now - v.idle_since >= self.idle_s]:
            del guest.sessions[sid]
        return guest.sessions

    def _session_wait(self, guest: _Guest) -> int:
        """Seconds until one of the guest's sessions may have gone idle long enough to end."""
        now = self.clock()
        ends = [v.idle_since + self.idle_s - now if not v.busy else self.idle_s for v in guest.sessions.values()]
        return max(1, math.ceil(min(ends, default=self.idle_s)))

    async def serve(self, key: str, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one request of the guest `key` through `app`, or refuse it past a cap."""
        guest = self._guests.setdefault(key, _Guest())
        sid = _header(scope, SESSION_ID)
        method = scope.get("method", "")
        self._live(guest)
        if method == "GET" and guest.streams >= self.max_streams:
            await _refuse(f"too many open event streams for this guest (at most {self.max_streams})", STREAM_RETRY_S)(
                scope, receive, send
            )
            return
        opening = method == "POST" and sid is None and self.opens_session(scope)
        if opening and len(guest.sessions) + guest.opening >= self.max_sessions:
            wait = self._session_wait(guest)
            await _refuse(
                f"too many open sessions for this guest (at most {self.max_sessions}): end one with DELETE, "
                "or wait for one to expire",
                wait,
            )(scope, receive, send)
            return
        guest.streams += method == "GET"
        guest.opening += opening
        session = guest.sessions.get(sid) if sid is not None else None
        if session is not None:
            session.busy += 1
        answer: dict[str, object] = {}

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
                answer["sid"] = _header(message, SESSION_ID)
            await send(message)

        try:
            await app(scope, receive, watched)
        finally:
            guest.streams -= method == "GET"
            guest.opening -= opening
            self._settle(guest, sid, method, answer)
            if not (guest.sessions or guest.opening or guest.streams):
                self._guests.pop(key, None)

    def _settle(self, guest: _Guest, sid: str | None, method: str, answer: dict[str, object]) -> None:
        """After a request: a session its answer opened is counted; one the guest ended, or the
        SDK no longer knows, is not; the rest are idle from now."""
        status = answer.get("status")
        ok = isinstance(status, int) and status < 400
        new = answer.get("sid")
        if sid is None and ok and isinstance(new, str):
            guest.sessions[new] = _Session(idle_since=self.clock())
            return
        session = guest.sessions.get(sid) if sid is not None else None
        if session is None or sid is None:
            return
        session.busy -= 1
        session.idle_since = self.clock()
        if status == 404 or (method == "DELETE" and ok):
            del guest.sessions[sid]


def _header(scope: Scope | Message, name: bytes) -> str | None:
    """A header of a request's scope or a response's start message."""
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def _refuse(message: str, retry_after: int) -> ASGIApp:
    """A 429 with Retry-After and a JSON-RPC error (no id) saying why in one line."""
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": message}}).encode()

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"application/json"), (b"retry-after", str(retry_after).encode())]
        await send({"type": "http.response.start", "status": 429, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app

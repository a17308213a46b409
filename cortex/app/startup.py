"""The port opens first: an ASGI app that answers at once and hands over when the server is built.

Importing the MCP SDK and building every door takes seconds on a small machine
(measured 1-2 s here, and more while the index builds beside it), and uvicorn
binds its port only after the app's lifespan has started. So `cortex serve`
starts uvicorn with this small app: the port is open as soon as uvicorn is, the
real app is built in a thread, and its lifespan runs inside this one's. Until it
is ready `/healthz` says so, and every other request waits for it (bounded),
then is served by the real app. Nothing is answered from a half-built server.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cortex.guests.redis_process import RedisProcess
    from cortex.settings import Settings

__all__ = [
    "ASGIApp",
    "Receive",
    "Scope",
    "Send",
    "Starting",
    "WAIT_S",
    "after_listening",
    "claim_brain",
    "listen",
    "serve",
]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

WAIT_S = 60.0  # a request that arrives while the server is being built waits at most this long


class Starting:
    """Answers at once; serves through `build()`'s app as soon as it exists."""

    def __init__(
        self, build: Callable[[], ASGIApp], on_error: Callable[[str], None] | None = None, wait_s: float = WAIT_S
    ):
        self._build = build
        self._on_error = on_error
        self._built = threading.Event()
        self._wait_s = wait_s
        self._app: ASGIApp | None = None
        self._error: str | None = None
        self._ready = asyncio.Event()
        self._started = time.monotonic()
        self._inner_lifespan: asyncio.Task | None = None
        self._to_inner: asyncio.Queue | None = None
        self._from_inner: asyncio.Queue | None = None

    # -- lifespan: build in a thread, then run the real app's lifespan inside ours ---------

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        assert message["type"] == "lifespan.startup"
        await send({"type": "lifespan.startup.complete"})  # the port opens now
        builder = asyncio.create_task(self._build_and_start())
        message = await receive()  # lifespan.shutdown
        builder.cancel()
        if self._to_inner is not None and self._inner_lifespan is not None:
            await self._to_inner.put({"type": "lifespan.shutdown"})
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._from_inner.get(), timeout=10)  # type: ignore[union-attr]
        await send({"type": "lifespan.shutdown.complete"})

    async def _build_and_start(self) -> None:
        try:
            app = await asyncio.to_thread(self._build)
            self._to_inner, self._from_inner = asyncio.Queue(), asyncio.Queue()
            await self._to_inner.put({"type": "lifespan.startup"})
            self._inner_lifespan = asyncio.ensure_future(
                app(
                    {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}},
                    self._to_inner.get,
                    self._from_inner.put,
                )
            )
            reply = await self._from_inner.get()
            if reply["type"] != "lifespan.startup.complete":
                raise RuntimeError(reply.get("message") or "the server's start-up failed")
            self._app = app
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # said to every request, and to on_error (cortex serve exits)
            self._error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if self._on_error is not None:
                self._on_error(self._error)
        finally:
            self._ready.set()
            self._built.set()

    @property
    def error(self) -> str | None:
        """Why the server could not be built, or None."""
        return self._error

    def wait_built(self, timeout: float | None = None) -> bool:
        """Block (in a thread) until the build finished, well or not."""
        return self._built.wait(timeout)

    # -- requests -------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if self._app is None and self._error is None:
            if scope["type"] == "http" and scope["path"] == "/healthz":
                await _json(
                    send,
                    200,
                    {
                        "ok": True,
                        "starting": True,
                        "note": f"the server is being built ({time.monotonic() - self._started:.1f} s "
                        "so far); requests wait for it",
                    },
                )
                return
            try:
                await asyncio.wait_for(self._ready.wait(), timeout=self._wait_s)
            except TimeoutError:
                if scope["type"] == "http":
                    await _json(
                        send, 503, {"error": f"still starting after {self._wait_s:.0f} s; retry shortly"}, retry_after=5
                    )
                return
        if self._app is None:
            if scope["type"] == "http":
                await _json(send, 503, {"error": f"the server could not start: {self._error}"})
            return
        await self._app(scope, receive, send)


async def _json(send: Send, status: int, body: dict[str, Any], retry_after: int | None = None) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    if retry_after:
        headers.append((b"retry-after", str(retry_after).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def after_listening(server: Any, fn: Callable[[], None]) -> threading.Thread:
    """Run `fn` in a thread once uvicorn `server` listens: heavy start-up work (the index build,
    the first hand-edit scan) must not hold the GIL while the port is being opened."""

    def wait_then_run() -> None:
        while not server.started and not server.should_exit:
            time.sleep(0.01)
        if not server.should_exit:
            fn()

    thread = threading.Thread(target=wait_then_run, name="cortex-after-listening", daemon=True)
    thread.start()
    return thread


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to `host`:`port`, or BadInput in one line saying why not.

    Bound here, not by uvicorn: uvicorn binds after the app's lifespan has started, so
    a port in use or a host this machine does not have was said after the banner.
    """
    from cortex.errors import BadInput

    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    except (socket.gaierror, UnicodeError) as exc:
        raise BadInput(f"cannot listen on {host}:{port}: {getattr(exc, 'strerror', None) or exc}") from None
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            from cortex.app.port_holder import port_holder

            why = f"{port_holder(port)} listens there; stop it, or choose another port (--port)"
        else:
            why = exc.strerror or str(exc)
        raise BadInput(f"cannot listen on {host}:{port}: {why}") from None
    sock.set_inheritable(True)
    return sock


# How long `cortex serve` waits for a stopping server of the same brain to let go of it.
LET_GO_WAIT_S = 60.0


def claim_brain(settings: Settings, url: str) -> Any:
    """Before the port: the local brain exists, can be served, and no other process serves it
    (its lock, held from here on). StoreError in one line otherwise: a second `cortex serve`
    of one brain names the first one's PID and URL whichever port it asked for. None for a
    brain made or cloned at start-up (the embedded default's first start, hosted mode),
    which is locked once it exists."""
    if settings.remote:
        return None
    from cortex.app.brain_store import open_local_store
    from cortex.brain.lock import BrainLock
    from cortex.errors import StoreError

    store = open_local_store(settings)
    if store is None:
        return None
    deadline = time.monotonic() + LET_GO_WAIT_S
    said = False
    while True:
        try:
            return BrainLock.acquire(store.common_dir, settings.brain, "served", url)
        except StoreError:
            holder = BrainLock.holder(store.common_dir) or {}
            where = holder.get("url")
            # A server still answering is serving: refused at once. One whose port is closed is
            # stopping (Ctrl-C, then saving its index): wait for it to let go.
            if (isinstance(where, str) and healthz(where) is not None) or time.monotonic() > deadline:
                raise
            if not said:
                _say(f"Waiting for PID {holder.get('pid')} to let go of {settings.brain} (it is stopping) …")
                said = True
            time.sleep(0.2)


def healthz(url: str) -> int | None:
    """The HTTP status of `/healthz` of the server at `url` (its base or its `/mcp`), or None
    when nothing answers there (a closed port: no server, or one that is stopping)."""
    import urllib.error
    import urllib.request

    base = url.rstrip("/").removesuffix("/mcp")
    try:
        with urllib.request.urlopen(f"{base}/healthz", timeout=2) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return None


def _say(line: str) -> None:
    import sys

    print(line, file=sys.stderr, flush=True)


def _exit_on_sigterm() -> None:
    """uvicorn re-raises SIGTERM after its graceful shutdown; with the default
    handler that kills the process before our cleanup (the private Redis) runs."""
    import signal

    def handler(signum: int, frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, handler)


def serve(settings: Settings, show_secrets: bool = True) -> int:
    """Open the port at once, then build the server behind it (startup.Starting).

    The brain is checked first, so a wrong path or branch, or a brain another process
    serves, exits with its one-line reason before any port is taken; everything slow (the
    private Redis, the MCP SDK's import, the doors, the index build, the first hand-edit
    scan) happens once the port is open. `show_secrets=False`: a new token is not printed
    (a server whose output goes to a log file).
    """
    import sys

    import uvicorn

    from cortex.settings import check_door_secrets

    check_door_secrets(settings)  # a weak or shared secret: one line, before the port opens
    url = f"http://{settings.host}:{settings.port}/mcp"
    state: dict[str, Any] = {"lock": claim_brain(settings, url)}
    sock = listen(settings.host, settings.port)  # bound before the banner says where
    _exit_on_sigterm()
    private: RedisProcess | None = None

    def build() -> Any:
        nonlocal private
        from cortex.app.server import (  # 0.5 s of imports (pygit2, numpy): after the port opens
            assemble,
            banner,
            make_app,
        )
        from cortex.brain.lock import BrainLock

        private, off = _private_redis(settings)
        parts = assemble(settings)
        if state["lock"] is None:  # a brain made or cloned just now: locked before the watcher, doors or writes
            state["lock"] = BrainLock.acquire(parts.brain.store.common_dir, settings.brain, "served", url)
        state["parts"] = parts
        parts.new_token = parts.new_token and show_secrets  # the banner then says where it is kept
        parts.queue_off = off
        print(banner(parts), flush=True)
        if off:
            print(f"Guest door {off}: guests get 503 until REDIS_URL is set or redis-server is installed.", flush=True)
        return make_app(parts)

    def failed(reason: str) -> None:
        print(f"cortex serve: {reason}", file=sys.stderr, flush=True)
        server.should_exit = True

    app = Starting(build, on_error=failed)  # a wrong brain path or branch: said, then the process exits
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=settings.host,
            port=settings.port,
            log_level="warning",
            lifespan="on",
            **settings.uvicorn_options(),
        )
    )
    # The index's load or build waits for the doors: started beside the MCP SDK's import,
    # it made the first brain_read 0.6 s later and the first search no sooner at 10,000
    # notes (both GIL-bound; measured side by side, 4 starts each).
    after_listening(server, lambda: _warm_when_built(app, state))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass  # Ctrl-C: uvicorn has already shut down cleanly, then raised it again
    finally:
        if "parts" in state:
            from cortex.app.server import save_on_shutdown

            save_on_shutdown(state["parts"])
        if private is not None:
            private.stop()
    return 1 if app.error else 0


def _private_redis(settings: Settings) -> tuple[RedisProcess | None, str | None]:
    """With no REDIS_URL, the embedded default: this brain's private Redis on a unix socket in
    the state folder, append-only (settings.redis_url then names it); else why the guest door
    is off."""
    from cortex.guests.redis_process import NOT_INSTALLED, RedisProcess, redis_server_binary

    if settings.redis_url:
        return None, None
    if redis_server_binary() is None:
        return None, NOT_INSTALLED
    try:
        private = RedisProcess.for_brain(settings.home, settings.served_repository()).start(log=_say)
    except RuntimeError as exc:
        return None, f"disabled: {exc}"
    settings.redis_url = private.url
    return private, None


def _warm_when_built(app: Starting, state: dict[str, Any]) -> None:
    from cortex.app.server import warm_up

    app.wait_built()
    if "parts" in state:
        warm_up(state["parts"])

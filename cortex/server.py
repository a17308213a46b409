"""Putting it together: settings -> brain -> tools -> doors -> uvicorn."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from .brain import Brain
from .config import Settings, load_or_make_secret
from .gitstore import GitStore, StoreError
from .ask import AnswerCache, Asker, MemoryCache
from .readers import AnthropicReader, OfflineReader, Reader
from .tools import Tools


@dataclass
class Parts:
    settings: Settings
    brain: Brain
    tools: Tools
    owner_token: str
    url_secret: str
    new_token: bool
    queue: object | None = None      # the ProposalQueue, made from settings.redis_url by make_app
    queue_off: str | None = None     # why the guest door is disabled, when it is


def open_brain(settings: Settings) -> tuple[Brain, bool]:
    """Open the configured brain; the embedded default is made from the template once."""
    from .cli import init_brain

    made = False
    default = settings.home / "brain"
    if not settings.brain.exists() and settings.brain == default:
        settings.home.mkdir(parents=True, exist_ok=True)
        init_brain(settings.brain, bare=True)
        made = True
    try:
        store = GitStore(settings.brain)
    except StoreError as exc:
        raise SystemExit(f"{exc}. Make one with: cortex init {settings.brain}") from None
    return Brain(store, settings.tz), made


def assemble(settings: Settings) -> Parts:
    brain, _ = open_brain(settings)
    if settings.token:
        token, new = settings.token, False
    else:
        token, new = load_or_make_secret(settings.home / "owner-token")
    url_secret = settings.url_secret or load_or_make_secret(settings.home / "url-secret")[0]
    asker = Asker(brain, make_reader(settings), answer_cache(settings), pack_bytes=settings.pack_bytes)
    return Parts(settings, brain, Tools(brain, asker), token, url_secret, new)


def answer_cache(settings: Settings) -> AnswerCache:
    """In Redis when one is configured (shared by every instance), else in memory."""
    if settings.redis_url:
        from .proposals import RedisAnswerCache

        return RedisAnswerCache(settings.redis_url)
    return MemoryCache()


def make_reader(settings: Settings) -> Reader:
    """The model reader when a key is set, else the offline extractive reader."""
    if settings.anthropic_key:
        return AnthropicReader(settings.reader_model, settings.anthropic_key)
    return OfflineReader()


def warm_up(parts: Parts) -> None:
    """Build the corpus and its index in the background: reads are served at once,
    and the first search waits only for what is left of the build."""
    import threading

    threading.Thread(target=parts.brain.snapshot, name="cortex-warm-up", daemon=True).start()


def make_app(parts: Parts):
    from .doors import build_app
    from .guestdoor import guest_parts

    return build_app(parts.settings, parts.tools, parts.owner_token, parts.url_secret, **guest_parts(parts))


def banner(parts: Parts) -> str:
    s = parts.settings
    host = "127.0.0.1" if s.host in ("0.0.0.0", "::") else s.host
    base = f"http://{host}:{s.port}"
    lines = [f"Cortex serving {s.brain} at {base}/mcp (head {(parts.brain.store.head() or '')[:12]})"]
    if parts.new_token:
        config = {"mcpServers": {"cortex": {"type": "http", "url": f"{base}/mcp",
                                             "headers": {"Authorization": f"Bearer {parts.owner_token}"}}}}
        lines += [
            "",
            "Owner token (shown once; kept in " + str(s.home / "owner-token") + "):",
            f"  {parts.owner_token}",
            "",
            "Claude Code:",
            f"  claude mcp add --transport http cortex {base}/mcp --header \"Authorization: Bearer {parts.owner_token}\"",
            "Any MCP client (JSON config):",
            "  " + json.dumps(config),
            "Connector-style clients (the URL is the secret):",
            f"  {base}/s/{parts.url_secret}/mcp",
        ]
    else:
        lines.append(f"Owner token: in {s.home / 'owner-token'} (or CORTEX_TOKEN); secret URL in "
                     f"{s.home / 'url-secret'}.")
    return "\n".join(lines)


def _exit_on_sigterm() -> None:
    """uvicorn re-raises SIGTERM after its graceful shutdown; with the default
    handler that kills the process before our cleanup (the private Redis) runs."""
    import signal

    def handler(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, handler)


def serve(settings: Settings) -> int:
    import uvicorn

    _exit_on_sigterm()
    from .redisproc import NOT_INSTALLED, RedisProcess, redis_server_binary

    private, off = None, None
    if not settings.redis_url:
        if redis_server_binary() is None:
            off = NOT_INSTALLED
        else:  # the embedded default: a private Redis on a unix socket, append-only
            try:
                private = RedisProcess(settings.home / "redis").start()
                settings.redis_url = private.url
            except RuntimeError as exc:
                off = f"disabled: {exc}"
    try:
        parts = assemble(settings)
        parts.queue_off = off
        print(banner(parts), flush=True)
        warm_up(parts)
        if off:
            print(f"Guest door {off}: guests get 503 until REDIS_URL is set or redis-server is installed.",
                  flush=True)
        uvicorn.run(make_app(parts), host=settings.host, port=settings.port, log_level="warning")
    finally:
        if private is not None:
            private.stop()
    return 0

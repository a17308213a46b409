"""Putting it together: settings -> brain -> tools -> doors -> uvicorn."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cortex.app.brain_setup import make_meaning, open_brain
from cortex.ask.answer_cache import AnswerCache, MemoryCache
from cortex.ask.asker import Asker
from cortex.ask.reader_order import ReaderOrder
from cortex.ask.readers import AnthropicReader, OfflineReader, Reader
from cortex.brain.brain import NO_COMMITS_HINT
from cortex.http.server_parts import ServerParts
from cortex.index.saved import IndexFile
from cortex.settings import (
    SECRET_FILES,
    Settings,
    check_door_secrets,
    default_home,
    keep_header_file,
    keep_python_file,
    load_or_make_secret,
)
from cortex.tools.toolset import Asked, Confirmations, Tools

if TYPE_CHECKING:  # the HTTP side is imported where the app is made (`cortex serve`, tests)
    from cortex.http.doors import DoorRouter
    from cortex.meaning.closeness import Meaning

__all__ = [
    "answer_cache",
    "assemble",
    "banner",
    "client_snippets",
    "confirmations",
    "make_app",
    "make_reader",
    "oauth_line",
    "save_on_shutdown",
    "sync_parts",
    "warm_up",
]


def assemble(settings: Settings) -> ServerParts:
    check_door_secrets(settings)  # before anything opens: the variables and the files there are
    brain, _ = open_brain(settings)
    brain.meaning = make_meaning(settings, brain, log=_say)
    if settings.token:
        token, new = settings.token, False
    else:
        token, new = load_or_make_secret(settings.home / SECRET_FILES["token"])
    url_secret = settings.url_secret or load_or_make_secret(settings.home / SECRET_FILES["url_secret"])[0]
    keep_header_file(settings.home, token)  # what the printed Claude Desktop config reads
    keep_python_file(settings.home)  # what the MCP Bundle's launcher runs when python3 lacks Cortex
    reader = make_reader(settings)
    server_model = reader if settings.anthropic_key else None
    order = ReaderOrder(settings.reader, server_model, OfflineReader() if server_model else reader)
    asker = Asker(
        brain,
        reader,
        answer_cache(settings),
        pack_bytes=settings.pack_bytes,
        sweep=settings.ask_sweep,
        order=order,
        client_timeout=settings.reader_timeout,
    )
    parts = ServerParts(
        settings,
        brain,
        Tools(
            brain,
            asker,
            public_url=settings.public_url,
            confirm_writes=settings.confirm_writes == "on",
            asked=confirmations(settings),
        ),
        token,
        url_secret,
        new,
    )
    # Hand edits on a working tree; pushes and fetches in hosted mode (threads start with the app)
    if settings.remote:
        from cortex.store.remote import RemoteStore

        assert isinstance(brain.store, RemoteStore)  # open_brain's hosted mode
        parts.remote = brain.store
    elif brain.store.workdir is not None:
        from cortex.brain.watcher import Editor

        parts.editor = Editor(brain, settings.debounce_ms, author=settings.author)
    return parts


def sync_parts(parts: ServerParts, app_args: dict[str, Any]) -> dict[str, Any]:
    """build_app's arguments plus the webhook route, the sync threads and their health."""
    from cortex.store.remote import RemoteStore, webhook_route

    runners = [r for r in (parts.editor, parts.remote) if r is not None]
    routes = list(app_args.pop("extra_routes", None) or [])
    remote = parts.remote if isinstance(parts.remote, RemoteStore) else None
    routes.append(webhook_route(remote, parts.settings.webhook_secret))
    health = app_args.get("health")
    startup = list(app_args.get("on_startup") or [])

    def combined_health() -> dict[str, Any]:
        body = dict(health() if health else {})
        if parts.brain.meaning is not None:
            body.update(parts.brain.meaning.status())
        for r in runners:
            body.update(r.status())
        return body

    parts.health = combined_health  # the console's Status page shows it to the signed-in owner
    app_args.update(extra_routes=routes, health=combined_health, on_startup=startup + [r.start for r in runners])
    return app_args


def confirmations(settings: Settings) -> Confirmations:
    """brain_write's open confirmations: in Redis in hosted mode with REDIS_URL, where any
    instance behind a load balancer answers one another asked; else in this process."""
    if settings.remote and settings.redis_url:
        from cortex.guests.queue import RedisConfirmations

        return RedisConfirmations(settings.redis_url)
    return Asked()


def answer_cache(settings: Settings) -> AnswerCache:
    """In Redis when one is configured (shared by every instance), else in memory."""
    if settings.redis_url:
        from cortex.guests.queue import RedisAnswerCache

        return RedisAnswerCache(settings.redis_url)
    return MemoryCache()


def make_reader(settings: Settings) -> Reader:
    """The model reader when a key is set, else the offline extractive reader."""
    if settings.anthropic_key:
        return AnthropicReader(settings.reader_model, settings.anthropic_key)
    return OfflineReader()


def _say(line: str) -> None:
    import sys

    print(line, file=sys.stderr, flush=True)


def warm_up(parts: ServerParts) -> None:
    """Build the corpus and its index in the background: reads are served at once,
    and the first search waits only for what is left of the build."""
    import sys

    def progress(done: int, total: int) -> None:
        print(
            f"index: {done:,} of {total:,} files read" + (" - done" if done == total else ""),
            file=sys.stderr,
            flush=True,
        )

    parts.brain.corpus.progress = progress
    parts.brain.corpus.warm()
    threading.Thread(target=_names_when_built, args=(parts,), name="cortex-names", daemon=True).start()
    meaning = parts.brain.meaning
    if meaning is not None:
        # After the port opens and the index is on its way: search is lexical until it is done.
        meaning.progress = _meaning_progress(meaning)
        meaning.start(parts.brain.corpus)
    saved = parts.brain.corpus.saved
    if isinstance(saved, IndexFile):
        # Its first round waits for the build (or load) warm() started and saves it when
        # it is new; then hourly while the head moves (cortex.index.saved.SAVE_EVERY_S says why).
        saved.keep_saving(parts.brain.corpus)


def _names_when_built(parts: ServerParts) -> None:
    """The name map behind "names first", made once the index is: not by the first search."""
    try:
        snap = parts.brain.corpus.latest()  # waits for the build warm() started
        if snap is not None:
            parts.tools.names.at(snap)
    except Exception:  # noqa: BLE001 - the build reports its own failure; the first search retries and says why
        return


def _meaning_progress(meaning: Meaning) -> Callable[[int, int], None]:
    """Prints how far the first embedding has got, at most every 5 s, with how long the rest
    will take at the rate so far, and when it is done."""
    import time

    from cortex.meaning.closeness import say_duration

    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - last[0] >= 5.0:
            last[0] = now
            eta = meaning.eta
            left = f"; {eta[0]:,} passages left, {say_duration(eta[1])}" if eta and done < total else ""
            _say(f"meaning: {done:,} of {total:,} notes embedded" + (" - done" if done >= total else left))

    return progress


def save_on_shutdown(parts: ServerParts) -> None:
    """A clean shutdown saves the head's index if it moved since the last save, and the vectors,
    and writes the OAuth records' last changes."""
    records = getattr(getattr(parts.oauth, "provider", None), "records", None)
    close = getattr(records, "close", None)
    if close is not None:
        close()  # FileRecords: its writer thread's queue
    if parts.brain.meaning is not None:
        parts.brain.meaning.stop()
        parts.brain.meaning.save()
    saved, corpus = parts.brain.corpus.saved, parts.brain.corpus
    if not isinstance(saved, IndexFile):
        return
    saved.stop_saving()
    if corpus.built() is not None:
        # Whatever goes wrong, the snapshot already built is still worth saving.
        with contextlib.suppress(Exception):
            corpus.latest()  # one tree diff: commits the server never read are saved too
        saved.save_or_say(corpus)


def make_app(parts: ServerParts) -> DoorRouter:
    from cortex.http.console.routes import console_routes
    from cortex.http.doors import build_app
    from cortex.http.guest_door import guest_parts
    from cortex.http.mcp_tools import request_state
    from cortex.http.oauth import make_oauth

    guest = guest_parts(parts)  # first: it makes parts.queue from REDIS_URL, which the console shares
    parts.request_state = request_state(parts.settings)  # shared by every owner door, the OAuth one too
    parts.oauth = make_oauth(parts, guest["review"])  # before the console: its consent page uses it
    return build_app(
        parts.settings,
        parts.tools,
        parts.owner_token,
        parts.url_secret,
        oauth=parts.oauth,
        request_state=parts.request_state,
        **sync_parts(parts, dict(guest, extra_routes=console_routes(parts))),
    )


def banner(parts: ServerParts) -> str:
    """What `cortex serve` prints once it is built: where it serves, the console, and a config
    for each kind of client that works as pasted, on the first start and on every one after."""
    s = parts.settings
    host = "127.0.0.1" if s.host in ("0.0.0.0", "::") else s.host
    base = f"http://{host}:{s.port}"
    head = parts.brain.store.head()
    lines = [f"Cortex serving {s.brain} at {base}/mcp ({f'head {head[:12]}' if head else 'no commits yet'})"]
    if head is None:
        lines.append(f"The brain is empty: {NO_COMMITS_HINT}.")
    signin = "the owner token" + (" or CORTEX_CONSOLE_PASSCODE" if s.console_passcode else "")
    lines.append(f"Console: {base}/console (sign in with {signin})")
    lines += client_snippets(parts, base)
    lines.append(oauth_line(parts.settings))
    return "\n".join(lines)


def _http_config(url: str, token: str) -> dict[str, Any]:
    return {"mcpServers": {"cortex": {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {token}"}}}}


def _cortex_token(s: Settings, *flags: str) -> str:
    """The `cortex token` command that prints this server's secret from any shell: with the
    state folder named when it is not the default one."""
    prefix = "" if s.home == default_home() else f"CORTEX_HOME={_sh(str(s.home))} "
    return prefix + " ".join(["cortex token", *flags])


def _sh(text: str) -> str:
    import shlex

    return shlex.quote(text)


def oauth_line(s: Settings) -> str:
    """Where OAuth sign-in answers: the public URL, or loopback only (and how to change that)."""
    if s.oauth == "off":
        return "OAuth: off (CORTEX_OAUTH=off); clients send the owner token or use the secret URL"
    if s.public_url:
        return f"OAuth: on for {s.public_url}/mcp (paste that URL into Claude.ai, ChatGPT or Claude Code)"
    return (
        "OAuth: on for localhost only (http://127.0.0.1, localhost, [::1]); set CORTEX_PUBLIC_URL to the "
        "https origin clients reach for connectors on the web or the phone"
    )


def client_snippets(parts: ServerParts, base: str) -> list[str]:
    """Each client's config, then what runs alongside: hand edits, the remote.

    The first start shows the new token in them, once. Later starts never print it: a shell
    line reads it with `$(cortex token)`, and Claude Desktop's mcp-remote reads the header
    from the 0600 file `assemble` keeps (`--header-file`, mcp-remote 0.4 or later), so what
    is printed works as pasted without a variable anyone has to set.
    """
    s = parts.settings
    url = f"{base}/mcp"
    kept = s.home / SECRET_FILES["token"]
    if parts.new_token:
        token = parts.owner_token
        lines = ["", f"Owner token (shown once; kept in {kept}; `cortex token` prints it):", f"  {token}", ""]
        http_config = ["Any MCP client (JSON config):", "  " + json.dumps(_http_config(url, token))]
        secret_url = ["Connector-style clients (the URL is the secret):", f"  {base}/s/{parts.url_secret}/mcp"]
    else:
        token = f"$({_cortex_token(s)})"
        told = "CORTEX_TOKEN as this server was given it" if s.token else f"in {kept}"
        lines = [f"Owner token: {told}; `cortex token` prints it."]
        # printf's format is the config with %s for the token (any other % doubled)
        form = json.dumps(_http_config(url, "\0")).replace("%", "%%").replace("\\u0000", "%s")
        http_config = [
            "Any MCP client (JSON config; this shell line prints it):",
            f'  printf {_sh(form)}"\\n" "{token}"',
        ]
        secret_url = [
            "Connector-style clients (the URL is the secret; this shell line prints it):",
            f'  echo "{base}/s/$({_cortex_token(s, "--url-secret")})/mcp"',
        ]
    header = f"Authorization: Bearer {token}"
    lines += ["Claude Code:", f'  claude mcp add --transport http cortex {url} --header "{header}"']
    # `cortex stdio` attaches to this server (or starts one): no Node, and no token in the config.
    desktop = {
        "command": sys.executable,
        "args": ["-P", "-m", "cortex.cli", "stdio"],
        "env": {"CORTEX_HOME": str(s.home), "CORTEX_BRAIN": str(s.brain)},
    }
    lines += http_config + secret_url
    lines += [
        "Claude Desktop, Cursor, VS Code (over stdio with cortex stdio; claude_desktop_config.json):",
        "  " + json.dumps({"mcpServers": {"cortex": desktop}}),
    ]
    if parts.editor is not None:
        lines.append(
            f"Hand edits: watching {parts.editor.root} (committed after "
            f"{parts.settings.debounce_ms} ms of quiet, door editor)"
        )
    if parts.remote is not None:
        hook = "POST /hooks/push (HMAC-SHA256)" if parts.settings.webhook_secret else "off (no CORTEX_WEBHOOK_SECRET)"
        lines.append(
            f"Remote: {parts.remote.display_url} (fetch every {parts.settings.fetch_interval:g} s; "
            f"every write pushed; webhook {hook})"
        )
    return lines

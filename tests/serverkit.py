"""The server kit: a real server on an ephemeral port under uvicorn, the MCP SDK's own
client over HTTP (`call`, `acall`, `client`), and the TypeScript SDK's (`ts_call`). Tests
import these from here; conftest.py holds only fixtures."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from cortex.app.server import assemble, make_app
from cortex.settings import Settings

TOKEN = "owner-token-for-tests-0123456789"
URL_SECRET = "url-secret-for-tests-abcdefghij"


class RunningServer:
    """A uvicorn server in a thread; `url` is its base URL."""

    def __init__(self, app: Any, settings: Settings | None = None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        # The options `cortex serve` uses (proxy headers believed only from trusted proxies).
        options = (settings or Settings.from_env({}, home=Path("/nonexistent"))).uvicorn_options()
        config = uvicorn.Config(app, log_level="warning", lifespan="on", **options)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.run(self.server.serve(sockets=[self.sock]))

    def __enter__(self) -> RunningServer:
        self.thread.start()
        deadline = time.time() + 10
        while not self.server.started:
            if time.time() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def make_settings(tmp_path: Path, brain: Path, **overrides: Any) -> Settings:
    env = {"CORTEX_HOME": str(tmp_path / "home"), "CORTEX_TOKEN": TOKEN, "CORTEX_URL_SECRET": URL_SECRET}
    env.update(overrides.pop("env", {}))
    return Settings.from_env(env, brain=brain, **overrides)


@dataclass
class Reply:
    """A tool call's outcome: `data` for a result, `error` for a tool error."""

    data: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    text: str = ""


@contextlib.asynccontextmanager
async def client(url: str, token: str | None = TOKEN, client_name: str | None = None) -> AsyncIterator[Client]:
    """An MCP SDK client session on `url`; its HTTP client is closed with it (the SDK leaves a
    client it was handed open: its sockets had warned, unclosed, in CI's log)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http)) as session,
    ):
        yield session


async def acall(c: Client, tool: str, **args: Any) -> Reply:
    result = await c.call_tool(tool, args)
    text = "".join(getattr(part, "text", "") for part in result.content)
    if result.is_error:
        return Reply(error=text, text=text)
    data = result.structured_content
    if isinstance(data, dict) and set(data) == {"result"}:
        data = data["result"]
    if data is None:
        data = json.loads(text)
    return Reply(data=data, text=text)


def call(url: str, tool: str, token: str | None = TOKEN, **args: Any) -> Reply:
    """One tool call over HTTP with a fresh MCP session."""

    async def go() -> Reply:
        async with client(url, token) as c:
            return await acall(c, tool, **args)

    return asyncio.run(go())


def list_tools(url: str, token: str | None = TOKEN) -> list[str]:
    async def go() -> list[str]:
        async with client(url, token) as c:
            tools = await c.list_tools()
            return sorted(t.name for t in tools.tools)

    return asyncio.run(go())


def serve(tmp_path: Path, brain_path: Path, **env: str) -> RunningServer:
    parts = assemble(make_settings(tmp_path, brain_path, env={"CORTEX_MEANING": "off", **env}))
    running = RunningServer(make_app(parts), parts.settings)
    running.parts = parts
    return running


def hosted(tmp_path: Path, name: str, remote: Path, redis_url: str) -> RunningServer:
    """A started hosted instance: its own clone of `remote` under tmp_path/name, and the Redis at
    `redis_url`, which several instances share as they would behind a load balancer. Stop it
    with `__exit__` and then `parts.remote.stop()`."""
    settings = make_settings(
        tmp_path / name,
        tmp_path / name / "unused",
        env={
            "CORTEX_REMOTE": str(remote),
            "REDIS_URL": redis_url,
            "CORTEX_MEANING": "off",
            "CORTEX_FETCH_INTERVAL": "30",
        },
    )
    parts = assemble(settings)
    running = RunningServer(make_app(parts), parts.settings).__enter__()
    running.parts = parts
    return running


TS = Path(__file__).parent / "tsclient"


def ts_node(package: str = "@modelcontextprotocol/sdk") -> str:
    """The `node` that runs tests/tsclient's scripts; fails under CI and skips elsewhere
    when it or tests/tsclient's `package` (the TypeScript SDK by default) is missing."""
    node = shutil.which("node")
    if node is None or not (TS / "node_modules" / package).exists():
        if os.environ.get("CI") == "true":
            pytest.fail("node or tests/tsclient/node_modules is missing: `make test` installs them")
        pytest.skip(f"node or {package} is not installed (npm ci --prefix tests/tsclient)")
    return node


def ts_call(url: str, tool: str, **args: Any) -> dict[str, Any]:
    """One call with the official TypeScript SDK client (tests/tsclient, `make test` installs it)."""
    node = ts_node()
    done = subprocess.run(
        [node, str(TS / "call.mjs"), url, TOKEN, tool, json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)

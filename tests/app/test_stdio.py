"""`cortex stdio` (issue 55): the MCP SDK's own stdio client, as a desktop client starts it.
Beside a running `cortex serve` of the same brain it attaches, and writes over both doors land
in one history; with no server it starts one, and stops it when the client goes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from reliakit import ROOT, ServeProcess, free_port
from serverkit import TOKEN, call

from cortex.app.brain_setup import init_brain
from cortex.brain.lock import BrainLock

pytestmark = pytest.mark.slow  # each starts servers


def stdio_env(home: Path, brain: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "REDIS_"))}
    env.update(CORTEX_HOME=str(home), CORTEX_BRAIN=str(brain), CORTEX_TOKEN=TOKEN, CORTEX_MEANING="off")
    env.update(PORT=str(port), PYTHONPATH=str(ROOT))
    return env


async def over_stdio(env: dict[str, str], *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "cortex.cli", "stdio"], env=env, cwd=str(ROOT))
    out = []
    with open(os.devnull, "w") as quiet:
        async with Client(stdio_client(params, errlog=quiet)) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert {"brain_read", "brain_write", "brain_search"} <= names
            for tool, args in calls:
                out.append(await c.call_tool(tool, args))
    return out


def log(brain: Path) -> list[str]:
    return subprocess.run(
        ["git", "-C", str(brain), "log", "--format=%s", "main"], capture_output=True, text=True, check=True
    ).stdout.splitlines()


def test_stdio_attaches_to_the_running_server_and_both_writes_land_in_one_history(tmp_path: Path):
    brain = tmp_path / "brain.git"
    init_brain(brain, bare=True)
    serve = ServeProcess(tmp_path / "home", brain, {"CORTEX_TOKEN": TOKEN}, tmp_path / "bin", tmp_path / "log")
    serve.start()
    try:
        w = call(f"{serve.url}/mcp", "brain_write", path="notes/http.md", mode="create", content="# Over HTTP\n")
        assert w.error is None, w.error
        env = stdio_env(tmp_path / "home", brain, free_port())  # another port: it must not start a server
        wrote, read = asyncio.run(
            over_stdio(
                env,
                ("brain_write", {"path": "notes/stdio.md", "mode": "create", "content": "# Over stdio\n"}),
                ("brain_read", {"path": "notes/http.md"}),
            )
        )
        assert not wrote.is_error, wrote.content
        assert not read.is_error and "Over HTTP" in str(read.content)
        subjects = log(brain)
        assert any("notes/stdio.md" in s for s in subjects) and any("notes/http.md" in s for s in subjects)
        assert call(f"{serve.url}/mcp", "brain_read", path="notes/stdio.md").error is None  # one brain, one server
        assert serve.proc is not None and serve.proc.poll() is None  # still the one writer
    finally:
        serve.stop()


def test_stdio_starts_a_server_when_none_runs_and_stops_it_after(tmp_path: Path):
    brain = tmp_path / "brain.git"
    init_brain(brain, bare=True)
    env = stdio_env(tmp_path / "home", brain, free_port())
    (wrote,) = asyncio.run(
        over_stdio(env, ("brain_write", {"path": "notes/alone.md", "mode": "create", "content": "# Alone\n"}))
    )
    assert not wrote.is_error, wrote.content
    assert any("notes/alone.md" in s for s in log(brain))
    assert BrainLock.holder(brain) is None  # the server it started let go of the brain
    assert oct((tmp_path / "home").stat().st_mode & 0o777) == "0o700"  # the state folder stdio made
    assert "Cortex serving" in (tmp_path / "home" / "stdio-server.log").read_text()  # its log, in the state folder

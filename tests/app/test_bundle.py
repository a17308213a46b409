"""`make bundle` (issue 55): the MCP Bundle's manifest checked, the bundle unpacked and started
as Claude Desktop starts it (its mcp_config, `${__dirname}` and `${user_config.…}` put in) by
the MCP SDK's stdio client, and the registry's server.json read from the same metadata."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from reliakit import ROOT, free_port
from serverkit import TOKEN

from cortex.app.brain_setup import init_brain

pytestmark = pytest.mark.slow  # builds a bundle and starts a server from it


def bundler():
    spec = importlib.util.spec_from_file_location("bundle", ROOT / "ops" / "bundle.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_manifest_is_checked_and_a_broken_one_is_named() -> None:
    b = bundler()
    good = b.manifest(b.metadata())
    assert b.problems(good) == []
    assert b.problems({**good, "author": {}}) == ["author has no name"]
    broken = json.loads(json.dumps(good).replace("user_config.cortex_home", "user_config.home"))
    assert b.problems(broken) == ["${user_config.home} names no user_config field"]
    assert "missing server" in b.problems({k: v for k, v in good.items() if k != "server"})


def test_the_bundle_unpacked_serves_over_stdio_and_server_json_follows_the_package(tmp_path: Path) -> None:
    bundle, registry = bundler().build(tmp_path / "dist")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    entry = json.loads(registry.read_text())["packages"][0]
    assert entry["identifier"] == project["name"] and entry["transport"] == {"type": "stdio"}
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(bundle) as z:
        z.extractall(unpacked)
    manifest = json.loads((unpacked / "manifest.json").read_text())
    assert manifest["version"] == json.loads(registry.read_text())["version"]
    config = manifest["server"]["mcp_config"]
    home, brain = tmp_path / "home", tmp_path / "brain.git"
    init_brain(brain, bare=True)

    def put_in(text: str) -> str:
        return text.replace("${__dirname}", str(unpacked)).replace("${user_config.cortex_home}", str(home))

    env = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "REDIS_", "PYTHON"))}
    env.update({k: put_in(v) for k, v in config["env"].items()})
    env.update(CORTEX_BRAIN=str(brain), CORTEX_TOKEN=TOKEN, CORTEX_MEANING="off", PORT=str(free_port()))
    # The host's python3 is this test's interpreter (it has Cortex's dependencies); the code is the bundle's.
    params = StdioServerParameters(
        command=sys.executable, args=[put_in(a) for a in config["args"]], env=env, cwd=str(tmp_path)
    )

    async def go() -> tuple[set[str], str]:
        with open(os.devnull, "w") as quiet:
            async with Client(stdio_client(params, errlog=quiet)) as c:
                names = {t.name for t in (await c.list_tools()).tools}
                wrote = await c.call_tool("brain_write", {"path": "notes/b.md", "mode": "create", "content": "# B\n"})
                assert not wrote.is_error, wrote.content
                return names, str((await c.call_tool("brain_read", {"path": "notes/b.md"})).content)

    names, read = asyncio.run(go())
    assert {"brain_read", "brain_write", "brain_ask"} <= names and "# B" in read
    assert (unpacked / "server" / "lib" / "cortex" / "cli.py").is_file()  # the code the launcher puts first
    assert (unpacked / "server" / "lib" / "cortex" / "brain_template").is_dir()  # for the embedded default


def test_the_bundle_ships_only_tracked_files_and_its_launcher_finds_a_python_with_cortexs_dependencies(
    tmp_path: Path,
) -> None:
    stray = ROOT / "cortex" / ".env.local"  # untracked and ignored: it must not ship
    stray.write_text("SECRET=1\n")
    try:
        bundle, _ = bundler().build(tmp_path / "dist")
    finally:
        stray.unlink()
    with zipfile.ZipFile(bundle) as z:
        names = z.namelist()
        z.extractall(tmp_path / "unpacked")
    assert not [n for n in names if n.endswith(".env.local") or "__pycache__" in n]
    launcher = tmp_path / "unpacked" / "server" / "main.py"
    # A bare Python of the host: a virtual environment with nothing installed in it.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    bare = tmp_path / "bare" / "bin" / "python"
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "REDIS_", "PYTHON"))}
    env.update(CORTEX_HOME=str(home), CORTEX_MEANING="off")
    lacking = subprocess.run([str(bare), str(launcher)], env=env, capture_output=True, text=True, input="")
    assert lacking.returncode == 1
    assert lacking.stderr.count("\n") == 1 and "pip install cortex-git-brain" in lacking.stderr, lacking.stderr
    # The Python `cortex serve` recorded in the state folder has them: the launcher runs it.
    (home / "python").write_text(sys.executable + "\n")
    found = subprocess.run(
        [str(bare), str(launcher), "--help"], env=env, capture_output=True, text=True, input="", timeout=60
    )
    assert found.returncode == 0 and "stdio" in found.stdout, found.stderr

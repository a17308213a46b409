"""What `cortex serve` prints is run as printed, against the real server it printed it for.

Every client config of the banner, on the first start (the new token shown once) and on a
restart (the token read by `$(cortex token)`, or by mcp-remote from the header file), gets
the owner's tools/list: the shell lines through bash, exactly as pasted into a terminal;
the desktop config through `cortex stdio`, spawned as Desktop spawns it (and the README's
remote config through the real mcp-remote). A
banner once printed `${CORTEX_TOKEN}`, which nobody had set: mcp-remote got a 401. Also
`cortex token` itself, and the README's MCP Inspector line as it works on Node 20.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import selectors
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from reliakit import ROOT, ServeProcess
from serverkit import TS, ts_node

from cortex.app.brain_setup import init_brain

pytestmark = pytest.mark.slow  # each test starts real servers

OWNER_TOOLS = {"brain_read", "brain_search", "brain_write", "brain_ask", "brain_context", "brain_list"}


def shims(tmp_path: Path) -> Path:
    """A bin folder as a user's PATH has it: `cortex` (this checkout, as `pip install -e .` puts
    it there) and `claude`, which records the arguments it is given (Claude Code is not
    installed here: what it would store is what the pasted line hands it)."""
    bindir = tmp_path / "shims"
    bindir.mkdir()
    (bindir / "cortex").write_text(f'#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m cortex.cli "$@"\n')
    (bindir / "claude").write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(tmp_path / 'claude-args.json')!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
    )
    for name in ("cortex", "claude"):
        (bindir / name).chmod(0o755)
    return bindir


def pasted(line: str, bindir: Path, **env: str) -> str:
    """A banner line run in a shell as pasted into one: its stdout."""
    node = shutil.which("node")
    path = f"{bindir}:{Path(node).parent}:/usr/bin:/bin" if node else f"{bindir}:/usr/bin:/bin"
    shell_env = {"PATH": path, "HOME": os.environ.get("HOME", "/root"), **env}
    done = subprocess.run(["bash", "-c", line], env=shell_env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{line!r} failed: {done.stderr}"
    return done.stdout


def printed(banner: str, label: str) -> str:
    """The config line under the banner's line starting with `label`."""
    lines = banner.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(label):
            assert lines[i + 1].startswith("  "), lines[i + 1]
            return lines[i + 1].strip()
    raise AssertionError(f"no {label!r} in the banner:\n{banner}")


def tools_with(url: str, headers: dict[str, str]) -> set[str]:
    """tools/list through the MCP SDK's client, sending exactly `headers`."""

    async def go() -> set[str]:
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            Client(streamable_http_client(url, http_client=http)) as c,
        ):
            return {t.name for t in (await c.list_tools()).tools}

    return asyncio.run(go())


def claude_code(line: str, bindir: Path, tmp_path: Path) -> set[str]:
    """The `claude mcp add` line run as pasted; then the URL and header it gave Claude Code, used."""
    assert line.startswith("claude mcp add --transport http cortex ")
    pasted(line, bindir)
    args = json.loads((tmp_path / "claude-args.json").read_text())
    assert args[:5] == ["mcp", "add", "--transport", "http", "cortex"] and args[6] == "--header", args
    name, _, value = args[7].partition(": ")
    return tools_with(args[5], {name: value})


def desktop(line: str, tmp_path: Path) -> set[str]:
    """The Claude Desktop config run as Desktop runs it: its command and args spawned, MCP over
    stdio. In tests/tsclient, where `npx mcp-remote` finds the pinned mcp-remote."""
    node = ts_node("mcp-remote")
    server = json.loads(line)["mcpServers"]["cortex"]
    env = {"PATH": f"{Path(node).parent}:/usr/bin:/bin", "HOME": str(tmp_path), **server.get("env", {})}
    command = [shutil.which(server["command"], path=env["PATH"]) or server["command"], *server["args"]]
    pipe = subprocess.PIPE
    with subprocess.Popen(command, cwd=TS, env=env, stdin=pipe, stdout=pipe, stderr=pipe) as proc:  # closes the pipes
        try:
            return {t["name"] for t in stdio_tools(proc)["tools"]}
        finally:
            proc.kill()


def stdio_tools(proc: subprocess.Popen, timeout: float = 60) -> dict:
    """initialize, then (once it is answered, as a real client waits) initialized and tools/list
    over a stdio MCP server; the tools/list result. Sent all at once, mcp-remote could forward
    tools/list before it had the session id from initialize's reply: CI once got the server's
    "Missing session ID" for it."""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
    watch = selectors.DefaultSelector()
    watch.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout

    def send(*messages: dict) -> None:
        for message in messages:
            proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()

    def reply_to(wanted: int) -> dict:
        while time.monotonic() < deadline:
            if not watch.select(timeout=1):
                continue
            line = proc.stdout.readline()
            if not line:
                break
            reply = json.loads(line)
            if reply.get("id") == wanted:
                assert "result" in reply, reply
                return reply["result"]
        stderr = proc.stderr.read1(4000) if proc.poll() is not None else ""
        raise AssertionError(f"no reply to request {wanted}; stderr: {stderr}")

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
    reply_to(1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"}, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    return reply_to(2)


def start(tmp_path: Path, home: Path, brain: Path, name: str) -> tuple[ServeProcess, str]:
    """`cortex serve` on `brain`; the server and its banner (what it printed before serving)."""
    log = tmp_path / f"{name}.log"
    server = ServeProcess(home, brain, {}, tmp_path / "bin", log)
    server.start()
    return server, server.output()


def test_every_config_the_banner_prints_works_as_pasted_on_the_first_start_and_after(tmp_path):
    brain = tmp_path / "brain.git"
    init_brain(brain, bare=True)
    home, bindir = tmp_path / "home", shims(tmp_path)
    server, banner = start(tmp_path, home, brain, "first")
    try:
        token = (home / "owner-token").read_text().strip()
        assert token in banner  # the first start shows the new token, once
        assert f"Console: {server.url}/console (sign in with the owner token)" in banner
        assert OWNER_TOOLS <= claude_code(printed(banner, "Claude Code:"), bindir, tmp_path)
        config = json.loads(printed(banner, "Any MCP client (JSON config)"))["mcpServers"]["cortex"]
        assert OWNER_TOOLS <= tools_with(config["url"], config["headers"])
        assert OWNER_TOOLS <= tools_with(printed(banner, "Connector-style clients"), {})
        assert OWNER_TOOLS <= desktop(printed(banner, "Claude Desktop"), tmp_path)
    finally:
        server.stop()

    server, banner = start(tmp_path, home, brain, "again")
    try:
        assert token not in banner and "${" not in banner  # never again, and no variable nobody set
        assert f"Owner token: in {home / 'owner-token'}; `cortex token` prints it." in banner
        assert OWNER_TOOLS <= claude_code(printed(banner, "Claude Code:"), bindir, tmp_path)
        config = json.loads(pasted(printed(banner, "Any MCP client (JSON config"), bindir))["mcpServers"]["cortex"]
        assert config["headers"] == {"Authorization": f"Bearer {token}"}
        assert OWNER_TOOLS <= tools_with(config["url"], config["headers"])
        secret_url = pasted(printed(banner, "Connector-style clients"), bindir).strip()
        assert OWNER_TOOLS <= tools_with(secret_url, {})
        line = printed(banner, "Claude Desktop")
        assert token not in line  # mcp-remote reads the header from the 0600 file
        assert oct((home / "owner-header").stat().st_mode & 0o777) == "0o600"
        assert OWNER_TOOLS <= desktop(line, tmp_path)
    finally:
        server.stop()


def test_a_config_printed_beside_cortex_token_set_works_where_it_is_set(tmp_path):
    """A service given CORTEX_TOKEN: the banner never prints it, and its lines read it back."""
    brain = tmp_path / "brain.git"
    init_brain(brain, bare=True)
    home, bindir = tmp_path / "home", shims(tmp_path)
    token = "a-token-the-owner-chose-0123456789"
    server = ServeProcess(home, brain, {"CORTEX_TOKEN": token}, tmp_path / "bin", tmp_path / "serve.log")
    server.start()
    try:
        banner = server.output()
        assert token not in banner and "Owner token: CORTEX_TOKEN as this server was given it" in banner
        line = printed(banner, "Claude Code:")
        pasted(line, bindir, CORTEX_TOKEN=token)
        assert json.loads((tmp_path / "claude-args.json").read_text())[7] == f"Authorization: Bearer {token}"
        assert OWNER_TOOLS <= desktop(printed(banner, "Claude Desktop"), tmp_path)  # the file follows the variable
    finally:
        server.stop()


def test_cortex_token_prints_the_secret_in_use_and_says_when_there_is_none(tmp_path):
    bindir = shims(tmp_path)
    home = tmp_path / "home"
    run = [str(bindir / "cortex"), "token"]
    env = {"PATH": "/usr/bin:/bin", "CORTEX_HOME": str(home)}
    missing = subprocess.run(run, env=env, capture_output=True, text=True)
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr == (
        f"cortex token: no owner token yet: CORTEX_TOKEN is unset and {home / 'owner-token'} does not exist; "
        "the first cortex serve makes it (set CORTEX_HOME to the state folder the server uses)\n"
    )
    assert not home.exists()  # a refusal makes nothing
    home.mkdir()
    (home / "owner-token").write_text("a-generated-token-0123456789abcdef\n")
    (home / "url-secret").write_text("a-generated-secret-0123456789abcdef\n")
    assert subprocess.run(run, env=env, capture_output=True, text=True).stdout == "a-generated-token-0123456789abcdef\n"
    url = subprocess.run([*run, "--url-secret"], env=env, capture_output=True, text=True).stdout
    assert url == "a-generated-secret-0123456789abcdef\n"
    chosen = {**env, "CORTEX_TOKEN": "the-variable-wins-0123456789"}
    assert subprocess.run(run, env=chosen, capture_output=True, text=True).stdout == "the-variable-wins-0123456789\n"
    (home / "owner-token").write_text("short\n")
    weak = subprocess.run(run, env=env, capture_output=True, text=True)
    assert weak.returncode == 1 and "owner-token is shorter than 16 characters" in weak.stderr


def test_the_readme_inspector_line_for_node_before_22_works_as_printed(tmp_path):
    """On Node 20, npx installs MCP Inspector 0.15 (0.16 and later need Node 22.7.5), which has
    no --header: the README's secret-URL line is run with that version's CLI."""
    node = ts_node("@modelcontextprotocol/inspector-cli")
    readme = (ROOT / "README.md").read_text()
    lines = [line for line in readme.splitlines() if line.startswith("npx @modelcontextprotocol/inspector --cli")]
    by_secret = [line for line in lines if "/s/$(cortex token --url-secret)/mcp" in line]
    assert len(lines) == 2 and len(by_secret) == 1, lines
    brain = tmp_path / "brain.git"
    init_brain(brain, bare=True)
    home, bindir = tmp_path / "home", shims(tmp_path)
    server, _ = start(tmp_path, home, brain, "inspector")
    try:
        cli = TS / "node_modules" / "@modelcontextprotocol" / "inspector-cli" / "build" / "cli.js"
        line = by_secret[0].replace("npx @modelcontextprotocol/inspector", f"{node} {cli}")
        line = re.sub(r"127\.0\.0\.1:8765", f"127.0.0.1:{server.port}", line)
        out = pasted(line, bindir, CORTEX_HOME=str(home))
        assert OWNER_TOOLS <= {t["name"] for t in json.loads(out)["tools"]}
    finally:
        server.stop()


def test_with_the_default_state_folder_the_lines_say_plain_cortex_token(tmp_path, monkeypatch):
    from cortex.app.server import assemble, banner
    from cortex.settings import Settings

    monkeypatch.setenv("HOME", str(tmp_path))  # ~/.cortex is the state folder
    env = {"HOME": str(tmp_path), "CORTEX_MEANING": "off"}
    assemble(Settings.from_env(env))  # the first start makes the brain and the token
    again = banner(assemble(Settings.from_env(env)))
    assert '--header "Authorization: Bearer $(cortex token)"' in again
    assert 'echo "http://127.0.0.1:8765/s/$(cortex token --url-secret)/mcp"' in again
    assert "CORTEX_HOME=" not in again
    assert '"args": ["-P", "-m", "cortex.cli", "stdio"]' in again  # desktop clients over cortex stdio
    assert f'"CORTEX_HOME": "{tmp_path / ".cortex"}"' in again and "npx" not in again


def test_the_readme_desktop_configs_work_as_pasted(tmp_path):
    """The README's two desktop configs, run as Desktop runs them against a real server: the
    stdio one (`cortex stdio` attaching), the Python path and state folder put in; and the
    remote one through the pinned mcp-remote, with `-y` as npx needs it to ask nobody."""
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```json\n(\{\"mcpServers\".*?)\n```", readme, re.S)
    stdio = next(b for b in blocks if "cortex.cli" in b)
    remote = next(b for b in blocks if "mcp-remote" in b)
    assert '"-y", "mcp-remote"' in remote
    brain = tmp_path / "brain.git"
    init_brain(brain, bare=True)
    home = tmp_path / "home"
    server, _ = start(tmp_path, home, brain, "readme-desktop")
    try:
        line = stdio.replace("/home/you/.venvs/cortex/bin/python", sys.executable).replace(
            "/home/you/.cortex", str(home)
        )
        config = json.loads(line)
        config["mcpServers"]["cortex"]["env"]["CORTEX_BRAIN"] = str(brain)  # the README's brain is the default one
        assert OWNER_TOOLS <= desktop(json.dumps(config), tmp_path)
        line = remote.replace("https://notes.example.org/mcp", f"{server.url}/mcp").replace(
            "/home/you/.cortex", str(home)
        )
        assert OWNER_TOOLS <= desktop(line, tmp_path)
    finally:
        server.stop()

"""What the guest door and `cortex guest` say: a refusal names the guest's scope, every guest
tool parameter is described in tools/list, `guest add` warns of a scope no note falls in,
and the guest commands print nothing about the saved index."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from serverkit import call, client

from cortex.app.brain_setup import init_brain

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.slow
def test_a_proposal_outside_the_scope_is_told_what_the_scope_is(gserver):
    g = gserver.guest("alice", ["notes/public/", "projects/plan.md"])
    r = call(g.url, "brain_propose", token=None, path="private/diary.md", content="# Hi\n", mode="create")
    assert r.error, r.data
    assert "outside this guest's scope" in r.error
    assert "under notes/public/" in r.error and "to the note projects/plan.md" in r.error, r.error
    assert "private/diary.md" not in r.error  # the scope is said, never a path the store resolved
    assert gserver.queue.open() == []


@pytest.mark.slow
def test_tools_list_describes_every_parameter_of_the_guest_tools(gserver):
    g = gserver.guest("alice", ["notes/public/"])

    async def listed():
        async with client(g.url, token=None) as c:
            return (await c.list_tools()).tools

    tools = {t.name: t for t in asyncio.run(listed())}
    assert set(tools) == {"brain_ask", "brain_propose"}
    assert set(tools["brain_ask"].input_schema["properties"]) == {"question", "k"}
    assert set(tools["brain_propose"].input_schema["properties"]) == {"path", "content", "mode", "why"}
    for tool in tools.values():
        for name, schema in tool.input_schema["properties"].items():
            assert len(schema.get("description", "")) > 20, (tool.name, name, schema)
    mode = tools["brain_propose"].input_schema["properties"]["mode"]
    assert set(mode["enum"]) == {"create", "replace", "append"}


def _cortex(home: Path, brain: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "REDIS_URL", "ANTHROPIC"))}
    env.update(CORTEX_HOME=str(home), CORTEX_BRAIN=str(brain), CORTEX_MEANING="off")
    return subprocess.run(
        [sys.executable, "-m", "cortex.cli", *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def test_guest_add_warns_of_scopes_no_note_falls_in_and_never_mentions_the_index(tmp_path):
    brain, home = tmp_path / "brain.git", tmp_path / "home"
    init_brain(brain, bare=True)  # the template: notes/, projects/, profile.md, log/
    assert _cortex(home, brain, "reindex").returncode == 0  # a saved index, as a server leaves one
    added = _cortex(
        home,
        brain,
        "guest",
        "add",
        "bob",
        *("--scope", "notes/"),
        *("--scope", "nothing/"),
        *("--scope", "Notes/"),
        *("--scope", "Profile.md"),
    )
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip().splitlines()[-1].startswith("/g/")
    warnings = [line for line in added.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 3, added.stderr  # notes/ matches; the three others do not
    said = "\n".join(warnings)
    assert "scope nothing/ matches no note at the head" in said
    assert "scope Notes/ matches no note" in said and "did you mean notes/?" in said
    assert "did you mean profile.md?" in said
    for args in (["guest", "list"], ["guest", "add", "carol", "--scope", "notes/"], ["guest", "revoke", "bob"]):
        done = _cortex(home, brain, *args)
        assert done.returncode == 0, done.stderr
        assert "index" not in done.stderr, (args, done.stderr)
    assert "index" not in added.stderr, added.stderr
    assert "warning" not in _cortex(home, brain, "guest", "add", "dave", "--scope", "notes/").stderr

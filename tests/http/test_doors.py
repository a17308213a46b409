"""The trusted doors over real HTTP, driven by the MCP SDK's own client."""

from __future__ import annotations

import asyncio
import subprocess

import httpx
import pytest
from reliakit import post_initialize
from serverkit import TOKEN, URL_SECRET, acall, call, client, list_tools

pytestmark = pytest.mark.slow  # every test here takes 0.3 s or more

TRUSTED_TOOLS = {
    "brain_read",
    "brain_write",
    "brain_capture",
    "brain_history",
    "brain_search",
    "brain_corpus",
    "brain_context",
}


def test_auth_matrix_of_the_trusted_doors(server):
    mcp = f"{server.url}/mcp"
    assert post_initialize(mcp, {}).status_code == 401
    assert post_initialize(mcp, {"Authorization": "Bearer wrong"}).status_code == 401
    assert post_initialize(mcp, {"Authorization": f"Basic {TOKEN}"}).status_code == 401
    assert post_initialize(mcp, {"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    # The URL door: right secret works without a header; a wrong one is a bare 404.
    assert post_initialize(f"{server.url}/s/{URL_SECRET}/mcp", {}).status_code == 200
    wrong = post_initialize(f"{server.url}/s/not-the-secret/mcp", {})
    assert wrong.status_code == 404 and wrong.text == "Not Found"
    # The owner token is not a URL secret, and the URL secret is not a bearer token.
    assert post_initialize(f"{server.url}/s/{TOKEN}/mcp", {}).status_code == 404
    assert post_initialize(mcp, {"Authorization": f"Bearer {URL_SECRET}"}).status_code == 401


def test_dns_rebinding_protection_is_on(server):
    r = post_initialize(f"{server.url}/mcp", {"Authorization": f"Bearer {TOKEN}", "Host": "evil.example"})
    assert r.status_code == 421
    r = post_initialize(f"{server.url}/mcp", {"Authorization": f"Bearer {TOKEN}", "Origin": "http://evil.example"})
    assert r.status_code == 403


def test_both_doors_list_the_trusted_tools(server):
    assert TRUSTED_TOOLS <= set(list_tools(f"{server.url}/mcp"))
    assert TRUSTED_TOOLS <= set(list_tools(f"{server.url}/s/{URL_SECRET}/mcp", token=None))


def test_healthz_reports_head_and_note_count(server):
    server.parts.brain.snapshot()  # the index is built
    body = httpx.get(f"{server.url}/healthz").json()
    assert body["sha"] == server.parts.brain.store.head()
    assert body["notes"] == len(server.parts.brain.snapshot().notes)


def test_write_then_read_names_the_sha_and_records_the_door(server):
    mcp = f"{server.url}/mcp"
    w = call(mcp, "brain_write", path="notes/hello.md", mode="create", content="# Hello\n\nworld\n")
    assert w.error is None, w.error
    r = call(mcp, "brain_read", path="notes/hello.md")
    assert r.data["sha"] == w.data["sha"] and r.data["blob"] == w.data["blob"]
    assert r.data["text"] == "# Hello\n\nworld\n"
    h = call(f"{server.url}/s/{URL_SECRET}/mcp", "brain_history", token=None, path="notes/hello.md")
    top = h.data["commits"][0]
    assert top["sha"] == w.data["sha"] and top["door"] == "owner" and top["tool"] == "brain_write"
    assert top["client"] != "unknown"
    w2 = call(
        f"{server.url}/s/{URL_SECRET}/mcp",
        "brain_write",
        token=None,
        path="notes/hello.md",
        mode="append",
        content="more",
    )
    h = call(mcp, "brain_history", path="notes/hello.md", limit=1)
    assert h.data["commits"][0]["door"] == "owner-url"
    assert "more" in h.data  # an older commit remains past the limit
    assert w2.data["replaced_blob"] == w.data["blob"]


def test_refusals_are_one_line_tool_errors(server):
    mcp = f"{server.url}/mcp"
    head = server.parts.brain.store.head()
    for args in [
        dict(path="../etc/passwd.md", mode="create", content="x"),
        dict(path="notes/a.md", mode="create", content="a\x00b"),
        dict(path="INDEX.md", mode="replace", content="x"),
    ]:
        r = call(mcp, "brain_write", **args)
        assert r.error and "\n" not in r.error.strip()
    assert server.parts.brain.store.head() == head


def test_argument_errors_are_one_line_too(server):
    mcp = f"{server.url}/mcp"
    r = call(mcp, "brain_search", query="x", k="many")
    assert r.error and "\n" not in r.error and "k: Input should be a valid integer" in r.error
    r = call(mcp, "brain_write", path="notes/a.md", mode="frob", content="x")
    assert r.error and "\n" not in r.error and "mode:" in r.error and "frob" not in r.error


def test_credentials_are_redacted_in_replies_but_stored(server):
    mcp = f"{server.url}/mcp"
    secret = "sk-ant-api03-" + "A1b2C3d4" * 5
    call(
        mcp,
        "brain_write",
        path="notes/keys.md",
        mode="create",
        content=f"my key: {secret}\nurl: https://x.example/cb?token=abcdef123456\n",
    )
    r = call(mcp, "brain_read", path="notes/keys.md")
    assert secret not in r.text and "[REDACTED API key]" in r.data["text"]
    assert "abcdef123456" not in r.text and "[REDACTED URL credential]" in r.data["text"]
    stored = server.parts.brain.read("notes/keys.md")[2].text
    assert secret in stored


def test_twenty_clients_appending_ten_entries_each(server):
    mcp = f"{server.url}/mcp"
    brain = server.parts.brain
    call(mcp, "brain_write", path="notes/busy.md", mode="create", content="# Busy\n")
    start = int(subprocess.check_output(["git", "rev-list", "--count", "main"], cwd=brain.store.path))

    async def one_client(n: int) -> list[str | None]:
        async with client(mcp) as c:
            errors = []
            for i in range(10):
                r = await acall(
                    c, "brain_write", path="notes/busy.md", mode="append", content=f"- client {n:02d} entry {i}"
                )
                errors.append(r.error)
            return errors

    async def everyone():
        return await asyncio.gather(*(one_client(n) for n in range(20)))

    results = asyncio.run(everyone())
    assert all(e is None for errors in results for e in errors)
    text = brain.read("notes/busy.md")[2].text
    lines = [line for line in text.splitlines() if line.startswith("- client")]
    assert len(lines) == 200 and len(set(lines)) == 200
    end = int(subprocess.check_output(["git", "rev-list", "--count", "main"], cwd=brain.store.path))
    assert end - start == 200
    merges = subprocess.check_output(["git", "rev-list", "--merges", "--count", "main"], cwd=brain.store.path)
    assert merges.strip() == b"0"


def test_read_at_time_gives_the_older_version(server):
    from guestkit import Clock

    mcp = f"{server.url}/mcp"
    clock = server.parts.brain.store.clock = Clock()
    first = call(mcp, "brain_write", path="notes/t.md", mode="create", content="old\n")
    when = server.parts.brain.store.commit_time(first.data["sha"]).isoformat()
    clock.advance(minutes=1)  # Git commit times have one-second resolution
    call(mcp, "brain_write", path="notes/t.md", mode="replace", content="new\n")
    assert call(mcp, "brain_read", path="notes/t.md", as_of=when).data["text"] == "old\n"
    assert call(mcp, "brain_read", path="notes/t.md").data["text"] == "new\n"


def test_every_tool_says_what_each_parameter_is_and_what_it_does_to_the_brain(server):
    """Clients show these to the model and decide from the annotations what needs approval."""
    import asyncio

    from serverkit import client

    async def go():
        async with client(server.url + "/mcp") as c:
            return c.initialize_result if hasattr(c, "initialize_result") else None, (await c.list_tools()).tools

    _, tools = asyncio.run(go())
    by_name = {t.name: t for t in tools}
    for tool in tools:
        for name, schema in tool.input_schema.get("properties", {}).items():
            assert schema.get("description"), f"{tool.name}.{name} has no description"
        assert tool.annotations is not None, tool.name
    reads = [
        "brain_read",
        "brain_search",
        "brain_corpus",
        "brain_ask",
        "brain_context",
        "brain_history",
        "brain_proposals",
    ]
    assert all(by_name[n].annotations.read_only_hint for n in reads)
    assert by_name["brain_write"].annotations.destructive_hint and not by_name["brain_write"].annotations.read_only_hint
    assert by_name["brain_accept"].annotations.idempotent_hint and by_name["brain_reject"].annotations.destructive_hint
    # The time parameter has one name everywhere: brain_read's `at`, renamed before any release, is gone.
    assert "as_of" in by_name["brain_read"].input_schema["properties"]
    assert not any("at" in t.input_schema.get("properties", {}) for t in tools)
    head = server.parts.brain.head()
    assert call(server.url + "/mcp", "brain_read", path="profile.md", as_of=head[:12]).data["sha"] == head


def test_an_argument_the_tool_does_not_take_is_refused_naming_what_it_takes(server):
    """The SDK dropped an unknown argument without a word: `at` (as_of's old name) read the head."""
    before = server.parts.brain.head()
    call(server.url + "/mcp", "brain_write", path="profile.md", mode="append", content="new\n")
    head = server.parts.brain.head()
    r = call(server.url + "/mcp", "brain_read", path="profile.md", at=before[:12])
    assert r.error == (
        "Error executing tool brain_read: invalid arguments: at: not a parameter of brain_read, "
        "which takes path, as_of, heading, page"
    ), r
    r = call(server.url + "/mcp", "brain_write", path="notes/x.md", mode="create", content="x\n", kk=3, limit=2)
    assert r.error is not None and "invalid arguments: kk, limit: not a parameter of brain_write" in r.error
    assert server.parts.brain.head() == head  # the refused write committed nothing
    assert call(server.url + "/mcp", "brain_read", path="profile.md", as_of=before[:12]).data["sha"] == before


def test_server_info_names_a_version(server):
    r = post_initialize(f"{server.url}/mcp", {"Authorization": f"Bearer {TOKEN}"})
    body = r.text
    assert '"serverInfo"' in body and '"version":""' not in body.replace(" ", "")
    from cortex import __version__

    assert __version__ and f'"version":"{__version__}"' in body.replace(" ", "")


def test_each_reply_carries_its_json_once_compact(server):
    """The text block is the structured content as compact JSON, not a pretty-printed second copy."""
    import asyncio
    import json

    async def go():
        async with client(server.url + "/mcp") as c:
            return await c.call_tool("brain_read", {"path": "notes/house-rules.md"})

    result = asyncio.run(go())
    text = "".join(part.text for part in result.content)
    assert json.loads(text) == result.structured_content
    assert "\n  " not in text and ": " not in text.split('"text"')[0]  # no indentation, no padding

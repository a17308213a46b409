"""ChatGPT's connector contract: `search(query)` and `fetch(id)` on the owner door, each reply
exactly one text item whose JSON matches the contract's schema, called as ChatGPT calls them
(raw JSON-RPC on the 2025-06-18 protocol) and through the MCP SDK's own client; the guest
door offers neither."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import jsonschema
import pytest
from reliakit import RawSession
from serverkit import TOKEN, RunningServer, call, client, make_settings

from cortex.app.server import assemble, make_app
from cortex.errors import BadInput
from cortex.tools.connector_fetch import parse_id

# The contract's shapes, as ChatGPT's connector documentation gives them.
SEARCH_SCHEMA = {
    "type": "object",
    "required": ["results"],
    "properties": {
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "title", "url"],
                "properties": {"id": {"type": "string"}, "title": {"type": "string"}, "url": {"type": "string"}},
            },
        }
    },
}
FETCH_SCHEMA = {
    "type": "object",
    "required": ["id", "title", "text", "url"],
    "properties": {
        "id": {"type": "string"},
        "title": {"type": "string"},
        "text": {"type": "string"},
        "url": {"type": "string"},
        "metadata": {"type": ["object", "null"]},
    },
}

KILN = "---\ntitle: Kiln firing\n---\n# Kiln firing\n\nThe kiln fires at 1,240 °C for stoneware.\n"
OLD = "---\ntitle: Old kiln\nstatus: superseded\nsuperseded_by: notes/kiln.md\n---\nThe kiln fired at 1,100 °C.\n"


def _one_text(message: dict[str, Any]) -> dict[str, Any]:
    """The contract: exactly one content item, of type text, holding the JSON."""
    result = message["result"]
    assert not result.get("isError"), result
    (item,) = result["content"]
    assert item["type"] == "text"
    return json.loads(item["text"])


def _write(url: str, path: str, content: str) -> None:
    assert call(url, "brain_write", path=path, mode="create", content=content).error is None


@pytest.fixture
def public(tmp_path, brain_path):
    """A server told its public address (CORTEX_PUBLIC_URL), as one behind HTTPS is."""
    settings = make_settings(tmp_path, brain_path, env={"CORTEX_PUBLIC_URL": "https://brain.example.org"})
    parts = assemble(settings)
    with RunningServer(make_app(parts), parts.settings) as running:
        running.parts = parts
        yield running


def test_search_then_fetch_as_chatgpt_calls_them(server) -> None:
    url = f"{server.url}/mcp"
    _write(url, "notes/kiln.md", KILN)
    _write(url, "notes/glaze.md", "# Glaze\n\nA celadon glaze for the kiln.\n")
    with RawSession(url, {"Authorization": f"Bearer {TOKEN}"}) as s:
        listed = s.post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).json()["result"]["tools"]
        tools = {t["name"]: t for t in listed}
        assert set(tools["search"]["inputSchema"]["properties"]) == {"query"}
        assert set(tools["fetch"]["inputSchema"]["properties"]) == {"id"}
        assert tools["search"]["annotations"]["readOnlyHint"] and tools["fetch"]["annotations"]["readOnlyHint"]
        _, m = s.call("search", {"query": "kiln stoneware"})
        found = _one_text(m)
        jsonschema.validate(found, SEARCH_SCHEMA)
        first = found["results"][0]
        assert first == {"id": "notes/kiln.md", "title": "Kiln firing", "url": "cortex://note/notes/kiln.md"}
        _, m = s.call("fetch", {"id": first["id"]})
        doc = _one_text(m)
    jsonschema.validate(doc, FETCH_SCHEMA)
    assert doc["id"] == "notes/kiln.md" and doc["title"] == "Kiln firing"
    assert "1,240 °C" in doc["text"] and doc["url"] == first["url"]
    assert doc["metadata"]["status"] == "current" and len(doc["metadata"]["sha"]) == 40
    assert "next_id" not in doc["metadata"]


def test_the_sdk_client_gets_the_same_and_the_guest_door_has_neither(gserver) -> None:
    _write(gserver.owner, "notes/public/kiln.md", KILN)

    async def go() -> tuple[Any, Any, set[str]]:
        async with client(gserver.owner, TOKEN) as c:
            searched = await c.call_tool("search", {"query": "kiln"})
            fetched = await c.call_tool("fetch", {"id": "notes/public/kiln.md"})
        guest = gserver.guest("potter", ["notes/public/"])
        async with client(guest.url, None) as g:
            names = {t.name for t in (await g.list_tools()).tools}
        return searched, fetched, names

    searched, fetched, guest_tools = asyncio.run(go())
    assert len(searched.content) == 1 and json.loads(searched.content[0].text) == searched.structured_content
    jsonschema.validate(searched.structured_content, SEARCH_SCHEMA)
    jsonschema.validate(fetched.structured_content, FETCH_SCHEMA)
    assert not {"search", "fetch"} & guest_tools


def test_urls_are_console_pages_at_the_public_address(public) -> None:
    url = f"{public.url}/mcp"
    _write(url, "notes/Café crème.md", "# Café crème\n\nThe café opens at 08:00.\n")
    found = call(url, "search", query="café opens").data
    assert found["results"][0]["url"] == "https://brain.example.org/console/note/notes/Caf%C3%A9%20cr%C3%A8me.md"
    assert call(url, "fetch", id="notes/Café crème.md").data["url"] == found["results"][0]["url"]


def test_a_long_note_comes_in_pages_pinned_to_one_commit(server) -> None:
    url = f"{server.url}/mcp"
    big = "# Hub\n\n" + "".join(f"Line {i}: the hub note links many things together.\n" for i in range(5000))
    _write(url, "notes/hub.md", big)
    first = call(url, "fetch", id="notes/hub.md").data
    sha = first["metadata"]["sha"]
    assert first["metadata"]["page"].startswith("1 of ")
    assert first["metadata"]["next_id"] == f"notes/hub.md?page=2&as_of={sha}"
    _write(url, "notes/other.md", "# Other\n\nA later commit.\n")  # the head moves on
    second = call(url, "fetch", id=first["metadata"]["next_id"]).data
    assert second["metadata"]["sha"] == sha and second["metadata"]["page"].startswith("2 of ")
    text = first["text"] + second["text"]
    assert "Line 0:" in text and text.index("Line 0:") < text.index("Line 1000:")


def test_retired_and_refused(server) -> None:
    url = f"{server.url}/mcp"
    _write(url, "notes/kiln.md", KILN)
    _write(url, "notes/old-kiln.md", OLD)
    ids = [r["id"] for r in call(url, "search", query="kiln fired").data["results"]]
    assert "notes/old-kiln.md" not in ids  # retired notes are left out, as brain_search leaves them
    old = call(url, "fetch", id="notes/old-kiln.md").data
    assert old["metadata"]["retired"] and old["metadata"]["status"] == "superseded"
    assert call(url, "fetch", id="notes/").error  # a folder is no document
    assert (
        "no note" in (call(url, "fetch", id="notes/missing.md").error or "").lower()
        or call(url, "fetch", id="notes/missing.md").error
    )
    assert "id" in (call(url, "fetch", id="notes/kiln.md?page=x").error or "")


@pytest.mark.parametrize(
    "found,parsed",
    [
        ("notes/a.md", ("notes/a.md", None, None)),
        ("notes/a.md?page=3&as_of=abc1234", ("notes/a.md", 3, "abc1234")),
        ("notes/日本語 ノート.md?page=2", ("notes/日本語 ノート.md", 2, None)),
    ],
)
def test_fetch_ids(found: str, parsed: tuple) -> None:
    assert parse_id(found) == parsed


@pytest.mark.parametrize("bad", ["notes/a.md?page=0x", "notes/a.md?x=1", "notes/a.md?page=1&page=2", "a\x00b"])
def test_bad_fetch_ids_are_refused(bad: str) -> None:
    with pytest.raises(BadInput):
        parse_id(bad)

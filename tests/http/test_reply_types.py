"""Every owner tool's reply is a type: tools/list over real HTTP gives each an output schema
naming its reply type's fields, a real call of each gives structuredContent that validates
against that schema, and the text block says the same as the structured content."""

from __future__ import annotations

import asyncio
import json
import typing
from typing import Annotated, Any

import jsonschema
import pytest
from mcp.types import CallToolResult
from serverkit import TOKEN, client
from typing_extensions import TypedDict

from cortex.ask.stamps import STRENGTH, Stamp
from cortex.brain.brain import Brain
from cortex.brain.note_writes import WRITE_MODES, WriteMode
from cortex.tools.table import OWNER_TOOLS, REVIEW_TOOLS
from cortex.tools.write import WriteRequest

KILN = "# Kiln\n\nThe kiln fires at 1,240 °C for stoneware. See [[glaze notes]].\n"


def reply_type(name: str) -> type:
    """The TypedDict a tool declares as its reply."""
    (tool,) = [t for t in OWNER_TOOLS + REVIEW_TOOLS if t.name == name]
    return tool.reply


def test_every_tool_declares_a_reply_type_with_fields() -> None:
    for tool in OWNER_TOOLS + REVIEW_TOOLS:
        fields = typing.get_type_hints(tool.reply)
        if tool.name in ("search", "fetch"):  # ChatGPT's fixed shapes; fetch names its commit in metadata
            assert fields.keys() in ({"results"}, {"id", "title", "text", "url", "metadata"}), tool.name
            continue
        assert "sha" in fields or {"id", "state"} <= set(fields), f"{tool.name}: {sorted(fields)}"


async def calls(owner: str, guest: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """tools/list, then one real call of each owner tool: (tool -> its listing, tool -> its result)."""
    results: dict[str, Any] = {}
    async with client(owner, TOKEN) as c:
        listed = {t.name: t for t in (await c.list_tools()).tools}

        async def call(tool: str, **args: Any) -> Any:
            results[tool] = result = await c.call_tool(tool, args)
            assert not result.is_error, f"{tool}: {result.content}"
            return result.structured_content

        await call("brain_write", path="notes/kiln.md", mode="create", content=KILN, reason="a test note")
        await call("brain_read", path="notes/kiln.md")
        await call("brain_capture", text="fired the test tiles", tags=["kiln"])
        await call("brain_history", limit=5)
        await call("brain_search", query="kiln stoneware")
        await call("brain_corpus", paths=["notes/kiln.md"])
        await call("brain_list", folder="notes/")
        await call("brain_ask", question="At what temperature does the kiln fire?")
        quote = "The kiln fires at 1,240 °C for stoneware."
        await call(
            "brain_verify",
            answer="The kiln fires at 1,240 °C for stoneware.",
            citations=[{"path": "notes/kiln.md", "quote": quote}],
        )
        await call("brain_context")
        await call("brain_working", action="add", kind="todo", text="order cones", project="kiln")
        await call("brain_handoff", project="kiln")
        await call("search", query="kiln")
        await call("fetch", id="notes/kiln.md")
        async with client(guest, None) as g:
            for n in (1, 2):
                args = {"path": f"notes/public/p{n}.md", "content": f"# P{n}\n", "mode": "create"}
                assert not (await g.call_tool("brain_propose", args)).is_error
        ids = [p["id"] for p in (await call("brain_proposals"))["proposals"]]
        await call("brain_accept", id=ids[0])
        await call("brain_reject", id=ids[1], reason="not needed")
    return listed, results


@pytest.mark.slow
def test_each_tool_reply_validates_against_its_output_schema_and_text_says_the_same(gserver) -> None:
    guest = gserver.guest("potter", ["notes/public/"])
    listed, results = asyncio.run(calls(gserver.owner, guest.url))
    owner_tools = [t.name for t in OWNER_TOOLS + REVIEW_TOOLS]
    assert sorted(results) == sorted(owner_tools), "a tool went uncalled"
    for name in owner_tools:
        schema = listed[name].output_schema
        assert schema and schema.get("type") == "object", f"{name} advertises no output schema"
        declared = typing.get_type_hints(reply_type(name))
        assert set(schema["properties"]) == set(declared), f"{name}'s schema does not name its fields"
        required = set(schema.get("required", ()))
        assert required and required <= set(declared)
        result = results[name]
        jsonschema.validate(result.structured_content, schema)
        block, *links = result.content  # then a resource link per note a search or list names
        assert json.loads(block.text) == result.structured_content, f"{name}: the text and the structure differ"
        assert all(link.type == "resource_link" for link in links), f"{name}: a second text beside the JSON"
    assert results["brain_ask"].structured_content["stamp"] in set(Stamp)
    assert results["brain_verify"].structured_content["stamp"] == Stamp.VERIFIED


def test_a_reply_that_is_not_of_its_type_fails_the_schema(gserver) -> None:
    """The check above can fail: a reply missing a required field, or with a wrong type, does not validate."""
    listed, _ = asyncio.run(list_only(gserver.owner))
    schema = listed["brain_search"].output_schema
    good = {"sha": "a" * 40, "query": "q", "total": 0, "hits": []}
    jsonschema.validate(good, schema)
    for bad in ({**good, "total": "none"}, {k: v for k, v in good.items() if k != "hits"}, {**good, "hits": [{}]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


async def list_only(owner: str) -> tuple[dict[str, Any], None]:
    async with client(owner, TOKEN) as c:
        return {t.name: t for t in (await c.list_tools()).tools}, None


def test_stamps_carry_their_strength_and_are_sent_as_text() -> None:
    order = [Stamp.VERIFIED, Stamp.CORRECTED, Stamp.SUPERSEDED, Stamp.UNVERIFIED]
    assert [s.strength for s in order] == sorted((s.strength for s in order), reverse=True)
    assert Stamp.NOT_IN_BRAIN.strength == Stamp.UNVERIFIED.strength
    assert json.dumps({"stamp": Stamp.NOT_IN_BRAIN}) == '{"stamp": "NOT IN BRAIN"}'
    assert STRENGTH["VERIFIED"] == Stamp.VERIFIED.strength  # a stamp read back from a cache as text


def test_the_write_mode_is_one_type_from_the_door_to_the_brain() -> None:
    assert WRITE_MODES == typing.get_args(WriteMode)
    for holder in (Brain.write, WriteRequest):
        hint = typing.get_type_hints(holder, include_extras=True)["mode"]
        assert WriteMode in (hint, *typing.get_args(hint)), holder.__qualname__


class _Small(TypedDict):
    sha: str


def test_a_reply_type_is_advertised_not_checked_again_and_a_client_refuses_a_reply_that_breaks_it() -> None:
    """The server builds a reply to its type and does not walk it again on every call
    (issue 64: 15% of a search's door CPU); the type stays in tools/list, and the SDK's
    client checks each reply against it, so a reply that broke its type is refused there."""
    from mcp import Client

    from cortex.http.mcp_tools import OneLineMCPServer, advertised_only, run_tool

    server = OneLineMCPServer(name="t", log_level="WARNING")

    @server.tool()
    def broken() -> Annotated[CallToolResult, _Small]:
        return run_tool(lambda: {"sha": ["not a string"]})

    advertised_only(server, "broken")

    async def go() -> tuple[Any, str]:
        async with Client(server, raise_exceptions=False) as c:
            listed = (await c.list_tools()).tools[0].output_schema
            try:
                await c.call_tool("broken", {})
            except Exception as exc:  # noqa: BLE001 - the client's refusal, inside the SDK's task groups
                while isinstance(exc, BaseExceptionGroup):
                    exc = exc.exceptions[0]
                return listed, str(exc)
            return listed, "sent and accepted"

    listed, refused = asyncio.run(go())
    assert listed["properties"]["sha"]["type"] == "string" and listed["required"] == ["sha"]
    assert "Invalid structured content returned by tool broken" in refused


def test_every_door_registers_its_tools_unchecked_by_the_server() -> None:
    """Each owner and review tool registered by `register` keeps its schema and drops the
    per-call check: a tool added later without `advertised_only` would pay it again."""
    from mcp.server import MCPServer

    from cortex.http.mcp_tools import register

    mcp = MCPServer("t")
    register(mcp, OWNER_TOOLS + REVIEW_TOOLS, None, lambda ctx, tool: None)  # type: ignore[arg-type,return-value]
    for tool in OWNER_TOOLS + REVIEW_TOOLS:
        registered = mcp._tool_manager.get_tool(tool.name)
        assert registered is not None and registered.output_schema is not None, tool.name
        assert registered.fn_metadata.output_model is None, tool.name

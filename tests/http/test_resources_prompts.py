"""Notes as resources and the prompts, on the owner's doors over real HTTP: the MCP SDK's own
client (the newest protocol), a hand-driven 2025-06-18 session, and the TypeScript SDK client;
the guest door offers neither."""

from __future__ import annotations

import asyncio
import json
import subprocess
from typing import Any

from reliakit import RawSession
from serverkit import TOKEN, TS, call, client, ts_node

from cortex.tools.note_resources import RESOURCES_PAGE

KILN = "---\ntitle: Kiln firing\n---\n# Kiln firing\n\nThe kiln fires at 1,240 °C.\napi_key = sk-live-0123456789abcdefghij\n"


def _write(url: str, path: str, content: str) -> str:
    reply = call(url, "brain_write", path=path, mode="create", content=content)
    assert reply.error is None, reply.error
    return reply.data["sha"]


def test_a_note_is_listed_read_at_a_commit_and_masked(server) -> None:
    url = f"{server.url}/mcp"
    first = _write(url, "notes/kiln.md", KILN)
    _write(url, "archive/old.md", "# Old\n\nGone.\n")
    _write(url, "working/kiln.md", "- [ ] focus: order cones\n")
    assert call(url, "brain_write", path="notes/kiln.md", mode="append", content="Cone 6 now.\n").error is None

    async def go() -> tuple[list[Any], Any, Any, Any, Any]:
        async with client(url, TOKEN) as c:
            listed = (await c.list_resources()).resources
            templates = (await c.list_resource_templates()).resource_templates
            head = await c.read_resource("cortex://note/notes/kiln.md")
            then = await c.read_resource(f"cortex://note/notes/kiln.md?as_of={first}")
            hit = (await c.call_tool("brain_search", {"query": "kiln"})).structured_content["hits"][0]
        return listed, templates, head, then, hit

    listed, templates, head, then, hit = asyncio.run(go())
    uris = {r.uri for r in listed}
    assert "cortex://note/notes/kiln.md" in uris
    assert not any("archive/" in u or "working/" in u for u in uris)
    assert [t.uri_template for t in templates] == ["cortex://note/{+path}"]
    (now,) = head.contents
    assert "Cone 6 now." in now.text and "sk-live-0123456789" not in now.text  # masked, as brain_read masks
    assert now.meta["sha"] != first and now.meta["status"] == "current"
    (old,) = then.contents
    assert old.meta["sha"] == first and "Cone 6" not in old.text
    assert hit["uri"] == "cortex://note/notes/kiln.md"


def test_search_hits_and_list_entries_come_with_resource_links(server) -> None:
    url = f"{server.url}/mcp"
    _write(url, "notes/kiln.md", KILN)
    _write(url, "notes/Café crème.md", "# Café crème\n\nThe kiln café.\n")

    async def go() -> tuple[Any, Any]:
        async with client(url, TOKEN) as c:
            return await c.call_tool("brain_search", {"query": "kiln"}), await c.call_tool(
                "brain_list", {"folder": "notes/"}
            )

    searched, listed = asyncio.run(go())
    for result, rows in (
        (searched, searched.structured_content["hits"]),
        (listed, listed.structured_content["entries"]),
    ):
        text, *links = result.content
        assert json.loads(text.text) == result.structured_content  # the text block first, as before
        assert [(link.type, link.uri, link.name) for link in links] == [
            ("resource_link", row["uri"], row["path"]) for row in rows if "uri" in row
        ]
        assert links and all(link.mime_type == "text/markdown" for link in links)
    assert "cortex://note/notes/Caf%C3%A9%20cr%C3%A8me.md" in {link.uri for link in listed.content[1:]}


def test_resource_lists_are_paged_with_a_cursor(server) -> None:
    url = f"{server.url}/mcp"
    notes = {f"notes/n{i:03}.md": f"# Note {i}\n\nText {i}.\n" for i in range(RESOURCES_PAGE + 5)}
    server.parts.brain.store.commit(lambda view: {p: t.encode() for p, t in notes.items()}, "many notes")

    async def go() -> list[list[str]]:
        pages, cursor = [], None
        async with client(url, TOKEN) as c:
            while True:
                got = await c.list_resources(cursor=cursor) if cursor else await c.list_resources()
                pages.append([r.name for r in got.resources])
                cursor = got.next_cursor
                if not cursor:
                    return pages

    pages = asyncio.run(go())
    assert len(pages) == 2 and len(pages[0]) == RESOURCES_PAGE
    everything = [p for page in pages for p in page]
    assert len(everything) == len(set(everything)) and set(notes) <= set(everything)


def test_a_missing_note_is_a_one_line_error(server) -> None:
    url = f"{server.url}/mcp"
    with RawSession(url, {"Authorization": f"Bearer {TOKEN}"}) as s:
        r = s.post({"jsonrpc": "2.0", "id": 5, "method": "resources/read", "params": {"uri": "cortex://note/no.md"}})
        error = r.json()["error"]
    assert "\n" not in error["message"] and "no.md" in error["message"]


def test_prompts_on_the_2025_protocol_and_the_newest(server) -> None:
    url = f"{server.url}/mcp"
    _write(url, "notes/kiln.md", "# Kiln\n\n## Decisions\n\nWe decided on a celadon glaze for the kiln.\n")
    with RawSession(url, {"Authorization": f"Bearer {TOKEN}"}) as s:
        listed = s.post({"jsonrpc": "2.0", "id": 3, "method": "prompts/list"}).json()["result"]["prompts"]
        body = {"jsonrpc": "2.0", "id": 4, "method": "prompts/get"}
        got = s.post({**body, "params": {"name": "brain_decided", "arguments": {"topic": "glaze"}}}).json()
        missing = s.post({**body, "params": {"name": "brain_decided", "arguments": {}}}).json()
    prompts = {p["name"]: p for p in listed}
    assert set(prompts) == {"brain_boot", "brain_decided", "brain_file_conversation"}
    assert all(a.get("description") for p in listed for a in p.get("arguments", []))
    assert [a["name"] for a in prompts["brain_decided"]["arguments"] if a.get("required")] == ["topic"]
    text = got["result"]["messages"][0]["content"]["text"]
    assert "celadon glaze" in text and "⟦BEGIN NOTE" in text and "brain_verify" in text
    assert "error" in missing or missing["result"].get("isError")

    async def newest() -> tuple[str, str]:
        async with client(url, TOKEN) as c:
            boot = await c.get_prompt("brain_boot", {})
            filing = await c.get_prompt("brain_file_conversation", {"note": "notes/kiln.md"})
        return boot.messages[0].content.text, filing.messages[0].content.text

    boot, filing = asyncio.run(newest())
    assert "brain_context" in boot and '"router"' in boot
    assert "notes/kiln.md" in filing and "brain_write" in filing


def test_the_guest_door_has_no_resources_prompts_nor_listen(gserver) -> None:
    guest = gserver.guest("potter", ["notes/public/"])

    async def go() -> tuple[int, int, int, str]:
        async with client(guest.url, None) as g:
            resources = len((await g.list_resources()).resources)
            templates = len((await g.list_resource_templates()).resource_templates)
            prompts = len((await g.list_prompts()).prompts)
            try:  # no listen either: it acknowledged streams that never fired, unmetered (issue 54)
                async with g.listen(resources_list_changed=True):
                    listened = "acknowledged"
            except Exception as exc:
                listened = str(exc)
        return resources, templates, prompts, listened

    *counts, listened = asyncio.run(go())
    assert counts == [0, 0, 0] and listened != "acknowledged" and "not found" in listened.lower(), listened


def test_a_prompt_the_door_lacks_is_one_line_and_logs_nothing(gserver, caplog) -> None:
    """The guest door's prompts/get (it has no prompts) was an error with code 0 (2025) or
    "Internal server error" (2026) and a traceback in the log each call, at no cost to the
    guest's meters (issue 62): now a one-line invalid-params error on both protocols, with no
    work done and nothing logged, and on the owner's door too for a name it lacks."""
    from mcp.shared.exceptions import MCPError

    guest = gserver.guest("potter", ["notes/public/"])
    body = {"jsonrpc": "2.0", "id": 4, "method": "prompts/get"}
    with RawSession(guest.url) as s:  # the 2025-06-18 protocol
        old = [s.post({**body, "params": {"name": n, "arguments": {}}}).json() for n in ("brain_boot", "x\n" * 500)]
    with RawSession(f"{gserver.url}/mcp", {"Authorization": f"Bearer {TOKEN}"}) as s:
        owner = s.post({**body, "params": {"name": "brain_nope"}}).json()

    async def newest() -> str:
        async with client(guest.url, None) as g:
            try:
                await g.get_prompt("brain_boot", {})
            except MCPError as exc:
                return f"{exc.error.code} {exc.error.message}"
        return "answered"

    modern = asyncio.run(newest())
    errors = [reply["error"] for reply in old]
    assert all(e["code"] == -32602 and "\n" not in e["message"] for e in errors), errors
    assert all(e["message"].endswith("this door has no prompts") for e in errors), errors
    assert len(errors[1]["message"]) < 200
    assert modern == "-32602 unknown prompt 'brain_boot': this door has no prompts", modern
    assert owner["error"]["code"] == -32602 and "its prompts are brain_boot" in owner["error"]["message"]
    logged = [r for r in caplog.records if r.exc_info or "raised" in r.getMessage()]
    assert logged == [], [r.getMessage() for r in logged]
    assert gserver.queue.used("asks", "potter") == 0  # refused before any work: nothing to count


def test_the_typescript_client_lists_and_reads_a_note(server) -> None:
    node = ts_node()
    url = f"{server.url}/mcp"
    _write(url, "notes/Café crème.md", "# Café crème\n\nThe café opens at 08:00.\n")
    uri = "cortex://note/notes/Caf%C3%A9%20cr%C3%A8me.md"
    done = subprocess.run(
        [node, str(TS / "resource.mjs"), url, TOKEN, uri], capture_output=True, text=True, timeout=60, check=True
    )
    out = json.loads(done.stdout)
    assert uri in {r["uri"] for r in out["listed"]["resources"]}
    assert out["templates"]["resourceTemplates"][0]["uriTemplate"] == "cortex://note/{+path}"
    assert "08:00" in out["read"]["contents"][0]["text"]


def test_cache_hints_on_the_newest_protocol_none_on_2025_and_one_tool_order(server) -> None:
    from cortex.tools.table import OWNER_TOOLS

    url = f"{server.url}/mcp"

    async def newest() -> tuple[Any, Any, Any]:
        async with client(url, TOKEN) as c:
            return await c.list_tools(), await c.list_resources(), await c.list_prompts()

    tools, resources, prompts = asyncio.run(newest())
    assert (tools.ttl_ms, tools.cache_scope) == (3_600_000, "private")  # fixed for the server's life
    assert (prompts.ttl_ms, prompts.cache_scope) == (3_600_000, "private")
    assert (resources.ttl_ms, resources.cache_scope) == (0, "private")  # every write changes it
    order = [t.name for t in OWNER_TOOLS]
    assert [t.name for t in tools.tools][: len(order)] == order
    with RawSession(url, {"Authorization": f"Bearer {TOKEN}"}) as s:
        old = s.post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).json()["result"]
    assert "ttlMs" not in old and "cacheScope" not in old  # the 2025 protocol as it was
    assert [t["name"] for t in old["tools"]][: len(order)] == order


def test_a_hand_edit_is_told_to_a_listening_client(server) -> None:
    """On the 2026-07-28 protocol a client listening for a note's changes hears of a commit made
    outside its session (a hand edit, another client), and of the list changing when a note
    comes; it then reads the new text."""
    import anyio
    from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated

    url = f"{server.url}/mcp"
    _write(url, "notes/kiln.md", "# Kiln\n\nThe kiln fires at 1,240 °C.\n")
    uri = "cortex://note/notes/kiln.md"
    store = server.parts.brain.store

    async def go() -> tuple[list[Any], str]:
        heard: list[Any] = []
        async with client(url, TOKEN) as c:
            async with c.listen(resources_list_changed=True, resource_subscriptions=[uri]) as sub:
                await anyio.to_thread.run_sync(
                    lambda: store.commit(lambda v: {"notes/kiln.md": b"# Kiln\n\nNow 1,250 \xc2\xb0C.\n"}, "hand edit")
                )
                with anyio.fail_after(30):
                    async for event in sub:
                        heard.append(event)
                        if isinstance(event, ResourceUpdated):
                            break
                await anyio.to_thread.run_sync(
                    lambda: store.commit(lambda v: {"notes/new.md": b"# New\n"}, "another client")
                )
                with anyio.fail_after(30):
                    async for event in sub:
                        heard.append(event)
                        if isinstance(event, ResourcesListChanged):
                            break
            text = (await c.read_resource(uri)).contents[0].text
        return heard, text

    heard, text = asyncio.run(go())
    assert ResourceUpdated(uri=uri) in heard and ResourcesListChanged() in heard
    assert "1,250" in text


def test_the_boot_prompt_masks_as_tool_replies_do_and_a_bad_argument_is_one_line(server) -> None:
    url = f"{server.url}/mcp"
    aws, github = "AKIAIOSFODNN7EXAMPLE", "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    assert call(url, "brain_capture", text=f"rotated keys: aws {aws}, github {github}").error is None
    with RawSession(url, {"Authorization": f"Bearer {TOKEN}"}) as s:
        body = {"jsonrpc": "2.0", "id": 4, "method": "prompts/get"}
        boot = s.post({**body, "params": {"name": "brain_boot", "arguments": {}}}).json()
        bad = [
            s.post({**body, "params": {"name": "brain_boot", "arguments": {"nope": "x"}}}).json(),
            s.post({**body, "params": {"name": "brain_decided", "arguments": {"topic": "x" * 100_000}}}).json(),
            s.post({**body, "params": {"name": "brain_file_conversation", "arguments": {"note": "../x.md"}}}).json(),
        ]
    text = boot["result"]["messages"][0]["content"]["text"]
    assert "rotated keys" in text and aws not in text and github not in text
    messages = [reply["error"]["message"] for reply in bad]
    assert all("\n" not in m and "Internal" not in m and "Error rendering" not in m for m in messages), messages
    assert "no argument 'nope'" in messages[0] and "longer than" in messages[1] and "'..' segment" in messages[2]

"""A write that loses text asks the owner first where the client can answer: a delete, a move
and a replace not pinned by expected_blob, on the 2026-07-28 protocol, through the client's
elicitation (MCP's input_required round). Confirmed, it writes; declined, nothing changes; a
client that cannot be asked (no elicitation declared, or the 2025 protocol) writes as before;
CORTEX_CONFIRM_WRITES=off never asks."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from reliakit import RawSession
from serverkit import TOKEN, acall, call, client, hosted, serve

KILN = "# Kiln\n\nThe kiln fires at 1,240 °C.\n"


async def _with_owner(
    url: str,
    answer: dict[str, Any] | None,
    tool_args: dict[str, Any],
    asked: list[str],
    transport: httpx2.AsyncBaseTransport | None = None,
) -> Any:
    """One brain_write from a client that answers elicitation with `answer` (action, content);
    `transport`: how its requests travel (`Balancer`: through a load balancer)."""

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        assert answer is not None
        return types.ElicitResult(**answer)

    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60, transport=transport) as http,
        Client(streamable_http_client(url, http_client=http), elicitation_callback=elicit) as c,
    ):
        return await acall(c, "brain_write", **tool_args)


def _head(url: str) -> str:
    return call(url, "brain_history", limit=1).data["commits"][0]["sha"]


def _exists(url: str, path: str) -> bool:
    return call(url, "brain_read", path=path).error is None


def test_a_delete_asks_and_happens_only_when_confirmed(tmp_path, brain_path) -> None:
    with serve(tmp_path, brain_path) as running:
        url = f"{running.url}/mcp"
        assert call(url, "brain_write", path="notes/kiln.md", mode="create", content=KILN).error is None
        before, asked = _head(url), []
        delete = {"path": "notes/kiln.md", "mode": "delete", "reason": "merged into studio.md"}
        no = asyncio.run(_with_owner(url, {"action": "decline"}, delete, asked))
        assert no.error and "did not confirm" in no.error and "nothing changed" in no.error
        unticked = asyncio.run(_with_owner(url, {"action": "accept", "content": {"confirm": False}}, delete, asked))
        assert unticked.error and "did not confirm" in unticked.error
        assert _exists(url, "notes/kiln.md") and _head(url) == before
        assert asked and "notes/kiln.md" in asked[0] and "merged into studio.md" in asked[0]
        yes = asyncio.run(_with_owner(url, {"action": "accept", "content": {"confirm": True}}, delete, asked))
        assert yes.error is None and yes.data["mode"] == "delete" and not _exists(url, "notes/kiln.md")
        assert len(asked) == 3


def test_a_move_and_an_unpinned_replace_ask_a_pinned_replace_does_not(tmp_path, brain_path) -> None:
    with serve(tmp_path, brain_path) as running:
        url = f"{running.url}/mcp"
        blob = call(url, "brain_write", path="notes/kiln.md", mode="create", content=KILN).data["blob"]
        asked: list[str] = []
        yes = {"action": "accept", "content": {"confirm": True}}
        pinned = {
            "path": "notes/kiln.md",
            "mode": "replace",
            "content": "# Kiln\n\nNow 1,250.\n",
            "expected_blob": blob,
        }
        assert asyncio.run(_with_owner(url, None, pinned, asked)).error is None and not asked  # read first: no question
        unpinned = {"path": "notes/kiln.md", "mode": "replace", "content": "# Kiln\n\nShort.\n"}
        assert asyncio.run(_with_owner(url, yes, unpinned, asked)).error is None
        assert "Replace the whole of notes/kiln.md" in asked[-1] and "expected_blob" in asked[-1]
        move = {"path": "notes/kiln.md", "mode": "move", "to": "archive/kiln.md"}
        assert asyncio.run(_with_owner(url, yes, move, asked)).error is None and "Move notes/kiln.md" in asked[-1]
        create = {"path": "notes/new.md", "mode": "create", "content": "# New\n"}
        assert asyncio.run(_with_owner(url, None, create, asked)).error is None and len(asked) == 2
        gone = {"path": "notes/missing.md", "mode": "delete", "reason": "x"}
        assert (
            asyncio.run(_with_owner(url, None, gone, asked)).error and len(asked) == 2
        )  # nothing to lose: no question


def test_clients_that_cannot_be_asked_write_as_before(tmp_path, brain_path) -> None:
    with serve(tmp_path, brain_path) as running:
        url = f"{running.url}/mcp"
        for name in ("a", "b"):
            assert call(url, "brain_write", path=f"notes/{name}.md", mode="create", content=KILN).error is None

        async def plain() -> Any:  # the SDK client with no elicitation callback declares none
            async with client(url, TOKEN) as c:
                return await acall(c, "brain_write", path="notes/a.md", mode="delete", reason="gone")

        assert asyncio.run(plain()).error is None and not _exists(url, "notes/a.md")
        with RawSession(url, {"Authorization": f"Bearer {TOKEN}"}) as s:  # the 2025-06-18 protocol
            _, m = s.call("brain_write", {"path": "notes/b.md", "mode": "delete", "reason": "gone"})
        assert m is not None and not m["result"].get("isError") and not _exists(url, "notes/b.md")


def test_the_setting_turns_the_question_off(tmp_path, brain_path) -> None:
    with serve(tmp_path, brain_path, CORTEX_CONFIRM_WRITES="off") as running:
        url = f"{running.url}/mcp"
        assert call(url, "brain_write", path="notes/kiln.md", mode="create", content=KILN).error is None
        asked: list[str] = []
        delete = {"path": "notes/kiln.md", "mode": "delete", "reason": "gone"}
        assert asyncio.run(_with_owner(url, None, delete, asked)).error is None and not asked


def test_a_confirmation_is_pinned_to_the_note_shown_and_answered_once(tmp_path) -> None:
    """The state a client sends back names an open question, not the write: a declined round
    re-sent with "accept", an accepted one replayed, and one for a note changed since are
    refused with nothing written (issue 54)."""
    from cortex.app.brain_setup import init_brain
    from cortex.ask.asker import Asker
    from cortex.ask.readers import OfflineReader
    from cortex.brain.brain import Brain
    from cortex.errors import BadInput, Declined
    from cortex.store.git import GitStore
    from cortex.tools.tool import Caller, Confirmation, ConfirmNeeded
    from cortex.tools.toolset import Tools
    from cortex.tools.write import WriteRequest, write

    init_brain(tmp_path / "b", bare=True)
    brain = Brain(GitStore(tmp_path / "b"))
    tools = Tools(brain, Asker(brain, OfflineReader()))
    me = Caller(door="owner")
    brain.write("notes/c4.md", "create", me.actor("brain_write", None), content="# C4\n")
    replace = WriteRequest(path="notes/c4.md", mode="replace", content="# C4\n\nall new\n")

    def round_(confirm: Confirmation) -> Any:
        return write(tools, replace, Caller(door="owner", confirm=confirm))

    asked = round_(Confirmation(""))
    assert isinstance(asked, ConfirmNeeded) and set(asked.state) == {"confirmation"}
    with pytest.raises(Declined):
        round_(Confirmation("", "decline", False, asked.state))
    with pytest.raises(BadInput, match="answered already"):
        round_(Confirmation("", "accept", True, asked.state))  # the declined round, replayed as accept

    asked = round_(Confirmation(""))
    brain.write("notes/c4.md", "append", me.actor("brain_write", None), content="a line written meanwhile\n")
    with pytest.raises(BadInput, match="changed after the owner was asked"):
        round_(Confirmation("", "accept", True, asked.state))
    assert "meanwhile" in brain.read("notes/c4.md")[2].text

    asked = round_(Confirmation(""))
    done = round_(Confirmation("", "accept", True, asked.state))
    assert done["mode"] == "replace" and "all new" in brain.read("notes/c4.md")[2].text
    with pytest.raises(BadInput, match="answered already"):
        round_(Confirmation("", "accept", True, asked.state))  # an accepted round, replayed


class Balancer(httpx2.AsyncBaseTransport):
    """A round-robin load balancer in front of hosted instances, as the client's transport: each
    tools/call goes to the next instance in turn (anything else to the first), over real HTTP,
    the Host header left as the client sent it. Every tools/call is kept: (instance, headers, body)."""

    def __init__(self, urls: list[str]):
        self.urls = urls
        self.inner = httpx2.AsyncHTTPTransport()
        self.calls: list[tuple[str, dict[str, str], bytes]] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        target = self.urls[0]
        if request.headers.get("mcp-method") == "tools/call":
            target = self.urls[len(self.calls) % len(self.urls)]
            self.calls.append((target, dict(request.headers), request.content))
        port = int(target.rsplit(":", 1)[1])
        sent = httpx2.Request(
            request.method,
            request.url.copy_with(port=port),
            headers=request.headers,
            content=request.content,
            extensions=request.extensions,
        )
        return await self.inner.handle_async_request(sent)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.slow
def test_a_confirmation_asked_on_one_hosted_instance_is_answered_on_another(tmp_path, redis_proc) -> None:
    """Two hosted instances on one remote and one Redis behind a round-robin balancer: the
    question asked by one, the owner's answer reaching the other, writes once (issue 62: it was
    "Invalid or expired requestState", each process sealing under its own key, and then its own
    memory of the question). The answered round replayed to either instance writes nothing, and
    with Redis away a write that would ask is refused in one line."""
    from cortex.app.brain_setup import init_brain
    from cortex.store.git import GitStore

    remote = tmp_path / "remote.git"
    init_brain(remote, bare=True)
    one = hosted(tmp_path, "one", remote, redis_proc.url)
    servers = [one]
    try:
        assert call(f"{one.url}/mcp", "brain_write", path="notes/kiln.md", mode="create", content=KILN).error is None
        two = hosted(tmp_path, "two", remote, redis_proc.url)  # its clone has the note
        servers.append(two)
        balancer, asked = Balancer([one.url, two.url]), []
        yes = {"action": "accept", "content": {"confirm": True}}
        replace = {"path": "notes/kiln.md", "mode": "replace", "content": "# Kiln\n\nAll new.\n"}
        done = asyncio.run(_with_owner(f"{one.url}/mcp", yes, replace, asked, transport=balancer))
        assert done.error is None, done.error
        assert [target for target, _, _ in balancer.calls] == [one.url, two.url]  # asked on one, answered on two
        assert asked and "Replace the whole of notes/kiln.md" in asked[0]
        head = GitStore(remote).head()
        assert head == done.data["sha"]

        _, headers, answered = balancer.calls[1]
        headers = {k: v for k, v in headers.items() if k.lower() not in ("host", "content-length")}
        for server in (one, two):  # the instance that asked, and the one that answered
            replay = httpx2.post(f"{server.url}/mcp", content=answered, headers=headers, timeout=30).json()
            result = replay["result"]
            assert result["isError"] and "answered already" in result["content"][0]["text"], replay
        assert GitStore(remote).head() == head

        redis_proc.stop()  # with Redis away, a write that would ask is refused, never made unasked
        away = asyncio.run(_with_owner(f"{one.url}/mcp", yes, replace, asked))
        assert away.error and "Redis is not answering; nothing changed" in away.error and "\n" not in away.error
        assert GitStore(remote).head() == head
    finally:
        for server in servers:
            server.__exit__(None, None, None)
            server.parts.remote.stop()

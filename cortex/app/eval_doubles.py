"""The stand-ins `cortex eval` reads through, named for the eval: no server imports them.

- `StubMessagesServer`: a local HTTP server speaking enough of the Messages API for the real
  `anthropic` SDK; `stub_model` makes its "model" pick a passage the way the offline reader
  does but from only the packs it is sent (`unpack` reads a pack back out of a prompt).
- `ClientAsks`: the MCP SDK's own Python client over real HTTP, answering brain_ask's sampling
  requests with the same stub (`unfence` reads the fenced files of a sampling request).

Tests reach the stub through `tests/readerkit.py`.
"""

from __future__ import annotations

import contextlib
import json
import re
import tempfile
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_types import CreateMessageResult

    from cortex.brain.brain import Brain

__all__ = [
    "FENCED_FILE",
    "PACK_FILE",
    "ClientAsks",
    "StubMessagesServer",
    "stub_answer",
    "stub_model",
    "unfence",
    "unpack",
]


class StubMessagesServer:
    """A local HTTP server that speaks enough of the Messages API for the `anthropic` SDK.

    `respond(body)` gets each request's JSON body and returns (status, JSON payload);
    `message` and `tool_reply` build the payloads. Used by `cortex eval` for the
    model-reader figures and by the tests for scripted model replies.
    """

    def __init__(self, respond: Callable[[dict], tuple[int, dict]]):
        self.respond = respond
        self.requests: list[dict] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                stub.requests.append(
                    {"body": body, "auth": self.headers.get("x-api-key") or self.headers.get("authorization")}
                )
                status, payload = stub.respond(body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError):  # the client gave up first: the timeout case
                    self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    @staticmethod
    def message(content: list, stop: str) -> dict:
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "stub-model",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 1234, "output_tokens": 56},
        }

    @classmethod
    def tool_reply(cls, tool_input: dict) -> tuple[int, dict]:
        """A 200 reply that calls the `answer` tool with `tool_input`."""
        return 200, cls.message(
            [{"type": "tool_use", "id": "toolu_1", "name": "answer", "input": tool_input}], "tool_use"
        )


# One file of a rendered pack: its header line, then its text up to the next header.
PACK_FILE = re.compile(r"^=== FILE (\S+)(?: \(part: ([^)]*)\))? \[tag: (\w+)\] ===$", re.MULTILINE)


def unpack(prompt: str) -> tuple[list[tuple[str, str | None, str, str]], str]:
    """(path, parts, tag, text) of each file of a rendered pack, and the question."""
    body, _, question = prompt.rpartition("\n\nQuestion: ")
    heads = list(PACK_FILE.finditer(body))
    files = []
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(body)
        files.append((m.group(1), m.group(2), m.group(3), body[m.end() + 1 : end]))
    return files, question


def stub_model(brain: Brain) -> Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]:
    """The eval's stand-in for a model: the offline reader's choice over only the files sent.

    It looks the cited notes up in the served snapshot (it runs in-process) so the
    offline reader can cut them into blocks, and answers through the `answer` tool.
    """

    def respond(body: dict) -> tuple[int, dict]:
        files, question = unpack(body["messages"][0]["content"])
        return StubMessagesServer.tool_reply(stub_answer(brain, files, question))

    return respond


def stub_answer(brain: Brain, files: list[tuple[str, str | None, str, str]], question: str) -> dict[str, Any]:
    """What the stub model answers from `files` (path, parts, tag, text): the offline
    reader's choice among only those files, as the `answer` tool's input."""
    from cortex.ask.asker import evidence, usable
    from cortex.ask.pack import Pack, PackedFile
    from cortex.ask.question import owner_words, read_question
    from cortex.ask.readers import OfflineReader

    snap = brain.snapshot()
    day = brain.today()
    allowed = {p for p in snap.notes if usable(snap, p, day, False)}
    _, weights, holders, _ = evidence(brain, snap, read_question(question, owner_words(snap)), allowed)
    pack = Pack(
        sha=snap.sha,
        files=[PackedFile(tag, path, snap.notes[path], text, parts) for path, parts, tag, text in files],
        weights=weights,
        holders=holders,
    )
    reply = OfflineReader().read(question, pack)
    return {
        "answer": reply.answer,
        "citations": [{"tag": t, "quote": q} for t, q in reply.citations],
        "not_in_brain": reply.not_in_brain,
    }


FENCED_FILE = re.compile(
    r"^⟦BEGIN NOTE (\w+)⟧ (.+?)(?: \(part: ([^)]*)\))? \[tag: (\w+)\][^\n]*\n(.*?)^⟦END NOTE \1⟧", re.M | re.S
)


def unfence(text: str) -> tuple[list[tuple[str, str | None, str, str]], str]:
    """(path, parts, tag, text) of each file of a pack as the client's model is sent it, and the question."""
    body, _, question = text.rpartition("\n\nQuestion: ")
    files = [(m.group(2), m.group(3), m.group(4), m.group(5)) for m in FENCED_FILE.finditer(body)]
    return files, question


class ClientAsks:
    """brain_ask over real HTTP with the MCP SDK's Python client, whose sampling callback is
    the stub model reading the fenced pack it is sent: the eval's stand-in for a client
    whose own model reads (CORTEX_READER=client). `ask(question)` as `Tools.ask`."""

    def __init__(self, brain: Brain):
        import secrets
        import socket

        import uvicorn

        from cortex.ask.asker import Asker
        from cortex.ask.reader_order import ReaderOrder
        from cortex.ask.readers import OfflineReader
        from cortex.http.doors import build_app
        from cortex.settings import Settings
        from cortex.tools.toolset import Tools

        self.brain, self.token = brain, secrets.token_urlsafe(24)
        asker = Asker(brain, OfflineReader(), order=ReaderOrder("client", None, OfflineReader()))
        settings = Settings.from_env({}, home=Path(tempfile.mkdtemp(prefix="cortex-eval-home-")), brain=Path("."))
        app = build_app(settings, Tools(brain, asker), self.token, secrets.token_urlsafe(24))
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/mcp"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        self.thread = threading.Thread(target=lambda: self.server.run(sockets=[self.sock]), daemon=True)
        self.thread.start()
        while not self.server.started:
            threading.Event().wait(0.01)
        self.requests = 0

    async def _ask_all(self, questions: list[str]) -> list[dict]:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
        from mcp_types import CreateMessageResult, TextContent

        async def sampling(context: Any, params: Any) -> CreateMessageResult:
            self.requests += 1
            files, question = unfence(params.messages[0].content.text)
            text = json.dumps(stub_answer(self.brain, files, question))
            return CreateMessageResult(role="assistant", content=TextContent(type="text", text=text), model="stub")

        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.token}"}, timeout=60)
        out = []
        async with Client(streamable_http_client(self.url, http_client=http), sampling_callback=sampling) as c:
            for q in questions:
                result = await c.call_tool("brain_ask", {"question": q})
                out.append(result.structured_content)
        return out

    def ask_all(self, questions: list[str]) -> list[dict]:
        import asyncio

        return asyncio.run(self._ask_all(questions))

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)

"""Bad input at every layer: paths, text, sizes, YAML, JSON-RPC, HTTP.

Each case is sent to one running server over real HTTP, by hand (a raw MCP
session), so bytes no SDK client would send can be sent. After every case the
server must still answer /healthz and a tool call, and must have committed
nothing, except the few cases marked `accepted`: input that is legitimately a
note (a YAML bomb is valid text; the parser refuses to expand it, the store
keeps the bytes). Each observed reply goes into docs/RELIABILITY.md as a table.

Expectations:
- `refused`: an error reply (HTTP 4xx, a JSON-RPC error or a tool error), head unchanged.
- `harmless`: any reply, head unchanged (e.g. k=10**12 is capped, an unknown
  header is ignored); the table shows what the server did.
- `accepted`: exactly one commit.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from reliakit import ACCEPT, RawSession, describe, initialize_body, md_cell, rpc_messages, write_section
from serverkit import TOKEN, RunningServer, make_settings

from cortex.app.brain_setup import init_brain
from cortex.app.server import assemble, make_app


@dataclass
class Case:
    name: str
    group: str
    sent: str  # what was sent, for the table
    expect: str  # refused | harmless | accepted
    tool: str | None = None  # a tools/call with `args`...
    args: dict[str, Any] = field(default_factory=dict)
    body: bytes | str | None = None  # ...or this raw body on the session...
    headers: dict[str, str] | None = None  # ...with these headers (merged into the session's)
    path: str = "/mcp"  # ...to this path
    method: str = "POST"
    bare: bool = False  # send `headers` as they are, with no session headers


def write(path: str, content: str = "x\n", **extra: Any) -> dict[str, Any]:
    return {"path": path, "mode": "create", "content": content, **extra}


def rpc(method: str, params: Any = None, rid: Any = 1) -> str:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        body["params"] = params
    return json.dumps(body)


def tools_call_raw(arguments_json: str, name: str = "brain_write") -> str:
    """A tools/call whose arguments are JSON text written by hand (escapes kept as sent)."""
    return f'{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"{name}","arguments":{arguments_json}}}}}'


BILLION_LAUGHS = (
    "---\na: &a ["
    + ",".join(['"lol"'] * 9)
    + "]\n"
    + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8))
    + "title: Bomb\n---\nThe body of a YAML bomb.\n"
)
RECURSIVE = "---\ntags: &t [*t]\ntitle: &x Loop\n---\nA note whose frontmatter contains itself.\n"
HUGE_FRONTMATTER = "---\ntitle: Huge\nblob: " + "z" * 900_000 + "\n---\nbody after a huge frontmatter\n"
DEEP_YAML = "---\nx: " + "[" * 5_000 + "]" * 5_000 + "\n---\nbody\n"

CASES: list[Case] = [
    # -- path traversal and its encodings ------------------------------------------
    Case("dot-dot", "path", "create ../escape.md", "refused", "brain_write", write("../escape.md")),
    Case(
        "dot-dot inside",
        "path",
        "create notes/../../escape.md",
        "refused",
        "brain_write",
        write("notes/../../escape.md"),
    ),
    Case("dot segment", "path", "create notes/./x.md", "refused", "brain_write", write("notes/./x.md")),
    Case("absolute", "path", "create /etc/passwd.md", "refused", "brain_write", write("/etc/passwd.md")),
    Case("drive letter", "path", "create C:/Windows/x.md", "refused", "brain_write", write("C:/Windows/x.md")),
    Case("backslash", "path", r"create ..\escape.md", "refused", "brain_write", write("..\\escape.md")),
    # A folder literally named %2e%2e: nothing decodes it, so it escapes nothing (any name Git takes).
    Case(
        "percent-encoded dots", "path", "create %2e%2e/escape.md", "accepted", "brain_write", write("%2e%2e/escape.md")
    ),
    Case("percent-encoded slash", "path", "create ..%2fescape.md", "refused", "brain_write", write("..%2fescape.md")),
    Case(
        "overlong UTF-8 as text",
        "path",
        "create ..%c0%afescape.md",
        "refused",
        "brain_write",
        write("..%c0%afescape.md"),
    ),
    Case(
        "double-encoded",
        "path",
        "create %252e%252e/escape.md",
        "accepted",
        "brain_write",
        write("%252e%252e/escape.md"),
    ),
    Case(
        "into .git",
        "path",
        "create .git/hooks/post-commit.md",
        "refused",
        "brain_write",
        write(".git/hooks/post-commit.md"),
    ),
    Case(
        "into .cortex",
        "path",
        "create .cortex/guests/evil.md",
        "refused",
        "brain_write",
        write(".cortex/guests/evil.md"),
    ),
    Case(
        "generated INDEX.md",
        "path",
        "replace INDEX.md",
        "refused",
        "brain_write",
        {"path": "INDEX.md", "mode": "replace", "content": "pwned\n"},
    ),
    Case("trailing slash", "path", "create notes/x.md/", "refused", "brain_write", write("notes/x.md/")),
    Case("empty segment", "path", "create notes//x.md", "refused", "brain_write", write("notes//x.md")),
    Case("not Markdown", "path", "create notes/x.sh", "refused", "brain_write", write("notes/x.sh")),
    Case(
        "over 200 chars",
        "path",
        "create notes/aaa…(300 chars).md",
        "refused",
        "brain_write",
        write("notes/" + "a" * 300 + ".md"),
    ),
    Case(
        "move out",
        "path",
        "move profile.md to ../profile.md",
        "refused",
        "brain_write",
        {"path": "profile.md", "mode": "move", "to": "../profile.md"},
    ),
    Case(
        "read ../", "path", "read ../../../../etc/passwd", "refused", "brain_read", {"path": "../../../../etc/passwd"}
    ),
    Case("read .git/config", "path", "read .git/config", "refused", "brain_read", {"path": ".git/config"}),
    Case("read absolute", "path", "read /etc/passwd", "refused", "brain_read", {"path": "/etc/passwd"}),
    Case("history of ../", "path", "history path=../../etc", "harmless", "brain_history", {"path": "../../etc"}),
    # -- Unicode confusables and normalisation tricks ----------------------------------
    Case(
        "two-dot leader",
        "unicode",
        "create \u2025/escape.md (U+2025)",
        "accepted",
        "brain_write",
        write("\u2025/escape.md"),
    ),
    Case(
        "fullwidth dots",
        "unicode",
        "create \uff0e\uff0e/escape.md (U+FF0E)",
        "accepted",
        "brain_write",
        write("\uff0e\uff0e/escape.md"),
    ),
    Case(
        "division slash",
        "unicode",
        "create notes\u2215x.md (U+2215)",
        "refused",
        "brain_write",
        write("notes\u2215x.md"),
    ),
    Case(
        "fullwidth solidus",
        "unicode",
        "create notes\uff0fx.md (U+FF0F)",
        "refused",
        "brain_write",
        write("notes\uff0fx.md"),
    ),
    Case(
        "Cyrillic a",
        "unicode",
        "create notes/p\u0430th.md (U+0430 for a)",
        "accepted",
        "brain_write",
        write("notes/p\u0430th.md"),
    ),
    Case(
        "NFD e-acute",
        "unicode",
        "create notes/cafe\u0301.md (e + U+0301)",
        "accepted",
        "brain_write",
        write("notes/cafe\u0301.md"),
    ),
    Case(
        "NFC e-acute",
        "unicode",
        "create notes/caf\u00e9.md (U+00E9) after the NFD one: the same name",
        "refused",
        "brain_write",
        write("notes/caf\u00e9.md"),
    ),
    Case(
        "zero-width space",
        "unicode",
        "create notes/x\u200b.md (U+200B)",
        "refused",
        "brain_write",
        write("notes/x\u200b.md"),
    ),
    Case(
        "right-to-left override",
        "unicode",
        "create notes/\u202edm.exe.md (U+202E)",
        "refused",
        "brain_write",
        write("notes/\u202edm.exe.md"),
    ),
    Case("newline in path", "unicode", "create notes/x\\n.md", "refused", "brain_write", write("notes/x\n.md")),
    Case(
        "confusables in content",
        "unicode",
        "content with Cyrillic, RTL override, zero-width",
        "accepted",
        "brain_write",
        write("notes/bad-input/confusables.md", "# Pаypal\n\nsk\u200b-ant \u202etxet\n"),
    ),
    # -- NUL, invalid UTF-8, lone surrogates ----------------------------------------------
    Case("NUL in path", "bytes", "create notes/x.md\\0.txt", "refused", "brain_write", write("notes/x.md\x00.txt")),
    Case("NUL in content", "bytes", "content a\\0b", "refused", "brain_write", write("notes/nul.md", "a\x00b")),
    Case("NUL in query", "bytes", "search a\\0b", "refused", "brain_search", {"query": "a\x00b"}),
    Case(
        "lone high surrogate",
        "bytes",
        'content "\\ud800" (JSON escape)',
        "refused",
        body=tools_call_raw('{"path":"notes/s.md","mode":"create","content":"a\\ud800b"}'),
    ),
    Case(
        "lone low surrogate",
        "bytes",
        'content "\\udc00" (JSON escape)',
        "refused",
        body=tools_call_raw('{"path":"notes/s.md","mode":"create","content":"a\\udc00b"}'),
    ),
    Case(
        "surrogate in path",
        "bytes",
        'path "notes/\\udfff.md"',
        "refused",
        body=tools_call_raw('{"path":"notes/\\udfff.md","mode":"create","content":"x"}'),
    ),
    Case(
        "invalid UTF-8 byte",
        "bytes",
        "content bytes ff fe",
        "refused",
        body=b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"brain_write","arguments":'
        b'{"path":"notes/s.md","mode":"create","content":"a\xff\xfeb"}}}',
    ),
    Case(
        "overlong UTF-8",
        "bytes",
        "content bytes c0 af (overlong /)",
        "refused",
        body=b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"brain_write","arguments":'
        b'{"path":"notes/s.md","mode":"create","content":"a\xc0\xafb"}}}',
    ),
    Case(
        "UTF-8 BOM body",
        "bytes",
        "body starting with EF BB BF",
        "refused",
        body=b"\xef\xbb\xbf" + rpc("tools/list").encode(),
    ),
    # -- sizes -------------------------------------------------------------------------------
    Case(
        "content 1 MiB + 1",
        "size",
        "content of 1,048,577 bytes",
        "refused",
        "brain_write",
        write("notes/big.md", "x" * 1_048_577),
    ),
    Case(
        "content 3.5 MB",
        "size",
        "content of 3,500,000 bytes (body under the 4 MiB cap)",
        "refused",
        "brain_write",
        write("notes/big.md", "y" * 3_500_000),
    ),
    Case(
        "body 20 MB",
        "size",
        "a 20 MB JSON body",
        "refused",
        body=tools_call_raw(json.dumps(write("notes/big.md", "z" * 20_000_000))),
    ),
    Case("body 64 MB of junk", "size", "64 MB of 'x' (not JSON)", "refused", body=b"x" * 64_000_000),
    Case(
        "question 2,001 chars",
        "size",
        "ask with a 2,001-char question",
        "refused",
        "brain_ask",
        {"question": "q" * 2001},
    ),
    Case("k = 10**12", "size", "search k=1000000000000", "harmless", "brain_search", {"query": "profile", "k": 10**12}),
    Case("k = -1", "size", "search k=-1", "refused", "brain_search", {"query": "profile", "k": -1}),
    Case("history limit 10**9", "size", "history limit=1000000000", "harmless", "brain_history", {"limit": 10**9}),
    Case(
        "100,000 corpus paths",
        "size",
        "corpus with profile.md 100,000 times",
        "harmless",
        "brain_corpus",
        {"paths": ["profile.md"] * 100_000},
    ),
    # -- YAML bombs and huge frontmatter (legitimate notes; the parser must stay bounded) -----
    Case(
        "billion laughs",
        "yaml",
        f"create a note whose frontmatter is a {len(BILLION_LAUGHS)}-byte alias bomb (9^9)",
        "accepted",
        "brain_write",
        write("notes/bad-input/bomb.md", BILLION_LAUGHS),
    ),
    Case(
        "read the bomb",
        "yaml",
        "read notes/bad-input/bomb.md",
        "harmless",
        "brain_read",
        {"path": "notes/bad-input/bomb.md"},
    ),
    Case(
        "recursive alias",
        "yaml",
        "create a note with tags: &t [*t]",
        "accepted",
        "brain_write",
        write("notes/bad-input/loop.md", RECURSIVE),
    ),
    Case(
        "read the loop",
        "yaml",
        "read notes/bad-input/loop.md",
        "harmless",
        "brain_read",
        {"path": "notes/bad-input/loop.md"},
    ),
    Case(
        "900 KB frontmatter",
        "yaml",
        "create a note with 900 KB of frontmatter",
        "accepted",
        "brain_write",
        write("notes/bad-input/huge.md", HUGE_FRONTMATTER),
    ),
    Case(
        "5,000-deep YAML",
        "yaml",
        "create a note with [[[…]]] 5,000 deep",
        "accepted",
        "brain_write",
        write("notes/bad-input/deep.md", DEEP_YAML),
    ),
    Case(
        "impossible date",
        "yaml",
        "create a note with frontmatter date: 2026-02-30",
        "accepted",
        "brain_write",
        write("notes/bad-input/date.md", "---\ntitle: 2026-02-30\nvalid_until: 2026-02-30\n---\nbody\n"),
    ),
    Case(
        "broken YAML tag",
        "yaml",
        "create a note with x: !!timestamp nope",
        "accepted",
        "brain_write",
        write("notes/bad-input/tag.md", "---\nx: !!timestamp nope\n---\nbody\n"),
    ),
    Case(
        "search over the bombs",
        "yaml",
        "search 'bomb body frontmatter'",
        "harmless",
        "brain_search",
        {"query": "bomb body frontmatter"},
    ),
    Case(
        "ask over the bombs",
        "yaml",
        "ask 'What is in the body of the YAML bomb?'",
        "harmless",
        "brain_ask",
        {"question": "What is in the body of the YAML bomb?"},
    ),
    Case("context after the bombs", "yaml", "brain_context", "harmless", "brain_context", {}),
    # -- malformed JSON-RPC --------------------------------------------------------------------
    Case("not JSON", "json-rpc", "{not json", "refused", body="{not json"),
    Case("empty body", "json-rpc", "(empty)", "refused", body=b""),
    Case("null", "json-rpc", "null", "refused", body="null"),
    Case("empty object", "json-rpc", "{}", "refused", body="{}"),
    Case("empty batch", "json-rpc", "[]", "refused", body="[]"),
    Case(
        "batch of two",
        "json-rpc",
        "[tools/list, tools/list]",
        "refused",
        body=f"[{rpc('tools/list')},{rpc('tools/list', rid=2)}]",
    ),
    Case("jsonrpc 1.0", "json-rpc", '"jsonrpc":"1.0"', "refused", body=rpc("tools/list").replace('"2.0"', '"1.0"')),
    Case("id is an object", "json-rpc", '"id":{"a":1}', "harmless", body=rpc("tools/list", rid={"a": 1})),
    Case("id 1e400", "json-rpc", '"id":1e400', "harmless", body=rpc("tools/list").replace('"id": 1', '"id": 1e400')),
    Case("params is a string", "json-rpc", 'tools/call "params":"x"', "refused", body=rpc("tools/call", "x")),
    Case("unknown method", "json-rpc", "method nope/nope", "refused", body=rpc("nope/nope", {})),
    Case("tools/call without name", "json-rpc", "tools/call params {}", "refused", body=rpc("tools/call", {})),
    Case("unknown tool", "json-rpc", "tools/call brain_rm", "refused", "brain_rm", {"path": "profile.md"}),
    Case("wrong argument type", "json-rpc", 'search k="ten"', "refused", "brain_search", {"query": "x", "k": "ten"}),
    Case(
        "wrong mode", "json-rpc", "write mode=chmod", "refused", "brain_write", {"path": "notes/x.md", "mode": "chmod"}
    ),
    Case(
        "extra argument",
        "json-rpc",
        "read with an unknown argument sudo=true",
        "harmless",
        "brain_read",
        {"path": "profile.md", "sudo": True},
    ),
    Case(
        "duplicate keys",
        "json-rpc",
        '{"path":"notes/ok.md","path":"../x.md"}',
        "refused",
        body=tools_call_raw('{"path":"notes/ok.md","path":"../x.md","mode":"create","content":"x"}'),
    ),
    # -- deep nesting -----------------------------------------------------------------------------
    Case(
        "nesting 100,000 arrays",
        "nesting",
        "[[[…]]] 100,000 deep as the body",
        "refused",
        body="[" * 100_000 + "]" * 100_000,
    ),
    Case(
        "nesting 50,000 in arguments",
        "nesting",
        'arguments {"a":{"a":…}} 50,000 deep',
        "refused",
        body=tools_call_raw('{"a":' * 50_000 + "1" + "}" * 50_000, name="brain_read"),
    ),
    Case(
        "nesting 150 in a tag list",
        "nesting",
        "capture tags [[[…]]] 150 deep",
        "refused",
        body=tools_call_raw('{"text":"t","tags":' + "[" * 150 + "]" * 150 + "}", name="brain_capture"),
    ),
    # -- headers and content types -----------------------------------------------------------------
    Case(
        "text/plain",
        "http",
        "Content-Type: text/plain",
        "refused",
        body=rpc("tools/list"),
        headers={"Content-Type": "text/plain"},
    ),
    Case(
        "form encoded",
        "http",
        "Content-Type: application/x-www-form-urlencoded",
        "refused",
        body="a=1",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    ),
    Case(
        "multipart",
        "http",
        "Content-Type: multipart/form-data",
        "refused",
        body=rpc("tools/list"),
        headers={"Content-Type": "multipart/form-data; boundary=x"},
    ),
    Case("no Accept", "http", "Accept: text/html", "refused", body=rpc("tools/list"), headers={"Accept": "text/html"}),
    Case("8 KB header", "http", "X-Pad: 8 KB", "harmless", body=rpc("tools/list"), headers={"X-Pad": "a" * 8_000}),
    Case(
        "100 KB header", "http", "X-Pad: 100 KB", "harmless", body=rpc("tools/list"), headers={"X-Pad": "a" * 100_000}
    ),
    Case(
        "1,000 headers",
        "http",
        "1,000 X-N-i headers",
        "harmless",
        body=rpc("tools/list"),
        headers={f"X-N-{i}": "v" for i in range(1_000)},
    ),
    Case(
        "100 KB bearer",
        "http",
        "Authorization: Bearer <100 KB>",
        "refused",
        body=rpc("tools/list"),
        headers={"Authorization": "Bearer " + "t" * 100_000},
    ),
    Case(
        "unknown session",
        "http",
        "mcp-session-id: bogus",
        "refused",
        body=rpc("tools/list"),
        headers={"mcp-session-id": "bogus"},
    ),
    Case(
        "old protocol version",
        "http",
        "mcp-protocol-version: 1999-01-01",
        "refused",
        body=rpc("tools/list"),
        headers={"mcp-protocol-version": "1999-01-01"},
    ),
    Case(
        "foreign Host",
        "http",
        "Host: evil.example",
        "refused",
        body=rpc("tools/list"),
        headers={"Host": "evil.example"},
    ),
    Case(
        "foreign Origin",
        "http",
        "Origin: http://evil.example",
        "refused",
        body=rpc("tools/list"),
        headers={"Origin": "http://evil.example"},
    ),
    Case("PUT /mcp", "http", "PUT /mcp", "refused", body=rpc("tools/list"), method="PUT"),
    Case(
        "encoded door path",
        "http",
        "POST /%6dcp with no credential",
        "refused",
        body=initialize_body(),
        path="/%6dcp",
        bare=True,
        headers={"Accept": ACCEPT, "Content-Type": "application/json"},
    ),
    Case(
        "dot-dot in the URL",
        "http",
        "POST /s/x/../../mcp with no credential",
        "refused",
        body=initialize_body(),
        path="/s/x/%2e%2e/%2e%2e/mcp",
        bare=True,
        headers={"Accept": ACCEPT, "Content-Type": "application/json"},
    ),
]


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    """One server for every case: the point is that it survives all of them in a row."""
    tmp = tmp_path_factory.mktemp("bad-input")
    brain = tmp / "brain.git"
    init_brain(brain, bare=True)
    parts = assemble(make_settings(tmp, brain))
    rows: dict[int, str] = {}
    with (
        RunningServer(make_app(parts), parts.settings) as running,
        RawSession(f"{running.url}/mcp", {"Authorization": f"Bearer {TOKEN}"}) as session,
    ):
        yield running, parts, session, rows
    if rows:
        counts = {e: sum(1 for c in CASES if c.expect == e) for e in ("refused", "harmless", "accepted")}
        table = "\n".join(rows[i] for i in sorted(rows))
        write_section(
            "bad-input",
            "Bad input",
            f"""
{len(rows)} cases, sent in a row to one running server over real HTTP (a hand-driven MCP session on
the owner door, so that bytes no SDK client would send can be sent). After each case the server
answered `/healthz` and a `brain_read`, and the head was unchanged, except the `accepted` cases
(legitimate notes: exactly one commit each). Expected: {counts["refused"]} refused,
{counts["harmless"]} harmless (answered without change), {counts["accepted"]} accepted.
Replies are cut to about 160 characters.

| # | case | what was sent | expected | observed reply | ms |
|---|---|---|---|---|---|
{table}
""",
        )


def send(running: RunningServer, session: RawSession, case: Case) -> tuple[httpx.Response, dict | None]:
    if case.tool is not None:
        return session.call(case.tool, case.args)
    headers = dict(case.headers or {}) if case.bare else session.headers(**(case.headers or {}))
    body = case.body if case.body is not None else b""
    if isinstance(body, dict):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode("utf-8", "surrogatepass")
    if case.bare:  # a stranger: not even the session's default Authorization header
        return httpx.request(case.method, f"{running.url}{case.path}", content=body, headers=headers, timeout=60), None
    return session.http.request(case.method, f"{running.url}{case.path}", content=body, headers=headers), None


def is_error(response: httpx.Response, message: dict | None) -> bool:
    if response.status_code >= 400:
        return True
    msgs = [message] if message is not None else rpc_messages(response)
    return any("error" in m or (m.get("result") or {}).get("isError") for m in msgs)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[f"{i:02d}-{c.name}" for i, c in enumerate(CASES)])
def test_bad_input_case(target, case: Case):
    running, parts, session, rows = target
    store = parts.brain.store
    head = store.head()
    started = time.perf_counter()
    try:
        response, message = send(running, session, case)
        observed = describe(response, message)
    except httpx.HTTPError as exc:  # the server hung up: recorded, and then judged below
        response, message, observed = None, None, describe(None, error=exc)
    ms = (time.perf_counter() - started) * 1000
    i = CASES.index(case)
    rows[i] = (
        f"| {i + 1} | {md_cell(case.name)} | {md_cell(case.sent, 90)} | {case.expect} | "
        f"{md_cell(observed, 160)} | {ms:.0f} |"
    )

    # The server is still up: /healthz, then a tool call on the same session.
    health = httpx.get(f"{running.url}/healthz", timeout=10)
    assert health.status_code == 200 and health.json()["ok"]
    r, m = session.call("brain_read", {"path": "profile.md"})
    assert m is not None and not is_error(r, m), describe(r, m)

    assert ms < 15_000, f"{case.name} took {ms:.0f} ms"
    if case.expect == "accepted":
        assert response is not None and not is_error(response, message), observed
        assert store.history(None, limit=2)[0][1].sha == head  # exactly one commit on top
    else:
        assert store.head() == head, f"{case.name} committed something"
    if case.expect == "refused":
        assert response is None or is_error(response, message), observed
    # No reply may carry a Python traceback or the server's file system paths.
    assert "Traceback" not in observed and str(store.path) not in observed


def test_there_are_at_least_fifty_cases():
    assert len(CASES) >= 50
    assert len({c.name for c in CASES}) == len(CASES)

"""The documents match the code: every repository path they name exists, and the README's
tool tables are what the doors list (names and the parameters each row names)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from serverkit import client

from cortex.cli import main as cli_main
from cortex.tools.table import tools_table

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [
    "README.md",
    "SECURITY.md",
    "CONTRIBUTING.md",
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")),
]
TOP = ("cortex", "tests", "docs", "ops", "bench", "eval", "brain-template", ".ci")
# A path into the repository: one of its top folders, then a name (a `*` glob allowed). A
# path in a brain (notes/…, projects/<slug>.md) starts with none of these and is not checked.
NAMED_PATH = re.compile(rf"(?<![\w./<>-])((?:{'|'.join(re.escape(t) for t in TOP)})/[\w./*-]*[\w*/])")


def named_paths(text: str) -> set[str]:
    return {m.group(1) for m in NAMED_PATH.finditer(text) if "<" not in text[m.end() : m.end() + 1]}


def test_the_path_pattern_finds_paths_and_leaves_brain_paths() -> None:
    text = "see `tests/http/test_auth_matrix.py`, tests/test_console*.py and [x](docs/DESIGN.md#a); notes/topic.md"
    assert named_paths(text) == {"tests/http/test_auth_matrix.py", "tests/test_console*.py", "docs/DESIGN.md"}
    assert named_paths("`projects/<slug>.md` or log/YYYY-MM-DD.md") == set()


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_path_a_document_names_exists(document: str) -> None:
    paths = named_paths((ROOT / document).read_text(encoding="utf-8"))
    missing = sorted(p for p in paths if not list(ROOT.glob(p.rstrip("/"))))
    assert not missing, f"{document} names paths that do not exist: {missing}"


def readme_tools() -> dict[str, set[str]]:
    """The README's owner tool table: each tool's name and the parameters its row names."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Tools\n", 1)[1].split("\n## ", 1)[0]
    tools: dict[str, set[str]] = {}
    for row in section.splitlines():
        if row.startswith("| `"):
            for name, params in re.findall(r"`(\w+)\(([^)]*)\)`", row.split(" | ")[0]):
                tools[name] = {p.split("=")[0].strip(" ?\\|") for p in re.split(r"[,|]", params) if p.strip(" \\")}
    return tools


def test_the_readme_tool_table_is_the_tools_own(capsys) -> None:
    """The README's tool table is generated from the tool modules (`cortex tools` prints it)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("<!-- tools-table:begin -->\n", 1)[1].split("<!-- tools-table:end -->", 1)[0]
    assert table == tools_table(), "README's tool table is stale: paste the output of `cortex tools`"
    assert cli_main(["tools"]) == 0
    assert capsys.readouterr().out == table


def test_the_readme_table_is_read() -> None:
    tools = readme_tools()
    assert tools["brain_proposals"] == {"id"} and tools["brain_reject"] == {"id", "reason"}
    assert tools["brain_corpus"] == {"paths", "query", "k", "after"}


def listed(url: str, token: str | None) -> dict[str, set[str]]:
    async def go() -> dict[str, set[str]]:
        async with client(url, token) as c:
            return {t.name: set(t.input_schema.get("properties", {})) for t in (await c.list_tools()).tools}

    return asyncio.run(go())


def test_the_readme_tool_lists_are_the_doors(gserver) -> None:
    owner = listed(gserver.owner, gserver.parts.settings.token)
    documented = readme_tools()
    assert sorted(documented) == sorted(owner), "README's tool table and the owner door differ"
    for name, params in documented.items():
        assert params <= owner[name], f"README names parameters {name} does not take: {sorted(params - owner[name])}"
    guest = gserver.guest("docs", ["notes/"])
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    said = re.search(r"A guest door lists (\w+) tools: (.*?)\. Proposals", text, re.S)
    assert said, "README no longer says which tools a guest door lists"
    names = re.findall(r"`(brain_\w+)", said.group(2))
    assert said.group(1) == {2: "two"}.get(len(names)) and sorted(names) == sorted(listed(guest.url, None))


def test_contributings_worked_example_is_a_tool_in_one_module_and_one_line() -> None:
    """The example tool in CONTRIBUTING.md, as a module of its own, registered from a table of
    one line, lists with its argument schema and answers a real call."""
    import sys
    import types

    from mcp import Client

    from cortex.http.mcp_tools import OneLineMCPServer, register
    from cortex.tools.tool import Caller

    code = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8").split("```python\n", 1)[1].split("```", 1)[0]
    module = types.ModuleType("cortex_count_example")
    sys.modules[module.__name__] = module  # a dataclass's annotations are read through its module
    try:
        exec(compile(code, "CONTRIBUTING.md", "exec"), module.__dict__)
        server = OneLineMCPServer(name="t", log_level="WARNING")

        class Snap:
            sha, notes = "a" * 40, {"notes/a.md": None, "notes/b.md": None, "c.md": None}

        class Held:
            class brain:
                @staticmethod
                def snapshot(at: str | None = None) -> Snap:
                    return Snap()

        register(server, [module.TOOL], Held(), lambda ctx, tool: Caller(door="owner"))

        async def go() -> tuple[set[str], dict]:
            async with Client(server) as c:
                listed = {t.name: t for t in (await c.list_tools()).tools}
                reply = await c.call_tool("brain_count", {"folder": "notes/"})
                return set(listed["brain_count"].input_schema["properties"]), reply.structured_content

        params, reply = asyncio.run(go())
    finally:
        del sys.modules[module.__name__]
    assert params == {"folder", "as_of"}
    assert reply == {"sha": "a" * 40, "notes": 2}

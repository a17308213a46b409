"""The house rules of the code itself: imports run one way, one module per outside system,
and the README's module map names exactly the modules there are.

Imports are read from the source (every `import`, also inside functions), so an
import hidden in a function cannot hide a cycle.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "cortex"
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")

# The layers of docs/DESIGN.md, top to bottom. A module may import its own layer or below.
LAYERS = {
    "entry": {"cli", "startup", "server", "bench", "evaluate"},
    "doors": {"doors", "guestdoor", "console", "console_pages", "console_auth", "markdown_render", "diffview"},
    "tools": {"tools", "parts"},
    "services": {
        "brains",
        "brain",
        "review",
        "guests",
        "ask",
        "readers",
        "pack",
        "verify",
        "editor",
        "remote",
        "corpus",
        "persist",
        "reading",
        "search",
        "proposals",
        "redisproc",
        "brainlock",
        "meaning",
        "embedder",
        "vectors",
        "workstate",
    },
    "store": {"gitstore"},
    "pure": {
        "structure",
        "working",
        "notes",
        "blocks",
        "passages",
        "ranking",
        "model_graph",
        "tokenize",
        "paths",
        "redact",
        "fences",
        "errors",
        "config",
    },
}
ORDER = list(LAYERS)
# The MCP SDK's server side lives with the doors; `cortex bench` and `cortex eval` also drive the SDK's client.
ONLY = {
    "pygit2": {"gitstore"},
    "redis": {"proposals"},
    "anthropic": {"readers"},
    "mcp": {"doors", "guestdoor", "bench", "evaluate"},
    "mcp_types": {"doors", "evaluate"},
    "onnxruntime": {"embedder"},
    "tokenizers": {"embedder"},
    "onnx": {"model_graph"},
}


def imports_of(module: str) -> tuple[set[str], set[str]]:
    """(cortex modules, outside top-level packages) that `module` imports anywhere in its source."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    inner, outer = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                if node.module:
                    inner.add(node.module.split(".")[0])
                else:
                    inner.update(a.name for a in node.names if a.name in MODULES)
            elif node.level == 0 and node.module:
                outer.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            outer.update(a.name.split(".")[0] for a in node.names)
    return inner & set(MODULES), outer


GRAPH = {m: imports_of(m)[0] for m in MODULES}


def layer(module: str) -> int:
    return next(i for i, name in enumerate(ORDER) if module in LAYERS[name])


def test_every_module_has_a_layer_and_imports():
    assert set(MODULES) == set().union(*LAYERS.values()), "a module is missing from LAYERS (or one is gone)"
    for module in MODULES:
        importlib.import_module(f"cortex.{module}")


def test_no_import_cycle():
    seen: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        seen[m] = 1
        stack.append(m)
        for n in sorted(GRAPH[m]):
            if seen.get(n) == 1:
                cycle = stack[stack.index(n) :] + [n]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if n not in seen:
                visit(n)
        stack.pop()
        seen[m] = 2

    for m in MODULES:
        if m not in seen:
            visit(m)


def test_imports_run_one_way():
    upward = [
        f"{m} ({ORDER[layer(m)]}) imports {n} ({ORDER[layer(n)]})"
        for m in MODULES
        for n in GRAPH[m]
        if layer(n) < layer(m)
    ]
    assert not upward


def test_no_door_touches_the_store():
    for module in LAYERS["doors"] | LAYERS["tools"]:
        assert "gitstore" not in GRAPH[module], f"{module} imports gitstore"
        source = (PACKAGE / f"{module}.py").read_text()
        assert ".store." not in source and ".store)" not in source, f"{module} reaches into brain.store"


@pytest.mark.parametrize("package,allowed", sorted(ONLY.items()))
def test_one_module_per_outside_system(package, allowed):
    users = {m for m in MODULES if package in imports_of(m)[1]}
    assert users == allowed


def test_readme_module_map_matches_the_tree():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    listing = section.split("```", 2)[1]  # the module map itself, not the prose around it
    named = set(re.findall(r"^\s+([a-z_]+)\.py\b", listing, re.MULTILINE))
    assert named == set(MODULES) | {"__init__"} or named == set(MODULES), (
        f"README names {sorted(named - set(MODULES))} that do not exist, and leaves out {sorted(set(MODULES) - named)}"
    )

"""The house rules of the code itself: the folders are the layers and imports run down
them, one module per outside system, and DESIGN.md's module map names exactly the
modules there are.

Imports are read from the source (every `import`, relative or absolute, also inside
functions), so an import hidden in a function cannot hide a cycle.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import tomllib
from pathlib import Path

import pytest
from layoutkit import GRAPH, MODULES, PACKAGE, ROOT, imports_of

# The layers of docs/DESIGN.md, top to bottom: a folder each, plus the command at the top
# and the base modules every layer may use at the bottom. A module may import its own
# layer or any below it.
ORDER = ["cli", "app", "http", "tools", "ask", "guests", "brain", "meaning", "index", "store", "notes", "base"]
BASE = {"settings", "state_folder", "errors", "files"}


def layer_name(module: str) -> str:
    if module in BASE:
        return "base"
    return module.split(".")[0]


def layer(module: str) -> int:
    return ORDER.index(layer_name(module))


# The store's Git modules: the store (reads and the compare-and-swap write) and the three
# parts mixed into it (history, working tree, remote traffic).
GIT_MODULES = {"store.git", "store.history", "store.working_tree", "store.network"}


# The MCP SDK's server side lives with the doors; `cortex eval` also drives the SDK's client.
ONLY = {
    "pygit2": GIT_MODULES,
    "redis": {"guests.queue"},
    "anthropic": {"ask.readers"},
    "mcp": {"http.doors", "http.mcp_tools", "http.guest_door", "http.oauth", "app.eval_doubles"},
    "mcp_types": {"http.mcp_tools", "app.eval_doubles"},
    "onnxruntime": {"meaning.embedder"},
    "tokenizers": {"meaning.embedder"},
    "onnx": {"meaning.model_graph"},
}


def test_every_module_sits_in_a_layer_folder_and_imports():
    strays = [m for m in MODULES if layer_name(m) not in ORDER]
    assert not strays, f"modules outside the layer folders: {strays}"
    for module in MODULES:
        importlib.import_module(f"cortex.{module}")


def test_the_layer_test_sees_absolute_and_relative_imports():
    assert "notes.blocks" in GRAPH["ask.quotes"]  # an absolute `from cortex.notes.blocks import`
    assert {"meaning.embedder", "notes.blocks"} <= GRAPH["meaning.closeness"]  # `from cortex.meaning import embedder`


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
        f"{m} ({layer_name(m)}) imports {n} ({layer_name(n)})" for m in MODULES for n in GRAPH[m] if layer(n) < layer(m)
    ]
    assert not upward


def test_no_door_touches_the_store():
    for module in (m for m in MODULES if layer_name(m) in ("http", "tools")):
        assert not GRAPH[module] & GIT_MODULES, f"{module} imports the Git store"
        text = (PACKAGE / (module.replace(".", "/") + ".py")).read_text().splitlines()
        source = "\n".join(line for line in text if not line.lstrip().startswith(("from ", "import ")))
        assert ".store." not in source and ".store)" not in source, f"{module} reaches into brain.store"


def test_the_doors_reach_the_brain_not_the_layers_under_it():
    """http/ sees the brain through `Brain` and plain types: no store, index or meaning module
    (the console's diffs took `decode` from the index, the server's parts named the remote store)."""
    below = {"store", "index", "meaning"}
    for module in (m for m in MODULES if layer_name(m) == "http"):
        reached = sorted(n for n in GRAPH[module] if layer_name(n) in below)
        assert not reached, f"{module} imports {reached}"


@pytest.mark.slow
@pytest.mark.parametrize("package,allowed", sorted(ONLY.items()))
def test_one_module_per_outside_system(package, allowed):
    users = {m for m in MODULES if package in imports_of(m)[1]}
    assert users == allowed


def test_the_design_module_map_matches_the_tree():
    design = (ROOT / "docs" / "DESIGN.md").read_text()
    section = design.split("## The layers are the folders", 1)[1].split("\n## ", 1)[0]
    listing = section.split("```", 2)[1]  # the module map itself, not the prose around it
    named = {n.replace("/", ".") for n in re.findall(r"^\s+([a-z0-9_/]+)\.py\b", listing, re.MULTILINE)}
    assert named == set(MODULES), (
        f"DESIGN names {sorted(named - set(MODULES))} that do not exist, and leaves out {sorted(set(MODULES) - named)}"
    )


# The benches: bench/ beside cortex/, run from a source checkout and never shipped. They may
# import any Cortex module; Cortex imports none of them but for `cortex bench`'s guarded import.
BENCH = ROOT / "bench"
BENCH_MODULES = sorted(p.stem for p in BENCH.glob("*.py") if p.name != "__init__.py")


def _from_imports(path: Path, top: str) -> list[tuple[str, list[str]]]:
    """Every absolute `from <top>... import names` in the file's source, also inside functions."""
    return [
        (node.module, [a.name for a in node.names])
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == top
    ]


@pytest.mark.parametrize("name", BENCH_MODULES)
def test_every_bench_module_imports(name, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    importlib.import_module(f"bench.{name}")


@pytest.mark.parametrize("name", BENCH_MODULES)
def test_a_bench_imports_only_what_exists(name, monkeypatch):
    """Also the imports inside functions, which run only when a part does."""
    monkeypatch.syspath_prepend(str(ROOT))
    for top in ("cortex", "bench"):
        for module, names in _from_imports(BENCH / f"{name}.py", top):
            found = importlib.import_module(module)
            missing = [n for n in names if not hasattr(found, n) and importlib.util.find_spec(f"{module}.{n}") is None]
            assert not missing, f"bench/{name}.py imports {missing} from {module}, which has no such name"


def _catches_import_error(node: ast.Try) -> bool:
    return any(
        h.type is not None and {"ImportError", "ModuleNotFoundError"} & set(re.findall(r"\w+", ast.unparse(h.type)))
        for h in node.handlers
    )


@pytest.mark.slow
def test_cortex_imports_no_bench_but_the_clis_guarded_import():
    assert {m for m in MODULES if "bench" in imports_of(m)[1]} <= {"cli"}
    tree = ast.parse((PACKAGE / "cli.py").read_text())
    guarded = {
        id(n)
        for t in ast.walk(tree)
        if isinstance(t, ast.Try) and _catches_import_error(t)
        for stmt in t.body
        for n in ast.walk(stmt)
    }
    bench = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom)
        and (n.module or "").split(".")[0] == "bench"
        or isinstance(n, ast.Import)
        and any(a.name.split(".")[0] == "bench" for a in n.names)
    ]
    assert all(id(n) in guarded for n in bench), "cortex/cli.py imports bench outside a try that catches ImportError"


def test_the_wheel_carries_no_bench():
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert not [p for p in packages if p.split(".")[0] == "bench"]


def _tree(module: str) -> ast.Module:
    return ast.parse((PACKAGE / (module.replace(".", "/") + ".py")).read_text())


def test_every_module_declares_its_public_names():
    undeclared = [
        m
        for m in MODULES
        if not any(
            isinstance(node, (ast.Assign, ast.AnnAssign))
            and any(
                getattr(t, "id", None) == "__all__" for t in getattr(node, "targets", [getattr(node, "target", None)])
            )
            for node in _tree(m).body
        )
    ]
    assert not undeclared, f"modules without __all__: {undeclared}"


def test_no_module_imports_another_modules_private_names():
    """`from cortex.x import _y` couples a module to another's insides: a shared name is public."""
    sources = [PACKAGE / (m.replace(".", "/") + ".py") for m in MODULES]
    sources += sorted((ROOT / "bench").glob("*.py")) + sorted((ROOT / "tests").rglob("test_*.py"))
    private = []
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (
                node.level or (node.module or "").split(".")[0] in ("cortex", "bench")
            ):
                private += [
                    f"{path.relative_to(ROOT)}: {a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
    assert not private


# A function a newcomer reads in one go: a longer one is two or three jobs (issue 36).
MAX_FUNCTION_LINES = 80


def long_functions(source: str, name: str) -> list[str]:
    """Each function or method of `source` over MAX_FUNCTION_LINES lines (docstring and all)."""
    return [
        f"{name}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (node.end_lineno or node.lineno) - node.lineno + 1 > MAX_FUNCTION_LINES
    ]


def test_the_length_test_sees_a_long_function_and_a_long_method():
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    assert long_functions(f"def f():\n{body}", "m") == [f"m:1 f ({MAX_FUNCTION_LINES + 1} lines)"]
    method = "class C:\n    def g(self):\n" + body.replace("    ", "        ")
    assert long_functions(method, "m") == [f"m:2 g ({MAX_FUNCTION_LINES + 1} lines)"]
    assert long_functions("def f():\n" + "".join(body.splitlines(True)[1:]), "m") == []


def test_no_function_is_over_80_lines():
    found = [
        line
        for module in MODULES
        for line in long_functions((PACKAGE / (module.replace(".", "/") + ".py")).read_text(), module)
    ]
    assert not found, "split these into functions that each do one job: " + "; ".join(found)


def test_no_test_module_imports_another_test_module():
    """Tests share kits (`tests/*kit.py`, fixtures by `pytest_plugins`), never each other nor
    conftest: importing a test module collects its tests twice and ties two files' fates
    together, and conftest holds fixtures, which pytest hands over by name."""
    found = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if "node_modules" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            found += [
                f"{path.relative_to(ROOT)}: {n}"
                for n in names
                if n.split(".")[0].startswith("test_") or n.split(".")[-1] == "conftest"
            ]
    assert not found


def test_every_tool_comes_from_one_module_of_its_own():
    """Each tool a door registers is built by one module under cortex/tools/, which holds its
    request, description, handler and reply type, and builds no other tool."""
    from cortex.tools.table import GUEST_TOOLS, OWNER_TOOLS, REVIEW_TOOLS

    homes: dict[str, str] = {}
    for tool in OWNER_TOOLS + REVIEW_TOOLS + GUEST_TOOLS:
        home = tool.handle.__module__
        assert home.startswith("cortex.tools."), f"{tool.name} is handled in {home}"
        assert tool.request.__module__ == home, f"{tool.name}'s request is not in {home}"
        module = importlib.import_module(home)
        assert module.TOOL is tool, f"{home} does not build {tool.name} as its TOOL"
        assert home not in homes, f"{home} holds {homes[home]} and {tool.name}"
        homes[home] = tool.name
    source = (ROOT / "cortex/http/mcp_tools.py").read_text(encoding="utf-8")
    assert "DESCRIPTION" not in source, "a tool's description is in the door, not in its module"

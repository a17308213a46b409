"""The import graph of `cortex/`, read from the source: what the layer test and the saved
index's fingerprint test both walk.

Imports are read from the source (every `import`, relative or absolute, also inside
functions), so an import hidden in a function cannot hide a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "cortex"
# Modules by dotted name under cortex/: "ask.asker", "settings", ...
MODULES = sorted(
    ".".join(p.relative_to(PACKAGE).with_suffix("").parts) for p in PACKAGE.rglob("*.py") if p.name != "__init__.py"
)


def _resolve(base: str, names: list[str]) -> set[str]:
    """The cortex modules `from cortex.<base> import <names>` reaches: the submodules it
    names, else the module itself."""
    found = {f"{base}.{n}" if base else n for n in names} & set(MODULES)
    if found:
        return found
    return {base} & set(MODULES)


def imports_of(module: str) -> tuple[set[str], set[str]]:
    """(cortex modules, outside top-level packages) that `module` imports anywhere in its source."""
    path = PACKAGE / (module.replace(".", "/") + ".py")
    here = module.split(".")[:-1]  # the package `module` is in
    tree = ast.parse(path.read_text())
    inner, outer = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names = [a.name for a in node.names]
            if node.level:
                parts = here[: len(here) - node.level + 1] + (node.module.split(".") if node.module else [])
                inner |= _resolve(".".join(parts), names)
            elif node.module and (node.module == "cortex" or node.module.startswith("cortex.")):
                inner |= _resolve(node.module.removeprefix("cortex").lstrip("."), names)
            elif node.module:
                outer.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("cortex."):
                    inner |= {a.name.removeprefix("cortex.")} & set(MODULES)
                else:
                    outer.add(a.name.split(".")[0])
    return inner - {module}, outer


GRAPH = {m: imports_of(m)[0] for m in MODULES}

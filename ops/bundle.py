"""`make bundle`: Cortex as an MCP Bundle (`.mcpb`, one click in Claude Desktop) and an MCP
registry `server.json`, both generated from the package's own metadata (pyproject.toml and
`cortex.__version__`), so neither can drift from the package.

The bundle is a zip: `manifest.json` (MCPB manifest 0.3) and `server/`, which holds Cortex's
own code and a launcher that runs `cortex stdio` with it. Cortex's dependencies (pygit2,
numpy, onnxruntime: compiled, per platform) are not in it: the manifest asks for a Python
3.11+ that has them (`pip install cortex-git-brain`, or the checkout's `pip install -e .`),
and the launcher says so in one line when they are missing.

    python ops/bundle.py [--out dist]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MANIFEST_VERSION = "0.3"
# The fields MCPB manifest 0.3 requires, and those `server` requires.
REQUIRED = ("manifest_version", "name", "version", "description", "author", "server")
SERVER_REQUIRED = ("type", "entry_point", "mcp_config")

# The launcher checks the Python it was started with for Cortex's dependencies before importing
# anything (a host's bare `python3` in a virtual-environment setup has none): when they are
# missing it runs the Python `cortex serve` recorded in the state folder (or CORTEX_PYTHON),
# and when none has them it says in one line what to install.
LAUNCHER = """\"\"\"Cortex's MCP Bundle entry point: `cortex stdio` with the bundled code (server/lib).\"\"\"
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

NEEDS = __NEEDS__
CHECK = "import importlib.util, sys; sys.exit(any(importlib.util.find_spec(m) is None for m in %r))" % (NEEDS,)


def lacks(modules):
    return [m for m in modules if importlib.util.find_spec(m) is None]


def candidates():
    home = Path(os.environ.get("CORTEX_HOME") or Path.home() / ".cortex")
    found = [os.environ.get("CORTEX_PYTHON", "")]
    try:
        found.append((home / "python").read_text().strip())
    except OSError:
        pass
    return [c for c in found if c and os.path.abspath(c) != os.path.abspath(sys.executable)]


missing = lacks(NEEDS)
if missing and not os.environ.get("CORTEX_BUNDLE_REEXEC"):
    for python in candidates():
        if os.access(python, os.X_OK) and subprocess.run([python, "-c", CHECK]).returncode == 0:
            os.environ["CORTEX_BUNDLE_REEXEC"] = "1"
            os.execv(python, [python, __file__, *sys.argv[1:]])
if missing:
    sys.exit(f"cortex stdio: {sys.executable} lacks Cortex's dependencies ({', '.join(missing)}); "
             "install them there with: pip install cortex-git-brain (or set CORTEX_PYTHON to a Python that has them)")
sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
from cortex.cli import main  # noqa: E402

sys.exit(main(["stdio", *sys.argv[1:]]))
"""
# Import names of the distributions whose names differ from them.
IMPORT_NAMES = {"python-frontmatter": "frontmatter", "PyYAML": "yaml", "markdown-it-py": "markdown_it"}


def needed_modules(meta: dict[str, Any]) -> list[str]:
    """The modules of Cortex's unconditional dependencies, as the launcher checks them."""
    out = []
    for spec in meta["dependencies"]:
        if ";" in spec:
            continue  # a platform's own (uvloop)
        name = re.split(r"[<>=!~\[ ]", spec, maxsplit=1)[0]
        out.append(IMPORT_NAMES.get(name, name.lower().replace("-", "_")))
    return out


def tracked(folder: str) -> list[Path]:
    """The files Git tracks under `folder`: an untracked or ignored file (a stray .env) never ships."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--", folder], capture_output=True, check=True
    ).stdout
    return sorted(ROOT / name for name in listed.decode().split("\0") if name)


def metadata() -> dict[str, Any]:
    """The package's name, version, description, licence, keywords and Python it needs."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    version = re.search(r'^__version__ = "([^"]+)"', (ROOT / "cortex" / "__init__.py").read_text(), re.M)
    assert version is not None, "cortex/__init__.py sets no __version__"
    return {**project, "version": version.group(1)}


def manifest(meta: dict[str, Any]) -> dict[str, Any]:
    """The MCPB manifest: `cortex stdio` run by the host's Python, on the owner's brain."""
    return {
        "manifest_version": MANIFEST_VERSION,
        "name": "cortex",
        "display_name": "Cortex",
        "version": meta["version"],
        "description": meta["description"],
        "author": {"name": meta["authors"][0]["name"]},
        "license": meta["license"]["text"],
        "keywords": meta["keywords"],
        "server": {
            "type": "python",
            "entry_point": "server/main.py",
            "mcp_config": {
                "command": "python3",
                "args": ["${__dirname}/server/main.py"],
                "env": {"CORTEX_HOME": "${user_config.cortex_home}", "PYTHONUNBUFFERED": "1"},
            },
        },
        "user_config": {
            "cortex_home": {
                "type": "directory",
                "title": "Cortex state folder",
                "description": "CORTEX_HOME: where the brain, the owner token and the index live",
                "required": True,
                "default": "${HOME}/.cortex",
            }
        },
        "tools_generated": True,
        "compatibility": {
            "platforms": ["darwin", "linux"],
            "runtimes": {"python": meta["requires-python"]},
        },
    }


def server_json(meta: dict[str, Any]) -> dict[str, Any]:
    """The MCP registry entry: the package, run over stdio as `cortex stdio`."""
    return {
        "name": "io.github.cortex-git-brain/cortex",
        "description": meta["description"],
        "version": meta["version"],
        "packages": [
            {
                "registry_type": "pypi",
                "identifier": meta["name"],
                "version": meta["version"],
                "transport": {"type": "stdio"},
                "package_arguments": [{"type": "positional", "value": "stdio"}],
                "environment_variables": [
                    {"name": "CORTEX_HOME", "description": "the state folder (default ~/.cortex)", "is_required": False}
                ],
            }
        ],
    }


def problems(found: dict[str, Any]) -> list[str]:
    """What makes `found` no MCPB manifest this builder writes: a required field missing or of
    the wrong type, a server entry point the bundle lacks is checked by `build`."""
    out = [f"missing {key}" for key in REQUIRED if key not in found]
    if found.get("manifest_version") != MANIFEST_VERSION:
        out.append(f"manifest_version is not {MANIFEST_VERSION}")
    if not re.fullmatch(r"\d+\.\d+\.\d+(?:[-+.].*)?", str(found.get("version", ""))):
        out.append("version is not semver")
    if not isinstance(found.get("author"), dict) or not found["author"].get("name"):
        out.append("author has no name")
    server = found.get("server") if isinstance(found.get("server"), dict) else {}
    out += [f"server lacks {key}" for key in SERVER_REQUIRED if key not in server]
    if server.get("type") not in ("python", "node", "binary", "uv"):
        out.append("server type is not one MCPB knows")
    config = server.get("mcp_config") if isinstance(server.get("mcp_config"), dict) else {}
    if not isinstance(config.get("command"), str) or not isinstance(config.get("args", []), list):
        out.append("mcp_config has no command, or its args are no list")
    for key in re.findall(r"\$\{user_config\.([^}]+)\}", json.dumps(found)):
        if key not in found.get("user_config", {}):
            out.append(f"${{user_config.{key}}} names no user_config field")
    return out


def build(out: Path) -> tuple[Path, Path]:
    """Write `cortex-<version>.mcpb` and `server.json` into `out`; their paths."""
    meta = metadata()
    found = manifest(meta)
    wrong = problems(found)
    if wrong:
        raise SystemExit(f"bundle: the manifest is wrong: {'; '.join(wrong)}")
    out.mkdir(parents=True, exist_ok=True)
    bundle = out / f"cortex-{meta['version']}.mcpb"
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest.json", json.dumps(found, indent=2) + "\n")
        z.writestr(found["server"]["entry_point"], LAUNCHER.replace("__NEEDS__", repr(needed_modules(meta))))
        for path in tracked("cortex"):
            z.write(path, f"server/lib/{path.relative_to(ROOT).as_posix()}")
        for path in tracked("brain-template"):  # the embedded default's first start
            if path.suffix == ".md":
                z.write(path, f"server/lib/cortex/brain_template/{path.relative_to(ROOT / 'brain-template')}")
        for name in ("README.md", "LICENSE"):
            if (ROOT / name).exists():
                z.write(ROOT / name, name)
    registry = out / "server.json"
    registry.write_text(json.dumps(server_json(meta), indent=2) + "\n")
    return bundle, registry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "dist"), help="where to write them (default dist/)")
    args = parser.parse_args(argv)
    bundle, registry = build(Path(args.out))
    print(f"{bundle} ({bundle.stat().st_size / 1e6:.1f} MB) and {registry}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The `cortex` command: init, serve, guest, eval, bench."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .config import Settings
from .guests import add_guest_commands

TEMPLATE = Path(os.environ.get("CORTEX_TEMPLATE") or Path(__file__).resolve().parent.parent / "brain-template")


def template_files(root: Path = TEMPLATE) -> dict[str, bytes]:
    """Every file of the brain template, keyed by its path inside the brain."""
    if not root.is_dir():
        raise SystemExit(f"brain template not found at {root}; set CORTEX_TEMPLATE")
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def init_brain(path: Path, bare: bool = False) -> str:
    """Make a new Git repository on `main` whose first commit holds the template."""
    from .brain import render_index
    from .gitstore import GitStore
    from .notes import parse_note
    from .corpus import is_note_path

    if path.exists() and any(path.iterdir()):
        raise SystemExit(f"{path} exists and is not empty; choose a new folder")
    files = template_files()
    notes = {p: parse_note(p, d.decode("utf-8")) for p, d in files.items() if is_note_path(p)}
    files["INDEX.md"] = render_index(notes)
    store = GitStore.init(path, files, bare=bare)
    return store.head() or ""


def cmd_init(args: argparse.Namespace) -> int:
    sha = init_brain(Path(args.path), bare=args.bare)
    kind = "bare repository" if args.bare else "repository"
    print(f"Made a new brain ({kind}) at {args.path}, branch main, first commit {sha[:12]}.")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from .server import serve

    settings = Settings.from_env(brain=args.brain, host=args.host, port=args.port)
    return serve(settings)


def cmd_eval(args: argparse.Namespace) -> int:
    from .evaluate import main as eval_main

    return eval_main(args)


def cmd_bench(args: argparse.Namespace) -> int:
    from .bench import main as bench_main

    return bench_main(args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cortex", description="A Git-backed brain served over MCP.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("init", help="make a new brain repository from the template")
    p.add_argument("path")
    p.add_argument("--bare", action="store_true", help="a bare repository (accepts pushes from clones)")
    p.set_defaults(fn=cmd_init)

    p = sub.add_parser("serve", help="serve the brain over MCP (Streamable HTTP)")
    p.add_argument("--brain", help="the brain repository (default: CORTEX_BRAIN or $CORTEX_HOME/brain)")
    p.add_argument("--host", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default 8765, or PORT)")
    p.set_defaults(fn=cmd_serve)

    p = sub.add_parser("eval", help="retrieval (and ask) eval on the public sample brain")
    p.add_argument("--brain-dir", default=None, help="folder of the sample brain (default eval/brain)")
    p.add_argument("--questions", default=None, help="questions file (default eval/questions.jsonl)")
    p.add_argument("--no-ask", action="store_true", help="skip the ask part")
    p.set_defaults(fn=cmd_eval)

    p = sub.add_parser("bench", help="benchmarks on synthetic brains (prints figures)")
    p.add_argument("--sizes", default="1000,10000", help="comma-separated note counts")
    p.add_argument("--part", default="all", help="store, search, ask, editor or all")
    p.set_defaults(fn=cmd_bench)

    add_guest_commands(sub)

    args = parser.parse_args(argv)
    return args.fn(args) or 0


if __name__ == "__main__":
    sys.exit(main())

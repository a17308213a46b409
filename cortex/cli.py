"""The `cortex` command: init, serve, token, reindex, guest, settings, tools, eval, bench.

Every refusal is one line on stderr and exit status 1; nothing is changed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from cortex import DISTRIBUTION, __version__
from cortex.errors import CortexError
from cortex.settings import GUEST_DEFAULTS as DEFAULTS
from cortex.settings import QUEUE_CAP, Settings, settings_table

if TYPE_CHECKING:
    from cortex.brain.brain import Brain
    from cortex.index.snapshot import Snapshot

__all__ = [
    "BAR_EVERY_S",
    "add_guest_commands",
    "brain_option",
    "cmd_bench",
    "cmd_stdio",
    "cmd_eval",
    "cmd_guest_add",
    "cmd_guest_list",
    "cmd_guest_revoke",
    "cmd_init",
    "cmd_reindex",
    "cmd_serve",
    "cmd_settings",
    "cmd_tools",
    "cmd_token",
    "main",
    "progress_bar",
]

# The rest of Cortex is imported inside each command: `cortex serve` opens its port
# before the MCP SDK, pygit2 and the index code are even loaded.


def cmd_init(args: argparse.Namespace) -> int:
    from cortex.app.brain_setup import init_brain, init_in_place

    path = Path(args.path)
    if path.is_dir() and any(path.iterdir()) and not args.bare:
        sha, count, left_out = init_in_place(
            path,
            template=args.template,
            author=Settings.from_env().author,
            progress=lambda line: print(line, file=sys.stderr, flush=True),
        )
        print(
            f"Made {path} a brain in place: branch main, first commit {sha[:12]} holding {count:,} files "
            "exactly as they were" + (" plus the template" if args.template else "") + "."
        )
        if left_out:
            print(f"Left out (listed in .git/info/exclude, your files untouched): {', '.join(left_out)}")
        print(f"Serve it with: cortex serve --brain {path}")
        return 0
    sha = init_brain(path, bare=args.bare)
    kind = "bare repository" if args.bare else "repository"
    print(f"Made a new brain ({kind}) at {args.path} from the template, branch main, first commit {sha[:12]}.")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from cortex.app.startup import serve  # light: the port opens before the rest of Cortex is imported

    settings = Settings.from_env(brain=args.brain, host=args.host, port=args.port)
    return serve(settings, show_secrets=not args.no_secrets_shown)


def cmd_stdio(args: argparse.Namespace) -> int:
    from cortex.app.stdio_door import run_stdio

    return run_stdio(Settings.from_env(brain=args.brain, port=args.port))


def cmd_rules(args: argparse.Namespace) -> int:
    """Print the rules that decide a stamp, in the order they are tried, with their examples."""
    from cortex.ask.stamps import RULES

    for n, rule in enumerate(RULES, 1):
        print(f"{n:2}. {rule.id} ({rule.stamp}): {rule.meaning}")
        for _, quotes, answer in rule.examples:
            print(f"      quotes {list(quotes)!r} -> answer {answer!r}")
    return 0


def cmd_token(args: argparse.Namespace) -> int:
    """Print the owner token (or the URL secret) a server of this state folder uses, so a
    printed config can say `$(cortex token)` instead of a variable nobody set."""
    from cortex.settings import SECRET_FILES, secret_in_effect

    name = "url_secret" if args.url_secret else "token"
    settings = Settings.from_env()
    value = secret_in_effect(settings, name)
    if value is None:
        variable = "CORTEX_URL_SECRET" if args.url_secret else "CORTEX_TOKEN"
        raise CortexError(
            f"no {'URL secret' if args.url_secret else 'owner token'} yet: {variable} is unset and "
            f"{settings.home / SECRET_FILES[name]} does not exist; the first cortex serve makes it "
            "(set CORTEX_HOME to the state folder the server uses)"
        )
    print(value)
    return 0


def cmd_tools(args: argparse.Namespace) -> int:
    from cortex.tools.table import tools_table

    print(tools_table(), end="")
    return 0


def cmd_settings(args: argparse.Namespace) -> int:
    print(settings_table(), end="")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from cortex.app.evaluate import main as eval_main

    return eval_main(args)


def cmd_bench(args: argparse.Namespace) -> int:
    # The benches are bench/ beside cortex/ in a source checkout; the wheel carries none.
    checkout = str(Path(__file__).resolve().parent.parent)
    if checkout not in sys.path:
        sys.path.append(checkout)
    try:
        from bench.parts import main as bench_main
    except ModuleNotFoundError as exc:
        if exc.name not in ("bench", "bench.parts"):
            raise
        print(
            "cortex bench: the benches run from a source checkout (bench/ beside cortex/); this install has none",
            file=sys.stderr,
        )
        return 1
    code: int = bench_main(args)
    return code


BAR_EVERY_S = 0.2  # how often `cortex reindex` redraws its bar


def progress_bar(label: str, width: int = 30) -> Callable[[int, int], None]:
    """A text progress bar on stderr, redrawn in place: `label [#####.....] done/total`."""

    def draw(done: int, total: int) -> None:
        filled = width * done // total if total else width
        end = "\n" if done >= total else ""
        bar = "#" * filled + "." * (width - filled)
        print(f"\r{label} [{bar}] {done:,}/{total:,}", end=end, file=sys.stderr, flush=True)

    return draw


def cmd_reindex(args: argparse.Namespace) -> int:
    """Drop the brain's saved index, build it from the notes and save it again."""
    import time

    from cortex.app.brain_setup import open_brain
    from cortex.brain.lock import BrainLock

    settings = Settings.from_env(brain=args.brain)
    brain = open_brain(settings)[0]
    # The saved index is the server's to write while it serves: refused in one line, naming it.
    lock = BrainLock.acquire(brain.store.common_dir, settings.brain, "reindexed")  # noqa: F841 - held until exit
    from cortex.index.saved import IndexFile, index_file

    saved = brain.corpus.saved
    if saved is None:
        gone = index_file(settings.home, brain.store.path, brain.store.branch).drop()
        print(
            "cortex reindex: the saved index is off (CORTEX_PERSIST_INDEX=off); "
            + ("removed the file left from before." if gone else "nothing to do."),
            file=sys.stderr,
        )
        return 1
    assert isinstance(saved, IndexFile)  # the only saved index there is
    saved.drop()
    saved.rebuilds.clear()
    brain.corpus.progress = progress_bar("reading files")
    brain.corpus.progress_every_s = BAR_EVERY_S
    started = time.monotonic()
    snap = brain.snapshot()
    built = time.monotonic() - started
    saved.save(brain.corpus, force=True)
    print(
        f"Indexed {len(snap.notes):,} notes at {snap.sha[:12]} in {built:.1f} s; saved {saved.size / 1e6:.1f} MB "
        f"to {saved.path} in {time.monotonic() - started - built:.1f} s.",
    )
    return _reindex_meaning(settings, brain, snap)


def _reindex_meaning(settings: Settings, brain: Brain, snap: Snapshot) -> int:
    """Bring the meaning arm's vectors up to the head (the notes without vectors only), with a bar."""
    import time

    from cortex.app.brain_setup import make_meaning

    meaning = make_meaning(settings, brain, log=lambda line: print(line, file=sys.stderr))
    if meaning.state == "off" or not meaning.prepare():
        print(f"Meaning: {meaning.reason}; search and ask stay lexical.")
        return 0
    meaning.progress = progress_bar("embedding notes")
    started = time.monotonic()
    meaning.catch_up(snap)
    assert meaning.store is not None and meaning.files is not None  # prepared
    print(
        f"Meaning: {meaning.store.passages:,} passages of {len(snap.notes):,} notes up to date in "
        f"{time.monotonic() - started:.1f} s ({meaning.files.model_id})."
    )
    return 0


# -- the `cortex guest` commands ------------------------------------------


def _open_brain(args: argparse.Namespace) -> Brain:
    """The brain for a guest command (`--brain`, else CORTEX_BRAIN, else the default). Its saved
    index is used without a word: that the index was loaded at the server's last save is news
    about the server, not about guests."""
    from cortex.app.brain_setup import open_brain

    return open_brain(Settings.from_env(brain=args.brain), index_log=lambda line: None)[0]


def cmd_guest_add(args: argparse.Namespace) -> int:
    from cortex.guests.policy import add_guest, unmatched_scopes

    brain = _open_brain(args)
    try:
        policy, secret, sha = add_guest(
            brain,
            args.name,
            args.scope,
            max_k=args.max_k,
            daily_asks=args.daily_asks,
            daily_proposals=args.daily_proposals,
            citations=args.citations,
            max_pending=args.max_pending,
        )
    except CortexError as exc:
        raise SystemExit(f"cortex guest add: {exc}") from None
    print(
        f"Guest {policy.name} added in commit {sha[:12]}: scopes {', '.join(policy.scopes)}; "
        f"max_k {policy.max_k}, {policy.daily_asks} asks and {policy.daily_proposals} proposals a day, "
        f"{policy.max_pending} awaiting review at once; "
        f"citations {'shown' if policy.citations else 'hidden'}."
    )
    for warning in unmatched_scopes(brain, policy.scopes, sha):
        print(f"cortex guest add: warning: {warning}", file=sys.stderr)
    print("Door path (shown once, never stored; put the server's base URL in front):")
    print(f"/g/{secret}/mcp")
    return 0


def cmd_guest_list(args: argparse.Namespace) -> int:
    from cortex.guests.policy import GuestBook

    book = GuestBook(_open_brain(args))
    policies, broken = book.policies(), book.broken()
    if not policies and not broken:
        print("No guests.")
    for policy in policies.values():
        print(
            f"{policy.name}: scopes {', '.join(policy.scopes)}; max_k {policy.max_k}; "
            f"{policy.daily_asks} asks/day; {policy.daily_proposals} proposals/day; "
            f"{policy.max_pending} pending at most; "
            f"citations {'shown' if policy.citations else 'hidden'}; created {policy.created}"
        )
    for item in broken:
        print(f"BROKEN {item['file']}: {item['error']} (this guest's door is closed)")
    return 1 if broken else 0


def cmd_guest_revoke(args: argparse.Namespace) -> int:
    from cortex.guests.policy import revoke_guest

    try:
        sha = revoke_guest(_open_brain(args), args.name)
    except CortexError as exc:
        raise SystemExit(f"cortex guest revoke: {exc}") from None
    print(f"Guest {args.name} revoked in commit {sha[:12]}; its door is closed.")
    return 0


def brain_option(p: argparse.ArgumentParser) -> None:
    """`--brain PATH`, which every command that acts on a brain takes."""
    p.add_argument("--brain", help="the brain repository (default: CORTEX_BRAIN or $CORTEX_HOME/brain)")


def add_guest_commands(sub: argparse._SubParsersAction) -> None:
    """Register `cortex guest add|list|revoke` on the top-level subparsers."""
    g = sub.add_parser("guest", help="guests: scoped askers and proposers (add, list, revoke)")
    gsub = g.add_subparsers(dest="guest_command", required=True)
    p = gsub.add_parser("add", help="add a guest; prints its door path once")
    p.add_argument("name")
    brain_option(p)
    p.add_argument(
        "--scope", action="append", required=True, help="an exact note path or a folder ending in '/' (repeatable)"
    )
    p.add_argument("--max-k", type=int, default=None, help=f"most notes one ask may read (default {DEFAULTS['max_k']})")
    p.add_argument("--daily-asks", type=int, default=None, help=f"asks per day (default {DEFAULTS['daily_asks']})")
    p.add_argument(
        "--daily-proposals", type=int, default=None, help=f"proposals per day (default {DEFAULTS['daily_proposals']})"
    )
    p.add_argument(
        "--max-pending",
        type=int,
        default=None,
        help=f"proposals awaiting review at once, within the queue's {QUEUE_CAP} (default {DEFAULTS['max_pending']})",
    )
    p.add_argument("--citations", action="store_true", help="show paths and quotes in replies")
    p.set_defaults(fn=cmd_guest_add)
    p = gsub.add_parser("list", help="list guests and any broken policy (never secrets)")
    brain_option(p)
    p.set_defaults(fn=cmd_guest_list)
    p = gsub.add_parser("revoke", help="revoke a guest (a commit deleting its policy)")
    p.add_argument("name")
    brain_option(p)
    p.set_defaults(fn=cmd_guest_revoke)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cortex", description="A Git-backed brain served over MCP.")
    parser.add_argument("--version", action="version", version=f"cortex {__version__} ({DISTRIBUTION})")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("init", help="make a new brain from the template, or a folder of notes a brain in place")
    p.add_argument("path")
    p.add_argument("--bare", action="store_true", help="a bare repository (accepts pushes from clones)")
    p.add_argument(
        "--template",
        action="store_true",
        help="in place: also add the template's house-rule files (never over a file of yours)",
    )
    p.set_defaults(fn=cmd_init)

    p = sub.add_parser("serve", help="serve the brain over MCP (Streamable HTTP)")
    brain_option(p)
    p.add_argument("--host", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", help="port, 1 to 65535 (default 8765, or PORT)")  # checked as CORTEX_PORT is
    # cortex stdio's server logs to a file: its banner says where the token is, never the token
    p.add_argument("--no-secrets-shown", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(fn=cmd_serve)

    p = sub.add_parser(
        "stdio", help="the owner door over stdio, for desktop clients (attaches to, or starts, the server)"
    )
    brain_option(p)
    p.add_argument("--port", help="the port a server it starts listens on (default 8765, or PORT)")
    p.set_defaults(fn=cmd_stdio)

    p = sub.add_parser("rules", help="print the rules that decide brain_ask's and brain_verify's stamp, in order")
    p.set_defaults(fn=cmd_rules)

    p = sub.add_parser("token", help="print the owner token the server uses (from CORTEX_TOKEN or the state folder)")
    p.add_argument("--url-secret", action="store_true", help="print the secret of the /s/<secret>/mcp URL instead")
    p.set_defaults(fn=cmd_token)

    p = sub.add_parser("reindex", help="drop the saved index, build it from the notes and save it again")
    brain_option(p)
    p.set_defaults(fn=cmd_reindex)

    p = sub.add_parser("settings", help="print every setting, its default and meaning (README's Markdown table)")
    p.set_defaults(fn=cmd_settings)

    p = sub.add_parser("tools", help="print every owner tool, its arguments and what it does (README's Markdown table)")
    p.set_defaults(fn=cmd_tools)

    p = sub.add_parser("eval", help="retrieval (and ask) eval on the public sample brain")
    p.add_argument("--brain-dir", default=None, help="folder of the sample brain (default: the one shipped)")
    p.add_argument("--questions", default=None, help="questions file (default: the one shipped)")
    p.add_argument("--no-ask", action="store_true", help="skip the ask part")
    p.set_defaults(fn=cmd_eval)

    p = sub.add_parser("bench", help="benchmarks on synthetic brains (prints figures)")
    p.add_argument("--sizes", default="1000,10000", help="comma-separated note counts")
    p.add_argument(
        "--part",
        default="all",
        help="store, search, ask, editor, door, all (those five); persist, scale, long, persist-long (long notes), "
        "meaning, door-tree (each call x the SDK's no-op), "
        "owner-git (the owner's Git beside two writers; --sizes: seconds a shape)",
    )
    p.set_defaults(fn=cmd_bench)

    add_guest_commands(sub)

    args = parser.parse_args(argv)
    try:
        return args.fn(args) or 0
    except CortexError as exc:
        print(f"cortex {args.command}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

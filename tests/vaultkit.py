"""Vaults a person would recognise, built in code: an Obsidian vault with aliases,
body tags and wikilinks, CRLF notes, hub notes of several hundred KB, and the `git` commands their owners type."""

from __future__ import annotations

import datetime as dt
import random
import subprocess
from pathlib import Path

from serverkit import TOKEN

from cortex.brain.brain import Brain
from cortex.settings import Settings
from cortex.store.git import GitStore
from cortex.tools.toolset import Tools

LANGS = ("Rust", "Go", "Ruby", "Python", "Elixir", "Haskell", "Java", "Kotlin")
TOPICS = (
    "web frameworks",
    "parsers",
    "databases",
    "logging",
    "testing",
    "CLI tools",
    "serialization",
    "async runtimes",
    "cryptography",
    "image processing",
)


def hub_note(lang: str, size: int, seed: int = 0) -> bytes:
    """An awesome-list style hub: a title, a line of intro, then one line per library."""
    rnd = random.Random(f"{lang}-{seed}")
    lines = [f"# {lang} libraries", "", f"A curated list of {lang} libraries and tools.", ""]
    n = 0
    while sum(len(x) + 1 for x in lines) < size:
        if n % 60 == 0:
            lines += ["", f"## {TOPICS[(n // 60) % len(TOPICS)].capitalize()}", ""]
        name = f"{lang.lower()}-{rnd.choice(('fast', 'tiny', 'async', 'safe', 'neo'))}{n}"
        topic = rnd.choice(TOPICS)
        lines.append(
            f"- [{name}](https://github.com/example/{name}) — {topic} for {lang}, "
            f"{rnd.choice(('maintained', 'archived', 'popular', 'small'))}, "
            f"{rnd.randint(10, 90000)} stars"
        )
        n += 1
    return ("\n".join(lines) + "\n").encode("utf-8")


def hub_vault(hub_bytes: int = 400_000) -> dict[str, bytes]:
    """Hubs for two languages (400 KB and 200 KB) among small notes that mention the same words."""
    files: dict[str, bytes] = {
        "lists/Rust libraries.md": hub_note("Rust", hub_bytes),
        "lists/Go libraries.md": hub_note("Go", hub_bytes // 2),
    }
    for lang in LANGS[2:]:
        files[f"lists/{lang.lower()}-libraries.md"] = hub_note(lang, 6_000)
    # Small notes that say "rust" and "libraries" often: BM25's favourites.
    files["notes/ruby-libraries.md"] = (
        b"# Ruby libraries I use\n\nRuby libraries beat rust libraries for scripting; rust libraries "
        b"need more ceremony. Libraries: rails, sinatra. Rust? Later.\n"
    )
    files["notes/learning-rust.md"] = (
        b"# Learning Rust\n\nRust ownership, borrowing, and which libraries to learn first "
        b"(serde, tokio). Go libraries feel simpler.\n"
    )
    files["notes/go-vs-rust.md"] = b"# Go vs Rust\n\nGo libraries are plain; Rust libraries are generic. Go go go.\n"
    for i in range(30):
        files[f"notes/misc-{i:02d}.md"] = (
            f"# Misc {i}\n\nA note about {TOPICS[i % len(TOPICS)]} in {LANGS[i % len(LANGS)]}.\n"
        ).encode()
    return files


HUB_QUERIES = {
    "rust libraries": "lists/Rust libraries.md",
    "Rust libraries": "lists/Rust libraries.md",
    "go libraries": "lists/Go libraries.md",
    "list of go libraries": "lists/Go libraries.md",
    "rust library": "lists/Rust libraries.md",
    "elixir libraries": "lists/elixir-libraries.md",
}


GIT_ENV = {
    "GIT_AUTHOR_NAME": "Ada Lovelace",
    "GIT_AUTHOR_EMAIL": "ada@example.org",
    "GIT_COMMITTER_NAME": "Ada Lovelace",
    "GIT_COMMITTER_EMAIL": "ada@example.org",
    "PATH": "/usr/bin:/bin:/usr/local/bin",
    "GIT_CONFIG_NOSYSTEM": "1",
}


# Queries the saved-index tests compare a loaded index and a fresh build by.
QUERIES = ["bees", "hive south", "garden of thoughts", "plan", "note", "alpha beta gamma", "archive"]


def git(repo: Path, *args: str, check: bool = True) -> str:
    r = subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=check, env={**GIT_ENV, "HOME": str(repo.parent)}
    )
    return r.stdout


def vault_on(tmp_path: Path, branch: str, files: dict[str, bytes]) -> Path:
    repo = tmp_path / "vault"
    repo.mkdir()
    git(repo, "init", "-q", "-b", branch)
    git(repo, "config", "user.name", "Ada Lovelace")
    git(repo, "config", "user.email", "ada@example.org")
    for path, data in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_bytes(data)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "my notes")
    return repo


def tools_on(tmp_path: Path, files: dict[str, bytes]) -> Tools:
    """The tools over a bare brain of `files` in one commit, its clock fixed, read once (as
    `cortex serve` does at start); no server, no reader model."""
    store = GitStore.init(tmp_path / "vault.git", files, bare=True, message="import the vault")
    brain = Brain(store, clock=lambda: dt.datetime(2026, 12, 7, 12, tzinfo=dt.UTC))
    brain.snapshot()
    return Tools(brain, asker=None)  # type: ignore[arg-type]


def note_text(brain: Brain, path: str) -> str:
    """The text of the note at `path` at the head."""
    _, blob, _ = brain.read(path)
    return brain.store.blob_bytes(blob).decode()


def settings_for(tmp_path: Path, brain: Path, **env: str) -> Settings:
    return Settings.from_env({"CORTEX_HOME": str(tmp_path / "home"), "CORTEX_TOKEN": TOKEN, **env}, brain=brain)


def hand_git(*args: str, cwd: Path) -> str:
    """`git` as a person named Hand runs it, in `cwd`."""
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        env={
            "GIT_AUTHOR_NAME": "Hand",
            "GIT_AUTHOR_EMAIL": "hand@example.org",
            "GIT_COMMITTER_NAME": "Hand",
            "GIT_COMMITTER_EMAIL": "hand@example.org",
            "PATH": "/usr/bin:/bin:/usr/local/bin",
            "HOME": str(cwd),
        },
    ).stdout


def push_from_clone(brain: Brain, tmp_path: Path, edit, message: str) -> None:
    """Clone the brain, let `edit(clone_dir)` change files, commit by hand and push."""
    clone = tmp_path / "clone"
    hand_git("clone", "-q", str(brain.store.path), str(clone), cwd=tmp_path)
    edit(clone)
    hand_git("add", ".", cwd=clone)
    hand_git("commit", "-qm", message, cwd=clone)
    hand_git("push", "-q", "origin", "main", cwd=clone)

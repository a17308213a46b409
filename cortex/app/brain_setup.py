"""Making and opening brains: the template, `cortex init`, and the brain `cortex serve` opens.

One place for seeding a brain (the template plus its INDEX.md), used by
`cortex init`, the embedded default, an empty hosted remote, the CLI and the
tests. Data that ships with Cortex (the template, the public eval) is found
inside the installed package, or in the source checkout when running from one.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from cortex import state_folder
from cortex.app.brain_store import open_local_store
from cortex.brain.brain import Brain
from cortex.brain.contents_page import ATTRIBUTES, render_contents_page, with_merge_line
from cortex.brain.trailers import Actor, commit_message
from cortex.errors import StoreError
from cortex.index.saved import IndexFile, index_file
from cortex.notes.note import parse_note
from cortex.notes.paths import is_note_path
from cortex.settings import Settings, read_setting
from cortex.store.git import GitStore

if TYPE_CHECKING:
    from cortex.guests.queue import RedisVectors
    from cortex.meaning.closeness import Meaning

__all__ = [
    "LEAVE_OUT",
    "SEED_MESSAGE",
    "data_dir",
    "init_brain",
    "init_in_place",
    "make_meaning",
    "open_brain",
    "saved_index",
    "seed_files",
    "shared_vectors",
    "template_dir",
    "template_files",
]

_HERE = Path(__file__).resolve().parents[1]  # the cortex package


def data_dir(package_name: str, checkout_name: str) -> Path:
    """A data folder shipped as `cortex/<package_name>` in the wheel, or `<checkout_name>/` in a clone.

    pyproject.toml maps the repository's top-level folders into the package, so an
    installed Cortex (pipx, uv tool, a wheel) needs no source checkout.
    """
    for candidate in (_HERE / package_name, _HERE.parent / checkout_name):
        if candidate.is_dir():
            return candidate
    return _HERE / package_name


def template_dir() -> Path:
    """The brain template: CORTEX_TEMPLATE, else the one shipped with Cortex."""
    return read_setting("template") or data_dir("brain_template", "brain-template")


def template_files(root: Path | None = None) -> dict[str, bytes]:
    """Every file of the brain template, keyed by its path inside the brain."""
    root = root or template_dir()
    if not root.is_dir():
        raise StoreError(f"brain template not found at {root}; set CORTEX_TEMPLATE")
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "__init__.py"
    }


def seed_files() -> dict[str, bytes]:
    """The first commit of a new brain: the template, its INDEX.md and the .gitattributes line
    that lets the owner's revert or rebase merge INDEX.md without a conflict."""
    files = template_files()
    notes = {p: parse_note(p, d.decode("utf-8")) for p, d in files.items() if is_note_path(p)}
    files["INDEX.md"] = render_contents_page(notes)
    attributes = with_merge_line(files.get(ATTRIBUTES))  # a template's own .gitattributes is kept
    if attributes is not None:
        files[ATTRIBUTES] = attributes
    return files


SEED_MESSAGE = "init: brain from template"


def init_brain(path: Path, bare: bool = False) -> str:
    """Make a new Git repository on `main` whose first commit is the seed; its SHA."""
    if path.exists() and any(path.iterdir()):
        raise StoreError(f"{path} exists and is not empty; choose a new folder")
    store = GitStore.init(path, seed_files(), bare=bare, message=SEED_MESSAGE)
    return store.head() or ""


# Tool and editor folders that are not notes: left out of a folder made a brain in place,
# through .git/info/exclude (the person's own .gitignore is not touched).
LEAVE_OUT = (".obsidian/", ".trash/", ".Trash/", ".DS_Store", "Thumbs.db", ".vscode/", ".idea/")


def init_in_place(
    path: Path,
    *,
    template: bool = False,
    author: str | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> tuple[str, int, list[str]]:
    """Make a folder of notes a brain where it stands: (first commit, files committed, what was left out).

    `git init` on main, then one first commit holding every file exactly as it is
    (the person's own .gitignore respected), authored as the owner. Nothing is added
    unless `template`; tool folders such as .obsidian/ go into .git/info/exclude, and so
    do names that are not valid UTF-8 (Git cannot store them), listed as left out. An init
    that fails removes what it made: the folder is as it was, and init can run again.
    """
    inside = GitStore.repository_at(path)
    if inside is not None:
        raise StoreError(
            f"{path} is already in the Git repository {inside}: serve it with cortex serve --brain {inside}"
        )
    present = [name for name in LEAVE_OUT if (path / name.rstrip("/")).exists()]
    extra = {p: d for p, d in seed_files().items() if not (path / p).exists()} if template else {}
    try:
        store = GitStore.init_here(path, branch="main", exclude=LEAVE_OUT)
        identity = store.owner_identity(author)
        message = commit_message("init: the notes as they were", Actor(door="cli", tool="cortex init"))
        sha, count, unnamable = store.commit_tree_as_is(extra, message, identity, progress)
        if unnamable:
            store.exclude(unnamable, "Names that are not valid UTF-8, which Git cannot store: left out by cortex init")
    except BaseException:
        # A failed init leaves the folder as it was, so running it again works.
        shutil.rmtree(path / ".git", ignore_errors=True)
        for rel in extra:
            (path / rel).unlink(missing_ok=True)
        raise
    shown = [f"{os.fsencode(name)!r} (not valid UTF-8)" for name in unnamable]
    return sha, count, present + shown


def open_brain(settings: Settings, index_log: Callable[[str], None] | None = None) -> tuple[Brain, bool]:
    """The configured brain, and whether it was just made (the embedded default, made once).
    `index_log`: where the saved index's lines go (default: stderr)."""
    if settings.remote:  # hosted mode: the brain is a clone in the state folder
        from cortex.store.remote import open_hosted

        hosted = open_hosted(settings)
        if hosted.head() is None:  # an empty remote is seeded (one commit, pushed)
            files = seed_files()
            hosted.commit(lambda view: dict(files), SEED_MESSAGE)
        return Brain(hosted, settings.tz, index=settings.index, saved=saved_index(settings, hosted, index_log)), False
    made = False
    store = open_local_store(settings)
    if store is None:  # the embedded default, made once
        state_folder.make(settings.home)
        init_brain(settings.brain, bare=True)
        made = True
        store = open_local_store(settings)
        assert store is not None
    saved = saved_index(settings, store, index_log)
    return Brain(store, settings.tz, index=settings.index, saved=saved, workers=settings.build_workers), made


def make_meaning(settings: Settings, brain: Brain, log: Callable[[str], None] | None = None) -> Meaning:
    """The brain's meaning arm (not started): its vectors beside the saved index, in the
    state folder, unless CORTEX_PERSIST_INDEX=off keeps nothing between starts. In hosted
    mode with a REDIS_URL of the owner's, the vectors are also shared there, so every
    instance and every restart (an ephemeral disk's too) embeds each passage once between them."""
    from cortex.index.saved import brain_identity, file_key
    from cortex.meaning.closeness import Meaning

    identity = brain_identity(brain.store.path, brain.store.branch)
    folder = settings.home / "index"
    vectors = None if settings.persist_index == "off" else folder / f"{file_key(identity)}.cvec"
    return Meaning(
        settings.embed_model,
        settings.model_cache or settings.home / "models",
        vectors,
        identity,
        log=log,
        enabled=settings.meaning == "on",
        shared=shared_vectors(settings),
    )


def shared_vectors(settings: Settings) -> RedisVectors | None:
    """Redis for the vectors in hosted mode, unless it is the private one `cortex serve`
    starts in the state folder (as ephemeral as the disk it is on: nothing to share)."""
    from cortex.guests.redis_process import RedisProcess

    if not settings.remote or not settings.redis_url:
        return None
    if settings.redis_url == RedisProcess.for_brain(settings.home, settings.served_repository()).url:
        return None
    from cortex.guests.queue import RedisVectors

    return RedisVectors(settings.redis_url)


def saved_index(settings: Settings, store: GitStore, log: Callable[[str], None] | None = None) -> IndexFile | None:
    """The brain's index file in the state folder (never in the brain), unless CORTEX_PERSIST_INDEX=off."""
    if settings.persist_index == "off":
        return None
    return index_file(settings.home, store.path, store.branch, log)

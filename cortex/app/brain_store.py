"""The local brain's Git store, opened and checked: light enough to run before the port opens.

`cortex serve` opens it before it binds (0.1 s: pygit2 and the store, none of the index),
so a `--brain` that does not exist, a folder that is no repository, a branch that cannot be
served, or a brain another process serves is said in one line before any port is taken.
`open_brain` opens the brain it serves through the same function, so both say the same.
"""

from __future__ import annotations

from cortex.errors import StoreError
from cortex.settings import Settings
from cortex.store.git import GitStore

__all__ = ["open_local_store"]


def open_local_store(settings: Settings) -> GitStore | None:
    """The configured local brain's store, checked as servable; None for the embedded default
    not made yet (its first start makes it). StoreError, saying what to do, for anything else."""
    if not settings.brain.exists():
        if settings.brain == settings.home / "brain":
            return None
        raise StoreError(f"no brain at {settings.brain}. Make one with: cortex init {settings.brain}")
    try:
        store = GitStore(settings.brain, settings.branch)
    except StoreError as exc:
        if "not a Git repository" not in str(exc):
            raise
        raise StoreError(
            f"{settings.brain} is a folder but not a Git repository. Make it a brain in place, "
            f"keeping every file as it is, with: cortex init {settings.brain}"
        ) from None
    problem = store.servable()
    if problem:
        raise StoreError(problem)
    return store

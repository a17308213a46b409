"""A working-tree file a commit could not be written to is never taken for the owner's edit
(issue 42).

The red team made `notes/` read-only: four writes were acknowledged, `git status` showed
their files stale, and once the folder was writable again a hand append to the stale copy
was taken as a conflicting edit and the acknowledged append vanished from HEAD. Here `notes/`
is a tmpfs remounted read-only (root can write through a chmod, not through a read-only
mount; that needs root, as CI runs): the reply says the file could not be written, the
watcher reports it and retries, commits nothing of it as a hand edit, and an edit of the
stale copy is merged keeping the acknowledged write.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from reliakit import need_mounts, remount, tmpfs
from serverkit import TOKEN, call, serve
from vaultkit import git, vault_on

from cortex.brain.brain import Brain
from cortex.brain.trailers import Actor
from cortex.brain.watcher import Editor

TOOL = Actor(door="owner", tool="brain_write", client="pytest")


@contextlib.contextmanager
def _mounted(folder: Path, size: str = "4m") -> Iterator[Path]:
    """`folder` as a tmpfs holding what it held (so Git sees the same files), unmounted after."""
    kept = folder.parent / (folder.name + ".kept")
    shutil.copytree(folder, kept)
    shutil.rmtree(folder)
    with tmpfs(folder, size):
        shutil.copytree(kept, folder, dirs_exist_ok=True)
        shutil.rmtree(kept)
        yield folder


def test_a_stale_copy_is_never_a_hand_edit_and_its_edit_keeps_the_write(tree: Path, brain: Brain, manual: Editor):
    need_mounts()
    brain.write("notes/plants.md", "create", TOOL, content="# Plants\n\nWater the fern.\n")
    manual.settle()
    with _mounted(tree / "notes"):
        remount(tree / "notes", "ro")
        reply = brain.write("notes/plants.md", "append", TOOL, content="Feed the cactus in May.")
        assert "could not take notes/plants.md (Read-only file system)" in reply["working_tree"], reply
        head = brain.store.head()
        manual.settle()
        assert brain.store.head() == head  # the stale copy is no hand edit
        assert manual.status()["hand_edits"]["unwritten"] == ["notes/plants.md: Read-only file system"]

        remount(tree / "notes", "rw")
        stale = (tree / "notes/plants.md").read_text()
        assert "cactus" not in stale
        (tree / "notes/plants.md").write_text(stale + "Repot the fern.\n")  # edited on the stale copy
        manual.settle()
        committed = brain.store.blob_bytes(brain.store.blob_at(brain.store.head(), "notes/plants.md")).decode()
        assert "Feed the cactus in May." in committed and "Repot the fern." in committed, committed
        assert (tree / "notes/plants.md").read_text() == committed
        assert manual.status()["hand_edits"]["unwritten"] == []


def test_the_watcher_writes_the_file_once_it_can_and_commits_nothing(tree: Path, brain: Brain, manual: Editor):
    need_mounts()
    brain.write("notes/plants.md", "create", TOOL, content="# Plants\n")
    manual.settle()
    with _mounted(tree / "notes"):
        remount(tree / "notes", "ro")
        brain.write("notes/plants.md", "append", TOOL, content="Feed the cactus.")
        head = brain.store.head()
        remount(tree / "notes", "rw")
        manual.settle()
        assert brain.store.head() == head
        assert "Feed the cactus." in (tree / "notes/plants.md").read_text()
        assert manual.status()["hand_edits"]["unwritten"] == []


@pytest.mark.slow
def test_the_reply_and_healthz_say_so_through_a_real_server(tmp_path: Path) -> None:
    need_mounts()
    repo = vault_on(tmp_path, "master", {"notes/plants.md": b"# Plants\n"})
    with _mounted(repo / "notes"), serve(tmp_path, repo) as running:
        remount(repo / "notes", "ro")
        url = f"{running.url}/mcp"
        r = call(url, "brain_capture", text="first")  # log/ is writable: nothing to say
        assert r.error is None and "working_tree" not in r.data
        w = call(url, "brain_write", path="notes/plants.md", mode="append", content="Feed the cactus.")
        assert w.error is None and "notes/plants.md (Read-only file system)" in w.data["working_tree"]
        public = httpx.get(f"{running.url}/healthz", timeout=10).json()
        assert "1 file of acknowledged writes" in public["working_tree"] and "plants" not in str(public)
        detail = httpx.get(
            f"{running.url}/healthz?detail=1", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10
        ).json()
        assert detail["hand_edits"]["unwritten"] == ["notes/plants.md: Read-only file system"]
        assert "Feed the cactus." in git(repo, "show", "HEAD:notes/plants.md")
        remount(repo / "notes", "rw")

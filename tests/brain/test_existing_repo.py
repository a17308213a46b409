"""A person's existing repository, served as it is: the branch HEAD names, and refusals
that say why instead of starting a second history.

Repositories here are made with the `git` command, as their owners made them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from reliakit import ROOT, ServeProcess
from serverkit import TOKEN, call
from vaultkit import git, settings_for, vault_on

from cortex.app.brain_setup import open_brain
from cortex.brain.trailers import Actor
from cortex.errors import BadInput, StoreError

ME = Actor(door="owner", tool="brain_write", client="pytest")
FILES = {"Ideas.md": b"# Ideas\n\nA garden of thoughts.\n", "notes/bees.md": b"# Bees\n\nThe hive is south.\n"}


def test_a_repository_on_master_is_served_and_written_on_master(tmp_path):
    repo = vault_on(tmp_path, "master", FILES)
    root = git(repo, "rev-list", "--max-parents=0", "HEAD").split()
    brain, made = open_brain(settings_for(tmp_path, repo))
    assert not made and brain.store.branch == "master"
    assert sorted(brain.snapshot().notes) == ["Ideas.md", "notes/bees.md"]
    reply = brain.write("notes/wasps.md", "create", ME, content="# Wasps\n")
    assert git(repo, "rev-parse", "master").strip() == reply["sha"]
    assert git(repo, "branch", "--list").split() == ["*", "master"]  # no main was made
    assert git(repo, "rev-list", "--max-parents=0", "HEAD").split() == root  # no second root
    assert git(repo, "status", "--porcelain") == ""  # nothing staged
    assert (repo / "notes/bees.md").read_bytes() == FILES["notes/bees.md"]


def test_cortex_branch_chooses_another_branch(tmp_path):
    repo = vault_on(tmp_path, "master", FILES)
    git(repo, "branch", "notes-only")
    brain, _ = open_brain(settings_for(tmp_path, repo, CORTEX_BRANCH="notes-only"))
    assert brain.store.branch == "notes-only" and brain.store.head() == git(repo, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize(
    "setup,words",
    [
        (lambda repo: git(repo, "checkout", "-q", "--detach"), "HEAD is detached"),
        (lambda repo: git(repo, "symbolic-ref", "HEAD", "refs/heads/main"), "branch main has no commits"),
    ],
)
def test_refuses_with_one_line_rather_than_start_a_second_history(tmp_path, setup, words):
    repo = vault_on(tmp_path, "master", FILES)
    setup(repo)
    with pytest.raises(StoreError) as err:
        open_brain(settings_for(tmp_path, repo))
    assert words in str(err.value) and "\n" not in str(err.value)


def test_refuses_to_start_in_the_middle_of_a_merge(tmp_path):
    repo = vault_on(tmp_path, "master", FILES)
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "Ideas.md").write_text("# Ideas\n\nother side\n")
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "master")
    (repo / "Ideas.md").write_text("# Ideas\n\nthis side\n")
    git(repo, "commit", "-qam", "this")
    git(repo, "merge", "other", check=False)  # conflicts: the merge stays under way
    with pytest.raises(StoreError, match="a merge, rebase or cherry-pick is under way"):
        open_brain(settings_for(tmp_path, repo))


@pytest.mark.slow
def test_serve_on_master_over_http_with_a_real_process(tmp_path):
    repo = vault_on(tmp_path, "master", FILES)
    proc = ServeProcess(tmp_path / "home", repo, {"CORTEX_TOKEN": TOKEN}, tmp_path / "bin", tmp_path / "log")
    health = proc.start()
    try:
        assert health["notes"] == 2 and health["sha"] == git(repo, "rev-parse", "master").strip()
        url = proc.url + "/mcp"
        assert call(url, "brain_read", path="notes/bees.md").data["text"] == "# Bees\n\nThe hive is south.\n"
        assert call(url, "brain_write", path="notes/new.md", mode="create", content="# New\n").error is None
        assert git(repo, "log", "-1", "--format=%s", "master").startswith("brain_write: create notes/new.md")
    finally:
        proc.stop()


def test_index_md_only_where_there_is_one_or_when_asked(tmp_path):
    repo = vault_on(tmp_path, "master", FILES)
    brain, _ = open_brain(settings_for(tmp_path, repo))
    brain.write("notes/a note with spaces.md", "create", ME, content="# Spaced\n")
    brain.write("notes/a note with spaces.md", "move", ME, to="notes/moved (here).md")
    assert "INDEX.md" not in git(repo, "ls-files").split()  # a person's repo gets none
    on, _ = open_brain(settings_for(tmp_path, repo, CORTEX_INDEX="on"))
    on.write("notes/b.md", "create", ME, content="# B\n")
    index = (repo / "INDEX.md").read_text()
    assert "(notes/moved%20%28here%29.md)" in index  # links every renderer follows
    off, _ = open_brain(settings_for(tmp_path, repo, CORTEX_INDEX="off"))
    off.write("notes/c.md", "create", ME, content="# C\n")
    assert "notes/c.md" not in (repo / "INDEX.md").read_text()  # left as it was
    with pytest.raises(BadInput, match="^CORTEX_INDEX must be one of auto, on, off, not 'sometimes'$"):
        settings_for(tmp_path, repo, CORTEX_INDEX="sometimes")  # refused as the settings are read


def test_init_makes_a_plain_folder_a_brain_in_place(tmp_path, capsys, monkeypatch):
    from cortex.cli import main

    monkeypatch.setenv("CORTEX_AUTHOR", "Ada Lovelace <ada@example.org>")
    vault = tmp_path / "vault"
    files = {
        "Ideas.md": b"# Ideas\r\nCRLF kept\r\n",
        "Caf\u00e9/Cr\u00e8me br\u00fbl\u00e9e.md": b"no final newline",
        ".obsidian/workspace.json": b"{}",
        ".DS_Store": b"\0\1",
        ".trash/old.md": b"# old\n",
        ".gitignore": b"private/\n",
        "private/diary.md": b"# mine\n",
        "img/pic.png": b"\x89PNG\r\n",
    }
    for path, data in files.items():
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_bytes(data)
    # serve first: the refusal names the exact command
    with pytest.raises(StoreError, match=f"cortex init {vault}"):
        open_brain(settings_for(tmp_path, vault))
    assert main(["init", str(vault)]) == 0
    out = capsys.readouterr().out
    assert "exactly as they were" in out and ".obsidian/" in out and ".DS_Store" in out and ".trash/" in out
    tracked = set(git(vault, "ls-files", "-z").split("\0")) - {""}
    assert tracked == {"Ideas.md", "Café/Crème brûlée.md", ".gitignore", "img/pic.png"}
    for path, data in files.items():
        assert (vault / path).read_bytes() == data  # not a byte changed on disk
    assert git(vault, "log", "-1", "--format=%an <%ae>") == "Ada Lovelace <ada@example.org>\n"
    assert git(vault, "status", "--porcelain") == "" and git(vault, "branch", "--show-current").strip() == "main"
    assert "INDEX.md" not in tracked and "profile.md" not in tracked  # no template unless --template
    brain, _ = open_brain(settings_for(tmp_path, vault))
    assert sorted(brain.snapshot().notes) == ["Café/Crème brûlée.md", "Ideas.md"]
    assert brain.blob_bytes(brain.files(brain.head())["Ideas.md"]) == b"# Ideas\r\nCRLF kept\r\n"
    assert main(["init", str(vault)]) == 1  # a second time: already a repository, said in one line


def test_hand_edits_are_authored_by_the_owner_tool_writes_by_cortex(tmp_path):
    from cortex.brain.watcher import Editor

    repo = vault_on(tmp_path, "master", FILES)
    brain, _ = open_brain(settings_for(tmp_path, repo))
    editor = Editor(brain, debounce_ms=0)
    (repo / "Ideas.md").write_text("# Ideas\n\nedited in Obsidian\n")
    editor.check_all()
    assert git(repo, "log", "-1", "--format=%an <%ae>|%cn").strip() == "Ada Lovelace <ada@example.org>|Cortex"
    brain.write("notes/tool.md", "create", ME, content="# Tool\n")
    assert git(repo, "log", "-1", "--format=%an|%cn").strip() == "Cortex|Cortex"
    other = Editor(brain, debounce_ms=0, author="Grace Hopper <grace@example.org>")
    (repo / "Ideas.md").write_text("# Ideas\n\nagain\n")
    other.check_all()
    assert git(repo, "log", "-1", "--format=%an <%ae>").strip() == "Grace Hopper <grace@example.org>"


def test_a_docusaurus_site_gets_no_index_and_no_other_file_touched(tmp_path):
    """A docs site published from the repository: a write adds the note and nothing else."""
    files = {
        "docusaurus.config.js": b"module.exports = {title: 'Docs'};\n",
        "docs/intro.md": b"---\nsidebar_position: 1\n---\n# Intro\r\n\r\nWelcome.\r\n",
        "docs/guides/setup.md": b"# Setup\n\nRun it.",
        "blog/2026-01-01-hello.md": b"---\nslug: hello\n---\nHello\n",
        "src/pages/index.js": b"export default () => null;\n",
    }
    repo = vault_on(tmp_path, "main", files)
    brain, _ = open_brain(settings_for(tmp_path, repo))
    brain.write("docs/guides/deploy.md", "create", ME, content="# Deploy\n")
    brain.write("docs/guides/setup.md", "append", ME, content="Then deploy.")
    tracked = set(git(repo, "ls-files").split())
    assert tracked == set(files) | {"docs/guides/deploy.md"}  # no INDEX.md, nothing else
    for path, data in files.items():
        if path != "docs/guides/setup.md":
            assert (repo / path).read_bytes() == data, path
    assert (repo / "docs/guides/setup.md").read_bytes() == b"# Setup\n\nRun it.\nThen deploy.\n"
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "3" and git(repo, "status", "--porcelain") == ""


# -- a person's own INDEX.md is theirs -----------------------------------------


def test_a_persons_own_index_md_is_never_touched(tmp_path: Path):
    from cortex.app.brain_setup import init_in_place

    folder = tmp_path / "vault"
    (folder / "notes").mkdir(parents=True)
    mine = b"# My index\n\nHand-kept: [[bees]], [[Ideas]].\n"
    (folder / "INDEX.md").write_bytes(mine)
    (folder / "notes" / "bees.md").write_bytes(b"# Bees\n\nThe hive is south.\n")
    init_in_place(folder)
    brain, _ = open_brain(settings_for(tmp_path, folder))  # CORTEX_INDEX=auto: an INDEX.md exists
    sha = brain.write("notes/b.md", "create", Actor("owner", "brain_write", "pytest"), content="# B\n")["sha"]
    assert (folder / "INDEX.md").read_bytes() == mine
    assert brain.store.blob_bytes(brain.store.blob_at(sha, "INDEX.md")) == mine
    assert git(folder, "show", "--name-only", "--format=", sha).split() == ["notes/b.md"]
    # CORTEX_INDEX=on cannot claim it: refused at start, in one line.
    with pytest.raises(StoreError) as refused:
        open_brain(settings_for(tmp_path, folder, CORTEX_INDEX="on"))
    assert "is not one Cortex wrote" in str(refused.value) and "\n" not in str(refused.value)
    assert (folder / "INDEX.md").read_bytes() == mine


def test_an_index_md_cortex_wrote_is_still_kept_up_to_date(tmp_path: Path):
    from cortex.app.brain_setup import init_brain

    brain_path = tmp_path / "brain.git"
    init_brain(brain_path, bare=True)  # from the template: INDEX.md with Cortex's marker line
    brain, _ = open_brain(settings_for(tmp_path, brain_path))
    sha = brain.write("notes/zebra.md", "create", Actor("owner", "brain_write", "pytest"), content="# Zebra\n")["sha"]
    index = brain.store.blob_bytes(brain.store.blob_at(sha, "INDEX.md")).decode()
    assert "Generated by Cortex" in index and "notes/zebra.md" in index


def _tree(folder: Path) -> dict[bytes, bytes]:
    out = {}
    for root, _, names in os.walk(os.fsencode(folder)):
        for name in names:
            full = os.path.join(root, name)
            out[os.path.relpath(full, os.fsencode(folder))] = Path(os.fsdecode(full)).read_bytes()
    return out


@pytest.mark.slow
def test_init_leaves_out_a_name_git_cannot_store_and_says_so(tmp_path: Path):
    folder = tmp_path / "vault"
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "good.md").write_bytes(b"# Good\n")
    bad = os.path.join(os.fsencode(folder / "notes"), b"caf\xe9.md")  # Latin-1, not UTF-8
    with open(bad, "wb") as f:
        f.write(b"# Caf\xe9\n")
    (folder / ".obsidian").mkdir()
    (folder / ".obsidian" / "app.json").write_text("{}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_")}
    r = subprocess.run(
        [sys.executable, "-m", "cortex.cli", "init", str(folder)],
        cwd=ROOT,
        env={**env, "CORTEX_HOME": str(tmp_path / "home")},
        capture_output=True,
    )
    assert r.returncode == 0, r.stderr
    assert b"notes/caf\\xe9.md' (not valid UTF-8)" in r.stdout and b".obsidian/" in r.stdout
    assert git(folder, "ls-files").split() == ["notes/good.md"]
    assert git(folder, "status", "--porcelain") == ""  # left out, not left lying about
    with open(bad, "rb") as f:
        assert f.read() == b"# Caf\xe9\n"  # the file itself is untouched


def test_an_init_that_fails_leaves_the_folder_as_it_was(tmp_path: Path, monkeypatch):
    from cortex.app.brain_setup import init_in_place
    from cortex.store.git import GitStore

    folder = tmp_path / "vault"
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "a.md").write_bytes(b"# A\n")
    before = _tree(folder)

    def fails(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(GitStore, "commit_tree_as_is", fails)
    with pytest.raises(OSError):
        init_in_place(folder, template=True)
    assert _tree(folder) == before and not (folder / ".git").exists()
    monkeypatch.undo()
    sha, count, _ = init_in_place(folder)  # and it runs again
    assert sha and count == 1

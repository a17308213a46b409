"""The saved index (cortex.index.saved): a file that cannot be trusted is rebuilt, never believed.

Real Git repositories in temp folders. Every case compares the brain opened with
the file against a brain built from the notes alone: the same notes, blobs, dates
and the same search results and scores.
"""

from __future__ import annotations

import datetime as dt
import gc
import hashlib
import io
import json
import os
import pickle
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vaultkit import QUERIES

import cortex
from cortex.app.brain_setup import open_brain
from cortex.brain.brain import Brain
from cortex.cli import main as cli_main
from cortex.errors import BadInput, StoreError
from cortex.index import saved as persist
from cortex.index.corpus import DATE_WALK_LIMIT, gc_paused
from cortex.index.saved import MAGIC, IndexFile, index_file
from cortex.settings import Settings
from cortex.store.git import GitStore

FILES = {
    "profile.md": b"---\ntitle: Profile\n---\nI keep bees and a garden.\n",
    "notes/bees.md": b"---\ntitle: Bees\ntags: [hive]\n---\n# Bees\n\nThe hive is south. See [[plan]].\n",
    "notes/garden.md": b"# Garden\n\nA garden of thoughts, alpha and beta.\n",
    "projects/plan.md": b"---\nstatus: superseded\nsuperseded_by: projects/plan2.md\nvalid_until: 2026-01-02\n---\n"
    b"# Plan\n\n## Next\n\ngamma delta\n",
    "archive/old.md": b"# Old\n\nan archive note about bees\n",
    "INDEX.md": b"# Index\n",
}


class Clock:
    """Commit times one minute apart, so every commit dates its notes differently."""

    def __init__(self) -> None:
        self.t = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        self.t += dt.timedelta(minutes=1)
        return self.t


def make_repo(path: Path, files: dict[str, bytes] = FILES) -> GitStore:
    store = GitStore.init(path, files, bare=True, message="init")
    store.clock = Clock()
    return store


def commit(store: GitStore, changes: dict[str, bytes | None], message: str = "edit") -> str | None:
    """Commit `changes`; None when they change nothing (the store refuses an empty commit)."""
    try:
        return store.commit(lambda view: dict(changes), message).sha
    except StoreError as exc:
        if "nothing to commit" not in str(exc):
            raise
        return None


def opened(repo: Path, home: Path, lines: list[str] | None = None) -> tuple[Brain, IndexFile]:
    store = GitStore(repo)
    saved = index_file(home, repo, store.branch, log=(lines.append if lines is not None else lambda line: None))
    return Brain(store, saved=saved), saved


def fresh(repo: Path) -> Brain:
    return Brain(GitStore(repo))


def assert_same(a: Brain, b: Brain) -> None:
    """Two brains of one repository agree on every note, date and search result (scores included)."""
    sa, sb = a.snapshot(), b.snapshot()
    assert sa.sha == sb.sha and sa.time == sb.time
    assert sa.notes == sb.notes
    assert sa.blobs == sb.blobs
    assert sa.changed == sb.changed
    assert sa.real == sb.real
    for q in QUERIES:
        assert a.corpus.search(sa, q, 10) == b.corpus.search(sb, q, 10), q
        terms = set(q.split())
        assert a.corpus.idf(sa, terms) == b.corpus.idf(sb, terms)
        assert a.corpus.matching(sa, terms) == b.corpus.matching(sb, terms)
    assert sa.link_map()[1] == sb.link_map()[1]


@pytest.fixture
def saved_brain(tmp_path: Path) -> tuple[Path, Path]:
    """A repository with a saved index at its head, and the state folder holding it."""
    repo, home = tmp_path / "brain.git", tmp_path / "home"
    make_repo(repo)
    brain, saved = opened(repo, home)
    brain.snapshot()
    assert saved.save(brain.corpus)
    return repo, home


def test_a_second_start_loads_the_file_and_answers_as_a_fresh_build(saved_brain):
    repo, home = saved_brain
    lines: list[str] = []
    brain, saved = opened(repo, home, lines)
    brain.snapshot()
    assert saved.loads == 1 and saved.rebuilds == []
    assert any("loaded the saved index" in line for line in lines)
    assert_same(brain, fresh(repo))


def test_the_collector_is_paused_for_a_load_and_back_on_after_it(saved_brain):
    """gc_paused: a load runs without the cyclic collector (it halved a 50,000-note load);
    it comes back on after, also after a failure, and stays off if it was off before."""
    repo, home = saved_brain
    assert gc.isenabled()
    brain, saved = opened(repo, home)
    brain.snapshot()
    assert saved.loads == 1 and gc.isenabled()
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError), gc_paused():
        _ = 1 / 0
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_file_is_in_the_state_folder_owner_only_and_one_per_brain(saved_brain):
    repo, home = saved_brain
    files = list((home / "index").iterdir())
    assert [f.suffix for f in files] == [".cidx"]
    assert (home / "index").stat().st_mode & 0o777 == 0o700
    assert files[0].stat().st_mode & 0o777 == 0o600
    brain, saved = opened(repo, home)
    brain.snapshot()
    commit(brain.store, {"notes/new.md": b"# New\n"})
    brain.snapshot()
    assert saved.save(brain.corpus) and not saved.save(brain.corpus)  # saved once per head
    assert list((home / "index").iterdir()) == files


def test_the_file_advances_by_tree_diff_over_commits_made_while_stopped(saved_brain):
    repo, home = saved_brain
    store = GitStore(repo)
    store.clock = Clock()
    store.clock.t += dt.timedelta(days=1)
    commit(store, {"notes/bees.md": b"# Bees\n\nThe hive moved north.\n", "notes/new.md": b"# New plan\n"})
    commit(store, {"notes/garden.md": None})
    commit(store, {"notes/new.md": None, "notes/moved.md": b"# New plan\n"})
    brain, saved = opened(repo, home)
    brain.snapshot()
    assert saved.loads == 1 and saved.rebuilds == []
    assert_same(brain, fresh(repo))


def _damaged(data: bytes, how: str) -> bytes:
    if how.startswith("flip"):
        at = {"flip-magic": 3, "flip-digest": len(MAGIC) + 5, "flip-header": len(MAGIC) + 40}.get(how)
        at = at if at is not None else int(len(data) * {"flip-notes": 0.3, "flip-index": 0.9}[how])
        return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]
    cut = {"cut-half": len(data) // 2, "cut-one": len(data) - 1, "cut-magic": 5, "empty": 0}[how]
    return data[:cut]


@pytest.mark.parametrize(
    "how",
    ["flip-magic", "flip-digest", "flip-header", "flip-notes", "flip-index", "cut-half", "cut-one", "cut-magic"]
    + ["empty"],
)
def test_a_damaged_file_means_a_rebuild_and_the_same_answers(saved_brain, how):
    repo, home = saved_brain
    path = next((home / "index").iterdir())
    path.write_bytes(_damaged(path.read_bytes(), how))
    lines: list[str] = []
    brain, saved = opened(repo, home, lines)
    brain.snapshot()
    assert saved.loads == 0 and len(saved.rebuilds) == 1
    assert len(lines) == 1 and "building the index from the notes" in lines[0]
    assert_same(brain, fresh(repo))


def _resealed(data: bytes, header_change: dict | None = None, notes: bytes | None = None) -> bytes:
    """`data` with its header or notes part replaced and a correct checksum: what a crafted file looks like."""
    rest = data[len(MAGIC) + 32 :]
    (size,) = struct.unpack_from("<I", rest)
    header = json.loads(rest[4 : 4 + size])
    old_notes = rest[4 + size : 4 + size + header["notes_bytes"]]
    index = rest[4 + size + header["notes_bytes"] :]
    header.update(header_change or {})
    if notes is not None:
        old_notes = notes
        header["notes_bytes"] = len(notes)
    raw = json.dumps(header).encode()
    rest = struct.pack("<I", len(raw)) + raw + old_notes + index
    return MAGIC + hashlib.sha256(rest).digest() + rest


@pytest.mark.parametrize(
    "change,why",
    [
        ({"format": persist.FORMAT + 1}, "format"),
        ({"code": "0" * 32}, "another version of Cortex"),
        ({"brain": "/elsewhere\nmain"}, "another brain"),
        ({"sha": "0" * 40}, "inconsistent"),
        ({"notes_bytes": 3}, "do not add up"),
    ],
)
def test_a_file_of_another_format_version_or_brain_is_not_used(saved_brain, change, why):
    repo, home = saved_brain
    path = next((home / "index").iterdir())
    path.write_bytes(_resealed(path.read_bytes(), change))
    brain, saved = opened(repo, home)
    brain.snapshot()
    assert saved.loads == 0 and why in saved.rebuilds[0]
    assert_same(brain, fresh(repo))


def test_a_file_copied_from_another_brain_is_not_used(tmp_path, saved_brain):
    repo, home = saved_brain
    other = tmp_path / "other.git"
    make_repo(other, {"notes/x.md": b"# X\n\nbees elsewhere\n"})
    other_file = index_file(home, other, "main")
    os.replace(next((home / "index").iterdir()), other_file.path)  # the first brain's file, renamed
    brain, saved = opened(other, home)
    brain.snapshot()
    assert saved.loads == 0 and "another brain" in saved.rebuilds[0]
    assert_same(brain, fresh(other))


def test_a_commit_no_longer_in_history_means_a_rebuild(saved_brain):
    """A force-push or reset: the saved commit is gone from the branch, so its dates and notes are not used."""
    repo, home = saved_brain
    store = GitStore(repo)
    store.clock = Clock()
    first = store.head()
    gone = commit(store, {"notes/bees.md": b"# Bees\n\nA version that will be reset away.\n"})
    brain, saved = opened(repo, home)
    brain.snapshot()
    assert saved.save(brain.corpus) and saved.saved_sha == gone
    assert store.set_head(gone, first)
    commit(store, {"notes/garden.md": b"# Garden\n\nRewritten after the reset.\n"})
    lines: list[str] = []
    brain, saved = opened(repo, home, lines)
    brain.snapshot()
    assert saved.loads == 1 and "no longer in the history" in saved.rebuilds[0]
    assert sum("building the index" in line for line in lines) == 1
    assert_same(brain, fresh(repo))


def test_a_repository_made_again_at_the_same_path_means_a_rebuild(saved_brain):
    """Same path and branch, another history: the saved commit does not exist here at all."""
    import shutil

    repo, home = saved_brain
    shutil.rmtree(repo)
    make_repo(repo, {"notes/x.md": b"# X\n\nanother history\n"})
    brain, saved = opened(repo, home)
    brain.snapshot()
    assert saved.loads == 1 and len(saved.rebuilds) == 1
    assert_same(brain, fresh(repo))


def test_a_crafted_pickle_cannot_run_code(saved_brain, tmp_path):
    """A checksum anyone can recompute stops nothing; the unpickler's allow-list does."""
    repo, home = saved_brain
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    path = next((home / "index").iterdir())
    path.write_bytes(_resealed(path.read_bytes(), notes=pickle.dumps(Evil())))
    brain, saved = opened(repo, home)
    brain.snapshot()
    assert not marker.exists()
    assert saved.loads == 0 and "is not part of a saved note" in saved.rebuilds[0]
    assert_same(brain, fresh(repo))


def test_the_periodic_save_follows_the_head(saved_brain):
    repo, home = saved_brain
    brain, saved = opened(repo, home)
    brain.snapshot()
    thread = saved.keep_saving(brain.corpus, every_s=0.01)
    head = commit(brain.store, {"notes/new.md": b"# New\n\nbees again\n"})
    deadline = time.monotonic() + 60  # a bound on waiting, not a figure
    while saved.saved_sha != head and time.monotonic() < deadline:
        time.sleep(0.01)
    saved.stop_saving()
    thread.join(60)
    assert not thread.is_alive()
    assert saved.saved_sha == head
    again, saved_again = opened(repo, home)
    again.snapshot()
    assert saved_again.loads == 1 and saved_again.rebuilds == []
    assert_same(again, fresh(repo))


def test_off_means_no_file_and_reindex_removes_one_left_from_before(saved_brain, monkeypatch, capsys):
    repo, home = saved_brain
    settings = Settings.from_env({"CORTEX_HOME": str(home), "CORTEX_PERSIST_INDEX": "off"}, brain=repo)
    brain, _ = open_brain(settings)
    assert brain.corpus.saved is None
    monkeypatch.setenv("CORTEX_HOME", str(home))
    monkeypatch.setenv("CORTEX_PERSIST_INDEX", "off")
    assert cli_main(["reindex", "--brain", str(repo)]) == 1
    assert "removed the file left from before" in capsys.readouterr().err
    assert list((home / "index").iterdir()) == []
    with pytest.raises(BadInput, match="^CORTEX_PERSIST_INDEX must be on or off, not 'sometimes'$"):
        Settings.from_env({"CORTEX_HOME": str(home), "CORTEX_PERSIST_INDEX": "sometimes"}, brain=repo)


def test_cortex_reindex_drops_builds_and_saves_with_a_progress_bar(saved_brain, monkeypatch, capsys):
    repo, home = saved_brain
    path = next((home / "index").iterdir())
    path.write_bytes(b"junk")
    monkeypatch.setenv("CORTEX_HOME", str(home))
    monkeypatch.setattr("cortex.cli.BAR_EVERY_S", -1.0)  # every file redraws the bar
    assert cli_main(["reindex", "--brain", str(repo)]) == 0
    out = capsys.readouterr()
    assert "reading files [" in out.err and f"{len(FILES)}/{len(FILES)}" in out.err
    assert "Indexed 5 notes" in out.out
    brain, saved = opened(repo, home)
    brain.snapshot()
    assert saved.loads == 1
    assert_same(brain, fresh(repo))


# -- load + advance == build from scratch, over random histories ----------------------------

NAMES = ["a.md", "notes/b.md", "notes/c.md", "notes/deep/d.md", "projects/e.md", "log/2026-01-01.md", "archive/f.md"]
WORDS = ["bees", "hive", "south", "garden", "plan", "note", "alpha", "beta", "gamma", "Zürich", "naïve", "42"]


@st.composite
def note_text(draw) -> bytes:
    words = draw(st.lists(st.sampled_from(WORDS), min_size=0, max_size=12))
    head = ""
    if draw(st.booleans()):
        fm = {"title": draw(st.sampled_from(WORDS))}
        if draw(st.booleans()):
            fm["tags"] = draw(st.lists(st.sampled_from(WORDS[:6]), max_size=3))
        if draw(st.booleans()):
            fm["status"] = draw(st.sampled_from(["current", "superseded", "draft"]))
        if draw(st.booleans()):
            fm["valid_until"] = f"2026-0{draw(st.integers(1, 9))}-01"
        head = "---\n" + "".join(f"{k}: {json.dumps(v)}\n" for k, v in fm.items()) + "---\n"
    link = f"[[{draw(st.sampled_from(NAMES)).rsplit('/', 1)[-1][:-3]}]]" if draw(st.booleans()) else ""
    heading = f"## {draw(st.sampled_from(WORDS))}\n" if draw(st.booleans()) else ""
    return (head + heading + " ".join(words) + f" {link}\n").encode()


@st.composite
def a_commit(draw) -> dict[str, bytes | None]:
    """One commit: adds, edits, deletes and moves over a small set of names."""
    changes: dict[str, bytes | None] = {}
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["write", "write", "delete", "move"]))
        name = draw(st.sampled_from(NAMES))
        if kind == "write":
            changes[name] = draw(note_text())
        elif kind == "delete":
            changes[name] = None
        else:
            to = draw(st.sampled_from(NAMES))
            if to != name:
                changes[name], changes[to] = None, draw(note_text())
    return changes


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    start=st.dictionaries(st.sampled_from(NAMES), note_text(), min_size=1),
    before=st.lists(a_commit(), max_size=3),
    after=st.lists(a_commit(), max_size=5),
)
def test_load_and_advance_is_a_build_from_scratch(start, before, after):
    """Save after `before`, commit `after` while stopped, start again: the same as a fresh build."""
    with tempfile.TemporaryDirectory() as tmp:
        repo, home = Path(tmp) / "brain.git", Path(tmp) / "home"
        store = make_repo(repo, start)
        for changes in before:
            commit(store, changes)
        brain, saved = opened(repo, home)
        brain.snapshot()
        assert saved.save(brain.corpus)
        for changes in after:
            commit(store, changes)
        brain, saved = opened(repo, home)
        brain.snapshot()
        assert saved.loads == 1 and saved.rebuilds == []
        assert_same(brain, fresh(repo))


# -- kill -9 in the middle of a save ---------------------------------------------------------

SAVER = r"""
import sys
from pathlib import Path
from cortex.brain.brain import Brain
from cortex.store.git import GitStore
from cortex.index.saved import index_file

repo, home = Path(sys.argv[1]), Path(sys.argv[2])
store = GitStore(repo)
brain = Brain(store, saved=index_file(home, repo, store.branch, log=lambda line: None))
brain.snapshot()
print("saving", flush=True)
i = 0
while True:  # a save, then a commit so the next save writes a different file
    brain.corpus.saved.save(brain.corpus, force=True)
    i += 1
    if i <= int(sys.argv[3]):
        store.commit(lambda view, i=i: {f"notes/n{i % 7}.md": f"# Note {i}\n\nbees {i}\n".encode()}, f"save {i}")
    brain.snapshot()
"""
# Commits a saver makes at most: six rounds stay within the DATE_WALK_LIMIT (300) commits a
# fresh build dates notes by. Past it a fresh build can only say "on or before" the oldest
# commit it walked, while a loaded file keeps the exact date (a fast machine made ~75
# commits a round, and the comparison below failed on the dates of untouched notes).
SAVER_COMMITS = 40


@pytest.mark.slow
def test_kill_9_during_saves_leaves_the_old_file_or_the_new_one(tmp_path):
    import random

    repo, home = tmp_path / "brain.git", tmp_path / "home"
    files = dict(FILES)
    files.update({f"notes/filler-{i}.md": f"# Filler {i}\n\n{' '.join(WORDS * 20)}\n".encode() for i in range(300)})
    make_repo(repo, files)
    env = {**os.environ, "PYTHONPATH": str(Path(cortex.__file__).resolve().parent.parent)}
    rng = random.Random(15)
    loaded = 0
    assert 1 + 6 * SAVER_COMMITS < DATE_WALK_LIMIT
    for _ in range(6):
        proc = subprocess.Popen(
            [sys.executable, "-c", SAVER, str(repo), str(home), str(SAVER_COMMITS)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "saving"
        time.sleep(rng.uniform(0.0, 1.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        proc.stdout.close()
        brain, saved = opened(repo, home)
        brain.snapshot()
        # Either a whole file (loaded, then advanced) or none yet; never a damaged one.
        assert saved.rebuilds in ([], ["no saved index yet"])
        loaded += saved.loads
        assert_same(brain, fresh(repo))
    assert loaded >= 1
    brain, saved = opened(repo, home)
    brain.snapshot()
    assert saved.save(brain.corpus, force=True)
    assert [p.name for p in (home / "index").iterdir()] == [saved.path.name]  # orphaned temp files removed


# -- cortex serve: saved after the first build, on a clean shutdown, loaded by the next start ------


def _wait_for(serve, text: str, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in serve.output():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
def test_cortex_serve_saves_the_index_and_the_next_start_loads_it(tmp_path):
    from reliakit import ServeProcess

    repo, home = tmp_path / "brain.git", tmp_path / "home"
    make_repo(repo)
    log = tmp_path / "serve.log"
    serve = ServeProcess(home, repo, {"CORTEX_TOKEN": "t" * 32}, tmp_path / "bin", log)
    serve.start()
    try:
        assert _wait_for(serve, "index: saved the index at"), serve.output()
        head = commit(GitStore(repo), {"notes/late.md": b"# Late\n\nwritten beside the server\n"})
    finally:
        serve.stop()  # a clean shutdown advances to the head and saves it
    assert f"index: saved the index at {head[:12]}" in serve.output(), serve.output()
    serve = ServeProcess(home, repo, {"CORTEX_TOKEN": "t" * 32}, tmp_path / "bin", log)
    try:
        assert serve.start()["notes"] == 6
        assert _wait_for(serve, f"index: loaded the saved index at {head[:12]} (6 notes"), serve.output()
    finally:
        serve.stop()
    assert serve.output().count("building the index from the notes") == 1  # the first start only


def test_advancing_over_a_merge_is_a_build_from_scratch(tmp_path):
    """A pull that merged a branch while the server was stopped: the walk meets both sides."""
    from vaultkit import GIT_ENV, git, vault_on

    repo = vault_on(tmp_path, "main", {"notes/a.md": b"# A\n\nbees\n", "notes/b.md": b"# B\n\nhive\n"})
    home = tmp_path / "home"
    brain, saved = opened(repo, home)
    brain.snapshot()
    assert saved.save(brain.corpus)

    def dated(when: str, *args: str) -> None:  # the commit time Cortex dates notes by is the committer's
        env = {**GIT_ENV, "HOME": str(tmp_path), "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    def edit(path: str, text: str, when: str) -> None:
        (repo / path).write_text(text)
        git(repo, "add", "-A")
        dated(when, "commit", "-qm", f"edit {path}")

    git(repo, "switch", "-qc", "side")
    edit("notes/b.md", "# B\n\nthe hive moved south\n", "2026-02-01T10:00:00Z")
    edit("notes/c.md", "# C\n\nnew on the side\n", "2026-02-02T10:00:00Z")
    git(repo, "switch", "-q", "main")
    edit("notes/a.md", "# A\n\nbees and a garden\n", "2026-02-03T10:00:00Z")
    dated("2026-02-04T10:00:00Z", "merge", "-q", "--no-edit", "side")
    brain, saved = opened(repo, home)
    brain.snapshot()
    assert saved.loads == 1 and saved.rebuilds == []
    assert len(brain.store.commit_info(brain.store.head()).parents) == 2
    day = {p: t.day for p, t in brain.snapshot().changed.items()}
    assert day == {"notes/a.md": 3, "notes/b.md": 4, "notes/c.md": 4}  # the side's notes: by the merge
    assert_same(brain, fresh(repo))


def test_notes_that_disagree_with_their_index_mean_a_rebuild(saved_brain):
    """A file whose notes name a path its index does not hold (same counts, a valid
    checksum) is not loaded: every search would fail on it."""
    repo, home = saved_brain
    path = next((home / "index").iterdir())
    data = path.read_bytes()
    rest = data[len(MAGIC) + 32 :]
    (size,) = struct.unpack_from("<I", rest)
    header = json.loads(rest[4 : 4 + size])
    part = rest[4 + size : 4 + size + header["notes_bytes"]]
    sha, time_, notes, blobs, changed, real = persist.NotesUnpickler(io.BytesIO(part)).load()
    old, new = sorted(notes)[0], "notes/not-in-the-index.md"
    note = notes.pop(old)
    object.__setattr__(note, "path", new)
    notes[new], blobs[new], changed[new] = note, blobs.pop(old), changed.pop(old)
    if old in real:
        real[new] = real.pop(old)
    path.write_bytes(_resealed(data, notes=pickle.dumps((sha, time_, notes, blobs, changed, real))))
    lines: list[str] = []
    brain, saved = opened(repo, home, lines)
    brain.snapshot()
    assert saved.loads == 0 and "inconsistent" in saved.rebuilds[0]
    assert len(lines) == 1
    assert_same(brain, fresh(repo))


def test_the_fingerprint_covers_every_module_the_corpus_builds_with():
    """A new module that decides what is parsed or indexed must be in the fingerprint, or a
    saved file made by older rules would be served."""
    from layoutkit import GRAPH

    seen, todo = set(), ["index.corpus", "index.saved"]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += GRAPH[module]
    # exception types; the atomic write; the settings (the store reads CORTEX_AUTHOR's rule
    # there) and the state folder's permissions they check; the store reads blobs, never shapes
    # them; the guests' masked view is made when a guest asks and never saved
    not_shaping = {"errors", "files", "settings", "state_folder", "index.masked"} | {
        m for m in GRAPH if m.startswith("store.")
    }
    assert seen - not_shaping <= set(persist.SHAPING_MODULES), sorted(seen - not_shaping - set(persist.SHAPING_MODULES))

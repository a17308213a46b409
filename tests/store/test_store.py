"""The Git store and the brain's writes, without HTTP: one commit per write."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

import pytest
from vaultkit import hand_git, push_from_clone

from cortex.brain.brain import Brain
from cortex.brain.trailers import Actor
from cortex.errors import BadInput, Conflict
from cortex.store.git import GitStore
from cortex.store.working_tree import hash_blob

ME = Actor(door="owner", tool="brain_write", client="pytest 1.0")


@pytest.fixture
def brain(brain_path: Path) -> Brain:
    return Brain(GitStore(brain_path))


def count_commits(brain: Brain) -> int:
    return int(hand_git("rev-list", "--count", "main", cwd=brain.store.path))


def test_init_makes_main_with_template(brain: Brain):
    snap = brain.snapshot()
    assert {"profile.md", "notes/house-rules.md"} <= set(snap.notes)
    assert any(p.startswith("projects/") for p in snap.notes)
    assert any(p.startswith("log/") for p in snap.notes)
    assert brain.store.blob_at(snap.sha, "INDEX.md") is not None
    assert count_commits(brain) == 1


def test_every_mode_is_one_commit_with_trailers(brain: Brain):
    before = count_commits(brain)
    r = brain.write("notes/a.md", "create", ME, content="# A\n\nfirst line\n")
    assert r["replaced_blob"] is None and r["blob"]
    brain.write("notes/a.md", "append", ME, content="second line")
    brain.write("notes/a.md", "edit", ME, find="first line", content="1st $1 \\n line")
    brain.write("notes/a.md", "replace", ME, content="# A\n\nreplaced\n")
    brain.write("notes/a.md", "move", ME, to="archive/a.md")
    brain.write("archive/a.md", "delete", ME, reason="no longer useful")
    assert count_commits(brain) == before + 6
    msg = hand_git("log", "-1", "--format=%B", cwd=brain.store.path)
    assert msg.startswith("brain_write: delete archive/a.md")
    assert "Reason: no longer useful" in msg
    assert "Cortex-Door: owner" in msg and "Cortex-Tool: brain_write" in msg
    assert "Cortex-Client: pytest 1.0" in msg
    # INDEX.md travels in the same commit as the note.
    files = hand_git("show", "--name-only", "--format=", "HEAD~5", cwd=brain.store.path).split()
    assert sorted(files) == ["INDEX.md", "notes/a.md"]


def test_edit_is_a_literal_splice(brain: Brain):
    brain.write("notes/a.md", "create", ME, content="price: X\n")
    brain.write("notes/a.md", "edit", ME, find="X", content="$5 \\1 \\g<0>")
    _, _, note = brain.read("notes/a.md")
    assert note.text == "price: $5 \\1 \\g<0>\n"


def test_replies_name_the_replaced_blob(brain: Brain):
    first = brain.write("notes/a.md", "create", ME, content="one\n")
    second = brain.write("notes/a.md", "replace", ME, content="two\n")
    assert second["replaced_blob"] == first["blob"]
    assert second["sha"] != first["sha"] and second["parent"] == first["sha"]


def test_expected_blob_conflict_names_current_blob(brain: Brain):
    first = brain.write("notes/a.md", "create", ME, content="one\n")
    second = brain.write("notes/a.md", "replace", ME, content="two\n", expected_blob=first["blob"])
    head = brain.store.head()
    with pytest.raises(Conflict) as err:
        brain.write("notes/a.md", "replace", ME, content="three\n", expected_blob=first["blob"])
    assert second["blob"] in str(err.value)
    assert brain.store.head() == head


@pytest.mark.parametrize(
    "path,mode,kwargs,reason",
    [
        ("../x.md", "create", {"content": "x"}, "'..'"),
        ("/etc/passwd.md", "create", {"content": "x"}, "relative"),
        ("notes/a.txt", "create", {"content": "x"}, ".md"),
        (".git/config.md", "create", {"content": "x"}, ".git"),
        (".cortex/x.md", "create", {"content": "x"}, ".cortex"),
        ("INDEX.md", "replace", {"content": "x"}, "generated"),
        ("notes/a<b.md", "create", {"content": "x"}, "Windows"),
        ("notes/ends-with-dot./a.md", "create", {"content": "x"}, "dot"),
        (" notes/a.md", "create", {"content": "x"}, "space"),
        ("notes/evil\u202egnp.md", "create", {"content": "x"}, "bidirectional"),
        ("notes/tab\there.md", "create", {"content": "x"}, "control"),
        ("Profile.md", "create", {"content": "x"}, "letter case"),
        ("notes//a.md", "create", {"content": "x"}, "empty"),
        ("notes/a.md", "create", {"content": "a\x00b"}, "NUL"),
        ("notes/a.md", "create", {"content": "a\ud800b"}, "surrogate"),
        ("notes/a.md", "create", {"content": "x" * 1_100_000}, "limit"),
        ("notes/a.md", "create", {}, "needs content"),
        ("notes/a.md", "frobnicate", {"content": "x"}, "mode must be"),
        ("profile.md", "delete", {}, "reason"),
        ("profile.md", "move", {}, "needs to"),
        ("profile.md", "edit", {"content": "x"}, "find"),
        ("profile.md", "edit", {"content": "x", "find": "no such text anywhere"}, "0 times"),
        ("profile.md", "create", {"content": "x"}, "already exists"),
        ("notes/missing.md", "replace", {"content": "x"}, "use create"),
        ("notes/house-rules.md", "move", {"to": "profile.md"}, "already exists"),
    ],
)
def test_bad_input_is_refused_and_commits_nothing(brain: Brain, path, mode, kwargs, reason):
    head = brain.store.head()
    with pytest.raises((BadInput, Conflict)) as err:
        brain.write(path, mode, ME, **kwargs)
    assert reason in str(err.value)
    assert "\n" not in str(err.value)
    assert brain.store.head() == head


def test_concurrent_writers_all_land_in_linear_history(brain: Brain):
    start = count_commits(brain)
    brain.write("notes/shared.md", "create", ME, content="# Shared\n")
    errors = []

    def worker(n: int) -> None:
        other = Brain(GitStore(brain.store.path))  # a separate repository handle, as another process would have
        for i in range(5):
            try:
                other.write("notes/shared.md", "append", ME, content=f"- worker {n} entry {i}")
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    text = brain.read("notes/shared.md")[2].text
    assert all(f"- worker {n} entry {i}" in text for n in range(6) for i in range(5))
    assert count_commits(brain) == start + 1 + 30
    merges = hand_git("rev-list", "--merges", "--count", "main", cwd=brain.store.path)
    assert merges.strip() == "0"


def test_push_from_another_clone_is_seen_next_read(brain: Brain, tmp_path: Path):
    first = brain.snapshot()
    push_from_clone(
        brain, tmp_path, lambda c: (c / "notes" / "by-hand.md").write_text("# By hand\n\nTyped in vim.\n"), "hand edit"
    )
    snap = brain.snapshot()
    assert snap.sha != first.sha
    assert snap.notes["notes/by-hand.md"].title == "By hand"
    history = brain.store.history("notes/by-hand.md")[0]
    assert history[0].author == "Hand"


def test_read_at_an_older_commit_and_time(brain: Brain):
    first = brain.write("notes/a.md", "create", ME, content="version one\n")
    brain.write("notes/a.md", "replace", ME, content="version two\n")
    assert brain.read("notes/a.md")[2].text == "version two\n"
    assert brain.read("notes/a.md", at=first["sha"])[2].text == "version one\n"
    assert brain.read("notes/a.md", at=first["sha"][:10])[2].text == "version one\n"
    with pytest.raises(BadInput):
        brain.read("notes/a.md", at="1999-01-01T00:00:00Z")


def test_symlinks_in_the_tree_are_not_followed(brain: Brain, tmp_path: Path):
    push_from_clone(brain, tmp_path, lambda c: (c / "notes" / "link.md").symlink_to("/etc/passwd"), "symlink")
    snap = brain.snapshot()
    assert "notes/link.md" not in snap.notes
    with pytest.raises(BadInput):
        brain.read("notes/link.md")


def test_capture_appends_a_log_entry_in_the_brain_time_zone(brain_path: Path):
    import datetime as dt

    fixed = dt.datetime(2026, 3, 1, 23, 30, tzinfo=dt.UTC)
    brain = Brain(GitStore(brain_path), tz="Asia/Tokyo", clock=lambda: fixed)
    r = brain.capture("Bought a new hive tool", ME, tags=["bees", "shopping"])
    assert r["path"] == "log/2026-03-02.md"
    assert r["heading"] == "## 08:30 · bees, shopping"
    brain.capture("second", ME)
    text = brain.read("log/2026-03-02.md")[2].text
    assert "## 08:30 · bees, shopping\n\nBought a new hive tool\n" in text
    assert text.rstrip().endswith("## 08:30\n\nsecond")


@pytest.mark.parametrize("index", ["auto", "off"])
def test_one_note_change_parses_only_that_note_once(brain_path: Path, monkeypatch, index):
    """A write parses the note it wrote once: the INDEX.md check (when there is one) hands
    the note to the corpus, which parses it itself otherwise."""
    import cortex.brain.brain as brain_mod
    import cortex.index.corpus as corpus_mod

    brain = Brain(GitStore(brain_path), index=index)
    brain.snapshot()
    parsed = []
    real = corpus_mod.parse_note
    for module in (brain_mod, corpus_mod):
        monkeypatch.setattr(module, "parse_note", lambda p, t: parsed.append(p) or real(p, t))
    brain.write("notes/a.md", "create", ME, content="# A\n\nhello\n")
    brain.write("notes/a.md", "append", ME, content="more")
    snap = brain.snapshot()
    assert parsed == ["notes/a.md", "notes/a.md"]
    fresh = Brain(GitStore(brain_path)).corpus.at(snap.sha)  # a build from Git alone
    assert snap.notes["notes/a.md"] == fresh.notes["notes/a.md"]
    assert snap.notes["notes/a.md"].text == "# A\n\nhello\nmore\n"
    assert snap.index.search("hello more", 5) == fresh.index.search("hello more", 5)


def test_a_stale_ref_lock_left_by_a_crash_does_not_block_writes(brain: Brain):
    import os
    import time

    lock = brain.store.path / "refs" / "heads" / "main.lock"
    lock.write_text("0" * 40 + "\n")
    old = time.time() - 60
    os.utime(lock, (old, old))
    r = brain.write("notes/after-crash.md", "create", ME, content="still writable\n")
    assert r["sha"] == brain.store.head() and not lock.exists()


def test_a_retried_request_id_applies_once(brain: Brain):
    from dataclasses import replace

    once = replace(ME, request="retry-42")
    first = brain.write("notes/log.md", "append", once, content="- bought honey jars")
    again = brain.write("notes/log.md", "append", once, content="- bought honey jars")
    assert again["replayed"] is True and again["sha"] == first["sha"]
    assert brain.read("notes/log.md")[2].text.count("bought honey jars") == 1
    cap = brain.capture("call the vet", replace(ME, request="cap-1"))
    assert brain.capture("call the vet", replace(ME, request="cap-1"))["sha"] == cap["sha"]
    msg = hand_git("log", "-1", "--format=%B", cwd=brain.store.path)
    assert "Cortex-Request: cap-1" in msg


def tree_of(path: Path) -> dict[str, str]:
    """Every file and folder of the branch head as Git itself lists it: path -> object id."""
    out = {}
    for line in hand_git("ls-tree", "-r", "-t", "main", cwd=path).splitlines():
        meta, name = line.split("\t", 1)
        out[name] = meta.split()[2]
    return out


def as_tree(files: dict[str, bytes]) -> dict[str, str]:
    """What `tree_of` lists for a tree holding `files`, without the folders' ids."""
    out = {p: hash_blob(data) for p, data in files.items()}
    for p in files:
        parts = p.split("/")
        for n in range(1, len(parts)):
            out["/".join(parts[:n])] = "tree"
    return out


@pytest.mark.slow
def test_each_write_builds_on_the_head_it_runs_on_whoever_moved_it(tmp_path: Path):
    """A store keeps the TreeBuilders of the trees it last wrote and builds its next write
    on them: every commit must still hold exactly the head's files plus its change, when
    another handle moved the head meanwhile, when a folder's last file goes, and every
    lookup must see the head as a fresh handle does."""
    import random

    files = {"a.md": b"a\n", "notes/x.md": b"x\n"}
    store = GitStore.init(tmp_path / "r.git", files, bare=True)
    other = GitStore(store.path)  # another process's handle on the same repository
    rng = random.Random(7)
    names = ["a.md", "b.md", "notes/x.md", "notes/y.md", "notes/deep/z.md", "notes/deep/w.md", "log/l.md"]
    for i in range(80):
        writer = store if rng.random() < 0.7 else other
        path = rng.choice(names)
        if path in files and len(files) > 1 and rng.random() < 0.4:
            change: dict[str, bytes | None] = {path: None}
        else:
            change = {path: f"{path} {i}\n".encode()}
        writer.commit(lambda view, change=change: dict(change), f"step {i}")
        for p, data in change.items():
            if data is None:
                del files[p]
            else:
                files[p] = data
        listed = tree_of(store.path)
        assert {p: ("tree" if p not in files else b) for p, b in listed.items()} == as_tree(files)
        head = store.head()
        fresh = GitStore(store.path)
        for p in [*names, "notes", "notes/", "notes/deep", "a.md/x", "/a.md", "notes//x.md", "A.md"]:
            assert store.blob_at(head, p) == fresh.blob_at(head, p) == (hash_blob(files[p]) if p in files else None)
            assert store.stored_path(head, p) == fresh.stored_path(head, p)
            assert store.collision(head, {p: b""}) == fresh.collision(head, {p: b""})


def test_a_draft_that_lost_the_race_leaves_nothing_behind_for_the_retry(brain: Brain):
    """Another writer (its own handle on the repository) commits while this draft is built,
    so the compare-and-swap loses; the retry runs its change again on the new head, whose
    `notes/` tree is the one the lost draft built on: the commit holds the retry's change only."""
    store = brain.store
    brain.write("notes/a.md", "create", ME, content="a\n")  # the store now holds the head's builders
    other = GitStore(store.path)
    calls: list[str | None] = []
    won: list[str] = []

    def change(view):
        calls.append(view.sha)
        if len(calls) == 1:  # the other writer gets in between this read and the branch move
            won.append(other.commit(lambda v: {"elsewhere.md": b"e\n"}, "the other writer").sha)
            return {"notes/first-try.md": b"1\n"}
        return {"notes/retry.md": b"2\n"}

    before = tree_of(store.path)
    result = store.commit(change, "retried")
    assert len(calls) == 2 and calls[0] != calls[1] == won[0] == result.parent and result.retries == 1
    assert hand_git("rev-parse", f"{result.sha}^", cwd=store.path).strip() == won[0]
    after = tree_of(store.path)
    assert "notes/first-try.md" not in after and after["notes/retry.md"] == hash_blob(b"2\n")
    assert after["elsewhere.md"] == hash_blob(b"e\n")
    assert {p: b for p, b in after.items() if p not in ("notes", "notes/retry.md", "elsewhere.md")} == {
        p: b for p, b in before.items() if p != "notes"
    }


def test_a_write_refused_halfway_through_its_trees_leaves_no_trace_in_the_next(brain: Brain):
    """Git refuses the name `.git` after the folder's builder took the first file in: the
    next write must not find that file in the builder it starts from."""
    from cortex.errors import StoreError

    store = brain.store
    brain.write("notes/a.md", "create", ME, content="a\n")
    head = store.head()
    with pytest.raises(StoreError):
        store.commit(lambda view: {"notes/half.md": b"1\n", "notes/.git": b"2\n"}, "refused")
    assert store.head() == head
    brain.write("notes/b.md", "create", ME, content="b\n")
    assert "notes/half.md" not in tree_of(store.path) and store.blob_at(store.head(), "notes/half.md") is None


def test_a_retried_write_hands_the_corpus_only_notes_of_the_draft_committed(brain_path: Path):
    """The first try parsed its note for the INDEX.md check; another writer then removes
    INDEX.md and changes the note before the branch moves, so the retry, on a head without
    INDEX.md, parses none: the snapshot must hold the note as committed, not the first try's.

    The other writer commits when the first draft is stamped (the store's clock): after the
    draft's change ran, before its compare-and-swap."""
    won: list[str] = []
    holder: list[Brain] = []

    def clock() -> dt.datetime:
        if holder and not won:
            brain = holder[0]
            other = GitStore(brain.store.path)
            won.append(
                other.commit(lambda view: {"INDEX.md": None, "notes/a.md": b"# A\n\nzebracorn\n"}, "by hand").sha
            )
            brain.snapshot()  # a reader moves the corpus onto the new head meanwhile
        return dt.datetime.now(dt.UTC)

    brain = Brain(GitStore(brain_path), clock=clock)
    brain.write("notes/a.md", "create", ME, content="# A\n\none\n")
    holder.append(brain)
    result = brain.write("notes/a.md", "append", ME, content="two")
    assert result["parent"] == won[0] and result["note"].startswith("the head moved 1 time(s)")
    assert brain.corpus.built().sha == result["sha"]  # moved by `follow`, not by a diff
    snap = brain.snapshot()
    fresh = Brain(GitStore(brain.store.path)).corpus.at(snap.sha)  # a build from Git alone
    assert snap.notes["notes/a.md"] == fresh.notes["notes/a.md"]
    assert [doc for doc, _ in snap.index.search("zebracorn", 5).hits] == ["notes/a.md"]


@pytest.mark.slow
def test_writers_racing_from_their_own_handles_lose_no_write_and_chain_their_parents(brain: Brain):
    """Writers in threads, each with its own repository handle (as separate processes
    would have), start together and race on one branch: every write lands once, each
    commit's parent is the head its reply names, and history stays one line."""
    start = brain.store.head()
    writers, writes = 4, 6
    barrier = threading.Barrier(writers)
    replies: list[dict] = []
    errors: list[Exception] = []

    def writer(n: int) -> None:
        mine = Brain(GitStore(brain.store.path))
        barrier.wait(timeout=30)
        for i in range(writes):
            try:
                replies.append(mine.write(f"race/w{n}-{i}.md", "create", ME, content=f"# W{n} {i}\n"))
                replies.append(mine.write("race/shared.md", "append", ME, content=f"- w{n} {i}"))
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and len(replies) == 2 * writers * writes
    chain = hand_git("rev-list", "--first-parent", f"{start}..main", cwd=brain.store.path).split()
    assert (
        len(chain) == len(replies)
        and hand_git("rev-list", "--merges", "--count", "main", cwd=brain.store.path).strip() == "0"
    )
    for reply in replies:
        assert reply["sha"] in chain
        assert hand_git("rev-parse", f"{reply['sha']}^", cwd=brain.store.path).strip() == reply["parent"]
    head = brain.store.head()
    shared = brain.read("race/shared.md")[2].text
    for n in range(writers):
        for i in range(writes):
            assert brain.store.blob_at(head, f"race/w{n}-{i}.md") is not None
            assert f"- w{n} {i}\n" in shared

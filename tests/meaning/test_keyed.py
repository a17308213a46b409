"""Vectors keyed by what was embedded, shared through Redis, and served while they grow.

- An upgrade that changes no passage text (a comment in every module that reads notes, the
  code served from a copy) embeds nothing on the next start; a change to the cut re-embeds
  only the passages whose text changed.
- Hosted instances on one real Redis, and their restarts on an empty disk, embed each
  passage once between them; a lost or damaged vector is embedded again, never used.
- While a first embed runs (a real embedder slowed by the arm's `pace` hook), a paraphrase
  of the newest note finds it, and the reply and /healthz say how much meaning covers.

The model is the real one (ops/model-requirements.txt); Redis is a real redis-server.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from meaningkit import CACHE
from serverkit import TOKEN, RunningServer, call, make_settings

from cortex.app.server import assemble, make_app
from cortex.guests.queue import RedisVectors
from cortex.meaning.closeness import say_duration
from cortex.meaning.embedder import ModelFiles
from cortex.meaning.pace import time_left
from cortex.meaning.vectors import KeyIndex, Rows, decode_row, encode_row, passage_key, quantize
from cortex.store.git import GitStore

ROOT = Path(__file__).resolve().parent.parent.parent
# The modules that read a note into what is embedded (arm.passage_code's, and the rest of notes/).
READING = sorted(
    {"meaning/note_passages.py", "meaning/embedder.py", "meaning/closeness.py", "meaning/vectors.py"}
    | {str(p.relative_to(ROOT / "cortex")) for p in (ROOT / "cortex" / "notes").glob("*.py")}
)


def _notes(n: int) -> dict[str, str]:
    files = {
        "notes/car.md": "# Car\n\nOur family runs a green 2019 Volvo V60 estate, bought second hand.\n",
        "notes/links.md": "# Links\n\nThe shop for spare parts is https://parts.example/volvo and it ships fast.\n",
    }
    for i in range(n):
        files[f"filler/note-{i:03}.md"] = f"# Filler {i}\n\nParagraph {i} about ledgers, invoices and shelf {i}.\n"
    return files


# -- pure parts ------------------------------------------------------------------------


def test_a_key_is_the_space_and_the_exact_text() -> None:
    a = passage_key("minilm/int8pc/abc|onnxruntime 1.20|rules 1", "Car\nA green Volvo")
    assert a == passage_key("minilm/int8pc/abc|onnxruntime 1.20|rules 1", "Car\nA green Volvo")
    assert a != passage_key("minilm/int8pc/abc|onnxruntime 1.21|rules 1", "Car\nA green Volvo")
    assert a != passage_key("minilm/int8pc/abc|onnxruntime 1.20|rules 1", "Car\nA green Volvo ")
    assert len(a) == 16


def test_a_shared_value_is_used_only_for_its_own_key_and_whole() -> None:
    rng = np.random.default_rng(3)
    q, scale = quantize(rng.normal(size=(1, 384)).astype(np.float32))
    key, other = passage_key("s", "one"), passage_key("s", "two")
    value = encode_row(key, q[0], float(scale[0]))
    assert len(value) == 384 + 4 + 8
    row = decode_row(key, value, 384)
    assert row is not None and np.array_equal(row[0], q[0]) and row[1] == scale[0]
    assert decode_row(other, value, 384) is None  # filed under another key
    assert decode_row(key, value[:-1], 384) is None  # cut short
    assert decode_row(key, bytes([value[0] ^ 1]) + value[1:], 384) is None  # damaged
    assert decode_row(key, None, 384) is None  # evicted


def test_the_key_index_finds_rows_across_stores_and_nothing_else() -> None:
    rng = np.random.default_rng(4)
    made = []
    for n in (3, 1, 4):
        q, scale = quantize(rng.normal(size=(n, 8)).astype(np.float32))
        keys = [passage_key("s", f"{n}-{i}") for i in range(n)]
        made.append((keys, q, scale))
    index = KeyIndex(
        Rows(q, s, np.zeros((len(s), 2), np.int32), keys=np.frombuffer(b"".join(k), np.uint8).reshape(-1, 16))
        for k, q, s in made
    )
    want = [made[2][0][3], passage_key("s", "absent"), made[0][0][0]]
    found = index.find(want)
    assert np.array_equal(found[0][0], made[2][1][3]) and found[0][1] == made[2][2][3]
    assert found[1] is None
    assert np.array_equal(found[2][0], made[0][1][0])


# -- an upgrade: the code served from a copy ----------------------------------------------

START = """
import json, sys, time
from pathlib import Path
from cortex.brain.brain import Brain
from cortex.meaning.closeness import Meaning, passage_code
from cortex.store.git import GitStore
brain, vectors, cache = (Path(a) for a in sys.argv[1:4])
meaning = Meaning(None, cache, vectors, "b", workers=1)
began = time.monotonic()
assert meaning.prepare(), meaning.reason
meaning.catch_up(Brain(GitStore(brain)).snapshot())
print(json.dumps({**meaning.counts, "state": meaning.state, "s": time.monotonic() - began,
                  "passages": meaning.store.passages, "code": passage_code(),
                  "module": __import__("cortex").__file__}))
"""


def _start(code: Path, brain: Path, vectors: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code))
    out = subprocess.run(
        [sys.executable, "-c", START, str(brain), str(vectors), str(CACHE)],
        env=env,
        cwd=code,  # `-c` puts the working folder first on the path: it must be the code's
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _copy_with(tmp: Path, edit=None) -> Path:
    """The package copied, with a comment added to every reading module (and `edit` applied)."""
    copy = tmp / "code"
    shutil.copytree(ROOT / "cortex", copy / "cortex", ignore=shutil.ignore_patterns("__pycache__"))
    for rel in READING:
        path = copy / "cortex" / rel
        path.write_text(path.read_text() + "\n# an upgrade that changes no passage text\n")
    if edit is not None:
        edit(copy / "cortex")
    return copy


@pytest.mark.slow
def test_an_upgrade_that_changes_no_passage_text_embeds_nothing_and_a_new_cut_only_what_it_changed(
    tmp_path: Path, model: ModelFiles
) -> None:
    files = _notes(30)  # more than a task's notes: the worker processes cut them
    brain = tmp_path / "brain.git"
    GitStore.init(brain, {p: t.encode() for p, t in files.items()}, bare=True, message="seed")
    vectors = tmp_path / "home" / "v.cvec"
    first = _start(ROOT, brain, vectors)
    assert first["state"] == "ready" and first["embedded"] == first["passages"] == len(files)

    upgraded = _copy_with(tmp_path / "a")
    again = _start(upgraded, brain, vectors)
    assert again["module"].startswith(str(upgraded)) and again["code"] != first["code"]
    assert again["state"] == "ready" and again["embedded"] == 0 and again["reused"] == len(files), again

    # A cut that keeps bare URLs: only the one passage holding one has new text.
    def keep_urls(pkg: Path) -> None:
        path = pkg / "notes" / "shown.py"  # where the cut's `plain` lives
        text = path.read_text()
        assert 'return _BARE_URL.sub("", _linked(text))' in text
        path.write_text(text.replace('return _BARE_URL.sub("", _linked(text))', "return _linked(text)"))

    recut = _start(_copy_with(tmp_path / "b", keep_urls), brain, vectors)
    assert recut["state"] == "ready" and recut["embedded"] == 1 and recut["reused"] == len(files) - 1, recut


# -- hosted instances on one Redis ------------------------------------------------------


def _instance(tmp_path: Path, name: str, remote: Path, url: str):
    """A hosted instance's arm, model loaded, on its own (empty) disk, and its head."""
    settings = make_settings(tmp_path / name, remote, env={"CORTEX_REMOTE": str(remote), "REDIS_URL": url})
    parts = assemble(settings)
    meaning = parts.brain.meaning
    meaning.workers = 1
    assert meaning.shared is not None and meaning.prepare(), meaning.reason
    return meaning, parts.brain.snapshot()


def _hosted(tmp_path: Path, name: str, remote: Path, url: str):
    meaning, snap = _instance(tmp_path, name, remote, url)
    meaning.catch_up(snap)
    assert meaning.state == "ready"
    return meaning


@pytest.mark.slow
def test_two_hosted_instances_and_a_restart_on_one_redis_embed_each_passage_once(
    tmp_path: Path, model: ModelFiles, redis_proc
) -> None:
    files = _notes(30)
    remote = tmp_path / "remote.git"
    GitStore.init(remote, {p: t.encode() for p, t in files.items()}, bare=True, message="seed")
    a = _hosted(tmp_path, "a", remote, redis_proc.url)
    b = _hosted(tmp_path, "b", remote, redis_proc.url)  # another instance, its own disk
    a_again = _hosted(tmp_path, "a-restarted", remote, redis_proc.url)  # a restart on an empty disk
    embedded = [m.counts["embedded"] for m in (a, b, a_again)]
    assert embedded == [len(files), 0, 0] and b.counts["shared"] == a_again.counts["shared"] == len(files)
    assert sorted(b.store.get(k).q.tobytes() for k in b.store._rows) == sorted(
        a.store.get(k).q.tobytes() for k in a.store._rows
    )

    # A lost vector and a damaged one: both embedded again, neither used.
    redis = RedisVectors(redis_proc.url).r
    keys = sorted(redis.keys(RedisVectors.PREFIX + b"*"))
    assert len(keys) == len(files)
    redis.delete(keys[0])
    value = redis.get(keys[1])
    redis.set(keys[1], bytes([value[0] ^ 1]) + value[1:])
    c = _hosted(tmp_path, "c", remote, redis_proc.url)
    assert c.counts["embedded"] == 2 and c.counts["shared"] == len(files) - 2
    assert RedisVectors(redis_proc.url).get_many([keys[1][len(RedisVectors.PREFIX) :]])[0] == value  # mended


@pytest.mark.slow
def test_two_hosted_instances_started_together_embed_each_passage_once_between_them(
    tmp_path: Path, model: ModelFiles, redis_proc
) -> None:
    files = {
        f"notes/n-{i:03}.md": f"# Topic {i}\n\nPassage {i} is about orchards, rivers and bells.\n" for i in range(64)
    }
    remote = tmp_path / "remote.git"
    GitStore.init(remote, {p: t.encode() for p, t in files.items()}, bare=True, message="seed")
    arms = [_instance(tmp_path, name, remote, redis_proc.url) for name in ("a", "b")]
    for meaning, _ in arms:
        meaning.pace = 0.05  # a real embedder slowed, so the two overlap on a loaded machine
    threads = [threading.Thread(target=m.catch_up, args=(snap,)) for m, snap in arms]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    embedded = [m.counts["embedded"] for m, _ in arms]
    assert all(m.state == "ready" and m.store.passages == len(files) for m, _ in arms)
    assert sum(embedded) == len(files), embedded  # split between them, none twice


@pytest.mark.slow
def test_a_claim_granted_after_another_instance_stored_the_vector_uses_that_vector(
    tmp_path: Path, model: ModelFiles, redis_proc
) -> None:
    # The race CI met under load: b looks (a miss); a embeds, stores the vector and lifts its
    # claim; then b claims and is granted. b must take a's vector, not embed the passage again.
    # A damaged stored value is no vector: b embeds that one.
    remote = tmp_path / "remote.git"
    GitStore.init(remote, {"notes/a.md": b"# A\n\nOne passage.\n"}, bare=True, message="seed")
    b, _ = _instance(tmp_path, "b", remote, redis_proc.url)
    a = RedisVectors(redis_proc.url)  # the other instance, as the store sees it
    stored, damaged, fresh = b"s" * 16, b"d" * 16, b"f" * 16
    q, scale = quantize(np.random.default_rng(1).standard_normal((2, b.store.dim)).astype(np.float32))
    assert b.shared.get_many([stored, damaged]) == [None, None]  # b's look: misses
    assert a.claim([stored, damaged]) == [True, True]
    a.put_many([(stored, encode_row(stored, q[0], float(scale[0]))), (damaged, b"\x00" * 8)])  # claims lifted
    mine, found = b._claim([stored, damaged, fresh])
    assert mine == {damaged, fresh} and list(found) == [stored]
    assert found[stored][0].tobytes() == q[0].tobytes()


def test_an_unreachable_redis_is_all_misses_and_a_dropped_put(tmp_path: Path) -> None:
    gone = RedisVectors(f"unix://{tmp_path}/no-redis.sock")
    assert gone.get_many([b"k" * 16, b"j" * 16]) == [None, None]
    gone.put_many([(b"k" * 16, b"v")])  # no exception: the arm embeds it itself
    assert gone.claim([b"k" * 16]) == [True]  # no one to share with: embedded here


# -- served while it grows ----------------------------------------------------------------


@pytest.mark.slow
def test_while_a_first_embed_runs_a_paraphrase_of_the_newest_note_finds_it_and_the_reply_says_how_much(
    tmp_path: Path, model: ModelFiles
) -> None:
    brain_path = tmp_path / "brain.git"
    store = GitStore.init(brain_path, {p: t.encode() for p, t in _notes(120).items()}, bare=True, message="seed")
    later = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    store.clock = lambda: later  # the newest note, by Git time
    boat = "# Sailing\n\nWe bought a small wooden sailboat and keep it moored at the marina in Kiel.\n"
    store.commit(lambda view: {"notes/boat.md": boat.encode()}, "a boat")
    parts = assemble(make_settings(tmp_path, brain_path))
    meaning = parts.brain.meaning
    meaning.workers, meaning.pace = 1, 0.1  # a real embedder, slowed: 123 passages take 12 s or more
    with RunningServer(make_app(parts), parts.settings) as running:
        parts.brain.corpus.warm()
        meaning.start(parts.brain.corpus)
        deadline = time.time() + 120
        while time.time() < deadline:
            snap = parts.brain.corpus.built()
            if snap is not None and meaning.store is not None and snap.blobs["notes/boat.md"] in meaning.store:
                break
            time.sleep(0.05)  # waiting for the arm, not slowing it
        found = call(f"{running.url}/mcp", "brain_search", query="what kind of vessel do we have on the water", k=3)
        health = httpx.get(f"{running.url}/healthz?detail=1", headers={"Authorization": f"Bearer {TOKEN}"}).json()
        asked = call(f"{running.url}/mcp", "brain_ask", question="Where is our sailing boat kept?")
        assert meaning.state == "embedding", "the embed finished before the check: slow it more"
        meaning.stop()
    assert found.data["hits"][0]["path"] == "notes/boat.md", found.data["hits"]
    line = re.fullmatch(
        r"meaning: ([\d,]+) of ([\d,]+) passages \(([\d,]+) of 123 notes\); lexical for the rest", found.data["meaning"]
    )
    assert line is not None, found.data["meaning"]
    have, known = (int(x.replace(",", "")) for x in line.groups()[:2])
    assert 0 < have < known == 123
    assert re.fullmatch(r"[\d,]+ of 123 passages \([\d,]+ of 123 notes\)", health["meaning_coverage"]), health
    assert "lexical for the rest" in asked.data["coverage"] and "notes/boat.md" in json.dumps(asked.data)


@pytest.mark.parametrize(
    "left,made,spent,eta",
    [
        (None, 100, 10.0, None),  # notes still to cut: how many passages is not known yet
        (500, 0, 10.0, None),  # nothing embedded yet: no rate
        (500, 100, 0.0, None),
        (500, 100, 10.0, (500, 50.0)),  # 10 a second: 50 s for 500
        (0, 100, 10.0, (0, 0.0)),
    ],
)
def test_the_time_left_is_passages_left_over_the_rate_so_far(left, made, spent, eta) -> None:
    assert time_left(left, made, spent) == eta


@pytest.mark.parametrize(
    "seconds,said",
    [(0.2, "about 1 s"), (40, "about 40 s"), (89, "about 89 s"), (420, "about 7 min"), (7500, "about 2 h 5 min")],
)
def test_how_long_is_said_as_the_owner_reads_it(seconds: float, said: str) -> None:
    assert say_duration(seconds) == said

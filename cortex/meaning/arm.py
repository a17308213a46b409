"""The meaning arm: passage vectors of the head, filled in the background, scored exactly.

`Meaning.start` runs a thread that follows the corpus's latest snapshot. Notes whose
blob has no vectors yet are sent to niced worker processes (`_embed_notes`), which parse
them masked as replies show them, cut them into passages (`passages.note_passages`) and
embed them; the thread only files the results in the `VectorStore`. It takes no lock that
reads or writes need: the corpus is read through `built()` and notes' text through the
store like any reader.

Until every note of the head has vectors the arm is not ready, and search and ask stay
lexical; `line()` says how far it has got. A missing or broken model is one log line:
the server carries on lexical and says so. Vectors are keyed by blob and model, so a
commit re-embeds only the notes it changed and a rename re-embeds nothing.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cortex.index.saved import Unusable
from cortex.meaning.embedder import MAX_TOKENS, Embedder, ModelFiles, ModelUnavailable, locate
from cortex.meaning.passages import MAX_PASSAGES
from cortex.meaning.vectors import ScopeMatrix, VectorStore

if TYPE_CHECKING:
    from cortex.index.corpus import Corpus
    from cortex.index.snapshot import Snapshot

__all__ = [
    "FEW_NOTES",
    "NICE",
    "NOTES_PER_TASK",
    "SAVE_EVERY_S",
    "WORKER_MEMORY",
    "Closeness",
    "Embedded",
    "Meaning",
    "passage_code",
]

NOTES_PER_TASK = 16  # notes a worker embeds per task: progress moves every second or so
# Once a head is ready, up to this many changed notes are embedded in the arm's own thread
# (about 1 s of one core) rather than by spawning workers.
FEW_NOTES = 64
SAVE_EVERY_S = 60.0  # while embedding, save at most this often (a kill loses at most a minute's work)
NICE = 10  # the workers' niceness: a request's thread always goes first
# Address space a worker may take beyond its loaded model. Measured: a 1 MiB note of 40,000
# tiny sections grew a worker by 111 MB (its parse); past the bound a note is found by words only.
WORKER_MEMORY = 512 << 20


def passage_code() -> str:
    """A hash of the code that decides what is embedded of a note: vectors saved by other
    rules (another passage cut, another Markdown reading) are embedded again, never mixed."""
    import hashlib

    from cortex.meaning import embedder, passages
    from cortex.notes import blocks, redact, structure
    from cortex.notes import note as notes

    h = hashlib.sha256()
    for module in (passages, blocks, structure, notes, redact, embedder):
        h.update(Path(module.__file__ or "").read_bytes())
    return h.hexdigest()[:12]


# -- the worker processes ------------------------------------------------------------

_WORKER: Embedder | None = None


def _start_worker(files: ModelFiles, threads: int, memory: int) -> None:
    global _WORKER
    try:
        os.nice(NICE)
    except OSError:
        pass
    _WORKER = Embedder(files, threads=threads)
    _bound_memory(memory)


def _bound_memory(extra: int) -> None:
    """Hold this process to the address space it has now plus `extra` bytes: past it an
    allocation fails with MemoryError (caught per note) instead of growing without end."""
    import resource

    try:
        pages = int(Path("/proc/self/statm").read_text().split()[0])
        limit = pages * os.sysconf("SC_PAGE_SIZE") + extra
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    except (OSError, ValueError):  # no /proc (not Linux), or a hard limit already lower: left as it is
        pass


Embedded = tuple[str, np.ndarray, np.ndarray, bool]  # blob, vectors, block spans, whether whole


def _embed_notes(items: list[tuple[str, str, str]]) -> list[Embedded]:
    """(blob, vectors, block spans, whole) for each (blob, path, text), in a worker.
    Nothing parsed is kept from one note to the next, so the memory bound is one note's."""
    assert _WORKER is not None
    return _embed_with(_WORKER, items, forget=True)


def _embed_with(embedder: Embedder, items: list[tuple[str, str, str]], forget: bool = False) -> list[Embedded]:
    from cortex.meaning.passages import Passage, first_passages
    from cortex.notes.blocks import drop_cached
    from cortex.notes.note import parse_note
    from cortex.notes.redact import redact

    out = []
    for blob, path, text in items:
        # Embedded as replies show it: a guest's closeness and ranking owe nothing to a masked
        # credential, so a guessed one is no closer than a wrong guess.
        try:
            found, whole = first_passages(
                parse_note(path, redact(text)), MAX_TOKENS - 2, embedder.lengths, embedder.cut
            )
        except MemoryError:  # past the worker's bound: its name is embedded, its words are indexed
            found = []  # made once out of this block, whose traceback holds the parse's memory
        if forget:
            drop_cached()
        if not found:
            found, whole = [Passage(redact(path), "", -1, -1)], False
        vectors = embedder.embed([p.text for p in found])
        spans = np.array([(p.first_block, p.last_block) for p in found], dtype=np.int32).reshape(-1, 2)
        out.append((blob, vectors, spans, whole))
    return out


# -- what a query gets --------------------------------------------------------------


@dataclass
class Closeness:
    """A text's cosine to every passage of a scope: per note the best, and the rows."""

    paths: list[str]
    best: np.ndarray  # per note of `paths`
    rows: np.ndarray  # the row of each note's best passage
    cos: np.ndarray  # every row's cosine, in the scope's order
    matrix: ScopeMatrix

    def by_note(self) -> dict[str, float]:
        return {p: float(c) for p, c in zip(self.paths, self.best)}

    def closest(self) -> tuple[str, float] | None:
        if not len(self.best):
            return None
        i = int(np.argmax(self.best))
        return self.paths[i], float(self.best[i])

    def index(self) -> dict[str, int]:
        """Path -> its position in `paths` (and `best`): the matrix's, built once per scope
        (a dict of 10,000 paths cost 4.5 ms a query)."""
        return self.matrix.index()

    def spans_of(self, path: str) -> list[tuple[float, int, int]]:
        """(cosine, first block, last block) of each passage of `path`, closest first
        (none for a note the scope left out or that has no vectors)."""
        i = self.index().get(path)
        if i is None:
            return []
        a, b = int(self.matrix.starts[i]), int(self.matrix.starts[i + 1])
        out = [(float(self.cos[r]), int(self.matrix.spans[r][0]), int(self.matrix.spans[r][1])) for r in range(a, b)]
        return sorted(out, key=lambda x: -x[0])


class Meaning:
    """One brain's meaning arm. `state`: off, starting, embedding, ready or unavailable."""

    def __init__(
        self,
        model_setting: str | None,
        cache: Path,
        vector_path: Path | None,
        brain: str,
        log: Callable[[str], None] | None = None,
        workers: int | None = None,
        threads: int = 1,
        enabled: bool = True,
        worker_memory: int = WORKER_MEMORY,
    ):
        self.model_setting = model_setting
        self.cache = cache
        self.vector_path = vector_path
        self.brain = brain
        self.log = log or (lambda line: None)
        # One single-threaded worker a core (up to 4): on 2 cores, 2x1 embedded full passages
        # at 23.5/s against 19.9/s for 1x2 threads, and short ones at 29.3 against 24.3.
        self.workers = workers or max(1, min(4, os.cpu_count() or 1))
        self.threads = threads
        self.worker_memory = worker_memory
        self.state = "starting" if enabled else "off"
        self.reason = "CORTEX_MEANING=off" if not enabled else ""
        self.store: VectorStore | None = None
        self.files: ModelFiles | None = None
        self.key = ""  # model id / passage code: what the vector file must have been made with
        self._query: Embedder | None = None
        self._query_lock = threading.Lock()
        self._target: tuple[str, int, int] = ("", 0, 0)  # (head, notes with vectors, notes)
        self._ready_sha: str | None = None
        self._ready_passages = 0  # of the ready head: counted once, said in every search reply
        self._ready_in_part: frozenset[str] = frozenset()  # the ready head's notes cut at MAX_PASSAGES
        self._scopes: dict[Any, ScopeMatrix] = {}
        self._scopes_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._saved_at = 0.0  # when the vectors were last written (monotonic)
        self.rate: float | None = None  # passages a second over the last full catch-up
        self.progress: Callable[[int, int], None] | None = None  # (notes done, notes) while embedding

    # -- life -----------------------------------------------------------------

    def start(self, corpus: Corpus) -> None:
        if self.state == "off" or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, args=(corpus,), name="cortex-meaning", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def prepare(self) -> bool:
        """Find (and on first use convert) the model and load the saved vectors. False,
        with the reason logged once, when there is no usable model."""
        try:
            self.files = locate(self.model_setting, self.cache)
            self._query = Embedder(self.files, threads=1)
        except ModelUnavailable as exc:
            self.state, self.reason = "unavailable", str(exc)
            self.log(f"meaning: off, search and ask stay lexical: {exc}")
            return False
        self.key = f"{self.files.model_id}/{self._query.runtime}/{passage_code()}"
        self.store = self._load(self._query.dim)
        return True

    def _load(self, dim: int) -> VectorStore:
        assert self.files is not None
        if self.vector_path is not None and self.vector_path.exists():
            try:
                return VectorStore.load(self.vector_path, dim, self.key, self.brain)
            except Unusable as exc:
                self.log(f"meaning: the saved vectors at {self.vector_path} are not used ({exc}); embedding again")
        return VectorStore(dim, self.key, self.brain)

    def _run(self, corpus: Corpus) -> None:
        try:  # Linux threads have their own niceness: a request's thread gets the core first
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
        except (AttributeError, OSError):
            pass
        if not self.prepare():
            return
        self.state = "embedding"
        while not self._stop.is_set():
            snap = corpus.built()
            if snap is not None and snap.sha != self._ready_sha:
                try:
                    self.catch_up(snap)
                except Exception as exc:  # noqa: BLE001 - a broken worker leaves the server lexical
                    self.state, self.reason = "unavailable", f"embedding failed: {str(exc)[:200]}"
                    self.log(f"meaning: off, search and ask stay lexical: {self.reason}")
                    return
            self._stop.wait(0.25)

    def catch_up(self, snap: Snapshot) -> None:
        """Embed every note of `snap` that has no vectors yet; then it is the ready head."""
        store = self.store
        assert store is not None and self.files is not None
        todo: dict[str, str] = {}
        for path, blob in snap.blobs.items():
            if path in snap.notes and blob not in store and blob not in todo:
                todo[blob] = path
        total = len(snap.notes)
        done = total - sum(1 for p, b in snap.blobs.items() if p in snap.notes and b in todo)
        self._target = (snap.sha, done, total)
        small = FEW_NOTES if self._ready_sha is not None else NOTES_PER_TASK
        if todo and len(todo) <= small and self._query is not None:
            # A few commits' notes: embedded in this (niced) thread, 16 ms median for one edited
            # eval note, so a write is searchable by meaning soon without starting workers
            # (spawning two and loading their models took 3 s of both cores while writes went on).
            # Without the query lock: an onnxruntime session runs calls from several threads
            # at once, so a search's query never waits behind this note's passages.
            for blob, path in todo.items():
                if self._stop.is_set():
                    return
                for blob, vectors, spans, whole in _embed_with(self._query, [(blob, path, snap.notes[path].text)]):
                    store.add(blob, vectors, spans, whole)
                time.sleep(0)  # let a request thread take the GIL between notes
        elif todo:
            if self._ready_sha is None:
                self.state = "embedding"
            done = self._embed(snap, todo, done, total)
        if self._stop.is_set():
            return
        store.keep_only({b for p, b in snap.blobs.items() if p in snap.notes})
        self._target = (snap.sha, total, total)
        self._ready_passages = store.passages_of(b for p, b in snap.blobs.items() if p in snap.notes)
        self._ready_in_part = frozenset(p for p, b in snap.blobs.items() if p in snap.notes and not store.whole(b))
        self._ready_sha = snap.sha
        self.state = "ready"
        if len(todo) > small or time.monotonic() - self._saved_at >= SAVE_EVERY_S:
            # A write's note is not worth writing the whole vector file for (151 ms at 9,536
            # passages, after every write): at most a minute of them is embedded again after a
            # kill; a clean shutdown saves.
            self.save()

    def _embed(self, snap: Snapshot, todo: dict[str, str], done: int, total: int) -> int:
        import multiprocessing

        store = self.store
        assert store is not None
        items = sorted(todo.items(), key=lambda x: x[1])
        tasks = [items[i : i + NOTES_PER_TASK] for i in range(0, len(items), NOTES_PER_TASK)]
        started, passages, last_save = time.monotonic(), 0, time.monotonic()
        pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(self.files, self.threads, self.worker_memory),
        )
        try:
            pending: dict[Future, int] = {}
            queue = list(tasks)
            while (queue or pending) and not self._stop.is_set():
                while queue and len(pending) < 2 * self.workers:
                    task = queue.pop(0)
                    batch = [(blob, path, snap.notes[path].text) for blob, path in task]
                    pending[pool.submit(_embed_notes, batch)] = len(task)
                finished, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for fut in finished:
                    pending.pop(fut)
                    for blob, vectors, spans, whole in fut.result():
                        store.add(blob, vectors, spans, whole)
                        passages += len(spans)
                        done += 1
                    self._target = (snap.sha, done, total)
                    if self.progress is not None:
                        self.progress(done, total)
                if time.monotonic() - last_save > SAVE_EVERY_S:
                    self.save()
                    last_save = time.monotonic()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        spent = time.monotonic() - started
        if passages and spent > 0:
            self.rate = passages / spent
        return done

    def save(self) -> None:
        """Write the vectors to the state folder when they changed (never raises)."""
        if self.store is None or self.vector_path is None or not self.store.dirty:
            return
        self._saved_at = time.monotonic()
        try:
            self.store.save(self.vector_path)
        except OSError as exc:
            self.log(f"meaning: could not save the vectors to {self.vector_path} ({exc})")
            return
        with self._scopes_lock:
            self._scopes.clear()  # their rows now live in the new file

    # -- questions ------------------------------------------------------------

    def ready_for(self, snap: Snapshot) -> bool:
        """Whether every note of `snap` has vectors (so a scope of it can be scored whole)."""
        return self.state == "ready" and self._ready_sha == snap.sha

    def embed_query(self, text: str) -> np.ndarray:
        assert self._query is not None
        with self._query_lock:
            return self._query.embed([text])[0]

    def closeness(
        self, snap: Snapshot, text: str, paths: list[str] | None = None, private: bool = False
    ) -> Closeness | None:
        """`text`'s cosine to the passages of `paths` (None: every note of `snap`), or None
        while the arm is not ready for `snap`. `private` (a guest's scope): only the scope's
        own rows are read, never a pass over the whole file."""
        if not self.ready_for(snap) or self.store is None:
            return None
        matrix = self._matrix(snap, paths, private)
        cos = matrix.cosines(self.embed_query(text))
        best, rows = matrix.best_per_note(cos)
        return Closeness(matrix.paths, best, rows, cos, matrix)

    def _matrix(self, snap: Snapshot, paths: list[str] | None, private: bool) -> ScopeMatrix:
        key = (snap.sha, None if paths is None else tuple(paths), private)
        with self._scopes_lock:
            found = self._scopes.get(key)
        if found is not None:
            return found
        chosen = sorted(snap.notes) if paths is None else paths
        store = self.store
        assert store is not None
        matrix = ScopeMatrix(store, ((p, snap.blobs[p]) for p in chosen if p in snap.blobs), private)
        with self._scopes_lock:
            if len(self._scopes) >= 8:  # a few scopes (owner, prefixes, guests) of the head
                self._scopes.pop(next(iter(self._scopes)))
            self._scopes[key] = matrix
        return matrix

    # -- what it says of itself -----------------------------------------------

    def in_part(self, snap: Snapshot, paths: list[str] | None = None) -> str:
        """How many notes of `paths` (None: all of `snap`) were embedded only in part, as a
        clause for a reply, or '' when none were (or the arm is not ready for `snap`). A
        scope counts its own notes only."""
        cut = self._ready_in_part if self.ready_for(snap) else frozenset()
        n = len(cut) if paths is None else len(cut.intersection(paths)) if cut else 0
        if not n:
            return ""
        return (
            f"{n:,} note(s) embedded only in part (at most their first {MAX_PASSAGES} passages),"
            " the rest of them found by its words only"
        )

    def line(self, snap: Snapshot | None = None, paths: list[str] | None = None) -> str:
        """One line for a reply's coverage or status: how far the arm has got.

        With `paths` (a guest's scope) only those notes are counted, so the line says
        nothing of notes outside it.
        """
        if self.state in ("off", "unavailable"):
            return f"meaning: off ({self.reason}); lexical only"
        if snap is not None and self.ready_for(snap) and self.store is not None:
            if paths is None:
                counted = f"{len(snap.notes):,} notes, {self._ready_passages:,} passages"
            else:
                counted = f"{len(paths):,} notes in scope"
            in_part = self.in_part(snap, paths)
            return f"meaning: on ({counted}{'; ' + in_part if in_part else ''})"
        head, done, total = self._target
        if paths is not None and snap is not None and self.store is not None:
            store = self.store
            done = sum(1 for p in paths if snap.blobs.get(p) in store)
            total = len(paths)
        if self.state == "starting" or not total:
            return "meaning: starting; lexical until it is ready"
        return f"meaning: {done:,} of {total:,} notes embedded; lexical until done"

    def status(self) -> dict[str, Any]:
        """For /healthz: the arm's state and progress (whole-brain counts: the owner's view)."""
        head, done, total = self._target
        out: dict[str, Any] = {"meaning": self.state, "meaning_notes": f"{done}/{total}"}
        if self.store is not None:
            out["meaning_passages"] = self.store.passages
        if self.reason:
            out["meaning_reason"] = self.reason
        if self.rate is not None:
            out["meaning_rate"] = round(self.rate, 1)
        return out

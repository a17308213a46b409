"""The meaning arm: passage vectors of the head, filled in the background, scored exactly.

`Meaning.start` runs a thread that follows the corpus's latest snapshot. Notes whose
blob has no vectors yet are sent to niced worker processes (`_cut_notes`), which parse
them masked as replies show them and cut them into passages (`note_passages.note_passages`),
newest first by Git time. Each passage is keyed by what was embedded (`vectors.passage_key`:
the vector space and the exact text), so its vector is looked up before anything is
embedded: in the state folder's vectors (an older cut's too), then in the shared store
(Redis in hosted mode, `SharedVectors`). Only the passages found nowhere go back to the
workers to be embedded, newest notes first; the thread files the results in the
`VectorStore`. It takes no lock that reads or writes need: the corpus is read through
`built()` and notes' text through the store like any reader.

A note is searchable by meaning as soon as its vectors are filed: until every note of the
head has them, search and ask use meaning over the notes embedded so far and words for
the rest, and `line()` says how much meaning covers. A missing or broken model is one log
line: the server carries on lexical and says so. So a commit re-embeds only the passages
it changed, a rename nothing, and an upgrade that cuts every note into the same texts
nothing either (the notes are cut again, which costs seconds, not the embedding's minutes).
"""

from __future__ import annotations

import collections
import contextlib
import copy
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cortex.index.corpus import release_freed_memory
from cortex.index.saved import Unusable
from cortex.meaning.embedder import MAX_TOKENS, Embedder, ModelFiles, ModelUnavailable, locate
from cortex.meaning.note_passages import MAX_PASSAGES
from cortex.meaning.pace import Pace
from cortex.meaning.traffic import YIELD_S, Traffic
from cortex.meaning.vectors import (
    KeyIndex,
    Rows,
    ScopeMatrix,
    SharedVectors,
    VectorStore,
    decode_row,
    encode_row,
    passage_key,
    quantize,
)

if TYPE_CHECKING:
    from cortex.index.corpus import Corpus
    from cortex.index.snapshot import Snapshot
    from cortex.meaning.note_passages import Passage

__all__ = [
    "FEW_NOTES",
    "MOST_WAIT_S",
    "NICE",
    "NOTES_PER_TASK",
    "QUIET_S",
    "SAVE_EVERY_S",
    "WORKER_MEMORY",
    "Closeness",
    "Cut",
    "Meaning",
    "passage_code",
    "say_duration",
    "settled",
]

NOTES_PER_TASK = 16  # notes a worker cuts or embeds per task: progress moves every second or so
PASSAGES_PER_TASK = 48  # passages to embed a task, at most (but a note's are never split)
# Once a head is ready, up to this many changed notes are embedded in the arm's own thread
# (about 1 s of one core) rather than by spawning workers.
FEW_NOTES = 64
# A burst of writes is embedded once, after it: once ready, the arm waits for the head to
# stay still this long (or for the oldest change to be this old) before it embeds what changed;
# words find the notes meanwhile. No reply ever waits for an embed.
QUIET_S = 0.5
MOST_WAIT_S = 30.0
SAVE_EVERY_S = 60.0  # while embedding, save at most this often (a kill loses at most a minute's work)
# While a first embed runs, a scope's matrix is made again at most this often: made for every
# search, it was most of a search's time at 10,000 notes; notes filed since are found by words.
GROWING_MATRIX_S = 1.0
NICE = 10  # the workers' niceness: a request's thread always goes first
# Address space a worker may take beyond its loaded model. Measured: a 1 MiB note of 40,000
# tiny sections grew a worker by 111 MB (its parse); past the bound a note is found by words only.
WORKER_MEMORY = 512 << 20


def settled(now: float, *, changed_at: float, waiting_since: float) -> bool:
    """Whether the arm embeds a changed head now: it has stayed still for `QUIET_S` (a burst
    of writes is over), or the first change not yet embedded is `MOST_WAIT_S` old (a head
    that never stays still is not left to words alone for ever)."""
    return now - changed_at >= QUIET_S or now - waiting_since >= MOST_WAIT_S


def say_duration(seconds: float) -> str:
    """ "about 40 s", "about 7 min", "about 2 h 5 min": how long, as the owner reads it."""
    if seconds < 90:
        return f"about {max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"about {minutes} min"
    return f"about {minutes // 60} h {minutes % 60} min"


def passage_code() -> str:
    """A hash of the code that decides how a note is cut into passages. A store saved by
    other code (another cut, another Markdown reading) is not used by blob: every note is
    cut again, and its passages' vectors are found by their keys (their texts)."""
    import hashlib

    from cortex.meaning import embedder, note_passages
    from cortex.notes import blocks, redact, shown, structure
    from cortex.notes import note as notes

    h = hashlib.sha256()
    for module in (note_passages, blocks, structure, notes, redact, shown, embedder):
        h.update(Path(module.__file__ or "").read_bytes())
    return h.hexdigest()[:12]


# -- the worker processes ------------------------------------------------------------

_WORKER: Embedder | None = None
_QUIET: Any = None  # Traffic.quiet: set while no request is in flight in the server


def _start_worker(files: ModelFiles, threads: int, memory: int, quiet: Any = None) -> None:
    global _WORKER, _QUIET
    _QUIET = quiet
    with contextlib.suppress(OSError):
        os.nice(NICE)
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


@dataclass
class Cut:
    """One note as cut into passages: each passage's key and blocks, whether that is all of
    the note, and (when asked for) the vectors of the passages the caller did not have."""

    blob: str
    keys: list[bytes]
    spans: np.ndarray  # (passages, 2) int32
    whole: bool
    new: dict[bytes, np.ndarray]  # key -> float32 vector, of the passages embedded
    sizes: tuple[int, ...] = ()  # each passage's characters: the work of embedding it, for the estimate


def _passages_of(embedder: Embedder, path: str, text: str, forget: bool) -> tuple[list[Passage], bool]:
    from cortex.meaning.note_passages import Passage, first_passages
    from cortex.notes.blocks import drop_cached
    from cortex.notes.note import parse_note
    from cortex.notes.redact import redact

    # Embedded as replies show it: a guest's closeness and ranking owe nothing to a masked
    # credential, so a guessed one is no closer than a wrong guess.
    try:
        found, whole = first_passages(parse_note(path, redact(text)), MAX_TOKENS - 2, embedder.lengths, embedder.cut)
    except MemoryError:  # past the worker's bound: its name is embedded, its words are indexed
        found = []  # made once out of this block, whose traceback holds the parse's memory
    if forget:
        drop_cached()
    if not found:
        found, whole = [Passage(redact(path), "", -1, -1)], False
    return found, whole


Item = tuple[str, str, str, "frozenset[bytes] | None"]  # blob, path, text, the keys the caller has vectors for


def _cut_with(
    embedder: Embedder,
    items: list[Item],
    forget: bool = False,
    pace: float = 0.0,
    hold: Callable[[], None] | None = None,
) -> list[Cut]:
    """Each (blob, path, text, have) cut into passages and keyed; with `have` (keys the
    caller holds vectors for), every other passage is embedded too, one at a time, `hold`
    called before each (the server's requests go first: `Traffic`). `pace`: at least that
    many seconds a passage embedded (a test's or a benchmark's slowed embedder)."""
    out = []
    space = embedder.space
    for blob, path, text, have in items:
        found, whole = _passages_of(embedder, path, text, forget)
        keys = [passage_key(space, p.text) for p in found]
        spans = np.array([(p.first_block, p.last_block) for p in found], dtype=np.int32).reshape(-1, 2)
        new: dict[bytes, np.ndarray] = {}
        if have is not None:
            todo = {k: p.text for k, p in zip(keys, found, strict=True) if k not in have}
            if todo:
                began = time.monotonic()
                for key, text in todo.items():
                    if hold is not None:
                        hold()
                    new[key] = embedder.embed([text])[0]
                if pace > 0:
                    time.sleep(max(0.0, pace * len(todo) - (time.monotonic() - began)))
        out.append(Cut(blob, keys, spans, whole, new, tuple(len(p.text) for p in found)))
    return out


def _cut_notes(items: list[Item], pace: float = 0.0) -> list[Cut]:
    """`_cut_with` in a worker. Nothing parsed is kept from one note to the next, so the
    memory bound is one note's."""
    assert _WORKER is not None
    quiet = _QUIET
    return _cut_with(
        _WORKER, items, forget=True, pace=pace, hold=None if quiet is None else lambda: quiet.wait(YIELD_S)
    )


def _changed(snap: Snapshot, path: str, default: float) -> float:
    """When `path` last changed, by Git time (the commit's time where the walk did not reach)."""
    when = snap.changed.get(path)
    return when.timestamp() if when is not None else default


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
        return {p: float(c) for p, c in zip(self.paths, self.best, strict=True)}

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


class _Filling:
    """One `Meaning._fill` under way: the notes still to cut, those waiting to be embedded
    (each with the rows it has), grouped into tasks, and those waiting for passages another
    instance claimed."""

    def __init__(self, arm: Meaning, snap: Snapshot, order: list[tuple[str, str]], head: dict[str, int]):
        self.arm, self.snap, self.head = arm, snap, head
        self.paths = dict(order)
        self.cuts = collections.deque(order[i : i + NOTES_PER_TASK] for i in range(0, len(order), NOTES_PER_TASK))
        self.embeds: collections.deque[list[str]] = collections.deque()
        self.group: list[str] = []
        self.group_passages = 0
        self.waiting: dict[str, tuple[Cut, dict[bytes, Any]]] = {}  # blob -> its cut and the rows it has
        self.deferred: set[str] = set()  # notes waiting for passages other instances embed
        self.work_done = 0  # characters of the passages embedded here: the estimate's measure
        self.last_look = time.monotonic()

    def busy(self) -> bool:
        return bool(self.cuts or self.embeds or self.group or self.deferred)

    def _close_group(self) -> None:
        self.embeds.append(self.group)
        self.group, self.group_passages = [], 0

    def place(self, cut: Cut, known: dict[bytes, Any]) -> None:
        """File the note if it has every row, else queue it to embed what it lacks."""
        missing = [k for k in dict.fromkeys(cut.keys) if k not in known]
        if not missing:
            self.arm._file(cut, [known[k] for k in cut.keys], self.head)
            return
        self.waiting[cut.blob] = (cut, known)
        self.group.append(cut.blob)
        self.group_passages += len(missing)
        if len(self.group) >= NOTES_PER_TASK or self.group_passages >= PASSAGES_PER_TASK:
            self._close_group()

    def claimed(self, blobs: list[str]) -> list[Item]:
        """The task's notes, each with the keys not to embed: those it has, and those another
        instance claimed (the note then waits for them, `deferred`, once it has its own)."""
        batch: list[Item] = []
        for b in blobs:
            cut, known = self.waiting[b]
            missing = [k for k in dict.fromkeys(cut.keys) if k not in known]
            mine, stored = self.arm._claim(missing)
            known.update(stored)
            if mine:
                text = self.snap.notes[self.paths[b]].text
                batch.append((b, self.paths[b], text, frozenset(k for k in cut.keys if k not in mine)))
            elif all(k in known for k in cut.keys):  # all stored meanwhile by other instances
                del self.waiting[b]
                self.place(cut, known)
            else:
                self.deferred.add(b)
        return batch

    def submit(self, pool: ProcessPoolExecutor, pending: dict[Future, bool], most: int) -> None:
        """Hand the workers cuts first, then embedding tasks, up to `most` under way."""
        if self.group and not self.cuts and not self.embeds and len(pending) < most:
            self._close_group()
        while (self.cuts or self.embeds) and len(pending) < most:
            if self.cuts:
                to_cut: list[Item] = [(b, p, self.snap.notes[p].text, None) for b, p in self.cuts.popleft()]
                pending[pool.submit(_cut_notes, to_cut, self.arm.pace)] = False
            elif batch := self.claimed(self.embeds.popleft()):
                pending[pool.submit(_cut_notes, batch, self.arm.pace)] = True

    def left(self) -> tuple[int, int] | None:
        """(passages, characters) still to embed here, or None while notes remain to be cut
        (their count is not known yet). Characters are the estimate's measure: a passage runs
        from a title alone to a 256-token section, so a count of them swung with the notes in hand."""
        if self.cuts:
            return None
        passages = chars = 0
        for cut, known in self.waiting.values():
            for k, n in dict(zip(cut.keys, cut.sizes or (0,) * len(cut.keys), strict=True)).items():
                if k not in known:
                    passages, chars = passages + 1, chars + n
        return passages, chars

    def finished(self, cuts: list[Cut], embedding: bool, index: KeyIndex) -> None:
        """A worker's task done: a cut's notes counted and placed, an embedding's filed."""
        arm = self.arm
        if not embedding:
            for cut, found in arm._resolve(cuts, index):
                with_vectors, cut_passages, done = arm._cover
                arm._cover = (with_vectors, cut_passages + len(cut.keys), done + self.head.get(cut.blob, 1))
                arm._cut_counts[cut.blob] = len(cut.keys)
                self.place(cut, {k: f for k, f in zip(cut.keys, found, strict=True) if f is not None})
        else:
            for cut in cuts:
                _, known = self.waiting.pop(cut.blob, (cut, {}))
                self.work_done += sum(n for k, n in zip(cut.keys, cut.sizes, strict=False) if k in cut.new)
                self.place(cut, {**known, **arm._made(cut)})

    def look_again(self) -> None:
        """The deferred notes' missing passages looked up in the shared store once more."""
        self.last_look = time.monotonic()
        waiting = self.waiting
        lacking = {b: [k for k in waiting[b][0].keys if k not in waiting[b][1]] for b in sorted(self.deferred)}
        self.deferred.clear()
        for probe, found in self.arm._in_shared(lacking):
            cut, known = waiting.pop(probe.blob)
            self.place(cut, {**known, **{k: f for k, f in zip(probe.keys, found, strict=True) if f is not None}})


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
        shared: SharedVectors | None = None,
        pace: float = 0.0,
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
        self.shared = shared  # hosted mode: the vectors every instance shares (Redis)
        self.traffic = Traffic()  # the doors' requests in flight, which the embedding yields to
        # At least this many seconds a passage embedded by the workers: a slowed real embedder,
        # for the test and the benchmark of serving while a first embed runs. 0 in use.
        self.pace = pace
        self.state = "starting" if enabled else "off"
        self.reason = "CORTEX_MEANING=off" if not enabled else ""
        self.store: VectorStore | None = None
        self.files: ModelFiles | None = None
        self.key = ""  # the vector space (Embedder.space): what every vector was made with
        self.cut = ""  # passage_code(): the code that cut the notes into the store's passages
        self._older: VectorStore | None = None  # a saved file of another cut: its rows found by key only
        self._query: Embedder | None = None
        self._target: tuple[str, int, int] = ("", 0, 0)  # (head, notes with vectors, notes)
        # While a catch-up runs: passages with vectors, passages known (cut), notes cut.
        self._cover = (0, 0, 0)
        self._cut_counts: dict[str, int] = {}  # blob -> passages, of the notes cut and not yet filed
        self._ready_sha: str | None = None
        self._ready_passages = 0  # of the ready head: counted once, said in every search reply
        self._ready_in_part: frozenset[str] = frozenset()  # the ready head's notes cut at MAX_PASSAGES
        self._scopes: dict[Any, ScopeMatrix] = {}
        self._scopes_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._saved_at = 0.0  # when the vectors were last written (monotonic)
        self.rate: float | None = None  # passages a second over the last full catch-up
        self.eta: tuple[int, float] | None = None  # while embedding: (passages left, seconds left at the rate so far)
        self.behind = False  # a newer head waits for its burst of writes to pause (`settled`)
        self.progress: Callable[[int, int], None] | None = None  # (notes done, notes) while embedding
        # Passages since this process started: embedded by the model, found in the state
        # folder's vectors (an older cut's included), found in the shared store.
        self.counts = {"embedded": 0, "reused": 0, "shared": 0}

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
            release_freed_memory()  # the session's load freed 14 MB glibc would otherwise keep
        except ModelUnavailable as exc:
            self.state, self.reason = "unavailable", str(exc)
            self.log(f"meaning: off, search and ask stay lexical: {exc}")
            return False
        self.key, self.cut = self._query.space, passage_code()
        self.store = self._load(self._query.dim)
        return True

    def _load(self, dim: int) -> VectorStore:
        assert self.files is not None
        if self.vector_path is not None and self.vector_path.exists():
            try:
                saved = VectorStore.load(self.vector_path, dim, self.key, self.brain)
            except Unusable as exc:
                self.log(f"meaning: the saved vectors at {self.vector_path} are not used ({exc}); embedding again")
            else:
                if saved.cut == self.cut:
                    return saved
                # Another cut (an upgrade, or a change to how notes are cut): every note is cut
                # again, and a passage whose text is unchanged keeps its vector.
                self._older = saved
                self.log(
                    f"meaning: the notes are cut by new code; {saved.passages:,} saved vectors are reused "
                    "for every passage whose text is unchanged"
                )
        store = VectorStore(dim, self.key, self.brain)
        store.cut = self.cut
        return store

    def _run(self, corpus: Corpus) -> None:
        # Linux threads have their own niceness: a request's thread gets the core first.
        with contextlib.suppress(AttributeError, OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
        if not self.prepare():
            return
        self.state = "embedding"
        seen, changed_at, waiting_since = "", 0.0, 0.0  # the head last seen, when it moved, since when one waits
        while not self._stop.is_set():
            snap = corpus.built()
            now = time.monotonic()
            if snap is not None and snap.sha != self._ready_sha:
                if snap.sha != seen:
                    if seen == self._ready_sha or not seen:
                        waiting_since = now
                    seen, changed_at = snap.sha, now
                # The first head is embedded at once; a change after it once the burst is over.
                self.behind = self._ready_sha is not None
                if self._ready_sha is None or settled(now, changed_at=changed_at, waiting_since=waiting_since):
                    self.behind = False
                    try:
                        self.catch_up(snap)
                    except Exception as exc:  # noqa: BLE001 - a broken worker leaves the server lexical
                        self.state, self.reason = "unavailable", f"embedding failed: {str(exc)[:200]}"
                        self.log(f"meaning: off, search and ask stay lexical: {self.reason}")
                        return
            self._stop.wait(0.1 if seen != self._ready_sha else 0.25)

    def catch_up(self, snap: Snapshot) -> None:
        """Give every note of `snap` vectors, the most recently changed (by Git time) first;
        then it is the ready head. A note's passages are looked up by key (this store, an
        older cut's, the shared store) and only the rest embedded; search uses each note's
        vectors as soon as they are filed."""
        store = self.store
        assert store is not None and self.files is not None
        head: dict[str, int] = {}  # the head's note blobs, with how many notes have each
        todo: dict[str, str] = {}
        for path, blob in snap.blobs.items():
            if path in snap.notes:
                head[blob] = head.get(blob, 0) + 1
                if blob not in store and blob not in todo:
                    todo[blob] = path
        total = len(snap.notes)
        done = total - sum(head[b] for b in todo)
        self._target = (snap.sha, done, total)
        have = store.passages_of(b for b in head if b in store)
        self._cover = (have, have, done)
        self._cut_counts = {}
        # Newest first: the notes the owner touched last are the likeliest to be asked about.
        oldest = snap.time.timestamp()
        order = sorted(todo.items(), key=lambda bp: (-_changed(snap, bp[1], oldest), bp[1]))
        small = FEW_NOTES if self._ready_sha is not None else NOTES_PER_TASK
        if todo and len(todo) <= small and self._query is not None:
            # A commit's few notes: cut and embedded in this thread (16 ms median for one edited
            # eval note, 10-30 ms), so a write is searchable by meaning at once, without a worker.
            # Its passages left unchanged keep their vectors: the older versions' rows are looked up.
            # The query's session serves (onnxruntime runs one session from many threads): a
            # search in flight never waits for this thread, which is niced and runs one core.
            index = KeyIndex(store.all_rows(but=set(head)) + (self._older.all_rows() if self._older else []))
            cuts = _cut_with(self._query, [(b, p, snap.notes[p].text, None) for b, p in order])
            for cut, found in self._resolve(cuts, index):
                if self._stop.is_set():
                    return
                if any(f is None for f in found):  # cut again, embedding the passages not found
                    held = frozenset(k for k, f in zip(cut.keys, found, strict=True) if f is not None)
                    path = todo[cut.blob]
                    again = _cut_with(
                        self._query,
                        [(cut.blob, path, snap.notes[path].text, held)],
                        pace=self.pace,
                        hold=self.traffic.hold,
                    )[0]
                    vectors = {k: f for k, f in zip(cut.keys, found, strict=True) if f is not None}
                    cut, found = again, [vectors.get(k) for k in again.keys]
                self._file(cut, found, head)
        elif todo:
            if self._ready_sha is None:
                self.state = "embedding"
            self._fill(snap, order, head)
        if self._stop.is_set():
            return
        store.keep_only(set(head))
        self._older = None  # every note is cut by this code now: the older cut's rows are done with
        self._cut_counts = {}
        self._target = (snap.sha, total, total)
        self._ready_passages = store.passages_of(head)
        self._cover = (self._ready_passages, self._ready_passages, total)
        self._ready_in_part = frozenset(p for p, b in snap.blobs.items() if p in snap.notes and not store.whole(b))
        self._ready_sha = snap.sha
        self.state = "ready"
        if len(todo) > small or time.monotonic() - self._saved_at >= SAVE_EVERY_S:
            # A write's note is not worth writing the whole vector file for (151 ms at 9,536
            # passages, after every write): at most a minute of them is embedded again after a
            # kill; a clean shutdown saves.
            self.save()

    def _resolve(self, cuts: list[Cut], index: KeyIndex) -> list[tuple[Cut, list[tuple[np.ndarray, Any] | None]]]:
        """Each cut with the (int8 row, scale) of every passage found by key: in the state
        folder's vectors, then in the shared store (one round trip for the lot); None for
        the passages that must be embedded."""
        out = [(cut, index.find(cut.keys)) for cut in cuts]
        self.counts["reused"] += sum(f is not None for _, found in out for f in found)
        if self.shared is None:
            return out
        asked = list(dict.fromkeys(k for cut, found in out for k, f in zip(cut.keys, found, strict=True) if f is None))
        if not asked:
            return out
        assert self.store is not None
        got = {k: decode_row(k, v, self.store.dim) for k, v in zip(asked, self.shared.get_many(asked), strict=False)}
        for cut, found in out:
            for i, k in enumerate(cut.keys):
                if found[i] is None and got.get(k) is not None:
                    found[i] = got[k]
                    self.counts["shared"] += 1
        return out

    def _in_shared(self, keys: dict[str, list[bytes]]) -> list[tuple[Cut, list[tuple[np.ndarray, Any] | None]]]:
        """Each blob's keys looked up in the shared store only, in one round trip: a probe cut
        a blob, with the (int8 row, scale) found for each key or None."""
        probes = [Cut(b, ks, np.empty((0, 2), np.int32), True, {}) for b, ks in keys.items()]
        return self._resolve(probes, KeyIndex([]))

    def _made(self, cut: Cut) -> dict[bytes, tuple[np.ndarray, Any]]:
        """The passages `cut.new` embedded, quantised (and handed to the shared store)."""
        if not cut.new:
            return {}
        keys = list(cut.new)
        q, scale = quantize(np.stack([cut.new[k] for k in keys]).astype(np.float32))
        self.counts["embedded"] += len(keys)
        if self.shared is not None:
            self.shared.put_many([(k, encode_row(k, q[i], float(scale[i]))) for i, k in enumerate(keys)])
        cut.new = {}
        return {k: (q[i], scale[i]) for i, k in enumerate(keys)}

    def _file(self, cut: Cut, found: list[tuple[np.ndarray, Any] | None], head: dict[str, int]) -> None:
        """File a note's rows once every passage has one: those found, and those `cut.new`
        embedded."""
        store = self.store
        assert store is not None
        made = self._made(cut)
        rows = [f if f is not None else made.get(k) for k, f in zip(cut.keys, found, strict=True)]
        if any(r is None for r in rows):  # a passage neither found nor embedded: never filed in part
            raise RuntimeError(f"a passage of blob {cut.blob[:12]} was neither found nor embedded")
        store.put(
            cut.blob,
            Rows(
                np.stack([r[0] for r in rows]).astype(np.int8),  # type: ignore[index]
                np.array([r[1] for r in rows], dtype=np.float32),  # type: ignore[index]
                cut.spans,
                whole=cut.whole,
                keys=np.frombuffer(b"".join(cut.keys), np.uint8).reshape(-1, len(cut.keys[0])),
            ),
        )
        self._cut_counts.pop(cut.blob, None)
        have, known, done = self._cover
        self._cover = (have + len(rows), known, done)
        head_sha, notes, total = self._target
        self._target = (head_sha, notes + head.get(cut.blob, 1), total)

    def _claim(self, keys: list[bytes]) -> tuple[set[bytes], dict[bytes, tuple[np.ndarray, Any]]]:
        """The keys this instance embeds, and those found stored since it looked: locally it
        embeds them all; in hosted mode those no other instance has claimed (so instances
        started together split the work). A claim granted just after another instance stored
        the vector (it lifts its claim as it stores) finds the vector here, so the passage is
        not embedded twice; a damaged stored value is no vector, and is embedded again."""
        if self.shared is None or not keys:
            return set(keys), {}
        mine = [k for k, granted in zip(keys, self.shared.claim(keys), strict=False) if granted]
        if not mine:
            return set(), {}
        [(_, found)] = self._in_shared({"": mine})
        stored = {k: f for k, f in zip(mine, found, strict=True) if f is not None}
        return {k for k in mine if k not in stored}, stored

    def _fill(self, snap: Snapshot, order: list[tuple[str, str]], head: dict[str, int]) -> None:
        """Cut every note of `order` in the workers, newest first; file those whose every
        passage is found by key; then embed the rest, newest first, in the workers too. The
        cut goes first (some 3 ms a note, against 15 ms a passage embedded), so the reply
        can say how many passages there are in all. A passage another instance has claimed
        is waited for in the shared store, and embedded here if its claim lapses."""
        import multiprocessing

        store, files = self.store, self.files
        assert store is not None and files is not None
        index = KeyIndex(store.all_rows() + (self._older.all_rows() if self._older else []))
        fill = _Filling(self, snap, order, head)
        started, embedded_before, last_save = time.monotonic(), self.counts["embedded"], time.monotonic()
        pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(files, self.threads, self.worker_memory, self.traffic.quiet),
        )
        pace = Pace()  # the rate the estimate says (`cortex.meaning.pace` says why it is made so)
        try:
            pending: dict[Future, bool] = {}  # -> whether it embeds (else it only cuts)
            while (fill.busy() or pending) and not self._stop.is_set():
                fill.submit(pool, pending, 2 * self.workers)
                if pending:
                    finished, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                else:
                    finished = set()
                    self._stop.wait(0.5)  # only other instances' passages are left: wait for them
                for fut in finished:
                    embedding = pending.pop(fut)
                    fill.finished(fut.result(), embedding, index)
                    left = fill.left()
                    cutting = left is None or not all(pending.values())  # a cut under way: more passages to come
                    pace.finished(time.monotonic(), fill.work_done, cutting, embedding)
                    seconds = None if left is None else pace.seconds_left(left[1])
                    self.eta = None if seconds is None or left is None else (left[0], seconds)
                    if self.progress is not None:
                        self.progress(self._target[1], self._target[2])
                if fill.deferred and (not pending or time.monotonic() - fill.last_look > 2.0):
                    fill.look_again()
                if self._older is None and time.monotonic() - last_save > SAVE_EVERY_S:
                    # (while an older cut's file is still the pool, it is not replaced before the end)
                    self.save()
                    last_save = time.monotonic()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            self.eta = None
        spent = time.monotonic() - started
        made = self.counts["embedded"] - embedded_before
        if made and spent > 0:
            self.rate = made / spent

    def part(self, blobs: set[str]) -> Meaning:
        """This arm as a first embed would leave it part way, with vectors for `blobs` only
        (and none for the rest of any head): `cortex eval`'s coverage lines and the tests
        that fusion at any coverage is never below words alone. The copy never embeds."""
        assert self.store is not None
        store = VectorStore(self.store.dim, self.key, self.brain)
        for blob in blobs:
            rows = self.store.get(blob)
            if rows is not None:
                store.put(blob, replace(rows, start=None))
        partial = copy.copy(self)
        partial.store, partial.state, partial._ready_sha = store, "embedding", None
        partial._scopes, partial._scopes_lock = {}, threading.Lock()
        partial._target = ("", len(store), self._target[2])
        partial._thread, partial._stop = None, threading.Event()
        partial._stop.set()
        return partial

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
        vector: np.ndarray = self._query.embed([text])[0]
        return vector

    def closeness(
        self, snap: Snapshot, text: str, paths: list[str] | None = None, private: bool = False
    ) -> Closeness | None:
        """`text`'s cosine to the passages of `paths` (None: every note of `snap`) that have
        vectors: all of them once the arm is ready for `snap`; while it embeds, those filed
        so far (`matrix.absent` names the rest, to be found by their words). None while no
        note of the scope has any. `private` (a guest's scope): only the scope's own rows
        are read, never a pass over the whole file."""
        if self.store is None or self.state not in ("embedding", "ready"):
            return None
        ready = self.ready_for(snap)
        matrix = self._matrix(snap, paths, private, not ready)
        if not ready and not matrix.passages:
            return None
        cos = matrix.cosines(self.embed_query(text))
        best, rows = matrix.best_per_note(cos)
        return Closeness(matrix.paths, best, rows, cos, matrix)

    def _matrix(self, snap: Snapshot, paths: list[str] | None, private: bool, growing: bool) -> ScopeMatrix:
        """The scope's matrix at `snap`, kept for the next search; while the store grows
        (`growing`), one of the store as it is, or made under `GROWING_MATRIX_S` ago, serves
        (rows filed since aside)."""
        key = (snap.sha, None if paths is None else tuple(paths), private, growing)
        store = self.store
        assert store is not None
        with self._scopes_lock:
            found = self._scopes.get(key)
        if found is not None and (
            not growing or found.version == store.version or time.monotonic() - found.made < GROWING_MATRIX_S
        ):
            return found
        chosen = sorted(snap.notes) if paths is None else paths
        matrix = ScopeMatrix(store, ((p, snap.blobs[p]) for p in chosen if p in snap.blobs), private)
        with self._scopes_lock:
            if growing:  # a growing store's matrices are for now only: keep the last
                for old in [k for k in self._scopes if k[3]]:
                    self._scopes.pop(old)
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

    def coverage(self, snap: Snapshot | None = None, paths: list[str] | None = None) -> tuple[int, int, int, int, int]:
        """(passages with vectors, passages known, notes with vectors, notes cut, notes) of
        `paths` (None: the whole head being embedded, from counters kept as it goes)."""
        store = self.store
        if paths is None or snap is None or store is None:
            have, known, cut = self._cover
            _, done, total = self._target
            return have, known, done, cut, total
        have = known = done = cut = 0
        for p in paths:
            blob = snap.blobs.get(p)
            rows = store.get(blob) if blob is not None else None
            if rows is not None:
                have, known, done, cut = have + len(rows), known + len(rows), done + 1, cut + 1
            elif (
                blob is not None and (n := self._cut_counts.get(blob)) is not None
            ):  # (filed meanwhile by the arm's thread: next time)
                known, cut = known + n, cut + 1
        return have, known, done, cut, len(paths)

    def covered(
        self, snap: Snapshot | None = None, paths: list[str] | None = None, matrix: ScopeMatrix | None = None
    ) -> str:
        """ "4,210 of 8,604 passages (1,020 of 2,604 notes)": what meaning covers so far; the
        passages in all are known once every note is cut (seconds), "so far" until then.
        `matrix`: the one a search scored, whose rows are what it covered."""
        have, known, done, cut, total = self.coverage(snap, paths)
        if matrix is not None:
            have, done = matrix.passages, len(matrix.paths)
        passages = f"{have:,} of {known:,} passages" if cut >= total else f"{have:,} passages so far"
        return f"{passages} ({done:,} of {total:,} notes)"

    def line(
        self, snap: Snapshot | None = None, paths: list[str] | None = None, matrix: ScopeMatrix | None = None
    ) -> str:
        """One line for a reply's coverage or status: how far the arm has got.

        With `paths` (a guest's scope) only those notes are counted, so the line says
        nothing of notes outside it; with `matrix`, what the reply's search scored.
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
        if self.state == "starting" or self.store is None or not self._target[2]:
            return "meaning: starting; lexical until it is ready"
        return f"meaning: {self.covered(snap, paths, matrix)}; lexical for the rest"

    def status(self) -> dict[str, Any]:
        """For /healthz: the arm's state and progress (whole-brain counts: the owner's view)."""
        head, done, total = self._target
        out: dict[str, Any] = {"meaning": self.state, "meaning_notes": f"{done}/{total}"}
        if self.behind:
            out["meaning_waiting"] = "newer writes, embedded once they pause; found by their words meanwhile"
        if self.store is not None:
            out["meaning_passages"] = self.store.passages
            if self.state in ("embedding", "ready") and total:
                out["meaning_coverage"] = self.covered()
            out["meaning_embedded"] = self.counts["embedded"]
            out["meaning_reused"] = self.counts["reused"] + self.counts["shared"]
        if self.reason:
            out["meaning_reason"] = self.reason
        if self.rate is not None:
            out["meaning_rate"] = round(self.rate, 1)
        if self.eta is not None and self.state == "embedding":
            left, seconds = self.eta
            out["meaning_left"] = f"{left:,} passages, {say_duration(seconds)} at the rate so far"
            out["meaning_eta_s"] = round(seconds)
        return out

"""Passage vectors by blob id, stored compactly, saved in the state folder, scored exactly.

Each vector is kept as int8 with one float32 scale a row (388 bytes a 384-dimension
passage), and each row carries its key: `passage_key`, a 16-byte digest of the vector
space (the model file's digest, the runtime and its quantisation, `EMBED_RULES`) and the
exact text given to the model. A vector is found again by that key whatever cut the note
(`KeyIndex`), so a change to how notes are cut re-embeds only the passages whose text
changed, and a shared store (`SharedVectors`, Redis in hosted mode) can hand it to any
instance: `encode_row` adds a check, and a value that fails it is embedded again.
Measured at 30,000 passages on this 2-core machine: scoring a query over them
took 3.6 ms from int8, 5.2 ms from float32 and 42 ms from float16 (numpy widens float16
element by element); int8 changes a cosine by at most 0.002, which no ranking here felt.

The file, `<home>/index/<key>.cvec`, one per brain and branch::

    MAGIC | SHA-256 of the rest | u32 header length | header (JSON) | int8 rows | scales | spans | keys

The header names the format, the vector space, the brain, the cut (`closeness.passage_code`: the
code that made each blob's list of passages), each blob's row count and the blobs
embedded only in part (their first `note_passages.MAX_PASSAGES`); `spans` is
each passage's first and last block in `blocks_of` (int32 pairs, -1 for a title-only
passage). Written atomically (`saved.write_atomically`); loaded memory-mapped, so RAM
holds no second copy. Anything wrong with the file means an empty store and one line
saying why; the arm then embeds again, never answers from a file it cannot trust.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import struct
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from cortex.index.saved import Unusable, write_atomically

if TYPE_CHECKING:
    from cortex.index.bm25 import Index

__all__ = [
    "FORMAT",
    "KEY_BYTES",
    "MAGIC",
    "KeyIndex",
    "Rows",
    "ScopeMatrix",
    "SharedVectors",
    "VectorStore",
    "decode_row",
    "encode_row",
    "passage_key",
    "quantize",
]

MAGIC = b"CORTEX-VECTORS\n"
FORMAT = 3  # 2: the blobs embedded only in part are named; 3: each row's key, and the cut
KEY_BYTES = 16
_CHECK = 8  # bytes of a shared value's check
_LEN = struct.Struct("<I")
_DIGEST = 32
_SERIALS = itertools.count(1)
_CHUNK = 512  # rows widened to float32 at once (0.8 MB, in cache): 10,256 rows 0.71 ms, 1.88 in 8,192s


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 rows, float32 scales) with row ~= int8 * scale; a zero row stays zero."""
    peak = np.abs(vectors).max(axis=1) if len(vectors) else np.empty(0, np.float32)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    return np.round(vectors / scale[:, None]).astype(np.int8), scale


def passage_key(space: str, text: str) -> bytes:
    """The key of one passage's vector: the vector space and the exact text embedded."""
    return hashlib.blake2b(f"{space}\0{text}".encode("utf-8", "surrogatepass"), digest_size=KEY_BYTES).digest()


def encode_row(key: bytes, q: np.ndarray, scale: float) -> bytes:
    """One row as a shared store keeps it: int8 values, float32 scale, and a check of both
    with the key, so a value cut short, damaged or filed under another key is never used."""
    body = np.asarray(q, np.int8).tobytes() + np.float32(scale).tobytes()
    return body + hashlib.blake2b(key + body, digest_size=_CHECK).digest()


def decode_row(key: bytes, value: bytes | None, dim: int) -> tuple[np.ndarray, np.float32] | None:
    """(int8 row, scale) of a value `encode_row` made for `key`, or None for anything else."""
    if value is None or len(value) != dim + 4 + _CHECK:
        return None
    body = value[: dim + 4]
    if hashlib.blake2b(key + body, digest_size=_CHECK).digest() != value[dim + 4 :]:
        return None
    return np.frombuffer(body[:dim], np.int8), np.frombuffer(body[dim:], np.float32)[0]


class SharedVectors(Protocol):
    """Vectors shared by every instance (guests.queue.RedisVectors): values by key, missing
    ones as None, and claims, so instances started together embed each passage once between
    them. Never raises: an unreachable store is all misses, a dropped put, every claim granted."""

    def get_many(self, keys: list[bytes]) -> list[bytes | None]: ...

    def put_many(self, items: list[tuple[bytes, bytes]]) -> None: ...

    def claim(self, keys: list[bytes]) -> list[bool]:
        """Whether this instance may embed each key (no other has claimed it lately)."""
        ...


@dataclass
class Rows:
    """One blob's passages: int8 rows, their scales and block spans; `whole` is False for a
    note whose later passages were never embedded (the passage cap)."""

    q: np.ndarray
    scale: np.ndarray
    spans: np.ndarray
    start: int | None = None  # the first row in the mapped file, for rows loaded from it
    whole: bool = True
    keys: np.ndarray | None = None  # (rows, KEY_BYTES) uint8: each row's `passage_key`; None: unknown

    def __len__(self) -> int:
        return len(self.scale)

    def key_array(self) -> np.ndarray:
        if self.keys is None:
            return np.zeros((len(self), KEY_BYTES), np.uint8)
        return self.keys


class KeyIndex:
    """Rows found by key across stores (the head's, an older cut's): a sorted array of the
    keys' first 8 bytes, not a dict, so indexing 250,000 rows costs 4 MB and milliseconds."""

    def __init__(self, rows: Iterable[Rows]):
        self.rows = [r for r in rows if r.keys is not None and len(r)]
        sizes = np.array([len(r) for r in self.rows], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        keys = np.concatenate([r.keys for r in self.rows]) if self.rows else np.empty((0, KEY_BYTES), np.uint8)
        self.keys = np.ascontiguousarray(keys)
        lead = self.keys[:, :8].copy().view("<u8").reshape(-1)
        self.order = np.argsort(lead, kind="stable")
        self.lead = lead[self.order]

    def __len__(self) -> int:
        return len(self.lead)

    def find(self, keys: list[bytes]) -> list[tuple[np.ndarray, np.float32] | None]:
        """(int8 row, scale) for each key held, else None."""
        out: list[tuple[np.ndarray, np.float32] | None] = [None] * len(keys)
        if not len(self.lead) or not keys:
            return out
        want = np.frombuffer(b"".join(keys), np.uint8).reshape(-1, KEY_BYTES)
        lead = want[:, :8].copy().view("<u8").reshape(-1)
        at = np.searchsorted(self.lead, lead)
        for i, a in enumerate(at.tolist()):
            while a < len(self.lead) and self.lead[a] == lead[i]:
                g = int(self.order[a])
                if bytes(self.keys[g]) == keys[i]:
                    s = int(np.searchsorted(self.offsets, g, side="right")) - 1
                    r, local = self.rows[s], g - int(self.offsets[s])
                    out[i] = (r.q[local], r.scale[local])
                    break
                a += 1
        return out


class VectorStore:
    """Blob -> its passages' vectors. Thread-safe; new rows live in RAM until `save`."""

    def __init__(self, dim: int, model_id: str, brain: str):
        self.dim, self.model_id, self.brain = dim, model_id, brain
        self._lock = threading.Lock()
        self._rows: dict[str, Rows] = {}
        self._passages = 0
        self.dirty = False
        self.version = 0  # moves on every change: a scope's matrix is made again after one
        self.cut = ""  # the cut the rows were made by (`closeness.passage_code`), saved with them
        # The mapped file's rows, whole: a scope that covers most of them is scored in one
        # pass over it and never gathered into a copy.
        self.base_q = np.empty((0, dim), np.int8)
        self.base_scale = np.empty(0, np.float32)

    def __contains__(self, blob: object) -> bool:
        return blob in self._rows

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def passages(self) -> int:
        return self._passages

    def add(
        self, blob: str, vectors: np.ndarray, spans: np.ndarray, whole: bool = True, keys: np.ndarray | None = None
    ) -> None:
        q, scale = quantize(np.asarray(vectors, dtype=np.float32).reshape(-1, self.dim))
        self.put(blob, Rows(q, scale, np.asarray(spans, dtype=np.int32).reshape(-1, 2), whole=whole, keys=keys))

    def put(self, blob: str, rows: Rows) -> None:
        """File `blob`'s rows as they are (already int8)."""
        with self._lock:
            old = self._rows.get(blob)
            self._passages += len(rows) - (len(old) if old is not None else 0)
            self._rows[blob] = rows
            self.dirty = True
            self.version += 1

    def get(self, blob: str) -> Rows | None:
        return self._rows.get(blob)

    def all_rows(self, but: set[str] | None = None) -> list[Rows]:
        """Every blob's rows (but those of the blobs `but`), for a `KeyIndex`."""
        with self._lock:
            return [r for b, r in self._rows.items() if but is None or b not in but]

    def passages_of(self, blobs: Iterable[str]) -> int:
        rows = self._rows
        return sum(len(rows[b]) for b in blobs if b in rows)

    def whole(self, blob: str) -> bool:
        """False when `blob` was embedded only in part (its first `note_passages.MAX_PASSAGES`)."""
        rows = self._rows.get(blob)
        return rows is None or rows.whole

    def keep_only(self, blobs: set[str]) -> None:
        """Forget every blob but `blobs` (the head's): old versions' vectors are not saved."""
        with self._lock:
            for b in [b for b in self._rows if b not in blobs]:
                self._passages -= len(self._rows.pop(b))
                self.dirty = True
                self.version += 1

    # -- the file --------------------------------------------------------------

    def save(self, path: Path) -> int:
        """Write every blob's rows to `path` atomically, then map them from there. Bytes written."""
        with self._lock:
            items = sorted(self._rows.items())
        header = json.dumps(
            {
                "format": FORMAT,
                "model": self.model_id,
                "dim": self.dim,
                "brain": self.brain,
                "cut": self.cut,
                "blobs": [[b, len(r)] for b, r in items],
                "in_part": [b for b, r in items if not r.whole],
            }
        ).encode()
        body = [
            _LEN.pack(len(header)),
            header,
            b"".join(r.q.tobytes() for _, r in items),
            b"".join(r.scale.tobytes() for _, r in items),
            b"".join(r.spans.tobytes() for _, r in items),
            b"".join(r.key_array().tobytes() for _, r in items),
        ]
        digest = hashlib.sha256()
        for part in body:
            digest.update(part)
        write_atomically(path, [MAGIC, digest.digest(), *body])
        with self._lock:
            self.dirty = False
        loaded = VectorStore.load(path, self.dim, self.model_id, self.brain)
        assert loaded.cut == self.cut
        saved = dict(items)
        with self._lock:  # swap in the mapped rows of the blobs saved, keep any added since
            self.base_q, self.base_scale = loaded.base_q, loaded.base_scale
            for b, rows in list(self._rows.items()):
                if saved.get(b) is rows and b in loaded._rows:
                    self._rows[b] = loaded._rows[b]
                elif rows.start is not None:  # mapped from the file this one replaces
                    self._rows[b] = Rows(
                        np.array(rows.q),
                        np.array(rows.scale),
                        np.array(rows.spans),
                        whole=rows.whole,
                        keys=None if rows.keys is None else np.array(rows.keys),
                    )
        return len(MAGIC) + _DIGEST + sum(len(p) for p in body)

    @classmethod
    def load(cls, path: Path, dim: int, model_id: str, brain: str) -> VectorStore:
        """The store saved at `path`; Unusable (with a reason) for anything but a whole file
        of this format, vector space, dimension and brain. Its `cut` says which code cut the
        notes: rows of another cut are still found by their keys, never used by blob."""
        try:
            if path.stat().st_size < len(MAGIC) + _DIGEST + _LEN.size:
                raise Unusable("not a vector file of this Cortex")
            data = np.memmap(path, dtype=np.uint8, mode="r")
        except (OSError, ValueError) as exc:
            raise Unusable(f"cannot read it ({exc.__class__.__name__})") from None
        head = len(MAGIC) + _DIGEST
        if len(data) < head + _LEN.size or bytes(data[: len(MAGIC)]) != MAGIC:
            raise Unusable("not a vector file of this Cortex")
        body = data[len(MAGIC) + _DIGEST :]  # a memmap is a buffer, though numpy's stubs do not say so
        if hashlib.sha256(body).digest() != bytes(data[len(MAGIC) : head]):  # type: ignore[arg-type]
            raise Unusable("checksum mismatch (cut short or damaged)")
        (size,) = _LEN.unpack(bytes(data[head : head + _LEN.size]))
        try:
            meta = json.loads(bytes(data[head + _LEN.size : head + _LEN.size + size]))
        except ValueError:
            raise Unusable("its header is not JSON") from None
        for key, want in (("format", FORMAT), ("model", model_id), ("dim", dim), ("brain", brain)):
            if meta.get(key) != want:
                raise Unusable(f"another {key} ({str(meta.get(key))[:40]!r})")
        counts = [int(n) for _, n in meta["blobs"]]
        total = sum(counts)
        at = head + _LEN.size + size
        need = total * dim + total * 4 + total * 8 + total * KEY_BYTES
        if len(data) - at != need:
            raise Unusable("its size does not match its header")
        q = data[at : at + total * dim].view(np.int8).reshape(total, dim)
        at += total * dim
        scale = data[at : at + total * 4].view(np.float32)
        at += total * 4
        spans = data[at : at + total * 8].view(np.int32).reshape(total, 2)
        at += total * 8
        keys = data[at : at + total * KEY_BYTES].reshape(total, KEY_BYTES)
        store = cls(dim, model_id, brain)
        store.cut = str(meta.get("cut", ""))
        in_part = set(meta.get("in_part", ()))
        row = 0
        for (blob, _), n in zip(meta["blobs"], counts, strict=True):
            part = slice(row, row + n)
            store._rows[blob] = Rows(q[part], scale[part], spans[part], row, whole=blob not in in_part, keys=keys[part])
            row += n
        store._passages = total
        store.base_q, store.base_scale = q, scale
        return store


class ScopeMatrix:
    """Where the rows of a set of notes are, found once for repeated queries of one scope.

    `paths[i]` owns rows `starts[i]:starts[i+1]` of the scope's order; notes without
    vectors are left out (`absent` names them: while a first embed runs, they are found
    by their words only). A row is either in the mapped file
    (`loc` < the file's row count) or one of the few added since the last save, which
    are gathered into `extra`. Scoring is exact: int8 matrix-vector products.
    """

    def __init__(self, store: VectorStore, blobs_by_path: Iterable[tuple[str, str]], private: bool = False):
        self.base_q, self.base_scale = store.base_q, store.base_scale
        n_base = len(self.base_scale)
        paths, locs, spans, extra, extra_scale, starts = [], [], [], [], [], [0]
        extra_rows = 0
        self.absent: list[str] = []  # the scope's notes without vectors yet: found by words only
        self.serial = next(_SERIALS)  # names this matrix in caches kept beside it (Tools' masks)
        self.made, self.version = time.monotonic(), store.version  # when, and of what store state
        for path, blob in blobs_by_path:
            rows = store.get(blob)
            if rows is None or not len(rows):
                self.absent.append(path)
                continue
            n = len(rows)
            if rows.start is not None and rows.start + n <= n_base:
                locs.append(np.arange(rows.start, rows.start + n, dtype=np.int64))
            else:
                locs.append(np.arange(n_base + extra_rows, n_base + extra_rows + n, dtype=np.int64))
                extra.append(rows.q)
                extra_scale.append(rows.scale)
                extra_rows += n
            paths.append(path)
            spans.append(rows.spans)
            starts.append(starts[-1] + n)
        self.paths = paths
        self._at: dict[str, int] | None = None
        self._tables: dict[tuple[str, int, int], np.ndarray] = {}  # an index's slot -> position (`term_rows`)
        self.loc = np.concatenate(locs) if locs else np.empty(0, np.int64)
        self.spans = np.concatenate(spans) if spans else np.empty((0, 2), np.int32)
        self.starts = np.asarray(starts, dtype=np.int64)
        self.extra = np.concatenate(extra) if extra else np.empty((0, store.dim), np.int8)
        self.extra_scale = np.concatenate(extra_scale) if extra else np.empty(0, np.float32)
        self.n_base = n_base
        in_base = self.loc[self.loc < n_base]
        # Most of the file: score all of it and pick; a small or `private` scope (a guest's)
        # gathers its own rows only, so it costs what they cost, whatever else the brain holds.
        self.whole = not private and len(in_base) * 2 >= n_base and n_base > 0
        self.base_loc = in_base

    @property
    def missing(self) -> int:
        return len(self.absent)

    @property
    def passages(self) -> int:
        return len(self.loc)

    def cosines(self, query: np.ndarray) -> np.ndarray:
        """Every row's cosine to the unit vector `query`, in the scope's order."""
        query = query.astype(np.float32)
        if self.whole:
            base = _scored(self.base_q, self.base_scale, query)
            extra = _scored(self.extra, self.extra_scale, query)
            return np.concatenate([base, extra])[self.loc]
        out = np.empty(len(self.loc), np.float32)
        is_base = self.loc < self.n_base
        picked = self.base_loc
        if len(picked):
            got = np.empty(len(picked), np.float32)
            for at in range(0, len(picked), _CHUNK):
                part = picked[at : at + _CHUNK]
                got[at : at + _CHUNK] = (self.base_q[part].astype(np.float32) @ query) * self.base_scale[part]
            out[is_base] = got
        if len(self.extra_scale):
            out[~is_base] = _scored(self.extra, self.extra_scale, query)[self.loc[~is_base] - self.n_base]
        return out

    def term_rows(
        self, sha: str, index: Index, terms: Iterable[str], within: set[str] | None = None
    ) -> dict[str, tuple[np.ndarray, int]]:
        """Each of `terms`: the positions in this scope (`paths`, then `absent`) of the notes of
        commit `sha` holding it, and how many notes of `within` (None: all) hold it.

        An index's slot -> position table is built once per index version and kept with the
        matrix: a set of 10,000 paths looked up one by one cost ~13 ms a query."""
        key = (sha, id(index), len(index))
        table = self._tables.get(key)
        if table is None:
            table = self._tables[key] = index.slot_table(self.paths + self.absent)
        out: dict[str, tuple[np.ndarray, int]] = {}
        for t in terms:
            slots = index.matching_slots((t,), within)
            rows = table[slots]
            out[t] = (rows[rows >= 0], len(slots))
        return out

    def index(self) -> dict[str, int]:
        """Path -> its position in `paths`, built on first use and kept with the matrix."""
        if self._at is None:
            self._at = {p: i for i, p in enumerate(self.paths)}
        return self._at

    def best_per_note(self, cos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(each note's best cosine, the row it came from), in `paths` order."""
        if not len(self.paths):
            return np.empty(0, np.float32), np.empty(0, np.int64)
        best = np.maximum.reduceat(cos, self.starts[:-1])
        rows = np.empty(len(self.paths), dtype=np.int64)
        # the first row of each note that holds its best (ties: the earlier passage)
        hit = cos == np.repeat(best, np.diff(self.starts))
        first = np.flatnonzero(hit)
        owner = np.searchsorted(self.starts, first, side="right") - 1
        rows[owner[::-1]] = first[::-1]
        return best, rows


def _scored(q: np.ndarray, scale: np.ndarray, query: np.ndarray) -> np.ndarray:
    out = np.empty(len(scale), np.float32)
    for at in range(0, len(out), _CHUNK):  # widened a chunk at a time: no full float copy
        out[at : at + _CHUNK] = q[at : at + _CHUNK].astype(np.float32) @ query
    scored: np.ndarray = out * scale
    return scored

"""Passage vectors by blob id, stored compactly, saved in the state folder, scored exactly.

Each vector is kept as int8 with one float32 scale a row (388 bytes a 384-dimension
passage). Measured at 30,000 passages on this 2-core machine: scoring a query over them
took 3.6 ms from int8, 5.2 ms from float32 and 42 ms from float16 (numpy widens float16
element by element); int8 changes a cosine by at most 0.002, which no ranking here felt.

The file, `<home>/index/<key>.<model>.cvec`, one per brain, branch and model::

    MAGIC | SHA-256 of the rest | u32 header length | header (JSON) | int8 rows | scales | spans

The header names the format, the model, the brain, each blob's row count and the blobs
embedded only in part (their first `passages.MAX_PASSAGES`); `spans` is
each passage's first and last block in `blocks_of` (int32 pairs, -1 for a title-only
passage). Written atomically (`saved.write_atomically`); loaded memory-mapped, so RAM
holds no second copy. Anything wrong with the file means an empty store and one line
saying why; the arm then embeds again, never answers from a file it cannot trust.
"""

from __future__ import annotations

import hashlib
import json
import struct
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cortex.index.saved import Unusable, write_atomically

__all__ = ["FORMAT", "MAGIC", "Rows", "ScopeMatrix", "VectorStore", "quantize"]

MAGIC = b"CORTEX-VECTORS\n"
FORMAT = 2  # 2: the blobs embedded only in part are named
_LEN = struct.Struct("<I")
_DIGEST = 32
_CHUNK = 8192  # rows widened to float32 at once while scoring (12 MB)


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 rows, float32 scales) with row ~= int8 * scale; a zero row stays zero."""
    peak = np.abs(vectors).max(axis=1) if len(vectors) else np.empty(0, np.float32)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    return np.round(vectors / scale[:, None]).astype(np.int8), scale


@dataclass
class Rows:
    """One blob's passages: int8 rows, their scales and block spans; `whole` is False for a
    note whose later passages were never embedded (the passage cap)."""

    q: np.ndarray
    scale: np.ndarray
    spans: np.ndarray
    start: int | None = None  # the first row in the mapped file, for rows loaded from it
    whole: bool = True

    def __len__(self) -> int:
        return len(self.scale)


class VectorStore:
    """Blob -> its passages' vectors. Thread-safe; new rows live in RAM until `save`."""

    def __init__(self, dim: int, model_id: str, brain: str):
        self.dim, self.model_id, self.brain = dim, model_id, brain
        self._lock = threading.Lock()
        self._rows: dict[str, Rows] = {}
        self._passages = 0
        self.dirty = False
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

    def add(self, blob: str, vectors: np.ndarray, spans: np.ndarray, whole: bool = True) -> None:
        q, scale = quantize(np.asarray(vectors, dtype=np.float32).reshape(-1, self.dim))
        rows = Rows(q, scale, np.asarray(spans, dtype=np.int32).reshape(-1, 2), whole=whole)
        with self._lock:
            old = self._rows.get(blob)
            self._passages += len(rows) - (len(old) if old is not None else 0)
            self._rows[blob] = rows
            self.dirty = True

    def get(self, blob: str) -> Rows | None:
        return self._rows.get(blob)

    def passages_of(self, blobs: Iterable[str]) -> int:
        rows = self._rows
        return sum(len(rows[b]) for b in blobs if b in rows)

    def whole(self, blob: str) -> bool:
        """False when `blob` was embedded only in part (its first `passages.MAX_PASSAGES`)."""
        rows = self._rows.get(blob)
        return rows is None or rows.whole

    def keep_only(self, blobs: set[str]) -> None:
        """Forget every blob but `blobs` (the head's): old versions' vectors are not saved."""
        with self._lock:
            for b in [b for b in self._rows if b not in blobs]:
                self._passages -= len(self._rows.pop(b))
                self.dirty = True

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
        ]
        digest = hashlib.sha256()
        for part in body:
            digest.update(part)
        write_atomically(path, [MAGIC, digest.digest(), *body])
        with self._lock:
            self.dirty = False
        loaded = VectorStore.load(path, self.dim, self.model_id, self.brain)
        saved = dict(items)
        with self._lock:  # swap in the mapped rows of the blobs saved, keep any added since
            self.base_q, self.base_scale = loaded.base_q, loaded.base_scale
            for b, rows in list(self._rows.items()):
                if saved.get(b) is rows and b in loaded._rows:
                    self._rows[b] = loaded._rows[b]
                elif rows.start is not None:  # mapped from the file this one replaces
                    self._rows[b] = Rows(np.array(rows.q), np.array(rows.scale), np.array(rows.spans), whole=rows.whole)
        return len(MAGIC) + _DIGEST + sum(len(p) for p in body)

    @classmethod
    def load(cls, path: Path, dim: int, model_id: str, brain: str) -> VectorStore:
        """The store saved at `path`; Unusable (with a reason) for anything but a whole file
        of this format, model, dimension and brain."""
        try:
            if path.stat().st_size < len(MAGIC) + _DIGEST + _LEN.size:
                raise Unusable("not a vector file of this Cortex")
            data = np.memmap(path, dtype=np.uint8, mode="r")
        except (OSError, ValueError) as exc:
            raise Unusable(f"cannot read it ({exc.__class__.__name__})") from None
        head = len(MAGIC) + _DIGEST
        if len(data) < head + _LEN.size or bytes(data[: len(MAGIC)]) != MAGIC:
            raise Unusable("not a vector file of this Cortex")
        if hashlib.sha256(data[len(MAGIC) + _DIGEST :]).digest() != bytes(data[len(MAGIC) : head]):
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
        need = total * dim + total * 4 + total * 8
        if len(data) - at != need:
            raise Unusable("its size does not match its header")
        q = data[at : at + total * dim].view(np.int8).reshape(total, dim)
        scale = data[at + total * dim : at + total * dim + total * 4].view(np.float32)
        spans = data[at + total * dim + total * 4 :].view(np.int32).reshape(total, 2)
        store = cls(dim, model_id, brain)
        in_part = set(meta.get("in_part", ()))
        row = 0
        for (blob, _), n in zip(meta["blobs"], counts):
            part = slice(row, row + n)
            store._rows[blob] = Rows(q[part], scale[part], spans[part], row, whole=blob not in in_part)
            row += n
        store._passages = total
        store.base_q, store.base_scale = q, scale
        return store


class ScopeMatrix:
    """Where the rows of a set of notes are, found once for repeated queries of one scope.

    `paths[i]` owns rows `starts[i]:starts[i+1]` of the scope's order; notes without
    vectors are left out (`missing` counts them). A row is either in the mapped file
    (`loc` < the file's row count) or one of the few added since the last save, which
    are gathered into `extra`. Scoring is exact: int8 matrix-vector products.
    """

    def __init__(self, store: VectorStore, blobs_by_path: Iterable[tuple[str, str]], private: bool = False):
        self.base_q, self.base_scale = store.base_q, store.base_scale
        n_base = len(self.base_scale)
        paths, locs, spans, extra, extra_scale, starts = [], [], [], [], [], [0]
        extra_rows = 0
        self.missing = 0
        for path, blob in blobs_by_path:
            rows = store.get(blob)
            if rows is None or not len(rows):
                self.missing += 1
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
        self.tables: dict[tuple, np.ndarray] = {}  # an index's slot -> position in `paths` (see Tools)
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
    return out * scale

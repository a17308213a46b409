"""The saved form of a BM25 `Index`: a JSON header and its flat arrays, little-endian
(`save_index`, `load_index`). `cortex.index.saved` keeps it inside the brain's saved
snapshot, behind its checksum.
"""

from __future__ import annotations

import json
from typing import Any, BinaryIO

import numpy as np

from cortex.index.bm25 import Index
from cortex.index.segment import Compacted, Segment

__all__ = ["load_index", "save_index"]

# Bumped whenever `save_index` writes something an older `load_index` would misread.
_FORMAT = "cortex-index-3"
_MAGIC = b"CORTEXIX"
_DTYPES = {"<f8", "<f4", "<i8", "<i4", "<u2", "|u1"}


def save_index(index: Index, fp: BinaryIO) -> None:
    """Write `index` (compacted first) as a JSON header and its flat arrays, little-endian.

    Chosen over pickle and SQLite by what loading costs: the arrays are read
    back as views of the file's bytes with no per-entry work (see `load_index`).
    """
    docs = index.compacted()
    seg = docs.segment
    if any("\x00" in t for t in seg.terms):
        raise ValueError("a term holds NUL, the separator of the saved vocabulary")
    arrays = [
        ("dl", np.array(docs.dl, dtype="<f8")),
        ("fptr", seg.fptr),
        ("fterm", seg.fterm),
        ("iptr", seg.iptr),
        ("idoc", seg.idoc),
        ("itf", seg.itf),
        ("terms", np.frombuffer("\x00".join(seg.terms).encode("utf-8"), dtype=np.uint8)),
    ]
    arrays = [(name, a.astype(a.dtype.newbyteorder("<"), copy=False)) for name, a in arrays]
    header = {
        "format": _FORMAT,
        "k1": index.k1,
        "b": index.b,
        "weights": list(index.weights.items()),
        "ids": docs.ids,
        "flen": docs.flen,
        "names": [[sorted(name) for name in doc] for doc in docs.names],
        "vocabulary": len(seg.terms),
        "arrays": [[name, a.dtype.str, len(a)] for name, a in arrays],
    }
    raw = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-(len(_MAGIC) + 8 + len(raw)) % 8)  # arrays start 8-aligned
    fp.write(_MAGIC + len(raw).to_bytes(8, "little") + raw)
    for _, a in arrays:
        fp.write(a.tobytes())


def load_index(fp: BinaryIO) -> Index:
    """An index written by `save_index`; ValueError for anything else (another format, a cut file).

    Checks every length and bound, so a damaged file cannot index out of range;
    whether its numbers are the ones saved is the caller's checksum to say.
    """
    data = fp.read()
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 8:
        raise ValueError("not a saved index")
    size = int.from_bytes(data[len(_MAGIC) : len(_MAGIC) + 8], "little")
    start = len(_MAGIC) + 8
    if size > len(data) - start:
        raise ValueError("saved index cut short (header)")
    try:
        header = json.loads(data[start : start + size])
        if header.get("format") != _FORMAT:
            raise ValueError(f"saved index format {header.get('format')!r}, this version reads {_FORMAT!r}")
        index = Index(header["k1"], header["b"], dict(header["weights"]))
        ids, flen, names = header["ids"], header["flen"], header["names"]
        arrays: dict[str, np.ndarray] = {}
        pos = start + size
        for name, dtype, count in header["arrays"]:
            if dtype not in _DTYPES or not isinstance(count, int) or count < 0:
                raise ValueError(f"saved index array {name!r} is malformed")
            nbytes = count * np.dtype(dtype).itemsize
            if pos + nbytes > len(data):
                raise ValueError("saved index cut short")
            arrays[name] = np.frombuffer(data, dtype=dtype, count=count, offset=pos)
            pos += nbytes
    except (KeyError, TypeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"saved index header is malformed: {exc}") from None
    if pos != len(data):
        raise ValueError("saved index has bytes past its end")
    return _checked(index, header, arrays, ids, flen, names)


def _checked(
    index: Index,
    header: dict[str, Any],
    arrays: dict[str, np.ndarray],
    ids: list[Any],
    flen: list[Any],
    names: list[Any],
) -> Index:
    """The index from the file's parts, read from JSON and so checked here before use."""
    try:
        dl, fptr, fterm = arrays["dl"], arrays["fptr"], arrays["fterm"]
        iptr, idoc, itf, blob = arrays["iptr"], arrays["idoc"], arrays["itf"], arrays["terms"]
    except KeyError as exc:
        raise ValueError(f"saved index lacks {exc}") from None
    n, vocab = len(ids), header["vocabulary"]
    terms = blob.tobytes().decode("utf-8").split("\x00") if vocab else []
    nnz = len(fterm)
    ok = (
        len(dl) == len(flen) == len(names) == n
        and len(set(ids)) == n
        and all(isinstance(i, str) for i in ids)
        and all(len(f) == len(index.weights) and all(isinstance(x, int) for x in f) for f in flen)
        and len(terms) == vocab
        and len(fptr) == n + 1
        and len(iptr) == vocab + 1
        and len(idoc) == len(itf) == nnz
        and fptr[0] == 0
        and fptr[-1] == nnz
        and iptr[0] == 0
        and iptr[-1] == nnz
        and bool(np.all(np.diff(fptr) >= 0))
        and bool(np.all(np.diff(iptr) >= 0))
        and (nnz == 0 or (0 <= fterm.min() and fterm.max() < vocab and 0 <= idoc.min() and idoc.max() < n))
    )
    if not ok:
        raise ValueError("saved index is inconsistent")
    seg = Segment(terms, fptr, fterm, iptr, idoc, itf)
    doc_names = [tuple(tuple(name) for name in doc) for doc in names]
    index.rebase(Compacted(seg, ids, dl.tolist(), [tuple(f) for f in flen], doc_names))
    return index

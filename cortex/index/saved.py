"""The index that outlives the process: the latest snapshot and its index, saved in the state folder.

One file per brain, `<home>/index/<key>.cidx`, where the key is a hash of the
brain's resolved path and branch; it is never inside the brain's Git tree. A
start loads it and the corpus advances it to the head by one tree diff
(`Corpus._resume`); anything wrong with it (missing, cut short, a flipped byte,
another format or Cortex version, another brain, a commit no longer in the
branch's history) means a full build and one line saying why, never a crash or
an answer the file alone would give.

The file::

    MAGIC | SHA-256 of the rest | u32 header length | header (JSON) | notes | index

The checksum covers the header and both parts. The header names the format, a
fingerprint of the code that parsed and indexed the notes (`code_fingerprint`),
the brain and the commit. `notes` is a pickle read back by `NotesUnpickler`
(see there why that is safe); `index` is `save_index`'s own stream (`cortex.index.bm25_file`).

Written atomically: a temp file in the same folder, fsync, `os.replace`, fsync of
the folder; a kill at any moment leaves the old file or the new one, and at
worst a temp file that the next save removes.

Where a load's time went, profiled at 10,000 synthetic notes with the index's
earlier marshal form (a 50.6 MB file, 5.1 MB per 1,000 notes): `load_index`
1.18 s (of which marshal 0.87 s), the notes' pickle 0.26 s, the checksum 0.11 s,
reading 0.08 s, the shape check 0.03 s; against a full build of 12-15 s on the
same (loaded) machine. `cortex bench --part persist` measures the current form.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import pickle
import struct
import sys
import threading
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import yaml

from cortex.files import private_folder, remove_orphans, write_atomic
from cortex.index.bm25_file import load_index
from cortex.index.corpus import Corpus
from cortex.index.snapshot import Snapshot
from cortex.notes.note import Note

__all__ = [
    "FORMAT",
    "MAGIC",
    "SAVE_EVERY_S",
    "SHAPING_MODULES",
    "IndexFile",
    "NotesUnpickler",
    "Unusable",
    "brain_identity",
    "code_fingerprint",
    "decode",
    "encode",
    "file_key",
    "index_file",
    "sealed",
    "write_atomically",
]

MAGIC = b"CORTEX-INDEX\n"
# Bumped when the layout of this file changes. Changes to the code that shapes what
# is saved (parsing, tokenising, indexing) are caught by `code_fingerprint` instead.
FORMAT = 1
# SHA-256 rather than BLAKE2b: OpenSSL's uses the CPU's SHA instructions, 0.07 s over
# 63 MB here against BLAKE2b's 0.15 s, paid on every load and save. A checksum finds a
# damaged or cut file; it is no defence against a crafted one (see NotesUnpickler).
_DIGEST = 32
_LEN = struct.Struct("<I")
# The modules whose code decides what a saved snapshot holds: a change to any of them
# (a new frontmatter rule, another tokeniser, another index layout) makes every saved
# file stale. Hashing their source is blunt (a comment edit also means one rebuild) but
# never serves a note parsed by rules the running code no longer has.
# `tests/index/test_persist.py` fails when a module the corpus builds with is missing here.
SHAPING_MODULES = (
    "notes.structure",
    "notes.html_elements",
    "notes.note",
    "notes.links",
    "notes.redact",
    "index.tokenize",
    "index.fields",
    "index.note_text",
    "index.build_pool",
    "notes.paths",
    "index.corpus",
    "index.snapshot",
    "index.bm25",
    "index.segment",
    "index.name_bonus",
    "index.builder",
    "index.bm25_file",
    "index.saved",
)

# When the server saves (a save costs CPU and holds the corpus lock for `save_index`,
# see `IndexFile.save`): after the first snapshot of a start (a full build, or a load
# that advanced), on a clean shutdown, and once an hour while the head has moved. The
# hourly save bounds what a kill -9 or an out-of-memory kill loses: the next start
# advances the saved file over at most an hour of commits by one tree diff. More often
# would stall searches for the lock more often for little gain: advancing over a few
# hundred commits costs a diff and a reparse of the notes they changed.
SAVE_EVERY_S = 3600.0


def code_fingerprint() -> str:
    """A hash of what decides a saved snapshot's content: the shaping modules' source,
    Python's version (pickle, Unicode tables the tokeniser reads) and PyYAML's."""
    if _fingerprint:
        return _fingerprint[0]
    h = hashlib.blake2b(digest_size=16)
    for name in SHAPING_MODULES:
        module = sys.modules.get(f"cortex.{name}")
        source = getattr(module, "__file__", None)
        try:
            h.update(Path(source).read_bytes() if source else name.encode())
        except OSError:  # no source shipped: the version below must do
            h.update(name.encode())
    from cortex import __version__

    h.update(f"{__version__}|{sys.version_info[:2]}|{unicodedata.unidata_version}|{yaml.__version__}".encode())
    _fingerprint.append(h.hexdigest())
    return _fingerprint[0]


_fingerprint: list[str] = []


def file_key(brain: str) -> str:
    """The file name stem of a brain's files in the state folder."""
    return hashlib.blake2b(brain.encode(), digest_size=10).hexdigest()


def brain_identity(path: Path, branch: str) -> str:
    """What names one brain: its repository's resolved path and the branch served."""
    return f"{Path(path).resolve()}\n{branch}"


class NotesUnpickler(pickle.Unpickler):
    """Unpickles the notes part, refusing every global but the few a note is made of.

    Why pickle: measured at 10,000 synthetic notes (cortex bench's brain, 28 MB of
    notes) on this machine (x86_64, 2 cores shared with other jobs): pickling 0.35 s,
    loading 0.52 s (0.54 s through this class; 0.26 s from the file in a quieter
    moment); a custom marshal of each note's fields loaded in 0.58 s and needs its own
    encoding of frontmatter dates and sets; reading the blobs back from Git and
    reparsing them took 1.9 s + 1.6 s.

    Why it is safe to load: the file lives in the owner's state folder (0700, the file
    0600), beside the owner token, so whoever can write it can already act as the owner.
    A checksum does not stop a crafted file (anyone can recompute it), so the loader
    does not trust the bytes: `find_class` admits only the classes below, none of which
    runs anything but a constructor when called, so a crafted file can at worst make a
    wrong note (what writing the brain itself could do) or fail to load (a rebuild);
    it cannot name `os.system` or any other callable. The Python documentation's
    "Restricting Globals" is this pattern. Frontmatter is what YAML's safe loader
    makes: dicts, lists, sets, strings, numbers, bytes, dates and times.
    """

    ALLOWED = {
        ("cortex.notes.note", "Note"),
        ("cortex.notes.note", "WikiLink"),
        ("datetime", "date"),
        ("datetime", "datetime"),
        ("datetime", "time"),
        ("datetime", "timedelta"),
        ("datetime", "timezone"),
    }

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in self.ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a saved note")


class Unusable(Exception):
    """A saved file that must not be used; the message says why in a few words."""


def encode(snap: Snapshot, index_bytes: bytes, brain: str) -> list[bytes]:
    """The file's parts after MAGIC and the digest, for `snap`, whose index was serialised
    (under the corpus lock) to `index_bytes`. Parts, not one string: joining them would
    copy the whole file once more in memory (a 300 MB brain's file is about that big)."""
    notes = pickle.dumps(
        (snap.sha, snap.time, snap.notes, snap.blobs, snap.changed, snap.real), protocol=pickle.HIGHEST_PROTOCOL
    )
    header = json.dumps(
        {
            "format": FORMAT,
            "code": code_fingerprint(),
            "brain": brain,
            "sha": snap.sha,
            "notes_bytes": len(notes),
            "index_bytes": len(index_bytes),
            "saved": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }
    ).encode()
    return [_LEN.pack(len(header)), header, notes, index_bytes]


def sealed(parts: list[bytes]) -> list[bytes]:
    """MAGIC and the checksum of `parts`, then `parts`: what is written to disk."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part)
    return [MAGIC, h.digest(), *parts]


def decode(f: BinaryIO, brain: str) -> Snapshot:
    """The snapshot in the open file `f`; Unusable when it is not a whole, current file of `brain`.

    Read in two passes over the one open file (the checksum, then the parts), so the
    parts are never held twice in memory, and a file replaced meanwhile is not mixed in.
    """
    if f.read(len(MAGIC)) != MAGIC:
        raise Unusable("not a Cortex index file")
    digest = f.read(_DIGEST)
    h = hashlib.sha256()
    begin = f.tell()
    while chunk := f.read(1 << 20):
        h.update(chunk)
    if h.digest() != digest:
        raise Unusable("its checksum does not match (cut short or damaged)")
    length = f.tell() - begin
    f.seek(begin)
    try:
        (size,) = _LEN.unpack(f.read(_LEN.size))
        header = json.loads(f.read(size))
        fmt, code, owner = header["format"], header["code"], header["brain"]
        notes_bytes, index_bytes = int(header["notes_bytes"]), int(header["index_bytes"])
    except (struct.error, ValueError, KeyError, TypeError) as exc:
        raise Unusable(f"its header is unreadable ({exc})") from None
    if fmt != FORMAT:
        raise Unusable(f"it is format {fmt!r}, this version reads {FORMAT}")
    if code != code_fingerprint():
        raise Unusable("it was made by another version of Cortex")
    if owner != brain:
        raise Unusable("it belongs to another brain")
    if _LEN.size + size + notes_bytes + index_bytes != length:
        raise Unusable("its parts do not add up to its length")
    try:
        sha, time_, notes, blobs, changed, real = NotesUnpickler(f).load()
        if f.tell() != begin + _LEN.size + size + notes_bytes:
            raise ValueError("the notes part does not end where the header says")
        # A stream of its own, from 0 to its end: load_index may seek, or read to the end
        # (the compact form being written behind it is free to do either).
        index = load_index(io.BytesIO(f.read(index_bytes)))
    except Exception as exc:  # noqa: BLE001 - whatever a bad stream raises, the answer is a rebuild
        raise Unusable(f"it does not load ({type(exc).__name__}: {exc})") from None
    snap = Snapshot(sha, time_, notes, blobs, changed, index, real)
    _check(snap, header["sha"])
    return snap


def _check(snap: Snapshot, sha: str) -> None:
    """The shapes the rest of Cortex relies on (milliseconds at 10,000 notes)."""
    ok = (
        snap.sha == sha
        and isinstance(snap.time, dt.datetime)
        and isinstance(snap.notes, dict)
        # A saved note keeps no text (the corpus reads it from the note's blob).
        and all(isinstance(n, Note) and n.path == p and not n.keeps_text for p, n in snap.notes.items())
        and isinstance(snap.blobs, dict)
        and snap.blobs.keys() == snap.notes.keys()
        and all(isinstance(b, str) for b in snap.blobs.values())
        and isinstance(snap.changed, dict)
        and snap.changed.keys() == snap.notes.keys()
        and isinstance(snap.real, dict)
        and snap.real.keys() <= snap.notes.keys()
        and all(isinstance(t, dt.datetime) for d in (snap.changed, snap.real) for t in d.values())
        and len(snap.index) == len(snap.notes)
        # Beyond counts: the index holds exactly the notes' paths, each in its own place.
        and snap.index.holds_exactly(snap.notes.keys())
    )
    if not ok:
        raise Unusable("its contents are inconsistent")


class IndexFile:
    """One brain's saved snapshot: loads it for the corpus, saves the corpus's latest."""

    def __init__(self, folder: Path, brain: str, log: Callable[[str], None] | None = None):
        self.folder = Path(folder)
        self.brain = brain
        self.path = self.folder / f"{file_key(brain)}.cidx"
        self._log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self._save_lock = threading.Lock()  # one save at a time (the hourly one, shutdown's)
        self._stop = threading.Event()  # ends keep_saving's thread
        self.saved_sha: str | None = None  # the commit of the file on disk, as far as this process knows
        # What happened, for /healthz-style reports and tests (never for a decision).
        self.loads = 0
        self.rebuilds: list[str] = []
        self.saves = 0
        self.size = 0  # bytes of the last file written
        self.lock_held_s = 0.0  # how long the last save held the corpus lock

    def say(self, line: str) -> None:
        self._log(f"index: {line}")

    # -- loading (called by the corpus for its first snapshot, under its build lock only) --

    def load(self) -> Snapshot | None:
        started = time.monotonic()
        try:
            with open(self.path, "rb") as f:
                snap = decode(f, self.brain)
                size = f.tell()
        except FileNotFoundError:
            self._rebuild("no saved index yet")
            return None
        except OSError as exc:
            self._rebuild(f"the saved index could not be read ({exc.strerror or exc})")
            return None
        except Unusable as exc:
            self._rebuild(f"the saved index is not used: {exc}")
            return None
        self.loads += 1
        self.saved_sha = snap.sha
        self.say(
            f"loaded the saved index at {snap.sha[:12]} ({len(snap.notes):,} notes, "
            f"{size / 1e6:.1f} MB) in {time.monotonic() - started:.2f} s"
        )
        return snap

    def refuse(self, reason: str) -> None:
        self._rebuild(f"the saved index is not used: {reason}")

    def _rebuild(self, reason: str) -> None:
        self.rebuilds.append(reason)
        self.say(f"{reason}; building the index from the notes")

    # -- saving ---------------------------------------------------------------------------

    def save(self, corpus: Corpus, force: bool = False) -> bool:
        """Save the corpus's latest snapshot unless the file already holds it; whether it wrote.

        The corpus lock is held only while `save_index` serialises the index
        (`Corpus.index_bytes`: the index moves on with the head, and may be compacted by
        its save): searches wait out that hold, Git reads and writes do not. Measured as
        `save_lock_held` by `cortex bench --part persist` (README Figures). The notes are
        pickled and written outside it: a snapshot's notes, blobs and dates are never
        changed once made. It happens once after a start that built or advanced, then
        at most hourly, and at shutdown.
        """
        with self._save_lock:
            snap = corpus.built()
            if snap is None or (snap.sha == self.saved_sha and not force):
                return False
            held = time.monotonic()
            got = corpus.index_bytes()
            self.lock_held_s = time.monotonic() - held
            if got is None:
                return False
            snap, index_bytes = got
            parts = sealed(encode(snap, index_bytes, self.brain))
            del got, index_bytes
            write_atomically(self.path, parts)
            self.saved_sha = snap.sha
            self.saves += 1
            self.size = sum(map(len, parts))
            self.say(
                f"saved the index at {snap.sha[:12]} ({self.size / 1e6:.1f} MB; "
                f"corpus lock held {self.lock_held_s:.2f} s)"
            )
            return True

    def save_or_say(self, corpus: Corpus) -> None:
        """`save`, saying why when it fails: a full disk must not stop the server (the next start rebuilds)."""
        try:
            self.save(corpus)
        except Exception as exc:  # noqa: BLE001
            self.say(f"saving the index failed: {exc}")

    def drop(self) -> bool:
        """Remove the saved file (`cortex reindex`); whether there was one."""
        self.saved_sha = None
        try:
            self.path.unlink()
            return True
        except FileNotFoundError:
            return False

    def keep_saving(self, corpus: Corpus, every_s: float = SAVE_EVERY_S) -> threading.Thread:
        """Save now (once the first snapshot exists) and every `every_s` seconds while the head
        moves (see SAVE_EVERY_S), in a daemon thread."""

        def loop() -> None:
            while not self._stop.is_set():
                try:
                    corpus.latest()  # the head's snapshot (the first round waits for the start's build)
                except Exception as exc:  # noqa: BLE001 - the next round tries again
                    self.say(f"advancing to the head before a save failed: {exc}")
                else:
                    self.save_or_say(corpus)
                self._stop.wait(every_s)

        self._stop.clear()
        thread = threading.Thread(target=loop, name="cortex-index-save", daemon=True)
        thread.start()
        return thread

    def stop_saving(self) -> None:
        """End `keep_saving`'s thread (after the save it may be in)."""
        self._stop.set()


def write_atomically(path: Path, parts: list[bytes]) -> None:
    """`parts`, one after the other, at `path`, whole or not at all (`files.write_atomic`).

    The folder is made 0700 and the file 0600: the state folder is the owner's alone.
    Temp files left by a process killed mid-write (named with its pid) are removed.
    """
    private_folder(path.parent)
    remove_orphans(path)
    write_atomic(path, parts, mode=0o600)


def index_file(home: Path, repo: Path, branch: str, log: Callable[[str], None] | None = None) -> IndexFile:
    """The saved-index file of the brain at `repo` (branch `branch`), kept under `home`/index."""
    return IndexFile(Path(home) / "index", brain_identity(repo, branch), log)

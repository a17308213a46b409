"""A GitStore's working tree: the files a person edits, kept in step with the branch.

Committed files are written into the tree (atomically, and never over a hand edit),
Git's staging index (.git/index) is pointed at the head so `git status` shows only real
hand edits, and a folder of notes becomes a brain in place (`init_here`,
`commit_tree_as_is`). A bare clone has no working tree, and none of this applies.

`WorkingTree` is mixed into `GitStore` (store.git), whose repository handle (`_repo`),
lock (`_lock`), reads (`head`, `blob_at`) and commit making (`signatures`,
`parents_on`) it uses.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Self

import pygit2

from cortex.files import prune_empty_folders, read_file, write_atomic
from cortex.store.types import Identity

__all__ = ["HOLD_TRIES", "LOCK_GAP_S", "STAGING_LOCK_TRIES", "WorkingTree", "git_command", "git_running", "hash_blob"]

# Tries at writing Git's staging index while a git command holds index.lock (10 ms apart).
STAGING_LOCK_TRIES = 50
# Tries at taking index.lock for a write (10 ms apart). A `git commit` holds it while its
# editor is open; past this the write goes on without it, and that commit then fails on its
# own check that the branch has not moved.
HOLD_TRIES = 100
# Between two writes Cortex leaves index.lock free for at least this long, or as long as it
# last held it if longer, so a hand `git commit` under a stream of writes finds it free
# (issue 54: at 27 writes a second every hand commit failed on index.lock).
LOCK_GAP_S = 0.015
# Once a git command of the owner's was found holding index.lock, the gap is OWNER_GAP_S for
# OWNER_WINDOW_S after: a merge, a stash or a pull takes the lock several times in a row, and
# with a 15 ms gap at 40 writes a second a merge failed at one step or another for 10 s.
OWNER_GAP_S = 0.25
OWNER_WINDOW_S = 2.0
# Within that window a write also waits, up to OWNER_WAIT_S, while a git command that changes
# the repository runs in the working tree (Linux: read from /proc): a merge takes the lock at
# several steps, and one that lost the lock after writing MERGE_HEAD stopped midway.
OWNER_WAIT_S = 5.0
_READ_ONLY_GIT = frozenset("log show diff status ls-files rev-parse cat-file config reflog blame grep".split())
# What `git` leaves in the Git folder while an operation of the owner's is stopped midway.
_OPERATIONS = {
    pygit2.enums.RepositoryState.MERGE: "a merge",
    pygit2.enums.RepositoryState.REVERT: "a revert",
    pygit2.enums.RepositoryState.REVERT_SEQUENCE: "a revert",
    pygit2.enums.RepositoryState.CHERRYPICK: "a cherry-pick",
    pygit2.enums.RepositoryState.CHERRYPICK_SEQUENCE: "a cherry-pick",
    pygit2.enums.RepositoryState.BISECT: "a bisect",
    pygit2.enums.RepositoryState.REBASE: "a rebase",
    pygit2.enums.RepositoryState.REBASE_INTERACTIVE: "a rebase",
    pygit2.enums.RepositoryState.REBASE_MERGE: "a rebase",
    pygit2.enums.RepositoryState.APPLY_MAILBOX: "a git am",
    pygit2.enums.RepositoryState.APPLY_MAILBOX_OR_REBASE: "a git am or rebase",
}


def git_running(workdir: Path, *, read_only_too: bool = False) -> bool:
    """Whether a `git` command that may change the repository (any, with `read_only_too`) runs
    with its working folder in `workdir` (Linux's /proc; False where there is none, or a
    process cannot be read)."""
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return False
    root = os.path.realpath(workdir)
    for pid in pids:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if not argv or os.path.basename(argv[0]) != b"git":
                continue
            if not read_only_too and git_command(argv[1:]) in _READ_ONLY_GIT:
                continue
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if cwd == root or cwd.startswith(root + os.sep):
            return True
    return False


def git_command(args: list[bytes]) -> str:
    """The subcommand of a git command line: its first word that is not an option (nor the
    value of `-c` or `-C`)."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in (b"-c", b"-C"):
            skip = True
        elif arg and not arg.startswith(b"-"):
            return arg.decode("utf-8", "replace")
    return ""


def hash_blob(data: bytes) -> str:
    """The Git blob id of `data` (what the file would be stored as), without writing it."""
    return str(pygit2.hash(data))


class WorkingTree:
    """The working tree of a GitStore, when it has one."""

    _repo: pygit2.Repository
    _lock: threading.RLock
    _unsynced: set[str]  # staging entries a busy index.lock kept from syncing
    unwritten: dict[str, str]  # files a commit could not put on disk, and why
    _holder: int | None = None  # the thread that holds index.lock, while one does
    _held_written = False  # whether this hold has written the next index into the lock file
    _released: tuple[float, float] = (0.0, 0.0)  # when this process last let index.lock go, how long it held it
    _owner_seen = 0.0  # when a git command of the owner's last held index.lock as a write came for it
    ref: str
    branch: str

    if TYPE_CHECKING:  # GitStore's, which this is mixed into

        def __init__(self, path: str | Path, branch: str | None = None) -> None: ...
        def head(self) -> str | None: ...
        def blob_at(self, sha: str, path: str) -> str | None: ...
        def parents_on(self, head: str | None) -> list[pygit2.Oid]: ...
        def signatures(
            self, author: Identity | None, *, owner_commits: bool = False
        ) -> tuple[pygit2.Signature, pygit2.Signature]: ...

    @classmethod
    def init_here(cls, path: str | Path, branch: str, exclude: Iterable[str]) -> Self:
        """`git init` in an existing folder (a working tree), with `exclude` in .git/info/exclude."""
        repo = pygit2.init_repository(str(path), bare=False, initial_head=branch)
        info = Path(repo.path) / "info"
        info.mkdir(exist_ok=True)
        with open(info / "exclude", "a", encoding="utf-8") as f:
            f.write("# Tool and editor files left out of the brain by cortex init\n")
            f.writelines(f"{name}\n" for name in exclude)
        return cls(path, branch)

    def exclude(self, names: Iterable[str], why: str) -> None:
        """Add `names` (paths from the top, surrogate escapes allowed) to .git/info/exclude,
        as their bytes on disk, each anchored and with glob characters escaped."""
        lines = [f"# {why}\n".encode()]
        for name in names:
            raw = os.fsencode(name)
            for ch in (b"\\", b"*", b"?", b"[", b"!", b"#"):
                raw = raw.replace(ch, b"\\" + ch)
            lines.append(b"/" + raw + b"\n")
        with open(Path(self._repo.path) / "info" / "exclude", "ab") as f:
            f.writelines(lines)

    def commit_tree_as_is(
        self, extra: Mapping[str, bytes], message: str, author: Identity | None, progress: Callable[[str], None]
    ) -> tuple[str, int, list[str]]:
        """The first commit of a working tree: every file as it is on disk (ignore rules kept),
        plus `extra` files written first. (commit SHA, files committed, names left out).

        A file or folder whose name is not valid UTF-8 (Git stores names as UTF-8) is left
        out, and its name is returned (as Python decodes it, with surrogate escapes)."""
        wd = self.workdir
        assert wd is not None
        for rel, data in extra.items():
            (wd / rel).parent.mkdir(parents=True, exist_ok=True)
            write_atomic(wd / rel, data)
        with self._lock:
            files: list[str] = []
            unnamable: list[str] = []
            for folder, dirs, names in os.walk(wd):
                rel_folder = os.path.relpath(folder, wd)
                rel_folder = "" if rel_folder == "." else rel_folder.replace(os.sep, "/") + "/"
                unnamable += [rel_folder + d + "/" for d in dirs if not _utf8(d)]
                dirs[:] = [
                    d for d in dirs if d != ".git" and _utf8(d) and not self._repo.path_is_ignored(rel_folder + d + "/")
                ]
                for name in names:
                    rel = rel_folder + name
                    if not _utf8(name):
                        unnamable.append(rel)
                    elif not self._repo.path_is_ignored(rel):
                        files.append(rel)
            staging = self._repo.index  # Git's staging index
            started = time.monotonic()
            for i, rel in enumerate(sorted(files), 1):
                staging.add(rel)
                if i % 500 == 0 or time.monotonic() - started > 2:
                    progress(f"committing {i:,} of {len(files):,} files")
                    started = time.monotonic()
            staging.write()
            tree = staging.write_tree()
            by, committer = self.signatures(author, owner_commits=True)
            parents = self.parents_on(self.head())
            oid = self._repo.create_commit(self.ref, by, committer, message, tree, parents)
            return str(oid), len(files), sorted(unnamable)

    @property
    def workdir(self) -> Path | None:
        wd = self._repo.workdir
        return Path(wd) if wd else None

    def update_workdir(
        self, paths: Mapping[str, bytes | None], expected: Mapping[str, bytes | None], also_stage: Iterable[str] = ()
    ) -> dict[str, bytes | None]:
        """Write committed files into the working tree where the disk still matches `expected`,
        and point Git's staging index at the head for them and for `also_stage`, in one write.

        Returns the files written. A file whose disk bytes differ from `expected`
        holds a hand edit and is left alone (the editor watcher commits it). Writes
        go to a dot-named temp file and are renamed into place, so a watcher or an
        editor never sees half a file. A file the system refuses (a read-only folder)
        goes into `unwritten` with the reason, until a later write of it succeeds.
        """
        wd = self.workdir
        if wd is None:
            return {}
        written: dict[str, bytes | None] = {}
        for path, data in paths.items():
            target = self.workdir_file(path)
            if target is None:
                continue
            if read_file(target) != expected.get(path):
                continue  # hand edits on disk win
            try:
                if data is None:
                    target.unlink(missing_ok=True)
                    prune_empty_folders(target.parent, wd)
                else:
                    if target.is_dir() and not any(target.iterdir()):
                        target.rmdir()  # the empty folder left by the folder's last note, as Git would
                    target.parent.mkdir(parents=True, exist_ok=True)
                    write_atomic(target, data)
            except OSError as exc:
                self.unwritten[path] = exc.strerror or type(exc).__name__
                continue
            self.unwritten.pop(path, None)
            written[path] = data
        self.sync_staging([*paths, *also_stage])
        return written

    def workdir_file(self, path: str) -> Path | None:
        """The working-tree file for `path`, or None if it would leave the tree or cross a symlink."""
        wd = self.workdir
        if wd is None or path.startswith("/") or ".." in path.split("/") or path.startswith(".git/"):
            return None
        target = wd / path
        real_wd = os.path.realpath(wd)
        if os.path.realpath(target.parent) != os.path.normpath(os.path.join(real_wd, os.path.dirname(path))):
            return None  # a symlinked folder on the way
        if target.is_symlink():
            return None
        return target

    def _operation_began(self) -> bool:
        """Whether a git command of the owner's wrote FETCH_HEAD or ORIG_HEAD within
        OWNER_WINDOW_S: a pull's fetch writes one, and its merge, a rebase or a reset the other,
        before taking index.lock, and a branch moved under a merge meanwhile stopped it midway
        (10 s stalls in the pull benchmark, gone with FETCH_HEAD; ORIG_HEAD alone came too
        late). Cortex's own fetches are a bare clone's, with no working tree. Two stats a write."""
        now = time.time()
        for name in ("FETCH_HEAD", "ORIG_HEAD"):
            try:
                if now - os.stat(Path(self._repo.path) / name).st_mtime < OWNER_WINDOW_S:
                    return True
            except OSError:
                continue
        return False

    @staticmethod
    def _owner_quiet(workdir: Path, until: float) -> None:
        """Wait, until `until` at most, for no git command to have run in the working tree for
        OWNER_GAP_S: the owner's next command of a sequence may follow the last."""
        seen = 0.0
        while time.monotonic() < until:
            if git_running(workdir):
                seen = time.monotonic()
            elif not seen or time.monotonic() - seen >= OWNER_GAP_S:
                return
            time.sleep(0.02)

    def _take(self, lock: Path) -> bool:
        """Create index.lock, trying HOLD_TRIES times 10 ms apart; OSError on a read-only .git."""
        for _ in range(HOLD_TRIES):
            try:
                os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
                return True
            except FileExistsError:
                if self._holder is None:  # not another thread of ours: a git command
                    self._owner_seen = time.monotonic()
                time.sleep(0.01)
        return False

    @contextmanager
    def staging_held(self) -> Iterator[bool]:
        """Hold Git's own index.lock while a write moves the branch and the index and files
        follow, so a `git commit` by hand in between fails as it would against another git
        process, instead of building its tree from the old index on top of the new head
        (which took the write back out). Yields whether the lock is held; re-entrant in
        one thread. Index writes meanwhile go into the lock file, put in place on leaving."""
        if self.workdir is None:
            yield False
            return
        me = threading.get_ident()
        if self._holder == me:  # taken further up this thread's call: the outer hold releases it
            yield True
            return
        lock = Path(self._repo.path) / "index.lock"
        at, held_for = self._released
        owner_busy = time.monotonic() - self._owner_seen < OWNER_WINDOW_S or self._operation_began()
        gap = max(OWNER_GAP_S if owner_busy else LOCK_GAP_S, held_for) - (time.monotonic() - at)
        if gap > 0:
            time.sleep(min(gap, OWNER_GAP_S))  # the owner's turn at the lock between two writes
        until = time.monotonic() + OWNER_WAIT_S
        while True:
            if owner_busy:
                self._owner_quiet(self.workdir, until)
            try:
                got = self._take(lock)
            except OSError:
                yield False  # a read-only .git: the write itself says so
                return
            if not got:
                yield False
                return
            # Looked at again with the lock held: a merge that began meanwhile has read the
            # branch this write would move.
            if not owner_busy or time.monotonic() >= until or not git_running(self.workdir):
                break
            lock.unlink(missing_ok=True)
        self._holder, self._held_written = me, False
        held_at = time.monotonic()
        try:
            yield True
        finally:
            wrote, self._holder = self._held_written, None
            self._released = (time.monotonic(), time.monotonic() - held_at)
            try:
                if wrote:
                    os.replace(lock, Path(self._repo.path) / "index")  # Git's commit of a lock file
                else:
                    lock.unlink()
            except OSError:
                pass

    def sync_staging(self, paths: Iterable[str]) -> None:
        """Point Git's staging index (.git/index) at the head for `paths`, so `git status` shows
        only real hand edits.

        Only the named entries change: re-reading the whole tree threw away every
        entry's stat cache, and `git status` then re-hashed the whole brain. A `git`
        command holding the index lock makes the write fail; it is retried for a
        moment, and paths still unsynced are kept for the next call. (Dropping them
        left the index without a committed note: `git status` showed it deleted and
        untracked.)
        """
        with self._lock:
            paths = set(paths) | self._unsynced
            if not paths or self.workdir is None:
                return  # the watcher's every poll lands here when nothing was kept back
            if self._holder is None and _OPERATIONS.get(self._repo.state()) is not None:
                # The owner's stopped merge or rebase owns the index, its conflicts included: a
                # sync between their `git add` and `git commit` held index.lock as the commit began.
                self._unsynced = paths
                return
            head = self.head()
            if head is None:
                return
            for _ in range(STAGING_LOCK_TRIES):
                try:
                    self._write_staging(head, paths)
                    self._unsynced.clear()
                    return
                except (pygit2.GitError, OSError, KeyError, ValueError):
                    time.sleep(0.01)  # a git command holds index.lock for a moment
            self._unsynced = paths

    def _write_staging(self, head: str, paths: set[str]) -> None:
        if self._holder == threading.get_ident():
            self._write_held_staging(head, paths)
            return
        staging = self._repo.index
        index_file = os.path.join(self._repo.path, "index")
        if _stat_of(index_file) != getattr(self, "_staging_stat", None):
            # Forced: a git command may have rewritten it within the same second. Skipped when
            # the file is still the one this process last wrote (its inode, size and ns times):
            # the read was 0.8 ms of a 9 ms write at 1,000 notes, and grows with the brain.
            staging.read(True)
        self._stage(staging, head, paths, from_disk=True)
        self._staging_stat = None  # should the write fail halfway, the next sync reads the file
        staging.write()
        self._staging_stat = _stat_of(index_file)

    def _stage(self, staging: pygit2.Index, head: str, paths: set[str], *, from_disk: bool) -> None:
        """Point `staging`'s entries for `paths` at the head: removed where the head has no
        file; added from disk (`from_disk`, which keeps the stat cache fresh) where the file
        there is the head's, else by blob id."""
        for path in sorted(paths):
            blob = self.blob_at(head, path)
            if blob is None:
                if path in staging:
                    staging.remove(path)
                continue
            target = self.workdir_file(path) if from_disk else None
            disk = read_file(target) if target is not None else None
            if disk is not None and hash_blob(disk) == blob:
                staging.add(path)
            else:
                staging.add(pygit2.IndexEntry(path, pygit2.Oid(hex=blob), pygit2.enums.FileMode.BLOB))

    def _write_held_staging(self, head: str, paths: set[str]) -> None:
        """`_write_staging` while this thread holds index.lock: the index is written beside
        it, from the lock's content when already written this time, and moved into the lock
        file (Git's way: the lock file holds the next index until it is renamed into place)."""
        git_dir = Path(self._repo.path)
        lock = git_dir / "index.lock"
        draft = git_dir / f"cortex-index-{os.getpid()}-{threading.get_ident()}"
        source = lock if self._held_written else git_dir / "index"
        try:
            if source.exists():
                draft.write_bytes(source.read_bytes())
            staging = pygit2.Index(str(draft))
            self._stage(staging, head, paths, from_disk=False)  # an index with no repository reads no file
            staging.write()
            os.replace(draft, lock)
        finally:
            draft.unlink(missing_ok=True)
        self._held_written = True
        self._staging_stat = None  # the repository's own index object reads the file again

    def holds_staging(self) -> bool:
        """Whether this thread holds index.lock (`staging_held` took it)."""
        return self._holder == threading.get_ident()

    def disk_blob(self, path: str) -> str | None:
        """The Git blob id of the working-tree file at `path` (None: absent or not readable)."""
        target = self.workdir_file(path)
        data = read_file(target) if target is not None else None
        return None if data is None else hash_blob(data)

    def staged(self, paths: Iterable[str]) -> set[str]:
        """Those of `paths` Git's staging index holds, read fresh from `.git/index`, or that
        Cortex is still to put there (a busy index.lock kept them back). All of them when the
        index cannot be read: nothing is then taken for a removal the owner staged."""
        paths = set(paths)
        with self._lock:
            index_file = os.path.join(self._repo.path, "index")
            if not os.path.exists(index_file):
                return paths
            try:
                staging = pygit2.Index(index_file)
            except (pygit2.GitError, OSError, ValueError):
                return paths
            return {p for p in paths if p in staging or p in self._unsynced}

    def owner_git_running(self) -> bool:
        """Whether any `git` command runs in the working tree now. `git commit` (and `git status`,
        which writes back the index it refreshed) reads the index before taking its lock, so one
        running as a write lands may write an index, and a commit, built from before the write."""
        return self.workdir is not None and git_running(self.workdir, read_only_too=True)

    def unstaged(self) -> frozenset[str]:
        """The files Git's staging index has not taken since a busy index.lock kept them out."""
        with self._lock:
            return frozenset(self._unsynced)

    def operation_under_way(self) -> str | None:
        """The owner's `git` operation stopped midway in the working tree ("a rebase"), or None."""
        if self.workdir is None:
            return None
        with self._lock:
            try:
                return _OPERATIONS.get(self._repo.state())
            except pygit2.GitError:
                return None

    def workdir_busy(self) -> str | None:
        """Why hand edits must wait (HEAD on another branch, a merge or rebase under way), or None."""
        with self._lock:
            try:
                if self._repo.head_is_detached or self._repo.references["HEAD"].target != self.ref:
                    return "the working tree is not on " + self.branch
                if (operation := _OPERATIONS.get(self._repo.state())) is not None:
                    return f"{operation} is under way"
            except (pygit2.GitError, KeyError):
                return None
            return None

    def is_ignored(self, path: str) -> bool:
        """Whether .gitignore excludes `path`."""
        with self._lock:
            try:
                return bool(self._repo.path_is_ignored(path))
            except pygit2.GitError:
                return False

    def write_blob(self, data: bytes) -> str:
        with self._lock:
            return str(self._repo.create_blob(data))

    def merge_text(self, base: bytes | None, ours: bytes, theirs: bytes, *, union: bool = False) -> bytes | None:
        """A three-way merge of one file's bytes (Git's own line merge); None when it conflicts,
        unless `union`: then each conflict keeps both sides, `theirs` first (Git's union merge)."""
        with self._lock:
            entry = lambda data: pygit2.IndexEntry(
                "note.md",
                self._repo.create_blob(data),  # noqa: E731
                pygit2.enums.FileMode.BLOB,
            )
            result = self._repo.merge_file_from_index(entry(base or b""), entry(ours), entry(theirs))
            contents = result.contents.encode("utf-8") if isinstance(result.contents, str) else result.contents
            if result.automergeable:
                return contents
            return _union(contents) if union else None


def _union(marked: bytes) -> bytes | None:
    """A merge's output with each conflict's two sides kept, theirs first: the lines between
    `=======` and `>>>>>>> note.md`, then those between `<<<<<<< note.md` and `=======`.
    None when the markers do not pair (a note that writes such lines itself)."""
    out: list[bytes] = []
    ours: list[bytes] = []
    theirs: list[bytes] = []
    side = None
    for line in marked.splitlines(keepends=True):
        if line.rstrip(b"\r\n") == b"<<<<<<< note.md" and side is None:
            side, ours, theirs = "ours", [], []
        elif line.rstrip(b"\r\n") == b"=======" and side == "ours":
            side = "theirs"
        elif line.rstrip(b"\r\n") == b">>>>>>> note.md" and side == "theirs":
            out += theirs + ours
            side = None
        elif side == "ours":
            ours.append(line)
        elif side == "theirs":
            theirs.append(line)
        else:
            out.append(line)
    return b"".join(out) if side is None else None


def _stat_of(path: str) -> tuple[int, int, int, int] | None:
    """What tells one version of a file from another: inode, size, ns mtime and ctime."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _utf8(name: str) -> bool:
    """Whether a name from the file system is valid UTF-8 (no surrogate escapes)."""
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False

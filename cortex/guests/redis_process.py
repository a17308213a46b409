"""A private redis-server process on a unix socket, for the embedded default.

`cortex serve` with no REDIS_URL runs one with append-only persistence, so pending
proposals survive a restart; the tests use the same class to start, kill and restart
real servers. This module never imports `redis`: readiness is a PING over the raw socket.

Each brain has its own, in `$CORTEX_HOME/redis/<key>/` (`for_brain`): two brains served
from one state folder had shared one Redis, and the second server was told to stop the
first one's. One Redis each keeps their proposal queues apart (the queue's keys name no
brain), and the brain's own lock already keeps two servers off one brain. A Redis a killed
Cortex left running on its folder (a `kill -9` outside Linux, where nothing takes it down
with its parent) is Cortex's own: the next start on that folder stops it and starts afresh,
its data kept, instead of asking the owner to.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from cortex.files import private_folder

__all__ = ["LEGACY_DATA", "LOCK_NAME", "NOT_INSTALLED", "RedisProcess", "redis_server_binary"]

try:
    import fcntl
except ImportError:  # Windows: no flock; the ping alone guards the folder
    fcntl = None  # type: ignore[assignment]

NOT_INSTALLED = "disabled: redis-server not installed"
LOCK_NAME = "cortex-redis.lock"
BRAIN_NOTE = "brain"  # in each brain's folder: the brain it belongs to, for a person looking in
# What the one shared folder of earlier versions held (`$CORTEX_HOME/redis/` itself): moved
# into the first brain's own folder that starts after the upgrade, as the brain it then served.
LEGACY_DATA = ("appendonlydir", "appendonly.aof", "dump.rdb", "redis.log")


def redis_server_binary() -> str | None:
    """The redis-server on PATH, or None."""
    return shutil.which("redis-server")


class RedisProcess:
    """One redis-server on `<folder>/redis.sock`, data (AOF) kept in `folder`."""

    def __init__(self, folder: Path, binary: str | None = None):
        self.folder = Path(folder)
        self.binary = binary or redis_server_binary()
        self.proc: subprocess.Popen | None = None
        self._lock: int | None = None
        self.brain: Path | None = None  # set by for_brain: whose Redis this is

    @classmethod
    def for_brain(cls, home: Path, brain: Path, binary: str | None = None) -> RedisProcess:
        """The private Redis of one brain served from the state folder `home`: a folder of its
        own under `home/redis/`, named by a digest of the brain's path (short, so the socket's
        path stays within a unix socket's 103 bytes)."""
        key = hashlib.sha256(os.fsencode(Path(brain).resolve())).hexdigest()[:12]
        made = cls(Path(home) / "redis" / key, binary)
        made.brain = Path(brain)
        return made

    @property
    def socket_path(self) -> Path:
        return self.folder / "redis.sock"

    @property
    def url(self) -> str:
        return f"unix://{self.socket_path}"

    def start(self, timeout: float = 10.0, log: Callable[[str], None] | None = None) -> RedisProcess:
        """Start the server and wait until it answers PING; RuntimeError if it does not.
        `log` hears of data moved from the shared folder of earlier versions and of a
        leftover Redis stopped."""
        say = log or (lambda line: None)
        if self.binary is None:
            raise RuntimeError("redis-server is not installed")
        # sun_path holds 107 bytes on Linux (103 on macOS); a longer path cannot be bound.
        if len(str(self.socket_path).encode()) > 103:
            raise RuntimeError(
                f"the socket path {self.socket_path} is too long for a unix socket; "
                "use a shorter CORTEX_HOME or set REDIS_URL"
            )
        private_folder(self.folder)  # CORTEX_HOME too, when this makes it first
        _only_mine(self.folder)  # made 0755 and 0644 by earlier versions
        # The folder's lock first: a live Cortex on this folder keeps it, so whatever answers
        # on the socket while the lock is ours was left by a Cortex that is gone.
        self._lock_folder()
        try:
            self._adopt_legacy(say)
            self._stop_leftover(say)
            if self.brain is not None:
                (self.folder / BRAIN_NOTE).write_text(f"{self.brain.resolve()}\n")
                (self.folder / BRAIN_NOTE).chmod(0o600)
            self.socket_path.unlink(missing_ok=True)  # a dead server's socket file: nothing answers on it
        except BaseException:
            self._unlock_folder()
            raise
        # No TCP port (port 0): only this user can reach the unix socket (perm 700).
        args = [
            self.binary,
            "--port",
            "0",
            "--unixsocket",
            str(self.socket_path),
            "--unixsocketperm",
            "700",
            "--dir",
            str(self.folder),
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
            "--save",
            "",
            "--daemonize",
            "no",
            "--loglevel",
            "warning",
            "--logfile",
            str(self.folder / "redis.log"),
        ]
        try:
            return self._run(args, timeout)
        except BaseException:
            self._unlock_folder()
            raise

    def _run(self, args: list[str], timeout: float) -> RedisProcess:
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"redis-server exited with code {self.proc.returncode}; see {self.folder / 'redis.log'}"
                )
            if self.ping():
                return self
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"redis-server did not answer within {timeout:.0f}s")

    def _lock_folder(self) -> None:
        """Hold an flock on the data folder while this server runs: a second Cortex on the same
        folder refuses even when the socket is gone. The kernel drops it when this process ends;
        the file holds the holder's PID, which a refused second one names."""
        if fcntl is None or self._lock is not None:
            return
        fd = _locked(self.folder / LOCK_NAME)
        if fd is None:
            raise RuntimeError(
                f"another Cortex ({_holder(self.folder / LOCK_NAME)}) runs a redis-server on the data folder "
                f"{self.folder}; one server per folder"
            )
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock = fd

    def _adopt_legacy(self, say: Callable[[str], None]) -> None:
        """Earlier versions kept one Redis for every brain in `home/redis/` itself: its data
        moves into the first brain's own folder started since, which is the brain it then
        served (the old server served whichever brain it was started on). Left where it is
        while an older Cortex still runs on it."""
        if self.brain is None:
            return
        shared = self.folder.parent
        present = [name for name in LEGACY_DATA if (shared / name).exists()]
        if not present or any((self.folder / name).exists() for name in LEGACY_DATA):
            return
        fd = _locked(shared / LOCK_NAME) if fcntl is not None else None
        if fcntl is not None and fd is None:
            return  # an older Cortex serves from it now; its queue stays with it
        try:
            for name in present:
                os.replace(shared / name, self.folder / name)
        finally:
            if fd is not None:
                os.close(fd)
        (shared / LOCK_NAME).unlink(missing_ok=True)
        (shared / "redis.sock").unlink(missing_ok=True)
        say(f"guest queue: moved the private Redis's data from {shared} into {self.folder}, this brain's own")

    def _stop_leftover(self, say: Callable[[str], None], timeout: float = 10.0) -> None:
        """A Redis answering on this folder's socket while its lock is ours was left by a killed
        Cortex: asked to shut down (it writes its AOF first), then waited for."""
        if not self.ping():
            return
        if self._lock is None:  # no flock here: nothing tells a leftover from a live Cortex's
            raise RuntimeError(f"a redis-server already answers on {self.socket_path}, perhaps another Cortex's")
        _send(self.socket_path, b"SHUTDOWN\r\n")
        deadline = time.monotonic() + timeout
        while self.ping():
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"a redis-server left on {self.socket_path} by a stopped Cortex did not shut down when asked"
                )
            time.sleep(0.05)
        say(f"guest queue: stopped the redis-server a stopped Cortex left on {self.socket_path}; starting afresh")

    def _unlock_folder(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def ping(self) -> bool:
        return _send(self.socket_path, b"PING\r\n").startswith(b"+PONG")

    def stop(self) -> None:
        """Stop gracefully (SIGTERM: Redis flushes the AOF), then wait."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.proc = None
        self._unlock_folder()

    def kill(self) -> None:
        """Kill without a chance to flush: a crash, for tests."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=5)
        self.proc = None
        self._unlock_folder()


def _send(path: Path, command: bytes) -> bytes:
    """One command over the raw unix socket; the reply's first bytes, or b"" (nothing answers)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(0.5)
            s.connect(str(path))
            s.sendall(command)
            return s.recv(64)
    except OSError:
        return b""


def _locked(path: Path) -> int | None:
    """A descriptor holding an exclusive flock on `path`, or None while another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _holder(path: Path) -> str:
    try:
        pid = path.read_text().strip()
    except OSError:
        pid = ""
    return f"PID {pid}" if pid.isdigit() else "another process"


def _only_mine(folder: Path) -> None:
    """The folder 0700 and its files 0600, where this user owns them."""
    for path in (folder, *folder.iterdir()):
        try:
            if path.stat().st_uid == os.geteuid() and not path.is_symlink():
                path.chmod(0o700 if path.is_dir() else 0o600)
        except OSError:
            pass


def _die_with_parent() -> None:
    """In the child: files it makes are its user's alone (its append-only file holds cached
    answers and proposals), and Linux SIGTERMs it when the server dies, even by kill -9."""
    os.umask(0o077)
    try:
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass  # not Linux: a killed server may leave its Redis behind; start() then refuses

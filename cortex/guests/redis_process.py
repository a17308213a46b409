"""A private redis-server process on a unix socket, for the embedded default.

`cortex serve` with no REDIS_URL runs one in the state folder with append-only
persistence, so pending proposals survive a restart; the tests use the same
class to start, kill and restart real servers. This module never imports
`redis`: readiness is a PING over the raw socket.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

__all__ = ["LOCK_NAME", "NOT_INSTALLED", "RedisProcess", "redis_server_binary"]

try:
    import fcntl
except ImportError:  # Windows: no flock; the ping alone guards the folder
    fcntl = None  # type: ignore[assignment]

NOT_INSTALLED = "disabled: redis-server not installed"
LOCK_NAME = "cortex-redis.lock"


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

    @property
    def socket_path(self) -> Path:
        return self.folder / "redis.sock"

    @property
    def url(self) -> str:
        return f"unix://{self.socket_path}"

    def start(self, timeout: float = 10.0) -> "RedisProcess":
        """Start the server and wait until it answers PING; RuntimeError if it does not."""
        if self.binary is None:
            raise RuntimeError("redis-server is not installed")
        # sun_path holds 107 bytes on Linux (103 on macOS); a longer path cannot be bound.
        if len(str(self.socket_path).encode()) > 103:
            raise RuntimeError(
                f"the socket path {self.socket_path} is too long for a unix socket; "
                "use a shorter CORTEX_HOME or set REDIS_URL"
            )
        self.folder.mkdir(parents=True, exist_ok=True)
        # Asked before the socket is touched: removing it first made the ping always fail,
        # and a second server then ran on the same data folder and AOF.
        if self.ping():
            # A private Redis left running by a server that was killed (kill -9 skips
            # every cleanup), or another Cortex's: two servers on one AOF would corrupt it.
            raise RuntimeError(f"a redis-server is already running on {self.socket_path}; stop it first")
        self._lock_folder()
        self.socket_path.unlink(missing_ok=True)  # a dead server's socket file: nothing answers on it
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

    def _run(self, args: list[str], timeout: float) -> "RedisProcess":
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
        folder refuses even when the socket is gone. The kernel drops it when this process ends."""
        if fcntl is None or self._lock is not None:
            return
        fd = os.open(self.folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise RuntimeError(
                f"another Cortex runs a redis-server on the data folder {self.folder}; one server per folder"
            ) from None
        self._lock = fd

    def _unlock_folder(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def ping(self) -> bool:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(0.5)
                s.connect(str(self.socket_path))
                s.sendall(b"PING\r\n")
                return s.recv(64).startswith(b"+PONG")
        except OSError:
            return False

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


def _die_with_parent() -> None:
    """In the child: ask Linux to SIGTERM it when the server dies, even by kill -9."""
    try:
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass  # not Linux: a killed server may leave its Redis behind; start() then refuses

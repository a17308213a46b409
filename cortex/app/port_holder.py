"""Who listens on a TCP port: the one line `cortex serve` says when its port is taken.

"Address already in use" leaves the owner to find the process; on Linux the kernel says
it. `/proc/net/tcp` and `tcp6` list the listening sockets with their inode, and
`/proc/<pid>/fd/` links name the socket each process holds, so the holder's PID and
command line are found without a tool (lsof, ss) that may not be installed. Only the
owner's own processes can be looked into; another user's listener is said as such.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["listener", "port_holder", "served_brain"]

LISTEN = "0A"  # the TCP state column of /proc/net/tcp for a listening socket
PROC = Path("/proc")


def port_holder(port: int, proc: Path = PROC) -> str:
    """Who listens on `port`, in words: "PID 123 (cortex serve --port 8765)", or what is known."""
    pid = listener(port, proc)
    if pid is not None:
        return f"PID {pid} ({_command(proc / pid)})"
    inodes = _listening_inodes(port, proc)
    return "a process of another user" if inodes else "another process"


def served_brain(pid: str, proc: Path = PROC) -> str | None:
    """The brain a `cortex serve` process serves, from its arguments or environment, or None
    when it is no Cortex server or says nothing readable (another user's process)."""
    try:
        argv = [a.decode(errors="replace") for a in (proc / pid / "cmdline").read_bytes().split(b"\0") if a]
        environ = (proc / pid / "environ").read_bytes().split(b"\0")
    except OSError:
        return None
    if "serve" not in argv or not any("cortex" in a for a in argv):
        return None
    for i, arg in enumerate(argv):
        if arg.startswith("--brain="):
            return arg.split("=", 1)[1]
        if arg == "--brain" and i + 1 < len(argv):
            return argv[i + 1]
    env = dict(e.decode(errors="replace").split("=", 1) for e in environ if b"=" in e)
    if env.get("CORTEX_BRAIN"):
        return env["CORTEX_BRAIN"]
    home = env.get("CORTEX_HOME") or (env.get("HOME", "~") + "/.cortex")
    return f"{home}/brain"


def listener(port: int, proc: Path = PROC) -> str | None:
    """The PID of the process of this user that listens on `port`, or None."""
    inodes = _listening_inodes(port, proc)
    if not inodes:
        return None
    for pid in _pids(proc):
        try:
            fds = list((proc / pid / "fd").iterdir())
        except OSError:
            continue  # another user's process, or gone
        for fd in fds:
            try:
                link = os.readlink(fd)
            except OSError:
                continue
            if link.startswith("socket:[") and link[8:-1] in inodes:
                return pid
    return None


def _listening_inodes(port: int, proc: Path) -> set[str] | None:
    """The inodes of the sockets listening on `port` (any address); None without /proc/net."""
    found: set[str] = set()
    seen = False
    for name in ("tcp", "tcp6"):
        try:
            lines = (proc / "net" / name).read_text().splitlines()[1:]
        except OSError:
            continue
        seen = True
        for line in lines:
            cols = line.split()
            if len(cols) > 9 and cols[3] == LISTEN and int(cols[1].rsplit(":", 1)[1], 16) == port:
                found.add(cols[9])
    return found if seen else None


def _pids(proc: Path) -> list[str]:
    try:
        return sorted((p.name for p in proc.iterdir() if p.name.isdigit()), key=int)
    except OSError:
        return []


def _command(folder: Path, limit: int = 120) -> str:
    """A process's command line, shortened: the program's own name, then its arguments. A script
    run by its interpreter's shebang (`cortex`, installed) is named for the script."""
    try:
        argv = [a.decode(errors="replace") for a in (folder / "cmdline").read_bytes().split(b"\0") if a]
    except OSError:
        argv = []
    if not argv:
        return "its command line is hidden"
    if Path(argv[0]).name.startswith("python") and len(argv) > 1 and not argv[1].startswith("-"):
        argv = argv[1:]
    argv[0] = Path(argv[0]).name
    text = " ".join(argv)
    return text if len(text) <= limit else text[: limit - 1] + "…"

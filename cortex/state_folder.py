"""The state folder (CORTEX_HOME): made the owner's alone, and checked before it is trusted.

Files there open the owner's doors: the owner token, the URL secret, the console's signing
key, the OAuth records, the header file. Cortex makes the folder 0700 and those files 0600,
and, as ssh does with ~/.ssh, refuses to start when the folder or one of those files is
owned by another user (root excepted) or writable by group or others: another local user
could have planted a token there, and a server started on it would take their token as the
owner's. The refusal is one line naming the file and the fix. A folder an older Cortex made
0755 is the owner's and stays as it is.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from cortex.errors import BadInput
from cortex.files import private_folder

__all__ = ["DOOR_FILES", "check", "make"]

# The files whose content opens a door, by name in the state folder.
DOOR_FILES = (
    "owner-token",
    "url-secret",
    "console-key",
    "console-epoch",
    "oauth.json",
    "oauth.json.log",
    "owner-header",
)


def make(home: Path) -> Path:
    """The state folder, made 0700 when missing (and each missing folder above it)."""
    return private_folder(home)


def check(home: Path) -> None:
    """Refuse (BadInput, one line) a state folder or door file that is not the owner's alone:
    owned by another user than this process's (root excepted) or writable by group or others.
    Nothing missing is refused: the first start makes it."""
    for path in (home, *(home / name for name in DOOR_FILES)):
        try:
            st = path.lstat()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise BadInput(f"{path} cannot be read ({exc.strerror}); CORTEX_HOME must be a folder of yours") from None
        why = _not_mine(path, st)
        if why:
            raise BadInput(why)


def _not_mine(path: Path, st: os.stat_result) -> str | None:
    what = "the state folder" if stat.S_ISDIR(st.st_mode) else "a secret file of the state folder"
    me = os.geteuid()
    if stat.S_ISLNK(st.st_mode):
        return f"{path} is a symbolic link; {what} must be a real one: remove it, and Cortex makes a new one"
    if st.st_uid not in (me, 0):
        return (
            f"{path} is owned by user {st.st_uid}, not by you ({me}): {what} must be yours alone; "
            f"remove it or use a CORTEX_HOME of your own"
        )
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (
            f"{path} is writable by {'others' if st.st_mode & stat.S_IWOTH else 'its group'} "
            f"(mode {stat.S_IMODE(st.st_mode):04o}): {what} must be yours alone; chmod go-w {path}"
        )
    return None

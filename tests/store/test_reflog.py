"""The branch's reflog read from where the last read ended (`store.reflog`): the same moves
libgit2 reads from the whole file, each once, after appends, trims and half-written lines."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from cortex.store.reflog import Mark, moves_in, read_after


def _line(i: int, message: str = "commit: x") -> bytes:
    old, new = f"{i:040x}", f"{i + 1:040x}"
    return f"{old} {new} Ada <ada@example.org> {1700000000 + i} +0000\t{message}\n".encode()


def _moves(*ids: int) -> list[tuple[str, str, str]]:
    return [(f"{i:040x}", f"{i + 1:040x}", "commit: x") for i in ids]


def test_appended_lines_are_read_once_each_in_order(tmp_path: Path) -> None:
    log = tmp_path / "main"
    log.write_bytes(_line(0) + _line(1))
    moves, mark = read_after(log, None)
    assert moves == [] and mark == Mark(len(_line(0)) * 2, _line(1))  # a first read starts at the end
    with log.open("ab") as f:
        f.write(_line(2) + _line(3))
    moves, mark = read_after(log, mark)
    assert moves == _moves(2, 3)
    assert read_after(log, mark) == ([], mark)


def test_a_line_still_being_written_waits_for_its_end(tmp_path: Path) -> None:
    log = tmp_path / "main"
    log.write_bytes(_line(0))
    _, mark = read_after(log, None)
    with log.open("ab") as f:
        f.write(_line(1) + _line(2)[:30])
    moves, mark = read_after(log, mark)
    assert moves == _moves(1)
    with log.open("ab") as f:
        f.write(_line(2)[30:])
    assert read_after(log, mark)[0] == _moves(2)


def test_a_trimmed_file_is_read_from_the_line_last_read(tmp_path: Path) -> None:
    """`git reflog expire` rewrites the file without its old lines: the offset no longer
    points past the line last read, which is found again."""
    log = tmp_path / "main"
    log.write_bytes(b"".join(_line(i) for i in range(6)))
    _, mark = read_after(log, None)
    log.write_bytes(b"".join(_line(i) for i in range(4, 9)))  # 0-3 trimmed, 6-8 new
    moves, mark = read_after(log, mark)
    assert moves == _moves(6, 7, 8)
    assert read_after(log, mark)[0] == []


def test_a_line_trimmed_away_gives_no_moves(tmp_path: Path) -> None:
    log = tmp_path / "main"
    log.write_bytes(b"".join(_line(i) for i in range(3)))
    _, mark = read_after(log, None)
    log.write_bytes(_line(7))  # the line last read is gone: where to start is unknown
    moves, mark = read_after(log, mark)
    assert moves == [] and mark == Mark(len(_line(7)), _line(7))
    with log.open("ab") as f:
        f.write(_line(8))
    assert read_after(log, mark)[0] == _moves(8)


def test_no_file_yet_then_one(tmp_path: Path) -> None:
    log = tmp_path / "main"
    moves, mark = read_after(log, None)
    assert (moves, mark) == ([], Mark(0, b""))
    log.write_bytes(_line(0) + _line(1))
    assert read_after(log, mark)[0] == _moves(0, 1)


def test_the_newest_limit_are_kept(tmp_path: Path) -> None:
    log = tmp_path / "main"
    log.write_bytes(b"")
    _, mark = read_after(log, None)
    log.write_bytes(b"".join(_line(i) for i in range(10)))
    assert read_after(log, mark, limit=3)[0] == _moves(7, 8, 9)


@pytest.mark.parametrize("junk", [b"\n", b"not a reflog line\n", b"a b\tno committer\n"])
def test_a_line_of_another_shape_is_skipped(junk: bytes) -> None:
    assert moves_in(_line(0) + junk + _line(1)) == _moves(0, 1)


def test_it_reads_what_libgit2_reads_from_a_real_branch(tmp_path: Path) -> None:
    """Commits, a reset to HEAD~1 and an amend with a tab and non-ASCII in the message."""
    repo = tmp_path / "r"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    env |= {
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "a@x",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "a@x",
    }

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    repo.mkdir()
    git("init", "-q", "-b", "main")
    git("commit", "-q", "--allow-empty", "-m", "first")
    log = repo / ".git/logs/refs/heads/main"
    _, mark = read_after(log, None)
    for i in range(3):
        git("commit", "-q", "--allow-empty", "-m", f"n{i}")
    git("reset", "-q", "--hard", "HEAD~1")
    git("commit", "-q", "--amend", "--allow-empty", "-m", "café\tand a tab")
    moves, _ = read_after(log, mark)
    ref = pygit2.Repository(str(repo)).references["refs/heads/main"]
    theirs = [(str(e.oid_old), str(e.oid_new), e.message) for e in ref.log()][:5][::-1]
    assert moves == theirs
    assert moves[3][2] == "reset: moving to HEAD~1"

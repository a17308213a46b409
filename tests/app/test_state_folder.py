"""The state folder is the owner's alone (issue 42): made 0700 with its secrets 0600, and
refused at start, in one line naming the file and the fix, when another user owns it or
could write to it.

The planted-token case needs a real second user: the test makes a throwaway one with
`useradd` and removes it. That needs root; elsewhere it skips, and in CI (CI=true) it fails.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from reliakit import free_port
from serverkit import make_settings, serve

from cortex.app.server import assemble
from cortex.errors import BadInput
from cortex.state_folder import DOOR_FILES

pytestmark = pytest.mark.slow  # servers


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_state_folder_is_0700_and_its_secrets_0600(tmp_path: Path, brain_path: Path) -> None:
    with serve(tmp_path, brain_path) as running:
        home = running.parts.settings.home
        assert _mode(home) == 0o700
        made = [home / name for name in DOOR_FILES if (home / name).exists()]
        assert {p.name for p in made} >= {"owner-header", "console-key"}
        assert all(_mode(p) == 0o600 for p in made), {p.name: oct(_mode(p)) for p in made}


def test_a_state_folder_another_part_makes_first_is_0700_too(tmp_path: Path) -> None:
    """The saved index and the private Redis make their folders under CORTEX_HOME; when one
    of them makes CORTEX_HOME itself, it is 0700 as the start-up makes it (it was 0755)."""
    from cortex.guests.redis_process import RedisProcess
    from cortex.index.saved import write_atomically

    home = tmp_path / "fresh" / "home"
    write_atomically(home / "index" / "abc" / "index.bin", [b"x"])
    assert _mode(home) == _mode(home / "index") == _mode(tmp_path / "fresh") == 0o700
    other = tmp_path / "other" / "home"
    redis = RedisProcess.for_brain(other, tmp_path / "brain")
    if redis.binary is not None:
        try:
            redis.start()
        finally:
            redis.stop()
        assert _mode(other) == 0o700 and _mode(other / "redis") == 0o700


@pytest.mark.parametrize("where", ["folder", "owner-token", "oauth.json"])
def test_a_folder_or_door_file_others_can_write_refuses_the_start(tmp_path: Path, brain_path: Path, where) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    target = home if where == "folder" else home / where
    if where != "folder":
        target.write_text("x" * 40 + "\n")
    target.chmod(0o777 if where == "folder" else 0o666)
    with pytest.raises(BadInput) as err:
        assemble(make_settings(tmp_path, brain_path))
    said = str(err.value)
    assert str(target) in said and "chmod go-w" in said and "\n" not in said, said


def test_a_folder_an_older_cortex_made_0755_is_still_served(tmp_path: Path, brain_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    home.chmod(0o755)
    with serve(tmp_path, brain_path) as running:
        assert running.parts.settings.home == home


def _second_user() -> str:
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("this test makes a second user: CI runs as root with useradd")
        pytest.skip("making a second user needs root and useradd")
    name = f"cx{uuid.uuid4().hex[:8]}"
    subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
    return name


def test_a_token_another_user_planted_is_refused_not_served(tmp_path: Path, brain_path: Path) -> None:
    user = _second_user()
    try:
        uid = int(subprocess.run(["id", "-u", user], capture_output=True, text=True, check=True).stdout)
        home = tmp_path / "planted"
        home.mkdir()
        (home / "owner-token").write_text("planted-" + "t" * 40 + "\n")
        for path in (home, home / "owner-token"):
            os.chown(path, uid, uid)
        home.chmod(0o777)
        (home / "owner-token").chmod(0o644)
        env = {k: v for k, v in os.environ.items() if k != "CORTEX_TOKEN"}
        env |= {"CORTEX_HOME": str(home), "CORTEX_BRAIN": str(brain_path), "CORTEX_PORT": str(free_port())}
        run = subprocess.run(
            [sys.executable, "-m", "cortex.cli", "serve"], env=env, capture_output=True, text=True, timeout=60
        )
        assert run.returncode != 0, run.stdout
        said = run.stderr.strip().splitlines()[-1]
        assert str(home) in said and f"owned by user {uid}" in said and "CORTEX_HOME of your own" in said, said
    finally:
        subprocess.run(["userdel", user], check=False)

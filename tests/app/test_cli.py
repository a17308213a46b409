"""The `cortex` command as a new user meets it: init, and serve on the embedded default."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from reliakit import ready_health

from cortex.cli import main


def test_init_makes_a_working_tree_brain_on_main(tmp_path: Path):
    target = tmp_path / "notes"
    assert main(["init", str(target)]) == 0
    assert (target / "profile.md").exists() and (target / "notes" / "house-rules.md").exists()
    assert (target / "INDEX.md").exists()
    branch = subprocess.check_output(["git", "branch", "--show-current"], cwd=target, text=True).strip()
    assert branch == "main"
    status = subprocess.check_output(["git", "status", "--porcelain"], cwd=target, text=True)
    assert status == ""  # the working tree matches the first commit


def test_init_bare_and_refuses_a_non_empty_folder(tmp_path: Path, capsys):
    assert main(["init", "--bare", str(tmp_path / "b.git")]) == 0
    assert (tmp_path / "b.git" / "HEAD").exists()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    capsys.readouterr()
    assert main(["init", "--bare", str(tmp_path / "full")]) == 1  # a bare brain needs a new folder
    err = capsys.readouterr().err
    assert err.startswith("cortex init: ") and err.count("\n") == 1
    assert main(["init", str(tmp_path / "b.git")]) == 1  # already a repository


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_once(home: Path, port: int) -> tuple[str, dict]:
    """Start `cortex serve` with nothing configured but the state folder; return its banner and /healthz."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "REDIS_URL", "ANTHROPIC"))}
    env["CORTEX_HOME"] = str(home)
    proc = subprocess.Popen(
        [sys.executable, "-m", "cortex.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        health = ready_health(f"http://127.0.0.1:{port}", proc)
        if health is None:
            raise AssertionError("server did not come up")
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=20)
    return out, health


@pytest.mark.slow
def test_serve_on_the_embedded_default_prints_the_token_once(tmp_path: Path):
    home = tmp_path / "state"
    out, health = serve_once(home, free_port())
    token = (home / "owner-token").read_text().strip()
    assert token in out and "claude mcp add --transport http" in out and "/s/" in out
    assert health["notes"] >= 5 and len(health["sha"]) == 40
    assert oct((home / "owner-token").stat().st_mode & 0o777) == "0o600"
    out2, health2 = serve_once(home, free_port())
    assert token not in out2 and "owner-token" in out2
    assert health2["sha"] == health["sha"]  # the same brain, not a new one


@pytest.mark.slow
def test_an_empty_repository_is_served_and_its_first_banner_says_what_to_do(tmp_path: Path):
    """It was served as "(head )", and then each read said only "the brain has no commits yet"."""
    from reliakit import ServeProcess
    from serverkit import TOKEN, call

    brain = tmp_path / "empty.git"
    subprocess.run(["git", "init", "--bare", "-q", str(brain)], check=True)
    serve = ServeProcess(tmp_path / "home", brain, {"CORTEX_TOKEN": TOKEN}, tmp_path / "bin", tmp_path / "log")
    serve.start()
    try:
        banner = serve.output()
        assert f"Cortex serving {brain} at {serve.url}/mcp (no commits yet)" in banner and "(head" not in banner
        hint = "write a first note with brain_write (mode create), or commit one by hand"
        assert f"The brain is empty: {hint}" in banner and banner.count(hint) == 1
        r = call(f"{serve.url}/mcp", "brain_read", path="profile.md")
        assert r.error is not None and f"the brain has no commits yet: {hint}" in r.error
        w = call(f"{serve.url}/mcp", "brain_write", path="notes/first.md", mode="create", content="# First\n")
        assert w.error is None and call(f"{serve.url}/mcp", "brain_read", path="notes/first.md").error is None
    finally:
        serve.stop()

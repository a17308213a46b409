"""`cortex serve` refuses what it cannot use safely, in one line, before it listens.

A blank URL secret opened the owner door at `/s/%20/mcp`; `--port 70000` bound port 4464
while the banner said 70000. Each case here starts a real `cortex serve` and checks that
it exits with one line naming what to fix, printed no banner and made no file.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from reliakit import ROOT, free_port

from cortex.app.brain_setup import init_brain

pytestmark = pytest.mark.slow  # each case starts a process

STRONG = "a-strong-secret-0123456789"


def serve(tmp_path: Path, env: dict[str, str], *args: str, files: dict[str, str] | None = None):
    """Run `cortex serve` on a fresh brain; (return code, stdout, stderr lines, the state folder's files)."""
    brain = tmp_path / "brain.git"
    if not brain.exists():
        init_brain(brain, bare=True)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    for name, text in (files or {}).items():
        (home / name).write_text(text)
    before = sorted(p.name for p in home.iterdir())
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "REDIS_URL", "ANTHROPIC", "PORT"))}
    base.update(CORTEX_HOME=str(home), CORTEX_BRAIN=str(brain))
    if "--port" not in args and "CORTEX_PORT" not in env:
        args = (*args, "--port", str(free_port()))
    r = subprocess.run(
        [sys.executable, "-m", "cortex.cli", "serve", *args],
        env={**base, **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    made = sorted(set(p.name for p in home.iterdir()) - set(before))
    return r.returncode, r.stdout, r.stderr.strip().splitlines(), made


WEAK = [
    ({"CORTEX_URL_SECRET": " "}, {}, "CORTEX_URL_SECRET is blank"),
    ({"CORTEX_TOKEN": " "}, {}, "CORTEX_TOKEN is blank"),
    ({"CORTEX_CONSOLE_PASSCODE": " "}, {}, "CORTEX_CONSOLE_PASSCODE is blank"),
    ({"CORTEX_WEBHOOK_SECRET": "\t"}, {}, "CORTEX_WEBHOOK_SECRET is blank"),
    ({"CORTEX_TOKEN": "hunter2"}, {}, "CORTEX_TOKEN is shorter than 16 characters"),
    ({"CORTEX_CONSOLE_PASSCODE": "correct horse"}, {}, "CORTEX_CONSOLE_PASSCODE is shorter than 16 characters"),
    ({"CORTEX_URL_SECRET": f" {STRONG} "}, {}, "CORTEX_URL_SECRET begins or ends with white space"),
    ({"CORTEX_TOKEN": STRONG, "CORTEX_URL_SECRET": STRONG}, {}, "CORTEX_URL_SECRET is the same as CORTEX_TOKEN"),
    (
        {"CORTEX_TOKEN": STRONG, "CORTEX_CONSOLE_PASSCODE": STRONG},
        {},
        "CORTEX_CONSOLE_PASSCODE is the same as CORTEX_TOKEN",
    ),
    ({}, {"owner-token": " \n"}, "owner-token is blank; delete it"),
    ({}, {"url-secret": "short\n"}, "url-secret is shorter than 16 characters; delete it"),
    ({"CORTEX_TOKEN": STRONG}, {"url-secret": STRONG + "\n"}, "url-secret is the same as CORTEX_TOKEN"),
]


@pytest.mark.parametrize("env,files,said", WEAK, ids=[w[2] for w in WEAK])
def test_a_weak_or_shared_secret_is_refused_in_one_line_naming_it(tmp_path, env, files, said):
    rc, out, err, made = serve(tmp_path, env, files=files)
    assert rc == 1 and len(err) == 1 and err[0].startswith("cortex serve: ") and said in err[0], err
    assert "Owner token" not in out and "/mcp" not in out  # no banner
    assert made == []  # nothing generated, no index, no Redis folder
    for value in [*env.values(), *files.values()]:
        if value.strip() and len(value.strip()) >= 16:
            assert value.strip() not in err[0]  # a refusal names the secret, never shows it


def test_generated_secrets_are_strong_and_distinct(tmp_path):
    from cortex.settings import SECRET_FILES, Settings, check_door_secrets, load_or_make_secret, weak_secret

    settings = Settings.from_env({"CORTEX_HOME": str(tmp_path)})
    made = [load_or_make_secret(tmp_path / name)[0] for name in SECRET_FILES.values()]
    assert all(weak_secret(s) is None for s in made) and len(set(made)) == len(made)
    check_door_secrets(settings)


@pytest.mark.parametrize("port", ["70000", "-1", "0", "80a", "６５"])
def test_a_port_out_of_range_is_refused_like_cortex_port(tmp_path, port):
    rc, out, err, _ = serve(tmp_path, {}, "--port", port)
    assert rc == 1 and err == [f"cortex serve: --port must be a whole number from 1 to 65535, not {port!r}"]
    assert out == ""
    rc, out, err, _ = serve(tmp_path, {"CORTEX_PORT": port})
    assert rc == 1 and err == [f"cortex serve: CORTEX_PORT must be a whole number from 1 to 65535, not {port!r}"]


def test_a_port_in_use_or_a_host_not_here_is_said_before_the_banner(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        rc, out, err, made = serve(tmp_path, {"CORTEX_TOKEN": STRONG}, "--port", str(port))
    # The holder is this test's own process: named by PID and command line.
    assert rc == 1 and len(err) == 1, err
    assert err[0].startswith(f"cortex serve: cannot listen on 127.0.0.1:{port}: PID {os.getpid()} (python"), err
    assert err[0].endswith(" listens there; stop it, or choose another port (--port)"), err
    assert out == "" and made == []
    rc, out, err, _ = serve(tmp_path, {"CORTEX_TOKEN": STRONG}, "--host", "192.0.2.1")  # TEST-NET-1: not ours
    assert rc == 1 and len(err) == 1 and err[0].startswith("cortex serve: cannot listen on 192.0.2.1:"), err
    assert out == ""

"""Attacks on a real `cortex serve` process: each asserts the exact refusal and that nothing was committed.

One family per finding of issue 11: the sign-in throttle, bounded input, masking,
one guest against another, and what the public endpoints say.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import httpx
import pytest

from conftest import TOKEN, call
from cortex.cli import init_brain
from reliakit import ServeProcess

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@pytest.fixture
def serve(tmp_path: Path):
    """Start `cortex serve` on a fresh bare brain; `serve(env)` returns the running process."""
    running: list[ServeProcess] = []

    def start(env: dict[str, str] | None = None) -> ServeProcess:
        brain = tmp_path / "brain.git"
        if not brain.exists():
            init_brain(brain, bare=True)
        proc = ServeProcess(tmp_path / "home", brain, {"CORTEX_TOKEN": TOKEN, **(env or {})},
                            tmp_path / "bin", tmp_path / "serve.log")
        proc.start()
        running.append(proc)
        return proc

    yield start
    for proc in running:
        proc.stop()


def commits(brain: Path) -> int:
    return int(subprocess.run(["git", "rev-list", "--count", "main"], cwd=brain, capture_output=True,
                              text=True, check=True).stdout)


def sign_in(url: str, secret: str, headers: dict[str, str] | None = None) -> httpx.Response:
    c = httpx.Client(base_url=url, follow_redirects=False, timeout=30, headers=headers or {})
    form = c.get("/console/signin")
    return c.post("/console/signin", data={"csrf": CSRF.search(form.text).group(1), "secret": secret})


# -- 2. the sign-in throttle ------------------------------------------------------

def test_a_spoofed_forwarded_for_does_not_reset_the_throttle(serve):
    proc = serve({"CORTEX_CONSOLE_PASSCODE": "correct horse battery"})
    codes = [sign_in(proc.url, "wrong", {"X-Forwarded-For": f"10.0.0.{n}"}).status_code for n in range(8)]
    assert codes == [401] * 5 + [429] * 3
    # The right passcode from yet another "address" waits too: the address is the socket's.
    r = sign_in(proc.url, "correct horse battery", {"X-Forwarded-For": "10.9.9.9"})
    assert r.status_code == 429 and "from this address" in r.text
    assert sign_in(proc.url, TOKEN).status_code == 303  # the owner token is never locked out


def test_no_choice_of_address_gets_past_the_limit_across_addresses(serve):
    # Behind a trusted proxy every client has its own address; twenty failures an hour in all.
    proc = serve({"CORTEX_CONSOLE_PASSCODE": "correct horse battery", "CORTEX_TRUSTED_PROXIES": "127.0.0.1"})
    codes = [sign_in(proc.url, "guess", {"X-Forwarded-For": f"10.0.{n}.1"}).status_code for n in range(20)]
    assert codes == [401] * 20
    r = sign_in(proc.url, "correct horse battery", {"X-Forwarded-For": "10.1.1.1"})
    assert r.status_code == 429 and "from all addresses" in r.text and int(r.headers["retry-after"]) > 3000
    r = sign_in(proc.url, TOKEN, {"X-Forwarded-For": "10.1.1.1"})
    assert r.status_code == 303


def test_behind_a_trusted_proxy_one_guesser_does_not_lock_out_the_owner(serve):
    proc = serve({"CORTEX_CONSOLE_PASSCODE": "correct horse battery", "CORTEX_TRUSTED_PROXIES": "127.0.0.1"})
    for _ in range(6):
        sign_in(proc.url, "guess", {"X-Forwarded-For": "203.0.113.7"})
    assert sign_in(proc.url, "guess", {"X-Forwarded-For": "203.0.113.7"}).status_code == 429
    r = sign_in(proc.url, "correct horse battery", {"X-Forwarded-For": "198.51.100.2"})
    assert r.status_code == 303

"""Headless Chromium for the tests that need a real browser: Debian's /usr/bin/chromium,
driven by Playwright (never `playwright install`: ops/system-deps.sh --tests installs it).

In CI (CI=true) a missing Chromium or Playwright fails those tests; elsewhere they skip
with the reason.
"""

from __future__ import annotations

import os

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def need_browser() -> None:
    problems = []
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        problems.append("playwright is not installed (pip install -e '.[test]')")
    if not os.access(CHROMIUM, os.X_OK):
        problems.append(f"{CHROMIUM} is missing (ops/system-deps.sh --tests installs Debian's chromium)")
    if not problems:
        return
    if os.environ.get("CI") == "true":
        pytest.fail("browser tests need: " + "; ".join(problems))
    pytest.skip("browser tests need: " + "; ".join(problems))


@pytest.fixture(scope="module")
def browser():
    """One Chromium for a test module."""
    need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def sign_in(page, base: str, secret: str | None = None) -> None:
    """Sign in to the console at `base` with the owner token (or `secret`)."""
    from conftest import TOKEN

    page.goto(f"{base}/console")
    assert page.url.endswith("/console/signin")
    page.fill("#secret", secret or TOKEN)
    with page.expect_navigation():
        page.click("button:has-text('Sign in')")

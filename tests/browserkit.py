"""Headless Chromium for the tests that need a real browser: Debian's /usr/bin/chromium,
driven by Playwright (never `playwright install`: ops/system-deps.sh --tests installs it).

In CI (CI=true) a missing Chromium or Playwright fails those tests; elsewhere they skip
with the reason.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from serverkit import TOKEN

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


# -- pages as a person sees them: screenshots, sign-in, and what a page must not do ------------

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "console"  # ignored by Git
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def shot(page, name: str) -> Path:
    """A full-page screenshot in test-artifacts/console/, never in a tracked file."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def sign_in(page, base: str, secret: str = TOKEN) -> None:
    page.goto(f"{base}/console")
    assert page.url.endswith("/console/signin")
    page.fill("#secret", secret)
    with page.expect_navigation():
        page.click("button:has-text('Sign in')")


def add_guest(page, base: str, name: str, scopes: str) -> None:
    """Add a guest through the console's form (signed in), landing on the page that shows its door."""
    page.goto(f"{base}/console/guests")
    form = page.locator("form[action='/console/guests/add']")
    form.locator("input[name=name]").fill(name)
    form.locator("textarea[name=scopes]").fill(scopes)
    with page.expect_navigation():
        form.locator("button[type=submit]").click()


# Elements whose text overflows their box (or the page) sideways; a scroller (overflow-x auto or
# scroll: a <pre>, a wide table's .scroll) and what is inside one may be wider, by design.
_OVERFLOW_JS = """() => {
  const out = [], W = document.documentElement.clientWidth;
  const name = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
  if (document.documentElement.scrollWidth > W + 1) out.push(`the page is ${document.documentElement.scrollWidth} px wide in ${W}`);
  for (const el of document.body.querySelectorAll('*')) {
    const cs = getComputedStyle(el);
    if (cs.display === 'none' || ['INPUT', 'TEXTAREA', 'SELECT', 'OPTION'].includes(el.tagName)) continue;
    const scroller = el.parentElement && el.parentElement.closest('pre, .scroll');
    if (scroller || ['auto', 'scroll'].includes(cs.overflowX)) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.right > W + 1 || r.left < -1) out.push(`${name(el)} spans ${Math.round(r.left)}..${Math.round(r.right)} px of ${W}`);
    else if (cs.display !== 'inline' && el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1)
      out.push(`${name(el)}: ${el.scrollWidth} px of text in ${el.clientWidth}`);
  }
  return out;
}"""

# Everything a page draws as text: its rendered text and every ::before/::after content.
_TEXT_JS = """() => {
  const parts = [document.body.innerText, document.title];
  for (const el of document.body.querySelectorAll('*'))
    for (const pseudo of ['::before', '::after']) {
      const c = getComputedStyle(el, pseudo).content;
      if (c && c !== 'none' && c !== 'normal') parts.push(c.replace(/^"|"$/g, ''));
    }
  return parts.join('\\n');
}"""

_EMPTY_BOX = re.compile(
    "[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\ufe0f\ufffd\ue000-\uf8ff\U000f0000-\U0010ffff]"
)


@functools.cache
def has_font_for(char: str) -> bool | None:
    """Whether an installed font has a glyph for `char` (fontconfig, as Chromium finds fonts on
    Linux); None when fc-list is not there to ask."""
    if shutil.which("fc-list") is None:
        return None
    listed = subprocess.run(["fc-list", f":charset={ord(char):x}", "family"], capture_output=True, text=True)
    return bool(listed.stdout.strip())


def page_problems(page) -> list[str]:
    """What a person would see wrong on the page: text overflowing sideways, or a character
    drawn as a missing glyph (an emoji or symbol that needs an emoji font, U+FFFD, private
    use, or any character no installed font has)."""
    problems = list(page.evaluate(_OVERFLOW_JS))
    text = page.evaluate(_TEXT_JS)
    for char in sorted(set(text)):
        if char.isascii():
            continue
        if _EMPTY_BOX.match(char):
            problems.append(f"U+{ord(char):04X} {char!r} needs a font not every machine has (an empty box)")
        elif has_font_for(char) is False:
            problems.append(f"U+{ord(char):04X} {char!r} is in no installed font: it renders as a missing glyph")
    for box in page.evaluate(
        "() => [...document.querySelectorAll('.icon')].map(e => [e.getBoundingClientRect().width,"
        " e.getBoundingClientRect().height, e.textContent])"
    ):
        if box[0] < 4 or box[1] < 4 or box[2]:
            problems.append(f"an icon is {box[0]:.0f}x{box[1]:.0f} px with text {box[2]!r}: not drawn by CSS")
    return problems

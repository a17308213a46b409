"""Signing in to the console as a person does: open the form, post the secret with its CSRF token."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import httpx
from serverkit import TOKEN

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def csrf_of(text: str) -> str:
    m = CSRF.search(text)
    assert m, "no CSRF field on the page"
    return m.group(1)


def signin(url: str, secret: str = TOKEN) -> tuple[httpx.Client, httpx.Response]:
    """A client that opened the sign-in form and posted `secret`; (client, the POST's reply)."""
    c = httpx.Client(base_url=url, follow_redirects=False, timeout=30)
    form = c.get("/console/signin")
    assert form.status_code == 200
    return c, c.post("/console/signin", data={"csrf": csrf_of(form.text), "secret": secret})


def owner(url: str) -> httpx.Client:
    c, r = signin(url)
    assert r.status_code == 303 and r.headers["location"] == "/console/proposals"
    return c


# A note that tries every way to run script in a page (the console must render it inert).
EVIL = (
    "# Evil\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n"
    "[click](javascript:alert(1)) [again](JaVaScRiPt:alert(2)) <javascript:alert(3)>\n\n"
    "[tab](java\tscript:alert(4)) [entity](&#106;avascript:alert(5)) ![pic](javascript:alert(6))\n\n"
    '<a href="javascript:alert(7)" onclick="alert(8)">raw</a> <svg onload=alert(9)>\n\n'
    "[ok](https://example.org/x) [mail](mailto:owner@example.org) [rel](other.md)\n\n"
    "key: sk-ant-api03-" + "Q7w8E9r0" * 5 + "\n"
)


class Tags(HTMLParser):
    """Every start tag with its attributes, to check what a page would run."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k.lower(): (v or "") for k, v in attrs}))


def active_markup(html: str) -> list[str]:
    """Anything in `html` a browser would run: script tags, on* handlers, script URLs."""
    parser = Tags()
    parser.feed(html)
    found = []
    for tag, attrs in parser.tags:
        if tag in ("script", "iframe", "object", "embed"):
            found.append(f"<{tag}>")
        for name, value in attrs.items():
            if name.startswith("on"):
                found.append(f"{tag} {name}=")
            squashed = re.sub(r"[\x00-\x20]", "", value).lower()
            if name in ("href", "src", "action", "formaction", "xlink:href") and (
                squashed.startswith("javascript:") or squashed.startswith("data:") or squashed.startswith("vbscript:")
            ):
                found.append(f"{tag} {name}={value}")
    return found

"""Signing in to the console as a person does: open the form, post the secret with its CSRF token."""

from __future__ import annotations

import re

import httpx
from conftest import TOKEN

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

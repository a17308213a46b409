"""A remote's credentials, and the rule that none of them is ever shown: a token or URL
user info is masked in every message and log line.

The Git library's credential callback (store.network) reads the token from here.
"""

from __future__ import annotations

import re

__all__ = ["Auth", "URL_CREDENTIALS"]

# The user info of a URL (`https://user:token@host`): what `scrub` and `display` take out.
URL_CREDENTIALS = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]*@")


class Auth:
    """Credentials for one remote, from the environment; never logged or put in a URL."""

    def __init__(self, token: str | None = None, user: str = "x-access-token"):
        self._token = token
        self._user = user

    @property
    def token(self) -> str | None:
        return self._token

    @property
    def user(self) -> str:
        return self._user

    def scrub(self, text: str) -> str:
        """`text` with the token and any URL credentials masked."""
        if self._token:
            text = text.replace(self._token, "[REDACTED token]")
        return URL_CREDENTIALS.sub(r"\1[REDACTED]@", text)

    @staticmethod
    def display(url: str) -> str:
        """`url` without user info or query: safe to print."""
        return URL_CREDENTIALS.sub(r"\1", url).split("?", 1)[0]

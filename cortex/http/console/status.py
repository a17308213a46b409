"""The Status page in sentences: the brain, its head, search, meaning, the guest door, hand
edits or the remote, and each problem said once, from the health report /healthz?detail=1
gives (its keys: guest door, meaning arm, watcher, remote) and the index's state.

Pure functions of those dicts, so a key a part adds later shows in the page's raw report
below the sentences until it is given one of its own.
"""

from __future__ import annotations

import json
import time
from typing import Any

from cortex.http.console.pages import ago

__all__ = ["plural", "raw_rows", "status_report"]


def plural(n: int, word: str, words: str | None = None) -> str:
    """'1 file', '2 files', '0 files'; `words` for an irregular plural ('1 is', '2 are')."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def _fraction(value: Any) -> tuple[int, int] | None:
    """'5/14' as (5, 14); None when it is not one."""
    try:
        done, total = str(value).split("/", 1)
        return int(done), int(total)
    except ValueError:
        return None


def _index(index: dict[str, Any]) -> str:
    state = index.get("index")
    if state == "ready":
        return f"is ready over {plural(int(index.get('notes', 0)), 'note')}."
    if state == "building":
        read, files = index.get("files_read", 0), index.get("files", 0)
        return f"is being built: {read:,} of {plural(int(files), 'file')} read; a search waits for it."
    if state == "loading the saved index":
        return "is starting: it reads the index saved at the last stop, if there is one."
    return f"is {state or 'not built yet'}; the first search builds it."


def _meaning(health: dict[str, Any], problems: list[str]) -> str | None:
    state = health.get("meaning")
    if state is None:
        return None
    counts = _fraction(health.get("meaning_notes"))
    done, total = counts if counts else (0, 0)
    reason = health.get("meaning_reason") or ""
    lexical = "search and ask match words only"
    if state == "ready":
        passages = health.get("meaning_passages")
        return (
            f"is on: all {plural(total, 'note')} embedded"
            + (f" ({plural(int(passages), 'passage')})" if isinstance(passages, int) else "")
            + "; search and ask find notes by meaning as well as by words."
        )
    if state == "embedding":
        rate = health.get("meaning_rate")
        speed = f", {rate} passages a second" if rate else ""
        return f"is embedding notes: {done:,} of {plural(total, 'note')} done{speed}; until then {lexical}."
    if state == "starting":
        return f"is starting; until it is ready {lexical}."
    if state == "off":
        return f"is off ({reason or 'CORTEX_MEANING=off'}): {lexical}."
    problems.append(f"Meaning is {state}: {reason or 'no reason given'}. Until it is fixed, {lexical}.")
    return f"is {state}; {lexical}."


def _guest_door(health: dict[str, Any], guests: int, problems: list[str]) -> str | None:
    door = health.get("guest_door")
    if door is None:
        return None
    for b in health.get("broken_guest_policies") or []:
        problems.append(
            f"The guest policy {b.get('file', '?')} cannot be read ({b.get('error', '?')}); "
            "that guest's door is closed until the file is fixed or the guest revoked."
        )
    if door == "ok":
        return f"is open: {plural(guests, 'guest')} may ask and propose."
    if str(door).startswith("degraded"):
        problems.append(
            "The guest door is degraded: the proposal queue (Redis) does not answer, so guests' asks "
            "and proposals fail, and the Proposals page cannot list them, until it does."
        )
        return f"is degraded; {plural(guests, 'guest')} cannot be served until Redis answers."
    why = str(health.get("guest_door_reason") or door).removeprefix("disabled: ")
    hint = " (set REDIS_URL, or install redis-server for a private one)" if "Redis" in why else ""
    return f"is closed: {why}{hint}. The owner's doors and this console work without it."


def _hand_edits(health: dict[str, Any], problems: list[str]) -> str | None:
    watch = health.get("hand_edits")
    if not isinstance(watch, dict):
        return None
    restored = list(watch.get("restored") or [])
    if watch.get("last_error") and watch["last_error"] not in restored:
        problems.append(f"The last hand edit could not be committed: {watch['last_error']}.")
    for why in watch.get("held") or []:
        problems.append(f"A hand edit is held back, not committed: {why}.")
    for what in watch.get("unwritten") or []:
        problems.append(f"A committed file could not be written to the working tree, and is out of date there: {what}.")
    for what in restored:
        problems.append(f"A hand commit took back an acknowledged write, which was put back: {what}.")
    acked = health.get("acknowledged")
    if isinstance(acked, dict):
        for what in acked.get("not_in_history_files") or []:
            problems.append(
                f"An acknowledged write is no longer in the branch's history (a reset or rewrite of yours; "
                f"Cortex does not undo it): {what}."
            )
    return (
        f"in {watch.get('watching', '?')} are committed {watch.get('debounce_ms', '?')} ms after a save; "
        f"{plural(int(watch.get('commits') or 0), 'commit')} of them since the server started."
    )


def _remote(health: dict[str, Any], now: float, problems: list[str]) -> str | None:
    remote = health.get("remote")
    if not isinstance(remote, dict):
        return None
    url = remote.get("url", "?")
    if remote.get("last_error"):
        problems.append(f"The last sync with {url} failed: {remote['last_error']}.")
    pending = int(remote.get("pending") or 0)
    fetched = remote.get("last_fetch")
    last = f"last fetched {ago(now - fetched)} ago" if isinstance(fetched, (int, float)) else "not fetched yet"
    waiting = f"{plural(pending, 'commit')} {'waits' if pending == 1 else 'wait'} to be pushed"
    return f"is {url}, of which the brain is a clone: {waiting}; {last}."


def status_report(
    health: dict[str, Any], index: dict[str, Any], guests: int, unreadable: int, now: float | None = None
) -> dict[str, Any]:
    """Sentences for the Status page: `lines`, (subject, the rest of its sentence) a part, and `problems`."""
    problems: list[str] = []
    now = time.time() if now is None else now
    lines = [("Search", _index(index))]
    for name, line in (
        ("Meaning", _meaning(health, problems)),
        ("The guest door", _guest_door(health, guests, problems)),
        ("Hand edits", _hand_edits(health, problems)),
        ("The remote", _remote(health, now, problems)),
    ):
        if line:
            lines.append((name, line))
    if unreadable:
        problems.append(
            f"The frontmatter of {plural(unreadable, 'note')} could not be read, so no quote of "
            f"{'it' if unreadable == 1 else 'them'} is stamped VERIFIED until it is fixed (listed below)."
        )
    return {"lines": lines, "problems": problems}


def raw_rows(health: dict[str, Any]) -> list[tuple[str, str]]:
    """The report as /healthz?detail=1 gives it, a key a row (collapsed on the page)."""
    return [
        (key, value if isinstance(value, str) else json.dumps(value, indent=2, sort_keys=True, default=str))
        for key, value in sorted(health.items())
    ]

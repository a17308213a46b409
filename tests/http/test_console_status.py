"""The Status page's sentences for every part the health report can carry (the browser
tests see a guest server's; a watcher, a remote, an outage and a broken arm are here)."""

from __future__ import annotations

from cortex.http.console.status import plural, status_report


def test_plural_says_one_file_and_two_files():
    assert [plural(n, "file") for n in (0, 1, 2, 1200)] == ["0 files", "1 file", "2 files", "1,200 files"]
    assert plural(1, "is", "are") == "1 is" and plural(3, "is", "are") == "3 are"


def test_each_part_is_a_sentence_and_each_problem_is_said_once():
    health = {
        "guest_door": "degraded: queue unavailable",
        "broken_guest_policies": [{"file": ".cortex/guests/eve.json", "error": "not valid JSON"}],
        "meaning": "unavailable",
        "meaning_notes": "3/14",
        "meaning_reason": "no model at /models/x",
        "hand_edits": {
            "watching": "/home/me/notes",
            "debounce_ms": 500,
            "commits": 1,
            "last_error": "notes/a.md: not UTF-8",
            "held": ["notes/b.md collides with notes/B.md"],
        },
        "remote": {"url": "https://example.org/me/brain.git", "pending": 1, "last_fetch": 970.0, "last_error": None},
    }
    index = {"index": "building", "files_read": 40, "files": 1}
    report = status_report(health, index, guests=2, unreadable=3, now=1000.0)
    lines = dict(report["lines"])
    assert lines["Search"] == "is being built: 40 of 1 file read; a search waits for it."
    assert lines["Meaning"] == "is unavailable; search and ask match words only."
    assert lines["The guest door"].startswith("is degraded; 2 guests cannot be served")
    assert lines["Hand edits"].startswith("in /home/me/notes are committed 500 ms after a save; 1 commit of them")
    assert lines["The remote"] == (
        "is https://example.org/me/brain.git, of which the brain is a clone: 1 commit waits to be pushed; "
        "last fetched 30 s ago."
    )
    assert report["problems"] == [
        "Meaning is unavailable: no model at /models/x. Until it is fixed, search and ask match words only.",
        "The guest policy .cortex/guests/eve.json cannot be read (not valid JSON); that guest's door is closed "
        "until the file is fixed or the guest revoked.",
        "The guest door is degraded: the proposal queue (Redis) does not answer, so guests' asks and proposals "
        "fail, and the Proposals page cannot list them, until it does.",
        "The last hand edit could not be committed: notes/a.md: not UTF-8.",
        "A hand edit is held back, not committed: notes/b.md collides with notes/B.md.",
        "The frontmatter of 3 notes could not be read, so no quote of them is stamped VERIFIED until it is "
        "fixed (listed below).",
    ]


def test_a_quiet_server_has_no_problems_and_says_what_is_off():
    health = {
        "guest_door": "disabled: no Redis configured",
        "broken_guest_policies": [],
        "meaning": "off",
        "meaning_notes": "0/0",
        "meaning_reason": "CORTEX_MEANING=off",
    }
    report = status_report(health, {"index": "ready", "notes": 1}, guests=0, unreadable=0)
    lines = dict(report["lines"])
    assert report["problems"] == []
    assert lines["Search"] == "is ready over 1 note."
    assert lines["Meaning"] == "is off (CORTEX_MEANING=off): search and ask match words only."
    assert lines["The guest door"].startswith("is closed: no Redis configured (set REDIS_URL")
    ready = status_report(
        {"meaning": "ready", "meaning_notes": "14/14", "meaning_passages": 200}, {"index": "ready", "notes": 14}, 0, 0
    )
    assert dict(ready["lines"])["Meaning"].startswith("is on: all 14 notes embedded (200 passages)")


def test_unwritten_and_restored_files_are_problems_the_owner_reads():
    """Issue 42: the console says what /healthz?detail=1 says of the working tree."""
    said = "log/2026-12-03.md: the hand commit 1a2b3c4 took back the write 5d6e7f8; restored in 9a8b7c6"
    health = {
        "hand_edits": {
            "watching": "/brain",
            "debounce_ms": 300,
            "commits": 2,
            "last_error": said,
            "held": [],
            "unwritten": ["notes/plants.md: Read-only file system"],
            "restored": [said],
        }
    }
    problems = status_report(health, {"index": "ready", "notes": 1}, guests=0, unreadable=0)["problems"]
    assert problems == [
        "A committed file could not be written to the working tree, and is out of date there: "
        "notes/plants.md: Read-only file system.",
        f"A hand commit took back an acknowledged write, which was put back: {said}.",
    ]

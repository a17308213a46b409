"""The console end to end in headless Chromium (Debian's /usr/bin/chromium, driven by
Playwright): sign in, accept and reject proposals, inert notes, CSRF, throttling.

Screenshots of each page go to test-artifacts/console/ (ignored by Git), at a
phone's width and, for a few pages, a desktop's. In CI (CI=true) a missing
Chromium or Playwright fails these tests; elsewhere they skip with the reason.
Never `playwright install`: the browser comes from Debian (ops/system-deps.sh --tests).
"""

from __future__ import annotations

import re

import pytest
from browserkit import DESKTOP, PHONE, add_guest, shot, sign_in
from serverkit import TOKEN

from cortex.brain.trailers import Actor

pytestmark = pytest.mark.slow  # every test here takes 0.3 s or more

OWNER = Actor(door="owner", tool="brain_write", client="test")
EVIL = (
    "# Evil note\n\n<script>alert('script')</script>\n\n<img src=x onerror=alert('img')>\n\n"
    "<svg onload=alert('svg')></svg> <a href=\"javascript:alert('raw')\" onclick=\"alert('click')\">raw</a>\n\n"
    "[a javascript link](javascript:alert('link')) ![pic](javascript:alert('pic'))\n\n"
    "A [fine link](https://example.org/) and **bold** text.\n"
)


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def test_sign_in_accept_and_see_the_commit_in_activity(gserver, phone, browser):
    brain, q = gserver.brain, gserver.queue
    brain.write("notes/public/garden.md", "create", OWNER, content="# Garden\n\nWater the beds at dawn.\n")
    gserver.guest("alice", ["notes/public/"])
    keep, _ = q.admit(
        "alice", "notes/public/garden.md", "append", "Mulch the tomatoes in May.\n", "a tip from my own garden", 10
    )
    q.admit("alice", "notes/public/compost.md", "create", "# Compost\n\nTurn it weekly.\n", "new note", 10)

    phone.goto(f"{gserver.url}/console")
    shot(phone, "signin-phone")
    sign_in(phone, gserver.url)
    assert phone.url.endswith("/console/proposals")
    assert phone.locator("article.card").count() == 2
    assert phone.locator("pre.diff .add", has_text="Mulch the tomatoes in May.").count() == 1
    shot(phone, "proposals-phone")

    card = phone.locator(f"article#{keep.id}")
    with phone.expect_navigation():
        card.locator("button:has-text('Accept')").click()
    assert phone.url.endswith(f"/console/proposals?accepted={keep.id}")  # back on the queue
    outcome = phone.locator("#outcome")
    assert f"Accepted {keep.id} from guest alice" in outcome.inner_text()
    sha = brain.store.head()
    assert outcome.locator(f"a[href='/console/commit/{sha}']").inner_text() == sha[:12]
    assert phone.locator("article.card").count() == 1  # the other proposal, next in line
    shot(phone, "accepted-phone")

    phone.click("nav >> text=Activity")
    row = phone.locator("ul.commits > li", has_text=sha[:12])
    assert row.count() == 1 and "console" in row.inner_text() and "console_accept" in row.inner_text()
    shot(phone, "activity-phone")
    with phone.expect_navigation():
        row.locator("a").first.click()
    assert phone.locator("pre.diff .add", has_text="Mulch the tomatoes in May.").count() == 1
    shot(phone, "commit-phone")

    desktop = browser.new_context(viewport=DESKTOP)
    page = desktop.new_page()
    sign_in(page, gserver.url)
    shot(page, "proposals-desktop")
    page.goto(f"{gserver.url}/console/activity")
    shot(page, "activity-desktop")
    desktop.close()


def test_reject_with_a_reason_shows_the_tombstone(gserver, phone):
    q = gserver.queue
    gserver.guest("alice", ["notes/public/"])
    p, _ = q.admit("alice", "notes/public/spam.md", "create", "# Offer\n\nBuy now!\n", "great deal", 10)
    sign_in(phone, gserver.url)
    card = phone.locator(f"article#{p.id}")
    card.locator("input[name=reason]").fill("advertising, not a note")
    with phone.expect_navigation():
        card.locator("button:has-text('Reject')").click()
    assert "Rejected: advertising, not a note" in phone.locator("#outcome").inner_text()
    tomb = phone.locator("a", has_text=".cortex/tombstones/")
    assert tomb.count() == 1
    shot(phone, "rejected-phone")
    with phone.expect_navigation():
        tomb.click()
    assert "advertising, not a note" in phone.locator("pre").first.inner_text()
    assert q.get(p.id).state == "rejected"
    phone.goto(f"{gserver.url}/console/proposals")
    assert "No proposals are waiting" in phone.inner_text("main")


def test_a_note_with_script_markup_renders_inert(server, phone):
    dialogs: list[str] = []
    phone.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    # Control: this page does raise a dialog, so the listener would catch one.
    phone.set_content("<script>alert('control')</script>")
    assert dialogs == ["control"]
    dialogs.clear()

    server.parts.brain.write("notes/evil.md", "create", OWNER, content=EVIL)
    sign_in(phone, server.url)
    response = phone.goto(f"{server.url}/console/note/notes/evil.md")
    assert "script-src 'none'" in response.headers["content-security-policy"]
    body = phone.locator("article.note-body")
    assert "<script>alert('script')</script>" in body.inner_text()  # shown as text
    for selector in [
        "script",
        "[onerror]",
        "[onload]",
        "[onclick]",
        "a[href^='javascript' i]",
        "img[src^='javascript' i]",
        "svg",
        "iframe",
    ]:
        assert phone.locator(selector).count() == 0, selector
    assert body.locator("a[href='https://example.org/']").count() == 1
    assert body.locator("strong", has_text="bold").count() == 1
    # Click everything that looks like a link in the note: still nothing runs.
    for text in ["raw", "a javascript link"]:
        loc = body.get_by_text(text, exact=False)
        if loc.count():
            loc.first.click()
    phone.wait_for_timeout(300)
    assert dialogs == []
    shot(phone, "note-inert-phone")

    phone.goto(f"{server.url}/console/notes")
    shot(phone, "notes-phone")
    phone.goto(f"{server.url}/console/note/profile.md")
    shot(phone, "note-profile-phone")


def test_a_form_post_without_the_csrf_token_is_refused(gserver, phone):
    sign_in(phone, gserver.url)
    phone.goto(f"{gserver.url}/console/guests")
    shot(phone, "guests-phone")
    form = phone.locator("form[action='/console/guests/add']")
    form.locator("input[name=name]").fill("mallory")
    form.locator("textarea[name=scopes]").fill("notes/")
    form.locator("input[name=csrf]").evaluate("e => e.remove()")  # DevTools, not page script
    with phone.expect_response(lambda r: r.url.endswith("/console/guests/add")) as info:
        form.locator("button[type=submit]").click()
    assert info.value.status == 403
    phone.wait_for_load_state()
    assert "CSRF" in phone.inner_text("main")
    shot(phone, "csrf-refused-phone")
    assert gserver.parts.brain.store.blob_at(gserver.brain.store.head(), ".cortex/guests/mallory.json") is None

    # The same form with its token adds the guest and shows the door once.
    add_guest(phone, gserver.url, "bob", "notes/public/")
    door = phone.inner_text("#door").strip()
    assert re.fullmatch(r"/g/[A-Za-z0-9_-]{20,}/mcp", door)
    shot(phone, "guest-added-phone")
    phone.goto(f"{gserver.url}/console/guests")
    assert phone.locator("article#guest-bob").count() == 1 and door not in phone.content()
    shot(phone, "guests-list-phone")


def test_sign_in_throttling(server, phone):
    for _ in range(5):
        sign_in(phone, server.url, "wrong-token")
        assert "not the owner token" in phone.inner_text("main")
    shot(phone, "signin-failed-phone")
    phone.goto(f"{server.url}/console/signin")
    phone.fill("#secret", "one-more-guess")
    with phone.expect_response(lambda r: r.url.endswith("/console/signin") and r.request.method == "POST") as info:
        phone.click("button:has-text('Sign in')")
    assert info.value.status == 429
    phone.wait_for_load_state()
    assert "Too many failed sign-ins" in phone.inner_text("main")
    shot(phone, "throttled-phone")
    sign_in(phone, server.url, TOKEN)  # the owner token is never locked out
    assert phone.url.endswith("/console/proposals")

"""Every console page in headless Chromium at a desktop's width (1280 px) and a phone's
(390 px): no text overflows sideways, no character is drawn as a missing glyph, and each
page reads as a person expects (Status in sentences, Notes with CSS icons and plurals,
Search with the tools' own ranking, Accept back on the queue). Screenshots go to
test-artifacts/console/ (ignored by Git)."""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor

import pytest
from browserkit import DESKTOP, PHONE, add_guest, page_problems, shot, sign_in
from serverkit import call

from cortex.brain.trailers import Actor

pytestmark = pytest.mark.slow

OWNER = Actor(door="owner", tool="brain_write", client="test")
LONG_FOLDER = "notes/a-folder-with-a-rather-long-name-that-keeps-going-on-and-on/"
LONG_NOTE = LONG_FOLDER + "and-a-note-whose-file-name-is-longer-than-any-phone-is-wide-by-far.md"
NOTES = {
    "notes/public/garden.md": (
        "# Garden\n\nWater the beds at dawn; the tomatoes grow in the south bed.\n\n"
        "See [[Compost heap]] and https://example.org/a/very/long/url/that/does/not/break/anywhere/at/all/ever\n"
    ),
    "notes/public/compost.md": "# Compost heap\n\nTurn the compost weekly so the garden beds get it by spring.\n",
    "notes/old-garden.md": "---\nstatus: superseded\nsuperseded_by: notes/public/garden.md\n---\n# Old garden\n\n"
    "The garden was watered at noon.\n",
    "notes/broken.md": "---\nstatus: [unclosed\n---\n# Broken frontmatter\n\nThe garden fence.\n",
    LONG_NOTE: "# " + "Averyveryverylongtitlewordwithoutanyspaces" * 3 + "\n\n" + "garden" * 60 + "\n",
}


def populate(gserver) -> dict[str, str]:
    """A brain with every kind of page to show; the ids and SHAs the pages are at."""
    brain, q = gserver.brain, gserver.queue
    for path, text in NOTES.items():
        brain.write(path, "create", OWNER, content=text)
    gserver.parts.tools.working.act(
        OWNER, "add", kind="question", text="When do the beds get mulched?", project="garden"
    )
    brain.commit_files({".cortex/guests/bad.json": b"{not json"}, "a broken policy", OWNER)
    gserver.guest("alice", ["notes/public/"])
    keep, _ = q.admit("alice", "notes/public/garden.md", "append", "Mulch in May.\n", "a tip", 10)
    new, _ = q.admit("alice", "notes/public/beds.md", "create", "# Beds\n\n" + "wide" * 80 + "\n", "new", 10)
    return {"keep": keep.id, "new": new.id, "head": brain.store.head()}


@contextlib.contextmanager
def owner_page(browser, gserver, size: dict[str, int]):
    """A page signed in to the console of `gserver` at viewport `size`, its brain populated."""
    populate(gserver)
    context = browser.new_context(viewport=size)
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        sign_in(page, gserver.url)
        yield page
    finally:
        context.close()


def check(page, name: str, problems: list[str]) -> None:
    shot(page, name)
    found = page_problems(page)
    if found:
        problems.append(f"{name}: " + "; ".join(found))


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1280px", "390px"])
def test_every_page_fits_the_width_and_draws_every_glyph(gserver, browser, size):
    ids = populate(gserver)
    base, width = gserver.url, size["width"]
    context = browser.new_context(viewport=size)
    page = context.new_page()
    page.set_default_timeout(15_000)
    problems: list[str] = []
    try:
        page.goto(f"{base}/console/signin")
        check(page, f"page-signin-{width}", problems)
        sign_in(page, base)
        pages = [
            ("proposals", "/console/proposals"),
            ("proposal", f"/console/proposals/{ids['new']}"),
            ("activity", "/console/activity"),
            ("commit", f"/console/commit/{ids['head']}"),
            ("notes", "/console/notes"),
            ("notes-folder", "/console/notes?dir=notes/"),
            ("notes-long-folder", f"/console/notes?dir={LONG_FOLDER}"),
            ("note", "/console/note/notes/public/garden.md"),
            ("note-long", f"/console/note/{LONG_NOTE}"),
            ("note-retired", "/console/note/notes/old-garden.md"),
            ("note-unreadable", "/console/note/notes/broken.md"),
            ("working", "/console/working"),
            ("guests", "/console/guests"),
            ("status", "/console/status"),
            ("search", "/console/search"),
            ("search-hits", "/console/search?q=garden+beds"),
            ("search-none", "/console/search?q=zeppelin&prefix=notes/public/"),
            ("not-found", "/console/nowhere"),
        ]
        for name, path in pages:
            page.goto(base + path)
            check(page, f"page-{name}-{width}", problems)

        # Accept: back on the queue, saying what was accepted.
        page.goto(f"{base}/console/proposals")
        with page.expect_navigation():
            page.locator(f"article#{ids['keep']} button:has-text('Accept')").click()
        assert page.url.endswith(f"/console/proposals?accepted={ids['keep']}")
        assert f"Accepted {ids['keep']} from guest alice" in page.inner_text("#outcome")
        check(page, f"page-accepted-{width}", problems)

        # A guest added with a scope no note falls in: warned on the page that shows the door.
        add_guest(page, base, "bob", "notes/public/\nNotes/Nothing/")
        warning = page.inner_text(".scope-warning")
        assert "Notes/Nothing/ matches no note at the head" in warning and "notes/public/" not in warning
        check(page, f"page-guest-added-{width}", problems)
    finally:
        context.close()
    assert problems == [], "\n".join(problems)


def test_status_reads_as_sentences_with_each_problem_once(gserver, browser):
    with owner_page(browser, gserver, PHONE) as page:
        page.goto(f"{gserver.url}/console/status")
        shot(page, "status-sentences-390")
        main = page.inner_text("main")
        head = gserver.brain.store.head()
        assert f"Its head is {head[:12]}" in page.inner_text("#head")
        assert "branch main" in main
        assert "The guest door is open: 1 guest may ask and propose." in main  # bad.json is no guest
        assert "Search is ready over" in main
        problems = [p.strip() for p in page.locator("li.problem").all_inner_texts()]
        assert len(problems) == 2, problems
        assert any(p.startswith("The guest policy .cortex/guests/bad.json cannot be read (") for p in problems)
        assert any(p.startswith("The frontmatter of 1 note could not be read") for p in problems)
        # The raw dump is there for a bug report, folded away: no key names on the page as read.
        for key in ("broken_guest_policies", "meaning_notes", "guest_door", "[]"):
            assert key not in main, key
        page.click("summary:has-text('The full report')")
        assert "broken_guest_policies" in page.inner_text("main")


def test_notes_use_css_icons_and_plurals(gserver, browser):
    with owner_page(browser, gserver, PHONE) as page:
        page.goto(f"{gserver.url}/console/notes?dir=notes/")
        rows = page.locator("ul.files > li").all_inner_texts()
        long_folder = LONG_FOLDER.removeprefix("notes/")
        assert any(r.startswith(long_folder) and r.endswith("1 file") for r in rows), rows
        assert any(r.startswith("public/") and r.endswith("2 files") for r in rows), rows
        assert not any("1 files" in r for r in rows)
        assert page.locator("ul.files .icon.folder").count() == 2
        # broken.md, old-garden.md and the template's example-topic.md and house-rules.md
        assert page.locator("ul.files .icon.file").count() == 4
        assert "2 folders and 4 files here" in page.inner_text("main")
        assert page_problems(page) == []


def test_search_is_brain_search_with_its_ranking(gserver, browser):
    with owner_page(browser, gserver, DESKTOP) as page:
        page.goto(f"{gserver.url}/console/notes")
        page.fill("#q", "garden beds")
        with page.expect_navigation():
            page.click("form.search button[type=submit]")
        shown = [p.strip().split(" › ")[0] for p in page.locator("ol.hits .mono.small").all_inner_texts()]
        # Over MCP, in a thread of its own: Playwright's sync API holds this thread's event loop.
        with ThreadPoolExecutor(1) as pool:
            tools = pool.submit(call, gserver.owner, "brain_search", query="garden beds", k=20).result().data
        assert shown == [h["path"] for h in tools["hits"]] and len(shown) >= 3, (shown, tools)
        assert "notes/old-garden.md" not in shown  # retired: left out, as the tool leaves it out
        assert f"{tools['total']} notes match" in page.inner_text("#summary")
        assert "1 matching note in archive/ or retired was left out; tick “retired too”" in page.inner_text("main")
        page.check("input[name=retired]")
        with page.expect_navigation():
            page.click("form.search button[type=submit]")
        assert page.locator("ol.hits a", has_text="Old garden").count() == 1
        page.goto(f"{gserver.url}/console/search?q=garden&prefix=notes/public/")
        shown = [p.strip().split(" › ")[0] for p in page.locator("ol.hits .mono.small").all_inner_texts()]
        assert shown and all(p.startswith("notes/public/") for p in shown)
        page.goto(f"{gserver.url}/console/search?q=")
        assert page.locator("ol.hits").count() == 0 and "same search the tools use" in page.inner_text("main")

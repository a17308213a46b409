"""The console's note page in headless Chromium: [[wikilinks]] (by file name, path, alias and
title) and relative Markdown links to notes are links that open the note, a wikilink naming
no note is marked missing, one in code stays code, and the note lists its backlinks.
Screenshots at a phone's and a desktop's width go to test-artifacts/console/."""

from __future__ import annotations

from pathlib import Path

import pytest
from browserkit import sign_in

from cortex.brain.trailers import Actor

pytestmark = pytest.mark.slow

ARTIFACTS = Path(__file__).resolve().parent.parent.parent / "test-artifacts" / "console"
OWNER = Actor(door="owner", tool="brain_write", client="test")
HUB = (
    "# Hub\n\n"
    "- By title: [[Billing service database decision]]\n"
    "- By file name: [[vitamin-d|the vitamin]]\n"
    "- By path and heading: [[notes/vitamin-d#Dose]]\n"
    "- By alias: [[Sunshine vitamin]]\n"
    "- Nowhere: [[No such note]]\n"
    "- In code: `[[vitamin-d]]`\n"
    "- Markdown: [the dose](vitamin-d.md) and [up](../notes/billing-db.md) and [web](https://example.org/)\n"
)


@pytest.mark.parametrize("width", [390, 1280])
def test_note_links_open_their_notes_and_backlinks_are_listed(server, browser, width):
    brain = server.parts.brain
    brain.write(
        "notes/vitamin-d.md",
        "create",
        OWNER,
        content="---\naliases: [Sunshine vitamin]\n---\n# Vitamin D\n\n## Dose\n\n1000 IU.\n",
    )
    brain.write("notes/billing-db.md", "create", OWNER, content="# Billing service database decision\n\nPostgres.\n")
    brain.write("notes/hub.md", "create", OWNER, content=HUB)
    brain.snapshot()  # indexed, as a served brain is after its start

    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        sign_in(page, server.url)
        page.goto(f"{server.url}/console/note/notes/hub.md")
        body = page.locator("article.note-body")
        hrefs = {
            a.inner_text(): a.get_attribute("href") for a in body.locator("a.wikilink, a.notelink").element_handles()
        }
        assert hrefs == {
            "Billing service database decision": "/console/note/notes/billing-db.md",
            "the vitamin": "/console/note/notes/vitamin-d.md",
            "notes/vitamin-d > Dose": "/console/note/notes/vitamin-d.md",
            "Sunshine vitamin": "/console/note/notes/vitamin-d.md",
            "the dose": "/console/note/notes/vitamin-d.md",
            "up": "/console/note/notes/billing-db.md",
        }
        missing = body.locator(".wikilink.missing")
        assert missing.count() == 1 and missing.inner_text() == "No such note"
        assert missing.get_attribute("title") == "no note named No such note"
        assert body.locator("code", has_text="[[vitamin-d]]").count() == 1  # code stays code
        assert body.locator("a[href='https://example.org/'][rel~='noopener']").count() == 1
        assert "[[" not in body.inner_text().replace("[[vitamin-d]]", "")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"note-links-{width}.png"), full_page=True)

        with page.expect_navigation():
            body.get_by_text("Billing service database decision").click()
        assert page.url.endswith("/console/note/notes/billing-db.md")
        backlinks = page.locator("ul.backlinks a")
        assert [backlinks.nth(i).inner_text() for i in range(backlinks.count())] == ["notes/hub.md"]
        with page.expect_navigation():
            backlinks.first.click()
        assert page.url.endswith("/console/note/notes/hub.md")
        page.goto(f"{server.url}/console/note/notes/vitamin-d.md")
        assert page.locator("#backlinks").inner_text() == "Linked from"
        assert page.locator("ul.backlinks li").inner_text().startswith("notes/hub.md")
        assert "4 links" in page.locator("ul.backlinks li").inner_text()  # file name, path, alias, a Markdown link
        page.screenshot(path=str(ARTIFACTS / f"note-backlinks-{width}.png"), full_page=True)
    finally:
        context.close()

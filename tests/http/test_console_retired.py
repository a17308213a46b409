"""The console shows retired text as retired (cortex.http.console.markdown.render_note): a
section under a banner dimmed with its reason, struck text and old wording struck through,
hidden text marked hidden; and the marks never open a way for markup to run. The browser
test renders a note in headless Chromium and reads what it shows."""

from __future__ import annotations

import pytest
from browserkit import shot
from consolekit import EVIL, active_markup
from serverkit import TOKEN

from cortex.brain.trailers import Actor
from cortex.http.console.markdown import render_markdown, render_note

OWNER = Actor(door="owner", tool="brain_write", client="test")
NOTE = (
    "---\ntitle: Heron launch\n---\n# Heron launch\n\n"
    "Live: the launch is on Friday 13 March, ~~Monday 9 March~~ and <del>Sunday 8 March</del> are gone.\n\n"
    'We meet at the hangar (was: "the café") at noon.\n\n'
    "Visible text %%a private aside%% and <span hidden>a hidden aside</span> more.\n\n"
    "## Old plan\n\n> **RETRACTED** the date slipped\n\nThe launch was set for Monday 9 March.\n\n"
    "- the crew flies in on Sunday\n\n## Current plan\n\nThe launch is set for Friday 13 March.\n"
)


def test_a_retired_section_is_dimmed_with_the_banners_reason_above_it() -> None:
    html = render_note(NOTE, "Heron launch")
    assert "<h1" not in html  # the title is the page's own heading
    reason = "under a RETRACTED banner at line 14 (under &quot;Old plan&quot;)"
    assert html.count(f'<p class="md-retired-why">Retired: {reason}</p>') == 1
    assert f'<p class="md-retired" title="retired: {reason}">The launch was set for Monday 9 March.</p>' in html
    # A tight list renders no <p>: its item is dimmed instead.
    assert f'<li class="md-retired" title="retired: {reason}">the crew flies in on Sunday</li>' in html
    assert "<h2>Current plan</h2>\n<p>The launch is set for Friday 13 March.</p>" in html


def test_struck_text_old_wording_and_hidden_text_are_marked() -> None:
    html = render_note(NOTE, "Heron launch")
    assert "<span class=md-struck><s>Monday 9 March</s></span>" in html
    assert '<span class=md-struck><code class="md-html">&lt;del&gt;</code>Sunday 8 March' in html
    assert "(was: &quot;<span class=md-old>the café</span>&quot;)" in html
    assert "<span class=md-hidden>%%a private aside%%</span>" in html
    assert '<span class=md-hidden><code class="md-html">&lt;span hidden&gt;</code>a hidden aside' in html
    assert html.count("<span class=md-") == html.count("</span>") - html.count('<span class="md-hidden"')


def test_a_note_without_retired_text_renders_as_before() -> None:
    body = "# T\n\nPlain **text** with a [link](https://example.org) and `code`.\n\n- an item\n"
    assert render_markdown(body) == (
        "<h1>T</h1>\n<p>Plain <strong>text</strong> with a "
        '<a href="https://example.org" rel="nofollow noopener noreferrer">link</a> and <code>code</code>.</p>\n'
        "<ul>\n<li>an item</li>\n</ul>\n"
    )


@pytest.mark.parametrize(
    "body",
    [
        f"> **SUPERSEDED** by nothing\n\n{EVIL}",
        f"~~{EVIL}~~",
        f'Claim (was: "{EVIL}")',
        f"<del>\n\n{EVIL}\n\n</del>\n",
        f"%%{EVIL}%%",
        # A mark that lands inside an attribute value (a link title over two lines) is text there.
        "[a link](https://example.org \"title (was: 'old\nwording') end\") and ~~x~~\n",
        '![pic](https://example.org/p.png "a ~~struck\ntitle~~") text\n',
        # A note's own marking chars mark nothing.
        '\ue000<img src=x onerror=alert(1)>\ue003 \ue001" onmouseover="alert(2)\ue003\n',
    ],
)
def test_the_marks_leave_no_markup_that_could_run(body: str) -> None:
    for html in (render_markdown(body), render_note(body)):
        assert active_markup(html) == []
        assert "<script" not in html and "<svg" not in html and "onerror=" not in html.replace("onerror=alert", "")
        assert "\ue000" not in html and "\ue001" not in html and "\ue003" not in html


def test_a_notes_own_marking_chars_are_replaced() -> None:
    html = render_markdown("a \ue000b\ue003 c\n")
    assert html == "<p>a \ufffdb\ufffd c</p>\n"


@pytest.mark.slow
def test_the_browser_shows_retired_text_as_retired(server, browser):
    brain = server.parts.brain
    brain.write("notes/heron.md", "create", OWNER, content=NOTE)
    retired_note = "---\nstatus: retracted\n---\n# Old heron note\n\nThe launch is on Monday 9 March.\n"
    brain.write("notes/heron-old.md", "create", OWNER, content=retired_note)
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        page.goto(f"{server.url}/console")
        page.fill("#secret", TOKEN)
        with page.expect_navigation():
            page.click("button:has-text('Sign in')")
        page.goto(f"{server.url}/console/note/notes/heron.md")
        body = page.locator("article.note-body")

        def style(locator, prop: str) -> str:
            return locator.evaluate(f"e => getComputedStyle(e).{prop}")

        def struck(locator) -> bool:
            # Struck through itself or by an ancestor (line-through is drawn, not inherited).
            return locator.evaluate(
                "e => { for (let n = e; n; n = n.parentElement) "
                "{ if (getComputedStyle(n).textDecorationLine.includes('line-through')) return true } return false }"
            )

        live = body.locator("p", has_text="The launch is set for Friday 13 March.")
        assert style(live, "opacity") == "1" and not struck(live)
        old = body.locator("p", has_text="The launch was set for Monday 9 March.")
        assert float(style(old, "opacity")) < 1
        assert "RETRACTED banner" in old.get_attribute("title")
        why = body.locator(".md-retired-why")
        assert why.count() == 1 and why.is_visible() and style(why, "opacity") == "1"
        assert "Retired: under a RETRACTED banner at line 14" in why.inner_text()
        item = body.locator("li", has_text="the crew flies in on Sunday")
        assert float(style(item, "opacity")) < 1
        for text in ("Monday 9 March", "Sunday 8 March", "the café"):
            mark = body.locator(".md-struck, .md-old", has_text=text).first
            assert struck(mark) and float(style(mark, "opacity")) < 1, text
        hidden = body.locator(".md-hidden", has_text="a hidden aside")
        assert hidden.count() == 1 and style(hidden, "outlineStyle") == "dashed"
        first = body.locator("p", has_text="Live: the launch is on Friday 13 March")
        assert style(first, "opacity") == "1" and not struck(first)
        shot(page, "note-retired-phone")

        page.goto(f"{server.url}/console/note/notes/heron-old.md")
        article = page.locator("article.note-body")
        assert float(style(article, "opacity")) < 1
        assert "Retired: status: retracted" in page.locator("#retired").inner_text()
    finally:
        context.close()
